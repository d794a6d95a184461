"""Rendered prompts: snapshot files (UPDATE_SNAPSHOTS=1 rewrites them), and no word of the demo
graph in any prompt or fixed text when the agent is connected to another graph."""

from __future__ import annotations

import asyncio
import os
import re
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, cast

import pytest
from langchain_core.messages import BaseMessage
from langgraph.runtime import Runtime

from graph_agent import nodes, prompts
from graph_agent.agent import Agent
from graph_agent.demo import load_demo
from graph_agent.examples import InMemoryExampleStore
from graph_agent.graphdb.protocol import GraphDB, GraphSchema, LabelInfo, PropertyInfo, RelPattern
from graph_agent.graphdb.schema import schema_text
from graph_agent.state import AgentState
from graph_agent.words import plural
from memory.types import Example, Turn

SNAPSHOTS = Path(__file__).parent / "snapshots"

# A library graph: nothing like the demo's engineering organisation.
LIBRARY = GraphSchema(
    labels=(
        LabelInfo(
            "Book",
            412,
            (
                PropertyInfo("title", ("STRING",)),
                PropertyInfo("year", ("INTEGER", "NULL")),
                PropertyInfo("genre", ("STRING",), ("Fiction", "Poetry", "History")),
            ),
        ),
        LabelInfo(
            "Author", 167, (PropertyInfo("name", ("STRING",)), PropertyInfo("born", ("INTEGER",)))
        ),
        LabelInfo("Publisher", 23, (PropertyInfo("name", ("STRING",)),)),
    ),
    relationships=(
        RelPattern("Author", "WROTE", "Book", 430),
        RelPattern("Book", "PUBLISHED_BY", "Publisher", 412),
    ),
)
EXAMPLES = [
    Example(
        id=1,
        question="How many books did each author write?",
        cypher="MATCH (a:Author)-[:WROTE]->(b:Book) RETURN a.name AS author, count(b) AS books",
    )
]
HISTORY = [
    Turn(
        question="Which books did Le Guin write?",
        standalone_question="Which books did Ursula K. Le Guin write?",
        cypher="MATCH (a:Author {name: 'Ursula K. Le Guin'})-[:WROTE]->(b:Book)\nRETURN b.title",
        answer="A Wizard of Earthsea and The Dispossessed.",
    )
]
HINTS = [("Author", "name", "Ursula K. Le Guin")]


def _agent() -> Agent:
    return Agent(cast(GraphDB, None), None, InMemoryExampleStore())


def _text(messages: list[BaseMessage]) -> str:
    return "\n".join(f"--- {m.type}\n{m.content}" for m in messages) + "\n"


def _generate_parts() -> dict[str, str]:
    return {
        "dialect": "FalkorDB Cypher (OpenCypher)",
        "row_limit": "100",
        "schema": schema_text(LIBRARY),
        "examples": prompts.render_examples(EXAMPLES),
        "hints": prompts.render_hints(HINTS),
        "paths": prompts.render_paths(
            ['MATCH (a:Author {name: "Ursula K. Le Guin"})-[:WROTE]->(b:Book)']
        ),
        "previous": "",
        "question": "How many books did ursula le guin write?",
    }


def _guard(history: Sequence[Turn], question: str) -> list[BaseMessage]:
    return prompts.GUARD.render(
        description=_agent().describe(LIBRARY),
        follow_up_example=prompts.follow_up_example(LIBRARY),
        history=prompts.render_history(history, 4000),
        question=question,
    )


