"""Execution-accuracy scoring: strict and relaxed row comparison, refusals, answer mentions."""

from __future__ import annotations

from typing import Any

import pytest

from graph_agent.evaluation.items import (
    EvalFileError,
    assign_splits,
    chains,
    parse_items,
    select_split,
)
from graph_agent.evaluation.report import percentile, summarize
from graph_agent.evaluation.scoring import (
    answer_mentions,
    orders_and_limits,
    refused,
    relaxed_match,
    rows_match,
    score_answer,
)

NODE_A = {"_labels": ["Team"], "name": "Search", "department": "Platform"}
NODE_A_OTHER_ORDER = {"department": "Platform", "name": "Search", "_labels": ["Team"]}
NODE_B = {"_labels": ["Team"], "name": "Billing", "department": "Platform"}

Rows = list[list[Any]]

STRICT_CASES: list[tuple[str, Rows, Rows, bool, bool]] = [
    # (case, gold, generated, ordered, expected)
    ("identical", [["a", 1]], [["a", 1]], False, True),
    ("column order ignored", [["a", 1]], [[1, "a"]], False, True),
    ("row order ignored", [["a"], ["b"]], [["b"], ["a"]], False, True),
    ("row order kept when ordered", [["a"], ["b"]], [["b"], ["a"]], True, False),
    ("ordered and equal", [["a", 2], ["b", 1]], [[2, "a"], [1, "b"]], True, True),
    ("int equals float", [[3]], [[3.0]], False, True),
    ("float within tolerance", [[77.7352941176471]], [[77.73529411764]], False, True),
    ("float outside tolerance", [[77.7]], [[77.8]], False, False),
    ("number is not its string", [[3]], [["3"]], False, False),
    ("strings are case-sensitive", [["Search"]], [["search"]], False, False),
    ("duplicates count", [["a"], ["a"]], [["a"]], False, False),
    ("multiset with duplicates", [["a"], ["a"], ["b"]], [["a"], ["b"], ["a"]], False, True),
    ("extra column fails", [["a"]], [["a", 1]], False, False),
    ("extra row fails", [["a"]], [["a"], ["b"]], False, False),
    ("missing row fails", [["a"], ["b"]], [["a"]], False, False),
    ("both empty", [], [], False, True),
    ("nulls compare equal", [[None, "a"]], [["a", None]], False, True),
    ("null is not zero", [[None]], [[0]], False, False),
    ("nodes by properties", [[NODE_A]], [[NODE_A_OTHER_ORDER]], False, True),
    ("different nodes", [[NODE_A]], [[NODE_B]], False, False),
    ("node labels ignored", [[NODE_A]], [[{**NODE_A, "_labels": ["Other"]}]], False, True),
    ("collected lists ignore order", [[["x", "y"]]], [[["y", "x"]]], False, True),
    ("lists differ", [[["x", "y"]]], [[["x"]]], False, False),
    ("booleans", [[True]], [[True]], False, True),
    ("bool is not one", [[True]], [[1]], False, False),
    ("path by parts", [[{"_nodes": [NODE_A], "_relationships": []}]],
     [[{"_nodes": [NODE_A_OTHER_ORDER], "_relationships": []}]], False, True),
]  # fmt: skip


@pytest.mark.parametrize(
    ("gold", "generated", "ordered", "expected"),
    [case[1:] for case in STRICT_CASES],
    ids=[case[0] for case in STRICT_CASES],
)
def test_rows_match(gold: Rows, generated: Rows, ordered: bool, expected: bool) -> None:
    assert rows_match(gold, generated, ordered=ordered) is expected


RELAXED_CASES: list[tuple[str, Rows, Rows, bool]] = [
    ("extra columns allowed", [["a"]], [["a", 1]], True),
    ("extra rows allowed", [["a"]], [["a"], ["b"]], True),
    ("case and spaces folded", [["Search"]], [[" search "]], True),
    ("missing value", [["a"], ["b"]], [["a"]], False),
    ("numbers with tolerance", [[10]], [["x", 10.000001]], True),
    ("node found by its name", [[NODE_A]], [["Search"]], True),
    ("name found inside a node", [["Search"]], [[NODE_A]], True),
    ("value inside a collected list", [["b"]], [[["a", "b"]]], True),
    ("null gold values are not required", [["a", None]], [["a"]], True),
    ("empty gold, empty generated", [], [], True),
    ("empty gold, rows generated", [], [["a"]], False),
    ("wrong number", [[4]], [[5]], False),
]


