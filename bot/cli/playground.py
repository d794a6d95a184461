"""`cypherbot playground`: the real bot in a browser, with Slack played locally."""

from __future__ import annotations

import logging
import signal
import threading
import webbrowser
from typing import TYPE_CHECKING, Annotated

import typer
from rich.console import Console

if TYPE_CHECKING:
    from bot.settings import Settings

logger = logging.getLogger(__name__)
console = Console()
err_console = Console(stderr=True)

Port = Annotated[
    int | None,
    typer.Option(
        help="Port of the page on 127.0.0.1 (default PLAYGROUND_PORT, 8765; 0: any free)."
    ),
]
NoBrowser = Annotated[
    bool, typer.Option("--no-browser", help="Print the URL without opening a browser.")
]
NO_LLM_HINT = """[yellow]No LLM configured:[/yellow] taught and suggested questions are still answered.
To answer anything else, set in the environment or .env, then restart:
  OpenAI:  OPENAI_API_KEY=sk-…
  Ollama:  OPENAI_BASE_URL=http://localhost:11434/v1  OPENAI_API_KEY=ollama  LLM_MODEL=qwen2.5-coder:7b"""


def run_playground(settings: Settings, *, port: int | None, open_browser: bool) -> None:
    """Start the playground, print its URL (and open it), serve until Ctrl+C."""
    from bot.playground import PlaygroundStartError, build_playground

    err_console.print("[dim]Starting the graph, memory, local Slack and the bot…[/dim]")
    try:
        playground = build_playground(settings, port=port)
    except PlaygroundStartError as exc:
        err_console.print(f"[red]Error:[/red] {exc}")
        raise typer.Exit(1) from None
    with playground:
        console.print(f"cypherbot playground: [bold]{playground.url}[/bold]")
        if not playground.page.llm.configured:
            console.print(NO_LLM_HINT, soft_wrap=True)
        if open_browser:
            try:
                webbrowser.open(playground.url)
            except Exception:  # a headless machine has no browser; the URL is printed above
                logger.debug("no browser to open", exc_info=True)
        console.print("Press Ctrl+C to stop.")
        _stop_on_sigterm()
        try:
            playground.serve_forever()
        except KeyboardInterrupt:
            console.print("Stopping the playground.")


def _stop_on_sigterm() -> None:
    """`kill` stops the playground as cleanly as Ctrl+C (the embedded graph is shut down)."""

    def interrupt(signum: int, frame: object) -> None:
        raise KeyboardInterrupt

    if threading.current_thread() is threading.main_thread():
        signal.signal(signal.SIGTERM, interrupt)


def playground(ctx: typer.Context, port: Port = None, no_browser: NoBrowser = False) -> None:
    """Try the real bot in your browser, no Slack workspace needed (demo graph if empty)."""
    from bot.cli.runtime import settings

    run_playground(settings(ctx), port=port, open_browser=not no_browser)


def register(app: typer.Typer) -> None:
    app.command("playground")(playground)
