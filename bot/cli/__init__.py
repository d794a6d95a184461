"""The `cypherbot` command line: the Typer app and its entry point; one module per area
(`graph`, `memory`, `agent`, `playground`, `start`, `slack`, `eval`) registers its commands, and
each invocation's Settings travel in the Typer context (`bot/cli/runtime.py`)."""

from __future__ import annotations

import sys

import typer

from bot.cli.runtime import attach, console, err_console, settings


def register_all(app: typer.Typer) -> None:
    """Attach every command module's commands to `app`."""
    from bot.cli import agent as agent_commands
    from bot.cli import eval as eval_commands
    from bot.cli import graph, playground, slack, start
    from bot.cli import memory as memory_commands

    graph.register(app)
    memory_commands.register(app)
    agent_commands.register(app)
    playground.register(app)
    start.register(app)
    slack.register(app)
    eval_commands.register(app)


app = typer.Typer(
    name="cypherbot",
    help="Ask your graph database questions in Slack, in plain language.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)
app.callback()(attach)
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