@pytest.mark.parametrize(
    ("gold", "generated", "expected"),
    [case[1:] for case in RELAXED_CASES],
    ids=[case[0] for case in RELAXED_CASES],
)
def test_relaxed_match(gold: Rows, generated: Rows, expected: bool) -> None:
    assert relaxed_match(gold, generated) is expected


ORDER_CASES = [
    ("MATCH (s) RETURN s.name AS n ORDER BY n LIMIT 3", True),
    ("match (s) return s.name as n order by n desc limit 1", True),
    ("MATCH (s) RETURN s.name AS n ORDER BY n", False),
    ("MATCH (s) RETURN s.name AS n LIMIT 3", False),
    ("MATCH (s) WITH s ORDER BY s.tier LIMIT 3 RETURN s.name", False),
    ("MATCH (s) WHERE s.name = 'ORDER BY x LIMIT 1' RETURN s.name", False),
]


@pytest.mark.parametrize(("cypher", "expected"), ORDER_CASES)
def test_orders_and_limits(cypher: str, expected: bool) -> None:
    assert orders_and_limits(cypher) is expected


REFUSAL_CASES = [
    ("out_of_scope", None, (True, True)),
    ("no_data", None, (True, True)),  # "the graph has no data on …" without a query
    ("no_data", "MATCH (n) RETURN n", (False, True)),  # ran a query that found nothing
    ("needs_clarification", None, (False, True)),
    ("answered", "MATCH (n) RETURN n", (False, False)),
    ("failed", None, (False, False)),
]


@pytest.mark.parametrize(("outcome", "cypher", "expected"), REFUSAL_CASES)
def test_refused(outcome: str, cypher: str | None, expected: tuple[bool, bool]) -> None:
    assert refused(outcome, cypher) == expected


MENTION_CASES: list[tuple[Rows, str, float | None]] = [
    ([["Payments", 12]], "Payments has 12 people.", 1.0),
    ([["Payments", 12]], "payments is the biggest.", 0.5),
    ([[1200]], "There are 1,200 of them.", 1.0),
    ([[77.7352941]], "About 77.7 minutes on average.", 1.0),
    ([[12]], "There are 112 services.", 0.0),  # 12 inside 112 is not a mention
    ([[None]], "Nothing.", None),
]


@pytest.mark.parametrize(("gold", "answer", "expected"), MENTION_CASES)
def test_answer_mentions(gold: Rows, answer: str, expected: float | None) -> None:
    assert answer_mentions(gold, answer) == expected


def test_score_answer_needs_a_run() -> None:
    gold = "MATCH (t:Team) RETURN t.name ORDER BY t.name LIMIT 2"
    ran = score_answer(gold, [["A"], ["B"]], "answered", [["A"], ["B"]], "A and B")
    assert ran.strict and ran.relaxed and ran.ordered and ran.answer_mentions == 1.0
    refused_ = score_answer(gold, [["A"], ["B"]], "out_of_scope", [], "")
    assert not refused_.strict and not refused_.relaxed
    empty = score_answer("MATCH (t:Team) RETURN t.name", [], "no_data", [], "none")
    assert empty.strict and empty.relaxed


def test_rows_tied_for_a_limit_of_one_compare_in_any_order() -> None:
    gold = "MATCH (s:S)-->(p:P) RETURN s.name AS s, count(p) AS n ORDER BY n DESC LIMIT 1"
    tied = [["A", 5], ["B", 5]]
    score = score_answer(gold, tied, "answered", [["B", 5], ["A", 5]], "A and B")
    assert score.strict and not score.ordered
    assert not score_answer(gold, tied, "answered", [["A", 5]], "A").strict  # one of the two
    top3 = gold.replace("LIMIT 1", "LIMIT 3")
    assert score_answer(top3, tied, "answered", tied, "A, B").ordered


