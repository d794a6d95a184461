"""Execution accuracy: generated rows against gold rows (strict and relaxed), refusals, answer text."""

from __future__ import annotations

import math
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from graph_agent.superlatives import tie_read
from guardrails import tokenize

REL_TOL = 1e-4
"""Numbers closer than this (relatively) are equal: averages printed or rounded differently."""
ABS_TOL = 1e-6
IDENTIFYING = ("name", "key", "title", "id")
"""Properties that stand for a node when a query returned the node and the other its name."""
MENTION_VALUES = 10
"""Gold values (first rows first) the answer text is checked for."""

# Canonical values: ("n", float) numbers, ("s", str), ("b", bool), ("z",) null,
# ("l", tuple) lists, ("m", tuple of (key, value)) maps, nodes and relationships.
Canon = tuple[Any, ...]


def canon(value: Any) -> Canon:
    """A comparable form of one result value.

    Nodes and relationships (maps with `_labels`/`_type`) are compared by their properties;
    lists ignore their order, because collect() gives no order unless the query sorts first.
    """
    if value is None:
        return ("z",)
    if isinstance(value, bool):
        return ("b", value)
    if isinstance(value, int | float):
        return ("n", float(value))
    if isinstance(value, str):
        return ("s", value)
    if isinstance(value, dict):
        if "_nodes" in value:  # a path: its nodes and relationships, in order
            parts = [*value.get("_nodes", []), *value.get("_relationships", [])]
            return ("l", tuple(canon(v) for v in parts))
        props = {k: v for k, v in value.items() if k not in ("_labels", "_type")}
        pairs = ((str(k), canon(v)) for k, v in props.items())
        return ("m", tuple(sorted(pairs, key=_pair_key)))
    if isinstance(value, list | tuple):
        return ("l", tuple(sorted((canon(v) for v in value), key=_sort_key)))
    return ("s", str(value))


def _sort_key(value: Canon) -> tuple[str, float | str]:
    """A total order over canonical values, for sorting only (numbers by magnitude)."""
    if value[0] == "n":
        return ("n", math.inf if math.isnan(value[1]) else value[1])
    return (value[0], repr(value))


def _pair_key(pair: tuple[str, Canon]) -> tuple[str, tuple[str, float | str]]:
    return (pair[0], _sort_key(pair[1]))


def same(a: Canon, b: Canon) -> bool:
    """Equal canonical values, numbers within a small tolerance."""
    if a[0] != b[0]:
        return False
    if a[0] == "n":
        return math.isclose(a[1], b[1], rel_tol=REL_TOL, abs_tol=ABS_TOL) or (
            math.isnan(a[1]) and math.isnan(b[1])
        )
    if a[0] in ("l", "m"):
        if len(a[1]) != len(b[1]):
            return False
        if a[0] == "m":
            return all(
                ka == kb and same(va, vb) for (ka, va), (kb, vb) in zip(a[1], b[1], strict=True)
            )
        return all(same(x, y) for x, y in zip(a[1], b[1], strict=True))
    return bool(a == b)


def canon_row(row: Sequence[Any]) -> tuple[Canon, ...]:
    """A row as a sorted tuple of canonical values: column names and order do not matter."""
    return tuple(sorted((canon(v) for v in row), key=_sort_key))


def _same_row(a: tuple[Canon, ...], b: tuple[Canon, ...]) -> bool:
    return len(a) == len(b) and all(same(x, y) for x, y in zip(a, b, strict=True))


def orders_and_limits(cypher: str) -> bool:
    """True when the statement's final part sorts and limits (then row order is part of it)."""
    words = [t.value for t in tokenize(cypher) if t.kind == "keyword"]
    if "LIMIT" not in words:
        return False
    # Only the last RETURN's ORDER BY counts; one inside a WITH orders an intermediate step.
    tail = words[len(words) - 1 - words[::-1].index("RETURN") :] if "RETURN" in words else words
    return "ORDER" in tail and "LIMIT" in tail


