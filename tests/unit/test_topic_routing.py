"""The topic guard end to end in miniature: the model's reply → parse_decision → the node routed to."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any, cast

import pytest
from langgraph.runtime import Runtime

from graph_agent import nodes
from graph_agent.config import AgentConfig
from graph_agent.context import Context
from graph_agent.evaluation.items import load_items
from graph_agent.examples import InMemoryExampleStore
from graph_agent.graphdb import GraphDB
from graph_agent.graphdb.protocol import GraphSchema, LabelInfo, PropertyInfo, RelPattern
from graph_agent.llm import LLMs
from graph_agent.routing import after_understand
from graph_agent.state import AgentState
from memory.types import Turn
from rig.scripted_llm import ScriptedChatModel

QUESTION = "Which teams own payments-api?"
REWRITTEN = "Which teams own payments-api and checkout-api?"
TOPIC_GUARD_SET = Path(__file__).parents[2] / "evals" / "topic_guard.yaml"

SCHEMA = GraphSchema(
    labels=(
        LabelInfo("Team", 10, (PropertyInfo("name", ("STRING",)),)),
        LabelInfo("Service", 20, (PropertyInfo("name", ("STRING",)),)),
    ),
    relationships=(RelPattern("Team", "OWNS", "Service"),),
)


def _history() -> list[Turn]:
    return [
        Turn(
            question="Which teams own checkout-api?",
            standalone_question="Which teams own checkout-api?",
            cypher="MATCH (t:Team)-[:OWNS]->(:Service {name: 'checkout-api'}) RETURN t.name",
            answer="Checkout.",
        )
    ]


class _NoStoredValues:
    """The only thing the guard asks of the graph: stored values like the question's words."""

    def lookup_values(self, text: str, limit: int = 5) -> list[Any]:
        return []


def _understand(replies: list[Any], history: list[Turn] | None = None) -> tuple[str, AgentState]:
    """Run the real understand node on scripted guard replies; (next node, state after it)."""
    model = ScriptedChatModel(replies=list(replies))
    ctx = Context(
        db=cast(GraphDB, _NoStoredValues()),
        llms=LLMs(cypher=model, fast=model),
        examples=InMemoryExampleStore(),
        config=AgentConfig(),
        schema=SCHEMA,
        schema_fingerprint=None,
        description="teams and the services they own.",
        suggestions=["Which team owns the most services?"],
    )
    state = cast(AgentState, {"question": QUESTION, "history": history or []})
    update = asyncio.run(nodes.understand(state, runtime=Runtime(context=ctx)))
    after = cast(AgentState, {**state, **update})
    assert not model.replies, "every scripted reply was used"
    return after_understand(after), after


def _json(scope: Any, standalone: str = "", clarification: str = "") -> str:
    import json

    return json.dumps(
        {"standalone_question": standalone, "scope": scope, "clarification": clarification}
    )


ROUTES: list[tuple[str, list[Any], str]] = [
    ("in scope", [_json("in_scope")], "generate"),
    ("out of scope", [_json("out_of_scope")], "refuse"),
    ("needs clarification", [_json("needs_clarification", clarification="Which?")], "clarify"),
    ("fenced with prose", [f"Sure!\n```json\n{_json('out_of_scope')}\n```\nBye"], "refuse"),
    ("python dict", ["{'scope': 'out_of_scope', 'reason': None}"], "refuse"),
    ("alias off-topic", [_json("off-topic")], "refuse"),
    ("alias ambiguous", [_json("Ambiguous")], "clarify"),
    ("alias yes", [_json("yes")], "generate"),
    ("boolean false", [_json(False)], "refuse"),
    ("boolean true", [_json(True)], "generate"),
    ("object inside an array", [f"[{_json('needs_clarification')}]"], "clarify"),
    ("repaired on the second reply", ["I'd say it is off topic.", _json("out_of_scope")], "refuse"),
    ("repair gives clarify", ['{"scope": maybe}', _json("unclear")], "clarify"),
    # Unreadable twice: the guard fails open (in scope). Safe only because the policy and the
    # read-only engine stand behind it; tests/security proves those on their own.
    ("unreadable twice", ["no idea", "still no JSON"], "generate"),
    ("unknown scope twice", [_json("perhaps"), _json("perhaps")], "generate"),
    ("empty replies", ["", ""], "generate"),
    ("missing scope twice", ['{"reason": "x"}', '{"reason": "y"}'], "generate"),
    ("model error", [RuntimeError("HTTP 500 from the model server")], "give_up"),
]


@pytest.mark.parametrize(
    ("replies", "expected"), [r[1:] for r in ROUTES], ids=[r[0] for r in ROUTES]
)
def test_guard_reply_routes_to(replies: list[Any], expected: str) -> None:
    node, _state = _understand(replies)
    assert node == expected


def test_refusal_and_clarification_are_answered_without_another_llm_call() -> None:
    # The routes above end in refuse/clarify; those nodes must not call a model (none scripted).
    for replies, node_name in (
        ([_json("out_of_scope")], "refuse"),
        ([_json("needs_clarification", clarification="Which team?")], "clarify"),
    ):
        node, state = _understand(replies)
        assert node == node_name
        ctx = Context(
            db=cast(GraphDB, None),
            llms=None,
            examples=InMemoryExampleStore(),
            config=AgentConfig(),
            schema=SCHEMA,
            schema_fingerprint=None,
            description="teams and the services they own.",
            suggestions=["Which team owns the most services?"],
        )
        update = asyncio.run(getattr(nodes, node_name)(state, runtime=Runtime(context=ctx)))
        assert update["outcome"] in ("out_of_scope", "needs_clarification")
        assert "Which team owns the most services?" in update["answer"]
        if node_name == "clarify":
            assert update["answer"].startswith("Which team?")


@pytest.mark.parametrize(
    ("history", "standalone", "expected"),
    [
        (False, REWRITTEN, QUESTION),  # no history: the model cannot swap the question
        (True, REWRITTEN, REWRITTEN),  # a follow-up: the rewrite is the question asked next
        (True, "", QUESTION),  # rewrite left out: keep the question as typed
        (True, "   ", QUESTION),
    ],
)
def test_standalone_question_used_only_for_follow_ups(
    history: bool, standalone: str, expected: str
) -> None:
    node, state = _understand(
        [_json("in_scope", standalone=standalone)], _history() if history else None
    )
    assert node == "generate"
    assert state["standalone_question"] == expected


def test_topic_guard_set_is_labelled_and_loads_in_the_eval_harness() -> None:
    import yaml

    raw = yaml.safe_load(TOPIC_GUARD_SET.read_text(encoding="utf-8"))["items"]
    items = {item.id: item for item in load_items(TOPIC_GUARD_SET)}
    assert len(items) == len(raw) >= 30
    scopes = [entry["expected_scope"] for entry in raw]
    for scope in ("in_scope", "out_of_scope", "needs_clarification"):
        assert scopes.count(scope) >= 5, scope
    for entry in raw:
        item = items[entry["id"]]
        assert entry["expected_scope"] in entry["tags"]
        # The harness scores in-scope items by gold rows, the rest as refusals.
        assert (entry["expected_scope"] == "in_scope") == (item.gold_cypher is not None)
        assert item.expected == ("answer" if item.gold_cypher else "refusal")