ITEM_CASES: list[tuple[str, list[dict[str, Any]], str]] = [
    ("duplicate id", [{"id": "a", "question": "q", "gold_cypher": "M"}] * 2, "duplicate id"),
    ("follow-up before parent", [{"id": "b", "question": "q", "follow_up_of": "a"}], "before"),
    ("missing question", [{"id": "a"}], "missing 'question'"),
    ("answer without gold", [{"id": "a", "question": "q", "expected": "answer"}], "gold_cypher"),
    (
        "bad expected",
        [{"id": "a", "question": "q", "expected": "maybe"}],
        "clarification or no_data",
    ),
    ("not a mapping", ["just a string"], "expected a mapping"),
    ("bad split", [{"id": "a", "question": "q", "split": "train"}], "dev or test"),
    (
        "chain across splits",
        [
            {"id": "a", "question": "q", "split": "dev"},
            {"id": "b", "question": "q", "follow_up_of": "a", "split": "test"},
        ],
        "one split",
    ),
]


@pytest.mark.parametrize(
    ("raw", "message"), [c[1:] for c in ITEM_CASES], ids=[c[0] for c in ITEM_CASES]
)
def test_parse_items_rejects(raw: list[dict[str, Any]], message: str) -> None:
    with pytest.raises(EvalFileError, match=message):
        parse_items(raw)


def test_items_default_to_refusal_without_gold_and_group_into_chains() -> None:
    items = parse_items(
        [
            {"id": "a", "question": "q1", "gold_cypher": "MATCH (n) RETURN n", "tags": "x"},
            {"id": "oos", "question": "weather?"},
            {"id": "b", "question": "q2", "gold_cypher": "M", "follow_up_of": "a"},
            {"id": "c", "question": "q3", "gold_cypher": "M", "follow_up_of": "b"},
        ]
    )
    assert items[0].tags == ("x",) and items[1].expected == "refusal"
    assert [[i.id for i in chain.items] for chain in chains(items)] == [["a", "b", "c"], ["oos"]]


def _conversations(n: int) -> list[dict[str, Any]]:
    """n conversations: every third has a follow-up."""
    raw: list[dict[str, Any]] = []
    for i in range(n):
        raw.append({"id": f"q{i}", "question": "q"})
        if i % 3 == 0:
            raw.append({"id": f"q{i}-f", "question": "and?", "follow_up_of": f"q{i}"})
    return raw


def test_assign_splits_is_seeded_keeps_chains_and_gives_test_its_share() -> None:
    items = parse_items(_conversations(30))
    first = assign_splits(items, seed=7)
    assert first == assign_splits(items, seed=7)
    assert first != assign_splits(items, seed=8)
    assert set(first) == {item.id for item in items}
    assert all(first[f"q{i}-f"] == first[f"q{i}"] for i in range(0, 30, 3))
    test_share = sum(v == "test" for v in first.values()) / len(items)
    assert 0.4 <= test_share < 0.5


def test_assign_splits_gives_every_kind_of_question_both_sides() -> None:
    # The first split put every no-data item (the last items of each file) in test.
    raw = [{"id": f"l{i}", "question": "q", "tags": ["lookup"]} for i in range(10)]
    raw += [{"id": f"n{i}", "question": "q", "tags": ["no-data"]} for i in range(3)]
    for seed in range(20):
        splits = assign_splits(parse_items(raw), seed=seed)
        for kind in ("l", "n"):
            sides = [v for k, v in splits.items() if k.startswith(kind)]
            assert "dev" in sides and "test" in sides, (seed, kind, sides)


def test_assign_splits_keeps_a_split_already_given() -> None:
    raw = _conversations(10)
    for item in raw:
        item["split"] = "dev"
    raw.append({"id": "new", "question": "q"})
    assert assign_splits(parse_items(raw), seed=1)["q0"] == "dev"


def test_select_split() -> None:
    items = parse_items(
        [
            {"id": "a", "question": "q", "split": "dev"},
            {"id": "b", "question": "q", "split": "test"},
            {"id": "c", "question": "q", "follow_up_of": "b", "split": "test"},
        ]
    )
    assert [i.id for i in select_split(items, "test")] == ["b", "c"]
    assert [i.id for i in select_split(items, "dev")] == ["a"]
    assert len(select_split(items, "all")) == 3
    with pytest.raises(EvalFileError, match="no split"):
        select_split(parse_items([{"id": "a", "question": "q"}]), "dev")


