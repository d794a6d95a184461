"""The `cypherbot` command line: the Typer app and its entry point (Settings: bot/commands/runtime.py)."""

from __future__ import annotations

import sys

import typer

from bot.commands import register_all
from bot.commands.runtime import console, err_console, settings

app = typer.Typer(
    name="cypherbot",
    help="Ask your graph database questions in Slack, in plain language.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)
register_all(app)

__all__ = ["app", "console", "err_console", "main", "settings"]


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
