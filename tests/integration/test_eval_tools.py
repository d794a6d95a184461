"""The graph tool items of the eval sets hold on their graphs: each question routes to its
expected tool, and the tool's read gives what the item expects (the expected names in its
rows, the candidates of a "did you mean", nothing for an unknown name).

Tool items have no gold Cypher (test_eval_gold.py runs the gold queries of the others); here the
router and the tools play the gold, without a model. A follow-up is routed as the rewrite step
would pass it on: its pronoun replaced by the first expected name of the item it follows.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from graph_agent.evaluation import EvalItem, load_items
from graph_agent.graphdb import GraphDB
from graph_agent.nodes.tooling import call_tool, judge
from graph_agent.tool_routing import route

EVALS = Path(__file__).resolve().parents[2] / "evals"
SETS = ("demo", "northwind", "airports")
ITEMS = {name: load_items(EVALS / f"{name}.yaml") for name in SETS}
TOOL_ITEMS = [
    (name, item)
    for name, items in ITEMS.items()
    for item in items
    if item.expected_tool is not None or item.expected in ("clarification", "no_data")
]
_PRONOUN = re.compile(r"\b(?:it|she|he|they|them|her|him)\b", re.IGNORECASE)


@pytest.fixture(scope="module")
def graphs(eval_graphs: dict[str, GraphDB]) -> dict[str, GraphDB]:
    return eval_graphs


def _standalone(name: str, item: EvalItem) -> str:
    if item.follow_up_of is None:
        return item.question
    parent = next(i for i in ITEMS[name] if i.id == item.follow_up_of)
    return _PRONOUN.sub(parent.expected_names[0], item.question, count=1)


def test_every_set_has_its_tool_items() -> None:
    for name in SETS:
        items = [item for set_name, item in TOOL_ITEMS if set_name == name]
        kinds = {item.expected_tool for item in items if item.expected == "answer"}
        assert len(items) >= 10, name
        assert kinds == {"card", "neighbourhood", "connection"}, name
        assert sum(item.expected == "clarification" for item in items) >= 2, name
        assert sum(item.expected == "no_data" for item in items) >= 1, name
        assert any(item.follow_up_of for item in items), name
        assert all(item.gold_cypher is None for item in items), name


@pytest.mark.parametrize(("name", "item"), TOOL_ITEMS, ids=[item.id for _, item in TOOL_ITEMS])
def test_a_tool_item_routes_and_its_read_gives_what_it_expects(
    graphs: dict[str, GraphDB], name: str, item: EvalItem
) -> None:
    db = graphs[name]
    schema = db.schema()
    question = _standalone(name, item)
    hints = [(m.label, m.property, m.value) for m in db.lookup_values(question, 5)]
    request = route(question, schema, hints)
    assert request is not None, question
    assert request.tool == item.expected_tool
    called = call_tool(db, schema, request, None)
    verdict = judge(called)
    if item.expected == "answer":
        assert verdict.next == "rows", (called.result.text(), verdict)
        shown = (called.result.text() + repr(called.result.rows())).casefold()
        assert [n for n in item.expected_names if n.casefold() not in shown] == []
    elif item.expected == "clarification":
        assert verdict.next == "ask" and verdict.slot is not None, called.result.text()
        resolution = called.resolutions[verdict.slot]
        offered = [c.entity.text() for c in resolution.candidates or resolution.near_misses]
        missing = [n for n in item.expected_names if not any(n in text for text in offered)]
        assert missing == [], offered
    else:
        # Nothing is called that, and nothing comes close: the graph has no such thing.
        assert verdict.next == "nothing", called.result.text()
