"""`cypherbot start`: the Slack bot when SLACK_BOT_TOKEN is set, else the local playground."""

from __future__ import annotations

import typer
from rich.console import Console

from bot.cli.playground import NoBrowser, Port, run_playground
from bot.cli.runtime import settings
from bot.cli.slack import run as run_bot

err_console = Console(stderr=True)


def start(ctx: typer.Context, port: Port = None, no_browser: NoBrowser = False) -> None:
    """Start cypherbot: `run` with Slack tokens, otherwise `playground` (the README's first command)."""
    s = settings(ctx)
    token = s.slack_bot_token.get_secret_value() if s.slack_bot_token else ""
    if not token:
        err_console.print("[dim]No SLACK_BOT_TOKEN set: starting the local playground.[/dim]")
        run_playground(s, port=port, open_browser=not no_browser)
        return
    run_bot(ctx)


def register(app: typer.Typer) -> None:
    app.command("start")(start)
