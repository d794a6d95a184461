"""Rules of the answer step: a worded answer that the rows do not support is replaced.

Each guard gives the plain rendering of the rows instead (never a made-up fact).
"""

from __future__ import annotations

import re
from typing import Any

from graph_agent.answer_offline import denies_rows, rows_in_words
from graph_agent.grounding import Evidence, unsupported_claims
from graph_agent.repair.rule import Case, Fix, Kind, Phase, Trigger, rule

A, W = Phase.ANSWER, Trigger.WORDED_ANSWER
_ROW_CAP = re.compile(r"\b(?:LIMIT|SKIP)\s+\d+", re.IGNORECASE)


def _plain(case: Case) -> str:
    """The rows in plain words (a graph tool's rows: the tool's own rendering of them)."""
    rows = [list(r) for r in case.rows]
    tool_text = case.state.get("tool_text")
    return rows_in_words(list(case.columns), rows, truncated=case.truncated, tool_text=tool_text)


@rule("answer-denies-rows", A, W, Kind.GUARD)
def answer_denies_rows(case: Case) -> Fix | None:
    """An empty answer, or one that says there is nothing while rows came back (a small model
    read "services with no tier" as "no data"): the rows speak instead."""
    if not case.rows or (case.answer.strip() and not denies_rows(case.answer)):
        return None
    return Fix("the answer denied the rows", note=_plain(case))


@rule("unsupported-claims", A, W, Kind.GUARD)
def unsupported(case: Case) -> Fix | None:
    """An answer with a number or name that neither the rows nor the question and query hold
    ("100 miles" from `LIMIT 100` over rows of nulls): replaced by the plain rows."""
    plain = _plain(case)
    if case.answer == plain:
        return None
    # The query's literals may be echoed, but not its row cap.
    cypher = case.state.get("cypher", "")
    known = " ".join([case.question, _ROW_CAP.sub(" ", cypher), *case.columns])
    at_cap = case.truncated or len(case.rows) >= case.ctx.config.max_rows
    rows: list[list[Any]] = [list(r) for r in case.rows]
    missing = unsupported_claims(case.answer, Evidence(rows, known, count_rows=not at_cap))
    if not missing:
        return None
    # Counts only in the detail: the claims may quote the user's text.
    return Fix(f"{len(missing)} claim(s) the rows do not hold", note=plain,
               update={"ungrounded": True})  # fmt: skip


@rule("omits-the-value", A, W, Kind.GUARD)
def omits_the_value(case: Case) -> Fix | None:
    """A one-value result the answer does not state ("zone" for a zone of 2): the plain rows.
    Zero and booleans are left alone ("no machines", "yes" state them in words)."""
    if len(case.rows) != 1 or len(case.rows[0]) != 1:
        return None
    value = case.rows[0][0]
    if isinstance(value, bool) or value is None or value == 0:
        return None
    if isinstance(value, int):
        forms = {str(value), f"{value:,}"}
    elif isinstance(value, float):
        forms = {str(value), f"{value:.1f}", f"{value:.2f}", f"{value:,.2f}", f"{round(value):,}"}
        forms |= {str(round(value))}
    elif isinstance(value, str) and value.strip():
        forms = {value.strip()}
    else:
        return None
    text = case.answer.casefold()
    if any(form.casefold() in text for form in forms):
        return None
    return Fix("the answer left out the value", note=_plain(case))


@rule("one-of-many", A, W, Kind.GUARD)
def one_of_many(case: Case) -> Fix | None:
    """An answer that is one row's value alone while several rows came back: asked "Which houses
    are in the North?" (a trial on a Game of Thrones graph nobody here wrote), the 1.5B model,
    told that the person sees the 61 rows in a table, answered "House Ryder of the Rills", as if
    that house were all. The plain rows (how many, and the first ones) instead. Not for one row,
    for rows tied for first (their answer says they tie), nor for a graph tool's rows (the
    first of the routes a connection finds is its answer)."""
    if len(case.rows) < 2 or case.state.get("tied") or case.state.get("tool_text"):
        return None
    said = case.answer.strip().rstrip(".").strip().casefold()
    if not said or not any(
        isinstance(cell, str) and cell.strip().casefold() == said
        for row in case.rows
        for cell in row
    ):
        return None
    return Fix(f"the answer named one of {len(case.rows)} rows", note=_plain(case))


_PART_OF_THE_LIST = re.compile(
    r"\b(?:such as|including|includes?|among (?:them|others)|e\.g|for example|for instance|"
    r"others?|more|some|several|top|first|last|few|most|etc)\b",
    re.IGNORECASE,
)
_LISTED = 3


@rule("list-left-short", A, W, Kind.GUARD)
def list_left_short(case: Case) -> Fix | None:
    """An answer that lists the rows' values as if they were all, with some left out: "Which
    places is Gandalf related to?" (a trial on a co-occurrence graph nobody here wrote) got 21
    of its 22 places, Mordor missing, and "Which characters are related to Mordor?" 29 of 32;
    a reader takes a bare list for the whole. The plain rows instead, when the answer names at
    least three values of one column and not all, and says no word that it gives only part
    ("such as", "including", "among others", "the top", "more", …)."""
    if len(case.rows) <= _LISTED or case.state.get("tool_text"):
        return None
    if _PART_OF_THE_LIST.search(case.answer):
        return None
    text = case.answer.casefold()
    for column in range(len(case.columns)):
        values = {
            cell.strip().casefold()
            for row in case.rows
            if column < len(row) and isinstance(cell := row[column], str) and cell.strip()
        }
        named = {v for v in values if re.search(rf"(?<!\w){re.escape(v)}(?!\w)", text)}
        if len(named) >= _LISTED and named != values:
            return Fix(f"the answer listed {len(named)} of {len(values)} values", note=_plain(case))
    return None
