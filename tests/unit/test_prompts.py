"""Rendered prompts compared with snapshot files (UPDATE_SNAPSHOTS=1 rewrites them)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from langchain_core.messages import BaseMessage

from graph_agent import prompts
from memory.types import Example, Turn

SNAPSHOTS = Path(__file__).parent / "snapshots"
SCHEMA = """\
Node labels and properties:
(:Person) [121 nodes] {name: STRING; title: STRING}
(:Team) [11 nodes] {name: STRING; department: STRING e.g. "Platform", "Data"}
Relationships:
(:Person)-[:MEMBER_OF]->(:Team)"""
EXAMPLES = [
    Example(
        id=1,
        question="How many people are in each team?",
        cypher="MATCH (p:Person)-[:MEMBER_OF]->(t:Team) RETURN t.name AS team, count(p) AS people",
    )
]
HISTORY = [
    Turn(
        question="Which teams are in Platform?",
        standalone_question="Which teams are in the Platform department?",
        cypher="MATCH (t:Team {department: 'Platform'})\nRETURN t.name AS team",
        answer="Checkout and Payments.",
    )
]


def _text(messages: list[BaseMessage]) -> str:
    return "\n".join(f"--- {m.type}\n{m.content}" for m in messages) + "\n"


def _generate_parts() -> dict[str, str]:
    return {
        "dialect": "FalkorDB Cypher (OpenCypher)",
        "row_limit": "100",
        "schema": SCHEMA,
        "examples": prompts.render_examples(EXAMPLES),
        "hints": prompts.render_hints([("Team", "name", "Checkout")]),
        "question": "How many people work in checkout?",
    }


RENDERED = {
    "guard": lambda: prompts.GUARD.render(
        description="people, teams, and how they relate (member of).",
        history="",
        question="How many people are in Checkout?",
    ),
    "guard_history": lambda: prompts.GUARD.render(
        description="people, teams, and how they relate (member of).",
        history=prompts.render_history(HISTORY, 4000),
        question="and how many people are in them?",
    ),
    "generate": lambda: prompts.GENERATE.render(**_generate_parts()),
    "correct": lambda: prompts.CORRECT.render(
        **_generate_parts(),
        cypher="MATCH (p:Person)-[:MEMBER_OF]->(t:Team {name: 'checkout'}) RETURN count(p)",
        error="The rows do not answer: no team is named 'checkout'; use 'Checkout'.",
    ),
    "evaluate": lambda: prompts.EVALUATE.render(
        cypher="MATCH (p:Person)-[:MEMBER_OF]->(t:Team {name: 'Checkout'}) RETURN count(p) AS n",
        row_note="1 rows",
        rows=prompts.render_rows(["n"], [[11]], max_rows=100, max_chars=8000)[0],
        question="How many people work in checkout?",
    ),
}


@pytest.mark.parametrize("name", sorted(RENDERED))
def test_prompt_matches_snapshot(name: str) -> None:
    text = _text(RENDERED[name]())
    path = SNAPSHOTS / f"prompt_{name}.txt"
    if os.environ.get("UPDATE_SNAPSHOTS") == "1":
        path.write_text(text, encoding="utf-8")
    assert path.exists(), f"missing snapshot {path.name}; run with UPDATE_SNAPSHOTS=1"
    assert text == path.read_text(encoding="utf-8")


def test_stable_part_comes_first_and_question_last() -> None:
    one = prompts.GENERATE.render(**_generate_parts())
    two = prompts.GENERATE.render(**(_generate_parts() | {"question": "Who leads Payments?"}))
    assert one[0].content == two[0].content  # system part identical: servers cache it
    assert str(one[1].content).endswith("Question: How many people work in checkout?")
    assert prompts.CORRECT.system == prompts.GENERATE.system


def test_history_keeps_newest_turns_within_the_budget() -> None:
    turns = [
        Turn(question=f"q{i}", standalone_question=f"s{i}", cypher=None, answer="a" * 200)
        for i in range(10)
    ]
    text = prompts.render_history(turns, 900)
    assert "q9" in text and "q0" not in text
    assert text.index("q8") < text.index("q9")


def test_rows_are_capped_by_rows_and_characters() -> None:
    text, shown = prompts.render_rows(["x"], [[i] for i in range(500)], max_rows=100, max_chars=80)
    assert shown < 100 and len(text) <= 80
    _, shown = prompts.render_rows(["x"], [[i] for i in range(500)], max_rows=10, max_chars=9000)
    assert shown == 10
