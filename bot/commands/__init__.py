"""CLI commands, one module per area, each registering its commands on the Typer app."""

from __future__ import annotations

import typer


def register_all(app: typer.Typer) -> None:
    """Attach every command module's commands to `app`."""
    from bot.commands import agent as agent_commands
    from bot.commands import eval as eval_commands
    from bot.commands import graph, playground, slack, start
    from bot.commands import memory as memory_commands

    graph.register(app)
    memory_commands.register(app)
    agent_commands.register(app)
    playground.register(app)
    start.register(app)
    slack.register(app)
    eval_commands.register(app)
