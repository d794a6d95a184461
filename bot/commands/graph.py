"""Graph commands: demo-data, schema, query, doctor."""

from __future__ import annotations

import typer


def register(app: typer.Typer) -> None:
    """Attach the graph commands to `app`."""
