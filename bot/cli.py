"""The `cypherbot` command line: builds Settings once, configures logging, dispatches commands."""

from __future__ import annotations

import logging
import sys

import typer
from pydantic import ValidationError
from rich.console import Console

from bot.commands import register_all
from bot.settings import Settings, mask_secrets_in_logs

app = typer.Typer(
    name="cypherbot",
    help="Ask your graph database questions in Slack, in plain language.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)
console = Console()
err_console = Console(stderr=True)
_settings: Settings | None = None


def settings() -> Settings:
    """The one Settings object of this process (environment + optional .env)."""
    global _settings
    if _settings is None:
        try:
            _settings = Settings()
        except ValidationError as exc:
            problems = "; ".join(
                f"{'.'.join(str(p) for p in e['loc']).upper()}: {e['msg']}" for e in exc.errors()
            )
            err_console.print(
                f"[red]Invalid setting[/red] {problems}. Fix the environment or .env."
            )
            raise typer.Exit(2) from None
        logging.basicConfig(
            level=_settings.log_level.upper(),
            format="%(asctime)s %(levelname)s %(name)s: %(message)s",
            stream=sys.stderr,
        )
        mask_secrets_in_logs(_settings)
    return _settings


register_all(app)


def main() -> None:
    """Console-script entry point; user-facing errors print one line and exit 1."""
    from graph_agent.errors import AgentError
    from graph_agent.graphdb.errors import GraphError
    from memory.errors import MemoryStoreError

    try:
        app()
    except (GraphError, AgentError, MemoryStoreError) as exc:
        err_console.print(f"[red]Error:[/red] {exc}")
        sys.exit(1)
