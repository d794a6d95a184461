"""The calls the agent skips when they have nothing to decide (issue 29), on the real demo graph.

A first question the cheap checks placed in the graph needs no guard (how sure is a setting:
every word the graph's, or at least one); rows that plainly answer (at least one, at most 20
rows and three columns, not cut) need no evaluator. Anything less sure still gets the call,
and a setting turns each call back on.
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
SKIPPING = {"guard_first_questions": "off-graph", "evaluate_plain_rows": False}
"""The product's defaults (bot/settings.py); AgentConfig's own make every call."""


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


def test_a_word_the_graph_lacks_goes_to_the_guard_when_set_so(demo_db: GraphDB) -> None:
    model = ScriptedChatModel(replies=[guard_reply(scope="out_of_scope", reason="pay")])
    result = _agent(
        demo_db, model, guard_first_questions="foreign-words", evaluate_plain_rows=False
    ).run("What is the salary of the Payments lead?")
    assert result.llm_steps == ["guard"]
    assert result.outcome == "out_of_scope"


def test_by_default_a_question_touching_the_graph_skips_the_guard(demo_db: GraphDB) -> None:
    # "salary" is no word of the graph's, "Payments" is: the statement is written straight
    # away, and the property the graph lacks is found in the statement (asked-but-missing),
    # not by the guard: still declined, with what the graph does hold.
    salary = (
        "MATCH (p:Person)-[:MEMBER_OF]->(:Team {name: 'Payments'}) "
        "RETURN p.name AS person, p.salary AS salary"
    )
    model = ScriptedChatModel(replies=[cypher_reply(salary)] * 3)
    result = _agent(demo_db, model, **SKIPPING).run("What is the salary of the Payments lead?")
    assert result.llm_steps[0] == "generate" and "guard" not in result.llm_steps
    assert result.outcome == "out_of_scope"
    assert "salary" in result.answer and "people" in result.answer


def test_a_question_with_no_word_of_the_graph_still_goes_to_the_guard(demo_db: GraphDB) -> None:
    model = ScriptedChatModel(replies=[guard_reply(scope="out_of_scope", reason="stocks")])
    result = _agent(demo_db, model, **SKIPPING).run("What is our share price doing lately?")
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