def test_summarize_by_run_and_tag() -> None:
    base = {"expected": "answer", "llm_calls": 3, "prompt_tokens": 100, "completion_tokens": 10}
    records = [
        {**base, "id": "1", "run": "full", "tags": ["t"], "strict": True, "relaxed": True,
         "latency_ms": 100.0, "outcome": "answered"},
        {**base, "id": "2", "run": "full", "tags": ["t", "u"], "strict": False, "relaxed": True,
         "latency_ms": 300.0, "outcome": "answered"},
        {**base, "id": "3", "run": "full", "tags": ["oos"], "expected": "refusal", "strict": True,
         "relaxed": True, "latency_ms": 50.0, "outcome": "out_of_scope"},
        {**base, "id": "1", "run": "single", "tags": ["t"], "strict": False, "relaxed": False,
         "latency_ms": 10.0, "outcome": "timeout", "timed_out": True, "llm_calls": 1},
    ]  # fmt: skip
    summary = summarize(records)
    full = summary["runs"]["full"]
    assert full["items"] == 3 and full["strict"] == pytest.approx(2 / 3)
    assert full["answerable_strict"] == 0.5 and full["answerable_relaxed"] == 1.0
    assert full["refusal_strict"] == 1.0 and full["mean_llm_calls"] == 3
    assert full["latency_p50_ms"] == 100.0 and full["latency_p95_ms"] == 300.0
    assert summary["tags"]["full"]["t"] == {"items": 2, "strict": 0.5, "relaxed": 1.0}
    assert summary["runs"]["single"]["timeouts"] == 1
    assert percentile([], 0.5) is None


def test_rule_stats_count_items_not_firings() -> None:
    from graph_agent.evaluation.report import rule_stats

    records = [
        {"strict": True, "rules": [
            {"rule": "nulls-last", "kind": "rewrite", "attempt": 1, "answered": True},
            {"rule": "missed-value", "kind": "hint", "attempt": 1},
        ]},
        {"strict": False, "rules": [
            {"rule": "nulls-last", "kind": "rewrite", "attempt": 1, "answered": False},
            {"rule": "nulls-last", "kind": "rewrite", "attempt": 2, "answered": False},
        ]},
        {"strict": True},
    ]  # fmt: skip
    assert rule_stats(records) == {
        "missed-value": {"fired": 1, "strict": 1, "rewrite_answered": 0},
        "nulls-last": {"fired": 2, "strict": 1, "rewrite_answered": 1},
    }


def _rec(run: str, item: str, strict: bool) -> dict[str, Any]:
    return {"id": item, "run": run, "strict": strict, "relaxed": strict, "tags": ["lookup"]}


def test_repeated_runs_report_their_spread_over_the_items_every_repeat_asked() -> None:
    base, second, third = (
        "full/examples-on",
        "full/examples-on/repeat-2",
        "full/examples-on/repeat-3",
    )
    records = [
        *(_rec(base, i, ok) for i, ok in [("a", True), ("b", True), ("c", False), ("d", True)]),
        *(_rec(second, i, ok) for i, ok in [("a", True), ("b", False), ("c", False), ("d", True)]),
        # The third repeat was stopped before "d": only a, b and c count for every repeat.
        *(_rec(third, i, ok) for i, ok in [("a", True), ("b", True), ("c", True)]),
        _rec("single-shot/examples-on", "a", True),  # not repeated: no spread
    ]
    spread = summarize(records)["spread"]
    assert list(spread) == [base]
    assert spread[base] == {
        "repeats": 3,
        "items": 3,
        "strict": {1: 2, 2: 1, 3: 3},
        "min": 1,
        "max": 3,
        "always": 1,
        "sometimes": 2,
        "never": 0,
    }


def test_a_repeat_is_keyed_apart_and_the_first_keeps_the_plain_key() -> None:
    from graph_agent.evaluation import RunOptions

    assert RunOptions(repeat=1).key == "full/examples-on"
    assert RunOptions(repeat=2).key == "full/examples-on/repeat-2"
    assert RunOptions(repeat=2, channel="C1").key == "full/examples-on/channel-C1/repeat-2"
