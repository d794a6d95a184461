"""The command line's Settings and consoles. Commands import them from here (never from
`bot.cli`, which imports the commands: that was an import cycle).

The Settings travel in the Typer context: the app's callback puts a `CliRuntime` in `ctx.obj`,
and each command passes its `ctx` to `settings(ctx)`, so there is no module-level state and
each invocation (a test's `CliRunner().invoke(app, args, obj=CliRuntime(s))` included) has
its own.
"""

from __future__ import annotations

import logging
import sys

import typer
from pydantic import ValidationError
from rich.console import Console

from bot.settings import Settings, mask_secrets_in_logs

console = Console()
err_console = Console(stderr=True)


class CliRuntime:
    """One invocation's Settings: given, or read from the environment (+ .env) on first use,
    when logging is configured too, with the secrets masked."""

    def __init__(self, settings: Settings | None = None) -> None:
        self._settings = settings

    def settings(self) -> Settings:
        if self._settings is None:
            try:
                self._settings = Settings()
            except ValidationError as exc:
                problems = "; ".join(
                    f"{'.'.join(str(p) for p in e['loc']).upper()}: {e['msg']}"
                    for e in exc.errors()
                )
                err_console.print(
                    f"[red]Invalid setting[/red] {problems}. Fix the environment or .env."
                )
                raise typer.Exit(2) from None
            logging.basicConfig(
                level=self._settings.log_level.upper(),
                format="%(asctime)s %(levelname)s %(name)s: %(message)s",
                stream=sys.stderr,
            )
            mask_secrets_in_logs(self._settings)
        return self._settings


def attach(ctx: typer.Context) -> None:
    """The app's callback: give this invocation its runtime (unless the caller passed one)."""
    ctx.ensure_object(CliRuntime)


def settings(ctx: typer.Context) -> Settings:
    """The Settings of the command being run (`ctx`: its Typer context)."""
    runtime = ctx.find_object(CliRuntime)
    if runtime is None:
        runtime = ctx.ensure_object(CliRuntime)
    return runtime.settings()
