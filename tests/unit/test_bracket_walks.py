"""The shared bracket walks every reader of a statement's shape uses (guardrails.cypher_tokens)."""

from __future__ import annotations

import pytest

from graph_agent.statement import forgiving_depths, top_level_clauses
from guardrails.cypher_tokens import (
    enclosing,
    matching_close,
    matching_open,
    nesting,
    split_top_level,
    tokenize,
)


def _at(cypher: str, text: str, nth: int = 0) -> int:
    """Index of the nth token spelled `text`."""
    return [i for i, tok in enumerate(tokenize(cypher)) if tok.text == text][nth]


NESTING: list[tuple[str, int, int | None, bool, list[tuple[str, int]]]] = [
    # (statement, first, end, backward, each token walked with its depth)
    (
        "f(a, [b])",
        0, None, False,
        [("f", 0), ("(", 0), ("a", 1), (",", 1), ("[", 1), ("b", 2), ("]", 1), (")", 0)],
    ),
    (
        "{k: (1)}",
        0, None, False,
        [("{", 0), ("k", 1), (":", 1), ("(", 1), ("1", 2), (")", 1), ("}", 0)],
    ),
    # A stray closer: nothing after it is top level.
    ("a) , b", 0, None, False, [("a", 0), (")", -1), (",", -1), ("b", -1)]),
    # A range: depth counts from its first token.
    ("f(a, b) c", 2, 5, False, [("a", 0), (",", 0), ("b", 0)]),
    # Backward: a closer opens, and the opener of a group around the range goes below 0.
    ("a, [b]", 0, None, True, [("]", 0), ("b", 1), ("[", 0), (",", 0), ("a", 0)]),
    (
        "x, (a, b",
        0, None, True,
        [("b", 0), (",", 0), ("a", 0), ("(", -1), (",", -1), ("x", -1)],
    ),
]  # fmt: skip


@pytest.mark.parametrize(("cypher", "first", "end", "backward", "expected"), NESTING)
def test_nesting(
    cypher: str, first: int, end: int | None, backward: bool, expected: list[tuple[str, int]]
) -> None:
    walked = nesting(tokenize(cypher), first, end, backward=backward)
    assert [(tok.text, depth) for _, tok, depth in walked] == expected


def test_nesting_gives_the_indexes_it_walks() -> None:
    tokens = tokenize("a (b) c")
    assert [i for i, _, _ in nesting(tokens, 1, 4)] == [1, 2, 3]
    assert [i for i, _, _ in nesting(tokens, 1, 4, backward=True)] == [3, 2, 1]


MATCHES: list[tuple[str, str, int, int | None]] = [
    # (statement, the opening bracket, which one, the index of its closer or None)
    ("f(a, [b])", "(", 0, 7),
    ("f(a, [b])", "[", 0, 6),
    ("{x: [1, 2]} y", "{", 0, 8),
    ("count(*)", "(", 0, 3),
    ("(a", "(", 0, None),
    ("(a) (b)", "(", 1, 5),
    # Kinds count together: a bracket closes whatever is open.
    ("(a]", "(", 0, 2),
]


@pytest.mark.parametrize(("cypher", "opener", "nth", "close"), MATCHES)
def test_matching_close_and_open(cypher: str, opener: str, nth: int, close: int | None) -> None:
    tokens = tokenize(cypher)
    open_idx = _at(cypher, opener, nth)
    assert matching_close(tokens, open_idx) == close
    if close is not None:
        assert matching_open(tokens, close) == open_idx


def test_matching_open_of_a_stray_closer_is_none() -> None:
    assert matching_open(tokenize("a) b"), 1) is None


ENCLOSING: list[tuple[str, str, list[str]]] = [
    # (statement, the token looked from, the openers around it, innermost first)
    ("MATCH (n {name: [x]}) RETURN n", "x", ["[", "{", "("]),
    ("MATCH (n {name: [x]}) RETURN n", "RETURN", []),
    ("RETURN [a IN f(b) | (a)]", "|", ["["]),
    ("RETURN f(g(1), x)", "x", ["("]),
]


@pytest.mark.parametrize(("cypher", "at", "openers"), ENCLOSING)
def test_enclosing(cypher: str, at: str, openers: list[str]) -> None:
    tokens = tokenize(cypher)
    assert [tokens[i].text for i in enclosing(tokens, _at(cypher, at))] == openers


SPLITS: list[tuple[str, str, list[str]]] = [
    ("a, f(b, c), d", ",", ["a", "f(b, c)", "d"]),
    ("a, {k: 1, j: [2, 3]}", ",", ["a", "{k: 1, j: [2, 3]}"]),
    ("a,", ",", ["a", ""]),
    ("", ",", [""]),
    ("x IN xs | [y IN x | y]", "|", ["x IN xs", "[y IN x | y]"]),
    # After a stray closer nothing is top level, so nothing splits.
    ("a), b", ",", ["a), b"]),
]


@pytest.mark.parametrize(("cypher", "separator", "parts"), SPLITS)
def test_split_top_level(cypher: str, separator: str, parts: list[str]) -> None:
    tokens = tokenize(cypher)
    ranges = split_top_level(tokens, 0, len(tokens), separator)
    texts = [cypher[tokens[a].position : tokens[b - 1].end] if a < b else "" for a, b in ranges]
    assert texts == parts


def test_split_top_level_of_a_range() -> None:
    cypher = "RETURN f(a, b), c"
    tokens = tokenize(cypher)
    assert split_top_level(tokens, 3, 6) == [(3, 4), (5, 6)]  # the arguments of f


FORGIVING: list[tuple[str, list[int], list[str]]] = [
    ("MATCH (a) RETURN a", [0, 0, 1, 0, 0, 0], ["MATCH", "RETURN"]),
    # The stray `)` is ignored: RETURN stays top level (nesting alone would put it at -1).
    ("MATCH (a)) RETURN a", [0, 0, 1, 0, 0, 0, 0], ["MATCH", "RETURN"]),
    ("RETURN {a: [1]}", [0, 0, 1, 1, 1, 2, 1, 0], ["RETURN"]),
]


@pytest.mark.parametrize(("cypher", "depths", "clauses"), FORGIVING)
def test_statement_depths_forgive_a_stray_closer(
    cypher: str, depths: list[int], clauses: list[str]
) -> None:
    tokens = tokenize(cypher)
    assert forgiving_depths(tokens) == depths
    assert [tokens[i].text for i in top_level_clauses(tokens)] == clauses
