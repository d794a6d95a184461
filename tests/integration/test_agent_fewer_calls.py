"""The calls the agent skips when they have nothing to decide (issue 29), on the real demo graph.

A first question whose every content word the graph knows needs no guard; rows that plainly
answer (at least one, at most 20 rows and three columns, not cut) need no evaluator. Anything
less sure still gets the call, and a setting turns each call back on.
"""

from __future__ import annotations

from typing import Any, cast

import pytest

from graph_agent.agent import Agent
from graph_agent.config import AgentConfig
from graph_agent.examples import InMemoryExampleStore
from graph_agent.graphdb import GraphDB
from graph_agent.llm import LLMs
from graph_agent.nodes.answer import plainly_answers
from memory.types import Turn
from rig.scripted_llm import ScriptedChatModel, cypher_reply, evaluation_reply, guard_reply

TEAM_SIZES = (
    "MATCH (p:Person)-[:MEMBER_OF]->(t:Team) "
    "RETURN t.name AS team, count(p) AS people ORDER BY people DESC LIMIT 3"
)
SKIPPING = {"guard_sure_questions": False, "evaluate_plain_rows": False}


def _agent(db: GraphDB, model: ScriptedChatModel, **config: Any) -> Agent:
    return Agent(db, LLMs(cypher=model, fast=model), InMemoryExampleStore(), AgentConfig(**config))


def test_a_sure_question_with_plain_rows_takes_one_call(demo_db: GraphDB) -> None:
    model = ScriptedChatModel(replies=[cypher_reply(TEAM_SIZES)])
    result = _agent(demo_db, model, **SKIPPING).run("Which teams have the most people?")
    assert result.outcome == "answered"
    assert result.llm_steps == ["generate"]
    assert len(result.rows) == 3
    # Written from the rows: every team and count is in the answer.
    for team, people in result.rows:
        assert str(team) in result.answer and str(people) in result.answer


def test_every_call_is_back_with_the_settings_on(demo_db: GraphDB) -> None:
    model = ScriptedChatModel(
        replies=[guard_reply(), cypher_reply(TEAM_SIZES), evaluation_reply(answer="Three teams.")]
    )
    result = _agent(demo_db, model).run("Which teams have the most people?")
    assert result.llm_steps == ["guard", "generate", "evaluate"]
    assert result.answer == "Three teams."


def test_a_word_the_graph_lacks_still_goes_to_the_guard(demo_db: GraphDB) -> None:
    model = ScriptedChatModel(replies=[guard_reply(scope="out_of_scope", reason="pay")])
    result = _agent(demo_db, model, **SKIPPING).run("What is the salary of the Payments lead?")
    assert result.llm_steps == ["guard"]
    assert result.outcome == "out_of_scope"


def test_a_follow_up_still_goes_to_the_guard(demo_db: GraphDB) -> None:
    history = [
        Turn(
            question="Which teams have the most people?",
            standalone_question="Which teams have the most people?",
            cypher=TEAM_SIZES,
            answer="Notifications, Mobile and Checkout.",
        )
    ]
    model = ScriptedChatModel(
        replies=[
            guard_reply(standalone="How many people are in the Notifications team?"),
            cypher_reply(
                "MATCH (p:Person)-[:MEMBER_OF]->(t:Team {name: 'Notifications'}) "
                "RETURN count(p) AS people"
            ),
        ]
    )
    result = _agent(demo_db, model, **SKIPPING).run(
        "and how many in the first one?", history=history
    )
    assert result.llm_steps == ["guard", "generate"]
    assert result.outcome == "answered"


def test_empty_or_long_results_still_go_to_the_evaluator(demo_db: GraphDB) -> None:
    empty = ScriptedChatModel(
        replies=[
            cypher_reply("MATCH (t:Team {name: 'Nowhere'}) RETURN t.name AS team"),
            evaluation_reply(answer="No such team."),
        ]
    )
    result = _agent(demo_db, empty, **SKIPPING).run("Which teams have the most people?")
    assert result.llm_steps[-1] == "evaluate"
    people = ScriptedChatModel(
        replies=[
            cypher_reply("MATCH (p:Person) RETURN p.name AS person"),
            evaluation_reply(answer="Many people."),
        ]
    )
    result = _agent(demo_db, people, **SKIPPING).run("Which people are in the teams?")
    assert len(result.rows) > 20 and result.llm_steps[-1] == "evaluate"


@pytest.mark.parametrize(
    ("columns", "rows", "truncated", "plain"),
    [
        (["n"], [[3]], False, True),
        (["team", "people"], [["A", 1]] * 20, False, True),
        (["a", "b", "c", "d"], [[1, 2, 3, 4]], False, False),
        (["team"], [["A"]] * 21, False, False),
        (["team"], [], False, False),
        (["team"], [["A"]], True, False),
    ],
)
def test_plain_rows(
    columns: list[str], rows: list[list[Any]], truncated: bool, plain: bool
) -> None:
    assert plainly_answers(columns, cast(list[list[Any]], rows), truncated) is plain
