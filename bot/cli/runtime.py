"""The command line's one Settings object and consoles. Commands import them from here (never
from `bot.cli`, which imports the commands: that was an import cycle)."""

from __future__ import annotations

import logging
import sys

import typer
from pydantic import ValidationError
from rich.console import Console

from bot.settings import Settings, mask_secrets_in_logs

console = Console()
err_console = Console(stderr=True)
_settings: Settings | None = None


def settings() -> Settings:
    """The one Settings object of this process (environment + optional .env), read on first
    use; logging is configured then, with the secrets masked."""
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


def use_settings(value: Settings | None) -> None:
    """Replace the process's Settings (tests; None reads the environment again)."""
    global _settings
    _settings = value