def rows_match(
    gold: Sequence[Sequence[Any]], generated: Sequence[Sequence[Any]], *, ordered: bool
) -> bool:
    """Strict execution accuracy: the same rows as multisets of values (or in order)."""
    if len(gold) != len(generated):
        return False
    g_rows = [canon_row(r) for r in gold]
    p_rows = [canon_row(r) for r in generated]
    if ordered:
        return all(_same_row(a, b) for a, b in zip(g_rows, p_rows, strict=True))
    # Sorting both sides first makes the greedy match find the pair almost always at once.
    g_rows.sort(key=lambda r: [_sort_key(v) for v in r])
    p_rows.sort(key=lambda r: [_sort_key(v) for v in r])
    unmatched = list(p_rows)
    for row in g_rows:
        for i, candidate in enumerate(unmatched):
            if _same_row(row, candidate):
                del unmatched[i]
                break
        else:
            return False
    return True


def _flat(value: Any) -> Iterable[Any]:
    """Scalar values inside a value: list items, map values, node properties."""
    if isinstance(value, dict):
        if "_nodes" in value:
            for part in [*value.get("_nodes", []), *value.get("_relationships", [])]:
                yield from _flat(part)
            return
        for k, v in value.items():
            if k not in ("_labels", "_type"):
                yield from _flat(v)
    elif isinstance(value, list | tuple):
        for v in value:
            yield from _flat(v)
    else:
        yield value


def _loose(value: Any) -> Canon:
    """Relaxed form: strings trimmed and case-folded."""
    if isinstance(value, str):
        return ("s", value.strip().casefold())
    return canon(value)


def gold_values(rows: Sequence[Sequence[Any]]) -> list[Any]:
    """The values a correct answer must contain: non-null scalars, a node by its identity.

    A node stands for itself by its identifying property (name, key, title or id), so a
    query that returns the node and one that returns its name both contain it.
    """
    values: list[Any] = []
    for row in rows:
        for value in row:
            if isinstance(value, dict) and "_labels" in value:
                ident = next((value[p] for p in IDENTIFYING if value.get(p) is not None), None)
                if ident is not None:
                    values.append(ident)
                    continue
            values.extend(v for v in _flat(value) if v is not None)
    return values


def relaxed_match(gold: Sequence[Sequence[Any]], generated: Sequence[Sequence[Any]]) -> bool:
    """Every gold value appears somewhere in the generated rows (extra columns/rows allowed)."""
    wanted = gold_values(gold)
    if not wanted:
        # Nothing to find: an empty gold result is matched only by an empty one.
        return not generated if not gold else True
    have = [_loose(v) for row in generated for value in row for v in _flat(value)]
    have_exact = {h for h in have if h[0] != "n"}
    numbers = [h[1] for h in have if h[0] == "n"]
    for value in wanted:
        form = _loose(value)
        if form[0] == "n":
            if not any(math.isclose(form[1], n, rel_tol=REL_TOL, abs_tol=ABS_TOL) for n in numbers):
                return False
        elif form not in have_exact:
            return False
    return True


def _number_forms(x: float) -> set[str]:
    if float(x).is_integer():
        return {f"{x:.0f}", f"{x:,.0f}"}
    # As printed in full, and rounded the ways people (and models) round.
    return {str(x), f"{x:g}"} | {f"{x:.{d}f}" for d in range(4)} | {f"{x:,.{d}f}" for d in (1, 2)}


def mentioned(value: Any, text: str) -> bool:
    """Whether the answer text contains the value (numbers in their usual printed forms)."""
    folded = text.casefold()
    if isinstance(value, bool):
        return str(value).casefold() in folded or ("yes" if value else "no") in folded
    if isinstance(value, int | float):
        return any(
            re.search(rf"(?<![\d.]){re.escape(f)}(?![\d])", text) for f in _number_forms(value)
        )
    return str(value).strip().casefold() in folded


