"""`cypherbot start`: the Slack bot when SLACK_BOT_TOKEN is set, else the local playground."""

from __future__ import annotations

import typer
from rich.console import Console

from bot.commands.playground import NoBrowser, Port, run_playground

err_console = Console(stderr=True)


def start(ctx: typer.Context, port: Port = None, no_browser: NoBrowser = False) -> None:
    """Start cypherbot: `run` with Slack tokens, otherwise `playground` (the README's first command)."""
    from bot.cli import settings

    s = settings()
    token = s.slack_bot_token.get_secret_value() if s.slack_bot_token else ""
    if not token:
        err_console.print("[dim]No SLACK_BOT_TOKEN set: starting the local playground.[/dim]")
        run_playground(s, port=port, open_browser=not no_browser)
        return
    # Looked up by name so this command follows whatever `run` becomes.
    root = ctx.find_root()
    group = root.command
    run = group.get_command(root, "run") if hasattr(group, "get_command") else None
    if run is None:
        err_console.print("[red]Error:[/red] `cypherbot run` is not available in this build.")
        raise typer.Exit(1)
    # A command of its own (fresh context, its defaults), exactly as if `run` had been typed.
    run.main(args=[], prog_name=f"{root.info_name or 'cypherbot'} run")


def register(app: typer.Typer) -> None:
    app.command("start")(start)