RENDERED: dict[str, Callable[[], list[BaseMessage]]] = {
    "guard": lambda: _guard([], "How many books are in the library?"),
    "guard_history": lambda: _guard(HISTORY, "and what else did she write?"),
    "guard_resolve": lambda: prompts.resolve_messages(
        _guard(HISTORY, "and what else did she write?"),
        '{"standalone_question": "What else did she write?", "scope": "in_scope"}',
        ["she"],
    ),
    "generate": lambda: prompts.GENERATE.render(**_generate_parts()),
    "generate_follow_up": lambda: prompts.GENERATE.render(
        **(
            _generate_parts()
            | {
                "previous": prompts.render_previous(HISTORY),
                "question": "Which books published after 1970 did Ursula K. Le Guin write?",
            }
        )
    ),
    "correct": lambda: prompts.CORRECT.render(
        **_generate_parts(),
        cypher="MATCH (a:Author {name: toLower('ursula le guin')})-[:WROTE]->(b) RETURN count(b)",
        error="No rows: the author is stored as 'Ursula K. Le Guin'.",
    ),
    "natural_wording": lambda: prompts.NATURAL_WORDING.render(
        questions="1. Which books has author Ann Ames written?\n2. How many books are there?"
    ),
    "evaluate": lambda: prompts.EVALUATE.render(
        cypher="MATCH (a:Author {name: 'Ursula K. Le Guin'})-[:WROTE]->(b:Book) "
        "RETURN count(b) AS books",
        row_note="1 rows",
        rows=prompts.render_rows(["books"], [[23]], max_rows=100, max_chars=8000)[0],
        question="How many books did Ursula K. Le Guin write?",
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
    two = prompts.GENERATE.render(**(_generate_parts() | {"question": "Who wrote the most?"}))
    assert one[0].content == two[0].content  # system part identical: servers cache it
    assert str(one[1].content).endswith("Question: How many books did ursula le guin write?")
    assert prompts.CORRECT.system == prompts.GENERATE.system
    guard_one, guard_two = _guard([], "a?"), _guard(HISTORY, "b?")
    assert guard_one[0].content == guard_two[0].content


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


def test_follow_up_example_uses_the_graphs_own_labels_and_display_property() -> None:
    example = prompts.follow_up_example(LIBRARY)
    assert 'the Author <name>?"' in example and "Book nodes" in example
    empty = prompts.follow_up_example(GraphSchema(labels=(), relationships=()))
    assert "<Label>" in empty and "<name>" in empty


def test_generate_teaches_display_properties_sort_direction_and_exact_hints() -> None:
    system, user = (str(m.content) for m in prompts.GENERATE.render(**_generate_parts()))
    assert "(:Book) [412 nodes] {title: STRING (identifies it);" in system
    assert "identifies the thing asked for together with the measured value" in system
    assert "oldest, earliest, first, lowest = ascending" in system
    assert "Never write toLower() inside {...}" in system
    assert "may refer to" in user and '(:Author {name: "Ursula K. Le Guin"})' in user


# --- no demo vocabulary in any prompt -------------------------------------------------------


class _Recorder:
    """Takes the demo loader's writes and keeps its labels, types, property names and values."""

    def __init__(self) -> None:
        self.labels: set[str] = set()
        self.types: set[str] = set()
        self.properties: set[str] = set()
        self.values: set[str] = set()

    def write_batches(self, cypher: str, batches: list[list[dict[str, Any]]]) -> int:
        if label := re.search(r"CREATE \(n:`(\w+)`\)", cypher):
            self.labels.add(label.group(1))
        if rel := re.search(r"\[x:`(\w+)`\]", cypher):
            self.types.add(rel.group(1))
        rows = [row.get("p", {}) if rel else row for batch in batches for row in batch]
        for row in rows:
            for key, value in row.items():
                self.properties.add(key)
                for item in value if isinstance(value, list) else [value]:
                    if isinstance(item, str):
                        self.values.add(item)
        return sum(len(batch) for batch in batches)


GENERIC = frozenset(
    {"data", "database", "language", "code", "on", "key", "order", "id", "role", "level"}
    | {"status", "since"}
)
"""Words of the demo graph that are also Cypher or plain English any prompt may use."""


def demo_vocabulary() -> set[str]:
    """Demo labels (and their plurals, words), relationship types (and as phrases), property
    names, every stored text value, and the capitalised words inside those values."""
    recorder = _Recorder()
    load_demo(cast(GraphDB, recorder), scale=300, seed=7)
    words: set[str] = set()
    for label in recorder.labels:
        parts = re.findall(r"[A-Z][a-z]+", label)
        words |= {label, plural(label), *parts, "-".join(parts), " ".join(parts)}
        words |= {"-".join(parts[i : i + 2]) for i in range(len(parts) - 1)}  # on-call
    for rel_type in recorder.types:
        words |= {rel_type, rel_type.replace("_", " ")}
    words |= recorder.properties | recorder.values
    for value in recorder.values:
        words |= set(re.findall(r"\b[A-Z][A-Za-z]+\b", value))
    library = {w.casefold() for w in re.findall(r"\w+", schema_text(LIBRARY))}
    return {w.casefold() for w in words if len(w) > 1} - GENERIC - library


def _run(node: Any, state: dict[str, Any], agent: Agent) -> dict[str, Any]:
    ctx = agent.context_for(LIBRARY, None, suggestions=agent.suggestions(3, LIBRARY))
    result: dict[str, Any] = asyncio.run(
        node(cast(AgentState, state), runtime=Runtime(context=ctx))
    )
    return result


def fixed_texts() -> dict[str, str]:
    """Every text the agent writes without a model, for the library graph."""
    agent = _agent()
    texts = {f"failure {kind}": text for kind, text in nodes.FAILURE_TEXT.items()}
    texts["refuse"] = _run(nodes.refuse, {"question": "x"}, agent)["answer"]
    texts["clarify"] = _run(nodes.clarify, {"question": "x"}, agent)["answer"]
    task = {"question": "x", "scope_reason": nodes.TASK_REQUEST}
    texts["refuse errand"] = _run(nodes.refuse, task, agent)["answer"]
    lacking = {"question": "x", "missing_data": ["salary"], "last_stage": "schema"}
    texts["no such data"] = _run(nodes.give_up, lacking, agent)["answer"]
    for last_stage in ("policy", "execute"):
        state: dict[str, Any] = {
            "question": "x",
            "last_stage": last_stage,
            "last_error": "bad",
            "attempts": [],
        }
        texts[f"give up {last_stage}"] = _run(nodes.give_up, state, agent)["answer"]
    texts["repair"] = prompts.REPAIR
    return texts


def test_demo_vocabulary_is_derived_from_the_demo_graph() -> None:
    vocabulary = demo_vocabulary()
    # The words seen leaking into other graphs' prompts are all caught.
    assert {"team", "teams", "service", "services", "payments", "tier", "redis"} <= vocabulary
    assert {"incident", "on-call", "postgresql", "member of"} <= vocabulary
    assert "book" not in vocabulary and "title" not in vocabulary  # the library's own words


def test_no_prompt_or_fixed_text_carries_demo_vocabulary() -> None:
    vocabulary = demo_vocabulary()
    texts = {name: _text(render()) for name, render in RENDERED.items()}
    texts |= fixed_texts()
    texts["follow-up example, empty graph"] = prompts.follow_up_example(
        GraphSchema(labels=(), relationships=())
    )
    longest_first = sorted(vocabulary, key=len, reverse=True)
    pattern = re.compile(
        r"(?<![\w-])(?:" + "|".join(map(re.escape, longest_first)) + r")(?![\w-])", re.IGNORECASE
    )
    # The check itself can fail: the old evaluate example sentence is caught.
    assert pattern.findall("No services depend on X in the graph.") == ["services"]
    leaks = {name: sorted(set(pattern.findall(text))) for name, text in texts.items()}
    assert {name: words for name, words in leaks.items() if words} == {}
