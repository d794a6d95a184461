"""A plain answer from rows, without an LLM (verified-query reuse when no LLM is configured)."""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

SHOWN = 10


def _value(value: Any) -> str:
    if isinstance(value, float):
        return f"{value:,.2f}".rstrip("0").rstrip(".")
    if isinstance(value, int) and not isinstance(value, bool):
        return f"{value:,}"
    if isinstance(value, list):
        return ", ".join(_value(v) for v in value)
    return "(none)" if value is None else str(value)


def plain_answer(
    columns: Sequence[str], rows: Sequence[Sequence[Any]], *, truncated: bool = False
) -> str:
    """One value, a list, or a few `column: value` lines; says so when nothing came back."""
    if not rows:
        return "The graph has no matching data."
    if len(columns) == 1 and len(rows) == 1:
        return f"{columns[0]}: {_value(rows[0][0])}"
    more = len(rows) - SHOWN
    suffix = f"\n… and {more} more" if more > 0 else ""
    if truncated:
        suffix += " (result cut at the row limit)"
    if len(columns) == 1:
        items = ", ".join(_value(row[0]) for row in rows[:SHOWN])
        return f"{columns[0]} ({len(rows)}): {items}{suffix}"
    lines = [
        "• " + ", ".join(f"{c}: {_value(v)}" for c, v in zip(columns, row, strict=False))
        for row in rows[:SHOWN]
    ]
    return "\n".join(lines) + suffix


def rows_in_words(
    columns: Sequence[str],
    rows: Sequence[Sequence[Any]],
    *,
    truncated: bool = False,
    tool_text: str | None = None,
) -> str:
    """The answer the rows give without a model: a graph tool's own rendering of its rows
    when there is one (a chain reads better than its columns), else `plain_answer`."""
    return tool_text or plain_answer(columns, rows, truncated=truncated)


def tied_answer(columns: Sequence[str], rows: Sequence[Sequence[Any]], *, more: bool) -> str:
    """Rows tied for first, said to tie: "Which machine runs the most processes?" read 239
    machines with five, and the model's answer named one of them as if it were alone (a
    trial on the network graph). `more`: more tie than the rows hold."""
    lead = (
        f"More than {len(rows)} tie for first; {len(rows)} of them"
        if more
        else (f"These {len(rows)} tie for first")
    )
    return f"{lead}:\n{plain_answer(columns, rows)}"


_NOTHING = re.compile(
    r"^\W*(the graph (has|holds|contains) no (data|information)|there (is|are) no (data|results?)"
    r"|no (data|results?) (was|were)? ?found|i (could not|couldn't) find any)",
    re.IGNORECASE,
)


def denies_rows(answer: str) -> bool:
    """True when an answer opens by saying there is nothing, e.g. "The graph has no data on…"."""
    return bool(_NOTHING.match(answer))
