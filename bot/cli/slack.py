"""`cypherbot run`: the Slack bot, in Socket Mode when SLACK_APP_TOKEN is set, else HTTP mode."""

from __future__ import annotations

import logging
from contextlib import ExitStack
from typing import TYPE_CHECKING, Annotated

import typer
from rich.console import Console

if TYPE_CHECKING:
    from memory import Memory

logger = logging.getLogger(__name__)
err_console = Console(stderr=True)


def run(
    ctx: typer.Context,
    host: Annotated[str | None, typer.Option(help="HTTP mode bind address (HOST).")] = None,
    port: Annotated[int | None, typer.Option(help="HTTP mode port (PORT).")] = None,
) -> None:
    """Start the Slack bot (Socket Mode with SLACK_APP_TOKEN; otherwise HTTP on /slack/events)."""
    from bot.cli.runtime import settings
    from bot.slack.app import SlackSetupError, check_tokens, create_bot
    from bot.slack.http_server import SlackHTTPServer
    from bot.wiring import open_runtime, start_schema_examples

    s = settings(ctx)
    socket_mode = s.slack_app_token is not None
    try:
        check_tokens(s, socket_mode=socket_mode)
    except SlackSetupError as exc:
        err_console.print(f"[red]Cannot start the Slack bot:[/red] {exc}")
        raise typer.Exit(2) from None
    with ExitStack() as stack:
        runtime = stack.enter_context(open_runtime(s))
        memory, agent = runtime.memory, runtime.agent
        assert memory is not None
        purge_on_start(memory, s.retention_days)
        schema_thread = start_schema_examples(s, memory, agent)
        if schema_thread is not None:
            stack.callback(schema_thread.join, 30)
        try:
            bot = create_bot(s, agent, memory, socket_mode=socket_mode)
        except SlackSetupError as exc:
            err_console.print(f"[red]Cannot start the Slack bot:[/red] {exc}")
            raise typer.Exit(2) from None
        stack.callback(bot.close)
        if not s.llm_configured:
            logger.warning("No LLM configured: only taught questions can be answered.")
        try:
            if socket_mode:
                from bot.slack.socket_mode import socket_mode_handler

                logger.info("Connecting to Slack in Socket Mode…")
                handler = socket_mode_handler(bot, s)
                stack.callback(handler.close)
                handler.start()  # type: ignore[no-untyped-call]
            else:
                server = SlackHTTPServer(
                    bot.app,
                    host=host or s.host,
                    port=port if port is not None else s.port,
                    health={"graph": runtime.db.ping, "memory": memory.ping},
                    signing_secret=(
                        s.slack_signing_secret.get_secret_value()
                        if s.slack_signing_secret
                        else None
                    ),
                )
                stack.callback(server.stop)
                logger.info("Listening on %s/slack/events (health: /healthz)", server.url)
                server.serve_forever()
        except KeyboardInterrupt:
            logger.info("Stopping: finishing the questions in progress…")


def purge_on_start(memory: Memory, retention_days: int) -> tuple[int, int]:
    """Drop turns past the retention period and expired delivery keys; return both counts."""
    turns = memory.conversations.purge(retention_days)
    events = memory.events.purge_expired()
    logger.info(
        "startup clean-up: %d turns older than %d days and %d expired event keys removed",
        turns,
        retention_days,
        events,
    )
    return turns, events


def register(app: typer.Typer) -> None:
    """Attach the Slack commands to `app`."""
    app.command("run")(run)
