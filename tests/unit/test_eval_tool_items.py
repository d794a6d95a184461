"""Graph tool items in the eval format: `expected_tool`, `expected_names`, the clarification and
no-data kinds, and how each is scored and summarised."""

from __future__ import annotations

from typing import Any

import pytest

from graph_agent.evaluation import EvalFileError, EvalItem, RunOptions, summarize
from graph_agent.evaluation.items import parse_items
from graph_agent.evaluation.runner import score_record
from graph_agent.evaluation.scoring import asked_back, found_nothing, score_tool
from graph_agent.result import AgentResult, Choice


def test_tool_items_parse_with_their_names() -> None:
    card, ambiguous, unknown = parse_items(
        [
            {"id": "c", "question": "Tell me about Chai.", "expected_tool": "card",
             "expected_names": ["Chai", "Beverages"]},
            {"id": "a", "question": "Tell me about Alice.", "expected": "clarification",
             "expected_tool": "card", "expected_names": "Alice Smith"},
            {"id": "u", "question": "Tell me about Zebulon.", "expected": "no_data"},
        ]
    )  # fmt: skip
    assert card.expected == "answer" and card.gold_cypher is None
    assert card.expected_tool == "card" and card.expected_names == ("Chai", "Beverages")
    assert ambiguous.expected == "clarification" and ambiguous.expected_names == ("Alice Smith",)
    assert unknown.expected == "no_data" and unknown.expected_tool is None


@pytest.mark.parametrize(
    ("raw", "message"),
    [
        ({"expected_tool": "delete", "expected_names": ["x"]}, "expected_tool must be one of"),
        ({"expected": "answer", "expected_tool": "card"}, "expected_names"),
    ],
)
def test_bad_tool_items_are_refused(raw: dict[str, Any], message: str) -> None:
    with pytest.raises(EvalFileError, match=message):
        parse_items([{"id": "x", "question": "q", **raw}])


CHAIN = "Wei Nguyen —MEMBER_OF→ Payments ←MEMBER_OF— Hana Smith"
TOOL_CASES = [
    # (tool that answered, answer, rows, strict, relaxed)
    ("connection", f"They share a team: {CHAIN}", [[1, 2, CHAIN]], True, True),
    ("connection", "Both are in Payments.", [[1, 2, CHAIN]], False, True),  # names in rows
    (None, CHAIN, [["Wei Nguyen", "Payments", "Hana Smith"]], False, True),  # Cypher answered
    ("connection", "No idea.", [], False, False),
]


@pytest.mark.parametrize(("tool", "answer", "rows", "strict", "relaxed"), TOOL_CASES)
def test_score_tool(
    tool: str | None, answer: str, rows: list[list[Any]], strict: bool, relaxed: bool
) -> None:
    names = ["Wei Nguyen", "Payments", "Hana Smith"]
    score = score_tool("connection", names, "answered", tool, rows, answer)
    assert (score.strict, score.relaxed) == (strict, relaxed)
    failed = score_tool("connection", names, "failed", tool, rows, answer)
    assert not failed.strict and not failed.relaxed


def test_asked_back_and_found_nothing() -> None:
    choices = ["Alice Smith (Person)", "Alice Nguyen (Person)"]
    assert asked_back("needs_clarification", ["Alice Smith"], choices) == (True, True)
    assert asked_back("needs_clarification", ["Alice Garcia"], choices) == (False, True)
    assert asked_back("answered", ["Alice Smith"], choices) == (False, False)
    assert found_nothing("no_data", 0) == (True, True)
    assert found_nothing("answered", 0) == (True, True)
    assert found_nothing("needs_clarification", 0) == (False, True)
    assert found_nothing("answered", 3) == (False, False)


def _result(**fields: Any) -> AgentResult:
    base: dict[str, Any] = {
        "question": "q",
        "standalone_question": "q",
        "answer": "",
        "outcome": "answered",
    }
    return AgentResult(**(base | fields))


def test_records_carry_the_tool_and_the_choices_and_the_summary_counts_them() -> None:
    options = RunOptions(examples=False)
    card = EvalItem("c", "Tell me about Chai.", expected_tool="card", expected_names=("Chai",))
    ask = EvalItem("a", "Tell me about Queso.", expected="clarification",
                   expected_tool="card", expected_names=("Queso Cabrales",))  # fmt: skip
    answered = _result(answer="Chai is a beverage.", tool="card", cypher='// graph tool: card("Chai")',
                       rows=[["Chai", "Product", "unitPrice", 18.0, None]])  # fmt: skip
    asked = _result(
        outcome="needs_clarification",
        choices=[
            Choice(
                "Queso Cabrales (Product)",
                "Tell me about Queso Cabrales",
                None,
                "Product",
                "Queso Cabrales",
            ),
            Choice("None of these", "Tell me about Queso."),
        ],
    )
    records = [
        score_record(card, options, answered, None, latency_ms=5),
        score_record(ask, options, asked, None, latency_ms=5),
    ]
    assert records[0]["tool"] == "card" and records[0]["expected_tool"] == "card"
    assert records[0]["strict"] and records[0]["answer_mentions"] == 1.0
    # "None of these" is no candidate.
    assert records[1]["choices"] == ["Queso Cabrales (Product)"] and records[1]["strict"]
    stats = summarize(records)["runs"]["full/examples-off"]
    assert stats["tool_items"] == 1 and stats["tool_strict"] == 1.0 and stats["tool_path"] == 1.0
    assert stats["clarification_items"] == 1 and stats["tool_answers"] == 1
