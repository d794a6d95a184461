"""A plain answer from rows, without an LLM (verified-query reuse when no LLM is configured)."""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

SHOWN = 10
FIELDS_SHOWN = 4
"""A node or relationship in a row is shown by this many of its properties, names first."""
LONGEST_FIELD = 40
_NAMES_FIRST = (
    re.compile(r"name|title", re.IGNORECASE),
    re.compile(r"type|kind|category|key|code", re.IGNORECASE),
)
_ID = re.compile(r"(?:^|_)id$|[a-z]Id$", re.IGNORECASE)
_UNGROUPED = re.compile(r"year|(?:^|[_.])id$|[a-z]Id$|code|zip|postal", re.IGNORECASE)
"""Whole numbers under these keys are written without thousands separators: a year, an id or
a code is no amount ("m.year: 2,007" in a trial on a movie graph)."""


def _rank(key: str) -> int:
    """Names first, then what kind of thing it is, ids (often hashes) last."""
    if _ID.search(key):
        return 3
    return next((i for i, pattern in enumerate(_NAMES_FIRST) if pattern.search(key)), 2)


def _value(value: Any, key: str = "") -> str:
    """One value in words; `key` (its column or property) says whether a number is an amount."""
    if isinstance(value, dict):
        return entity_text(value)
    if isinstance(value, float):
        if value and abs(value) < 1:
            return f"{value:.4g}"  # a rate's figures, not two decimals (an APR 0.0541 as "0.05")
        return f"{value:,.2f}".rstrip("0").rstrip(".")
    if isinstance(value, int) and not isinstance(value, bool):
        return str(value) if _UNGROUPED.search(key) else f"{value:,}"
    if isinstance(value, list):
        return ", ".join(_value(v, key) for v in value)
    return "(none)" if value is None else str(value)


def entity_text(value: dict[str, Any]) -> str:
    """A node, relationship or path returned whole, in words: `Crime (type: Burglary, date:
    24/08/2017, …)` rather than its property map (a trial on the POLE graph printed `{'_labels':
    ['Crime'], 'date': …, 'id': 'de1c4d40bdb6…'}`). Names first, long values cut."""
    if "_nodes" in value:
        return " → ".join(_value(node) for node in value["_nodes"])
    props = [(k, v) for k, v in value.items() if not k.startswith("_")]
    props.sort(key=lambda kv: _rank(kv[0]))
    shown = []
    for key, item in props[:FIELDS_SHOWN]:
        text = _value(item, key)
        if len(text) > LONGEST_FIELD:
            text = text[: LONGEST_FIELD - 1] + "…"
        shown.append(f"{key}: {text}")
    if len(props) > FIELDS_SHOWN:
        shown.append("…")
    kind = value.get("_labels") or value.get("_type") or ""
    head = ":".join(kind) if isinstance(kind, list) else str(kind)
    fields = ", ".join(shown)
    return f"{head} ({fields})" if head else "{" + fields + "}"


def plain_answer(
    columns: Sequence[str], rows: Sequence[Sequence[Any]], *, truncated: bool = False
) -> str:
    """One value, a list, or a few `column: value` lines; says so when nothing came back."""
    if not rows:
        return "The graph has no matching data."
    if len(columns) == 1 and len(rows) == 1:
        return f"{columns[0]}: {_value(rows[0][0], columns[0])}"
    more = len(rows) - SHOWN
    suffix = f"\n… and {more} more" if more > 0 else ""
    if truncated:
        suffix += " (result cut at the row limit)"
    if len(columns) == 1:
        items = ", ".join(_value(row[0], columns[0]) for row in rows[:SHOWN])
        return f"{columns[0]} ({len(rows)}): {items}{suffix}"
    lines = [
        "• " + ", ".join(f"{c}: {_value(v, c)}" for c, v in zip(columns, row, strict=False))
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
