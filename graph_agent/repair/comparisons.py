"""A number the question bounds ("five or more", "more than 12,000") written as an equality.

`(a:Airport {runways: 5})` for "Which airports have five or more runways?" (a dev question,
on every run) keeps only the airports with exactly five. The question's words say which
comparison the number takes; the equality on that number becomes it: a map entry moves to a
WHERE (`WHERE a.runways >= 5`), a `WHERE x.p = 5` becomes `x.p >= 5`.
"""

from __future__ import annotations

import re

from graph_agent.lint import node_map_entries, without_entries
from graph_agent.statement import Statement

NUMBER_WORDS = (
    "zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten",
    "eleven", "twelve", "thirteen", "fourteen", "fifteen", "sixteen", "seventeen", "eighteen",
    "nineteen", "twenty",
)  # fmt: skip
"""Whole numbers a question may write in words (index = value)."""
_N = r"(\d{1,3}(?:,\d{3})+(?:\.\d+)?|\d+(?:\.\d+)?|" + "|".join(NUMBER_WORDS) + r")"
_MORE = r"(?:more|greater|higher|larger|longer|bigger|taller|heavier|older|later)"
_LESS = r"(?:fewer|less|lower|smaller|shorter|lighter|younger|earlier)"
_BOUNDS = [
    (re.compile(rf"\b{_MORE}\s+than\s+{_N}\b"), ">"),
    (re.compile(rf"\b(?:over|above|exceeding|after)\s+{_N}\b"), ">"),
    (re.compile(rf"\b(?:at\s+least|no\s+fewer\s+than|no\s+less\s+than)\s+{_N}\b"), ">="),
    (re.compile(rf"\b{_N}\s+(?:\w+\s+)?or\s+(?:more|greater|higher|above|over)\b"), ">="),
    (re.compile(rf"\b{_LESS}\s+than\s+{_N}\b"), "<"),
    (re.compile(rf"\b(?:under|below|before)\s+{_N}\b"), "<"),
    (re.compile(rf"\b(?:at\s+most|no\s+more\s+than|up\s+to)\s+{_N}\b"), "<="),
    (re.compile(rf"\b{_N}\s+(?:\w+\s+)?or\s+(?:fewer|less|lower|under|below)\b"), "<="),
]


def question_bounds(question: str) -> dict[str, str]:
    """The numbers the question bounds, as written in Cypher, with their comparison:
    "five or more runways" → {"5": ">="}; "more than 12,000 feet" → {"12000": ">"}. A
    number bounded two ways is left out."""
    found: dict[str, set[str]] = {}
    text = question.casefold()
    for pattern, op in _BOUNDS:
        for match in pattern.finditer(text):
            word = match.group(1)
            number = (
                str(NUMBER_WORDS.index(word)) if word in NUMBER_WORDS else word.replace(",", "")
            )
            found.setdefault(number, set()).add(op)
    return {number: ops.pop() for number, ops in found.items() if len(ops) == 1}


def comparison_fix(cypher: str, question: str) -> tuple[str, str] | None:
    """The statement with each equality on a number the question bounds written as that
    bound, and what changed; None when there is none (or a map entry's node has no variable
    to compare in a WHERE)."""
    bounds = question_bounds(question)
    if not bounds:
        return None
    entries = node_map_entries(cypher)
    moved = {
        e: f"{e.variable}.{e.prop} {bounds[value]} {value}"
        for e in entries
        if (value := _number(e.text.split(":", 1)[1])) in bounds and e.variable
    }
    if moved:
        # Into one WHERE: the entries of the clause that holds the first (a later MATCH's
        # variables are not bound yet there).
        statement = Statement(cypher)
        clause = _clause_at(statement, next(iter(moved)).node)
        moved = {e: c for e, c in moved.items() if _clause_at(statement, e.node) == clause}
    fixed = cypher
    if moved:
        stripped = without_entries(cypher, entries, lambda e: e in moved)
        # The node's `(` comes before its map: its offset is the same after the entries go.
        placed = _add_condition(stripped, next(iter(moved)).node, " AND ".join(moved.values()))
        if placed is None:
            return None
        fixed = placed
    fixed, changed = _equalities(fixed, bounds)
    changes = [f"{{{e.text}}} → {condition}" for e, condition in moved.items()] + changed
    if not changes:
        return None
    return fixed, "; ".join(changes) + " (the question bounds the number)"


def _number(text: str) -> str | None:
    value = text.strip()
    return value if re.fullmatch(r"\d+(?:\.\d+)?", value) else None


def _clause_at(statement: Statement, offset: int) -> int | None:
    """The top-level clause whose text holds `offset`."""
    tokens = statement.tokens
    return next((c for c in reversed(statement.clauses) if tokens[c].position <= offset), None)


def _add_condition(cypher: str, node_at: int, condition: str) -> str | None:
    """`condition` added to the WHERE of the MATCH holding the node pattern at offset
    `node_at` (the WHERE it has, in brackets, or a new one); None when no MATCH holds it."""
    statement = Statement(cypher)
    tokens = statement.tokens
    holding = _clause_at(statement, node_at)
    if holding is None or statement.keyword_at(holding) != "MATCH":
        return None
    end = statement.clause_end(holding)
    if end < len(tokens) and statement.keyword_at(end) == "WHERE":
        stop = statement.clause_end(end)
        if stop <= end + 1:
            return None
        first, last = tokens[end + 1].position, tokens[stop - 1].end
        return f"{cypher[:first]}{condition} AND ({cypher[first:last]}){cypher[last:]}"
    if end >= len(tokens):
        return f"{cypher.rstrip()} WHERE {condition}"
    at = tokens[end].position
    return f"{cypher[:at]}WHERE {condition} {cypher[at:]}"


def _equalities(cypher: str, bounds: dict[str, str]) -> tuple[str, list[str]]:
    """`x.p = 5` written with the question's bound on 5 (`x.p >= 5`)."""
    statement = Statement(cypher)
    tokens = statement.tokens
    edits: list[tuple[int, int, str]] = []
    changes: list[str] = []
    for i, tok in enumerate(tokens):
        if not tok.is_punct("=") or i < 3 or i + 1 >= len(tokens):
            continue
        after = tokens[i + 1]
        if after.text in bounds and tokens[i - 2].is_punct(".") and tokens[i - 1].is_name:
            op = bounds[after.text]
            edits.append((tok.position, tok.end, op))
            changes.append(f"{tokens[i - 3].text}.{tokens[i - 1].text} = {after.text} → {op}")
    return statement.edited(edits), changes