def answer_mentions(gold: Sequence[Sequence[Any]], answer: str) -> float | None:
    """Share of the first gold values that the answer text names; None without gold values."""
    values: list[Any] = []
    for value in gold_values(gold):
        if value not in values:
            values.append(value)
        if len(values) == MENTION_VALUES:
            break
    if not values:
        return None
    return sum(mentioned(v, answer) for v in values) / len(values)


@dataclass(frozen=True)
class Score:
    """How one answer compares with the gold."""

    strict: bool
    relaxed: bool
    answer_mentions: float | None = None
    """Share of gold values named in the answer text (None for refusals/empty gold)."""
    ordered: bool = False
    """Whether rows were compared in order (the gold sorts and limits)."""


REFUSALS = ("out_of_scope",)
"""Outcomes that are a refusal in the strict sense."""


def refused(outcome: str, cypher: str | None) -> tuple[bool, bool]:
    """(strict, relaxed) for a question the bot should decline.

    Strict: refused as out of scope, or said the graph has no data without running a query.
    Relaxed: also asking back, or a query that found nothing.
    """
    strict = outcome in REFUSALS or (outcome == "no_data" and not cypher)
    relaxed = strict or outcome in ("needs_clarification", "no_data")
    return strict, relaxed


def score_answer(
    gold_cypher: str,
    gold_rows: Sequence[Sequence[Any]],
    outcome: str,
    rows: Sequence[Sequence[Any]],
    answer: str,
) -> Score:
    """Score an answerable item; an outcome without rows (refusal, failure) scores nothing
    unless the gold result is empty too."""
    # A gold that keeps one row holds every row tied with it (GoldCache): those come in no order.
    ordered = orders_and_limits(gold_cypher) and tie_read(gold_cypher) is None
    ran = outcome in ("answered", "no_data")
    strict = ran and rows_match(gold_rows, rows, ordered=ordered)
    relaxed = ran and relaxed_match(gold_rows, rows)
    return Score(
        strict=strict,
        relaxed=relaxed or strict,
        answer_mentions=answer_mentions(gold_rows, answer),
        ordered=ordered,
    )


# --- graph tool items ---------------------------------------------------------------------------


def _holds(name: str, rows: Sequence[Sequence[Any]]) -> bool:
    """Whether some value of the rows (list items and map values too) holds the name."""
    folded = name.strip().casefold()
    return any(
        isinstance(v, str) and folded in v.casefold()
        for row in rows
        for value in row
        for v in _flat(value)
    )


def score_tool(
    expected_tool: str | None,
    names: Sequence[str],
    outcome: str,
    tool: str | None,
    rows: Sequence[Sequence[Any]],
    answer: str,
) -> Score:
    """A graph tool item: strict when the expected tool answered and the answer text names
    every expected name (a connection's path, a card's identifying value); relaxed when every
    name is in the answer or the rows, whichever path answered."""
    answered = outcome == "answered"
    said = [mentioned(name, answer) for name in names]
    strict = answered and tool == expected_tool and all(said)
    relaxed = answered and all(s or _holds(n, rows) for n, s in zip(names, said, strict=True))
    return Score(
        strict=strict,
        relaxed=relaxed or strict,
        answer_mentions=sum(said) / len(said) if said else None,
    )


def asked_back(outcome: str, names: Sequence[str], choices: Sequence[str]) -> tuple[bool, bool]:
    """(strict, relaxed) for a name that fits several things: strict when the bot asked back
    offering every expected candidate; relaxed when it asked back at all (never a guess)."""
    asked = outcome == "needs_clarification"
    offered = [c.casefold() for c in choices]
    strict = asked and all(any(n.casefold() in c for c in offered) for n in names)
    return strict, asked


def found_nothing(outcome: str, rows: int) -> tuple[bool, bool]:
    """(strict, relaxed) for a name nothing in the graph has: strict when the answer is "nothing
    found" (no rows); relaxed also for a refusal or a request to say more (no guess either)."""
    strict = outcome == "no_data" or (outcome == "answered" and rows == 0)
    return strict, strict or outcome in ("out_of_scope", "needs_clarification")
