"""Empty results that should not be empty, on the real demo graph with the scripted model: the
validate lint fixes a literal the hints know, and 0 rows that missed a hinted value get one
correction naming the stored value."""

from __future__ import annotations

from typing import Any, cast

from graph_agent.agent import Agent
from graph_agent.config import AgentConfig
from graph_agent.examples import InMemoryExampleStore
from graph_agent.graphdb import GraphDB
from graph_agent.llm import LLMs
from rig.scripted_llm import (
    ScriptedChatModel,
    cypher_reply,
    evaluation_reply,
    guard_reply,
)

QUESTION = "Which services does the Payments team own?"
GOLD = (
    "MATCH (t:Team {name: 'Payments'})-[:OWNS]->(s:Service) "
    "RETURN s.name AS service ORDER BY service"
)


class Spy:
    """The demo graph, recording what reaches the engine."""

    def __init__(self, db: GraphDB) -> None:
        self._db = db
        self.ran: list[str] = []

    def __getattr__(self, name: str) -> Any:
        return getattr(self._db, name)

    def run_read(self, cypher: str, params: Any = None, **kw: Any) -> Any:
        self.ran.append(cypher)
        return self._db.run_read(cypher, params, **kw)


def _agent(db: GraphDB, model: ScriptedChatModel, **config: Any) -> tuple[Agent, Spy]:
    spy = Spy(db)
    llms = LLMs(cypher=model, fast=model)
    return Agent(cast(GraphDB, spy), llms, InMemoryExampleStore(), AgentConfig(**config)), spy


def test_a_lowercased_literal_is_fixed_before_it_runs(demo_db: GraphDB) -> None:
    model = ScriptedChatModel(
        replies=[
            guard_reply(),
            cypher_reply(
                'MATCH (t:Team {name: toLower("Payments")})-[:OWNS]->(s:Service) '
                "RETURN s.name AS service ORDER BY service"
            ),
            evaluation_reply(answer="The Payments team owns payments-api."),
        ]
    )
    agent, spy = _agent(demo_db, model)
    result = agent.run(QUESTION)
    assert result.outcome == "answered" and result.rows
    assert spy.ran[0].startswith('MATCH (t:Team {name: "Payments"})')
    assert len(result.attempts) == 1 and result.llm_calls == 3


def test_a_filtered_node_of_a_label_without_that_relationship_takes_the_holders_label(
    demo_db: GraphDB,
) -> None:
    # As `(:Software)-[:DEPENDS_ON]->(:Process {name: 'java'})`, kept by a 1.5B model on
    # every attempt where 'java' is also a Software's name and software depends on software.
    model = ScriptedChatModel(
        replies=[
            guard_reply(),
            cypher_reply(
                "MATCH (t:Service {name: 'Payments'})-[:OWNS]->(s:Service) "
                "RETURN s.name AS service ORDER BY service"
            ),
            evaluation_reply(answer="The Payments team owns payments-api."),
        ]
    )
    agent, spy = _agent(demo_db, model)
    result = agent.run(QUESTION)
    assert result.outcome == "answered" and result.rows
    assert spy.ran[0].startswith("MATCH (t:Team {name: 'Payments'})-[:OWNS]->(s:Service)")
    assert len(result.attempts) == 1 and result.llm_calls == 3


def test_zero_rows_that_missed_the_hinted_value_get_one_correction(demo_db: GraphDB) -> None:
    model = ScriptedChatModel(
        replies=[
            guard_reply(),
            cypher_reply(
                "MATCH (t:Team)-[:OWNS]->(s:Service) WHERE t.name STARTS WITH 'pay' "
                "RETURN s.name AS service"
            ),
            cypher_reply(GOLD),
            evaluation_reply(answer="The Payments team owns payments-api."),
        ]
    )
    agent, _spy = _agent(demo_db, model)
    result = agent.run(QUESTION)
    assert result.outcome == "answered" and result.rows
    assert [a.stage for a in result.attempts] == ["missed_value", "ok"]
    assert "The stored value is exactly 'Payments' (Team.name)" in model.prompts[2]
    assert result.llm_steps == ["guard", "generate", "correct", "evaluate"]


def test_zero_rows_with_the_stored_value_used_are_an_answer(demo_db: GraphDB) -> None:
    model = ScriptedChatModel(
        replies=[
            guard_reply(),
            cypher_reply(
                # Both values are stored; Payments just owns no deprecated service.
                "MATCH (t:Team {name: 'Payments'})-[:OWNS]->(s:Service {lifecycle: 'deprecated'}) "
                "RETURN s.name AS service"
            ),
            evaluation_reply(answer="The Payments team owns no such services."),
        ]
    )
    agent, _spy = _agent(demo_db, model)
    result = agent.run(QUESTION)
    assert result.outcome == "no_data" and len(result.attempts) == 1
    assert result.llm_calls == 3


def test_zero_rows_on_a_value_no_node_holds_get_the_values_it_does_hold(
    demo_db: GraphDB,
) -> None:
    # A small model writes the value as the question says it, not as the graph stores it
    # (a country's name for its code): the correction sees what the property holds.
    invented = (
        "MATCH (t:Team {name: 'Payments'})-[:OWNS]->(s:Service {lifecycle: 'Retired ones'}) "
        "RETURN s.name AS service"
    )
    model = ScriptedChatModel(
        replies=[
            guard_reply(),
            cypher_reply(invented),
            cypher_reply(invented),
            evaluation_reply(answer="None."),
        ]
    )
    agent, _spy = _agent(demo_db, model)
    result = agent.run(QUESTION)
    assert [a.stage for a in result.attempts] == ["missed_value", "ok"]
    feedback = model.prompts[2]
    assert "no Service has lifecycle 'Retired ones'" in feedback
    assert "Service.lifecycle holds values like '" in feedback
    assert result.outcome == "no_data", "once per question: then nothing matches"


def test_zero_rows_on_a_value_the_node_next_to_it_holds_name_the_relationship(
    demo_db: GraphDB,
) -> None:
    # As `(:Version {name: 'Ubuntu'})` on a graph where Ubuntu is a Software with versions.
    model = ScriptedChatModel(
        replies=[
            guard_reply(),
            cypher_reply("MATCH (s:Service {name: 'Payments'}) RETURN s.name AS service"),
            cypher_reply(GOLD),
            evaluation_reply(answer="ok"),
        ]
    )
    agent, _spy = _agent(demo_db, model)
    result = agent.run(QUESTION)
    assert [a.stage for a in result.attempts] == ["value_next_door", "ok"]
    assert (
        "no Service has name 'Payments', but 'Payments' is a Team's name. Reach the Service "
        "from that node: (s:Service)<-[:OWNS]-(:Team {name: 'Payments'}), e.g. MATCH "
        "(s:Service)<-[:OWNS]-(:Team {name: 'Payments'}) RETURN s.name AS service"
    ) in model.prompts[2]
    assert result.outcome == "answered"


def test_zero_rows_on_the_wrong_property_name_the_property_holding_the_value(
    scratch_db: GraphDB,
) -> None:
    scratch_db.run_write(
        "CREATE (:Airport {iata: 'LHR', descr: 'London Heathrow', city: 'London'}), "
        "(:Airport {iata: 'LGW', descr: 'London Gatwick', city: 'London'})"
    )
    model = ScriptedChatModel(
        replies=[
            guard_reply(),
            cypher_reply("MATCH (a:Airport {city: 'london heathrow'}) RETURN a.iata AS code"),
            cypher_reply("MATCH (a:Airport {descr: 'London Heathrow'}) RETURN a.iata AS code"),
            evaluation_reply(answer="LHR"),
        ]
    )
    agent, _spy = _agent(scratch_db, model, value_hints=0)
    result = agent.run("What is the code of London Heathrow?")
    assert result.outcome == "answered" and result.rows == [["LHR"]]
    assert "'London Heathrow' is an Airport's descr" in model.prompts[2]
    assert "Filter on descr = 'London Heathrow' or city = 'London' instead" in model.prompts[2]


def test_no_correction_when_it_would_use_up_the_last_attempt(demo_db: GraphDB) -> None:
    model = ScriptedChatModel(
        replies=[
            guard_reply(),
            cypher_reply(
                "MATCH (t:Team)-[:OWNS]->(s:Service) WHERE t.name = 'payment' "
                "RETURN s.name AS service"
            ),
            evaluation_reply(answer="None."),
        ]
    )
    agent, _spy = _agent(demo_db, model, max_attempts=1)
    result = agent.run(QUESTION)
    assert result.outcome == "no_data" and [a.stage for a in result.attempts] == ["ok"]


def test_only_one_hint_correction_per_question(demo_db: GraphDB) -> None:
    missed = (
        "MATCH (t:Team)-[:OWNS]->(s:Service) WHERE t.name ENDS WITH 'ments ' "
        "RETURN s.name AS service"
    )
    model = ScriptedChatModel(
        replies=[
            guard_reply(),
            cypher_reply(missed),
            cypher_reply(missed.replace("'ments '", "'MENTS'")),
            evaluation_reply(answer="None."),
        ]
    )
    agent, _spy = _agent(demo_db, model)
    result = agent.run(QUESTION)
    assert [a.stage for a in result.attempts] == ["missed_value", "ok"]
    assert result.outcome == "no_data"


def test_a_value_on_the_node_next_door_shows_the_statement_through_it(
    scratch_db: GraphDB,
) -> None:
    # The network graph: software depends on versions, and 'postgres' names the Software the
    # version belongs to. The relationship the statement already uses led nowhere, so the
    # other one comes first, inside the model's own statement.
    scratch_db.run_write(
        "CREATE (p:Software {name: 'postgres'})-[:VERSION]->(v:Version {name: '9.4'}), "
        "(:Software {name: 'webserver'})-[:DEPENDS_ON]->(v), "
        "(:Software {name: 'crm'})-[:DEPENDS_ON]->(:Version {name: '3.1'})"
    )
    through = (
        "MATCH (s:Software)-[:DEPENDS_ON]->(v:Version)<-[:VERSION]-(:Software {name: 'postgres'}) "
        "RETURN s.name AS name"
    )
    model = ScriptedChatModel(
        replies=[
            guard_reply(),
            cypher_reply(
                "MATCH (s:Software)-[:DEPENDS_ON]->(v:Version {name: 'postgres'}) "
                "RETURN s.name AS name"
            ),
            cypher_reply(through),
            evaluation_reply(answer="webserver"),
        ]
    )
    agent, _spy = _agent(scratch_db, model)
    result = agent.run("Which software depends on postgres?")
    feedback = model.prompts[2]
    assert "no Version has name 'postgres', but 'postgres' is a Software's name" in feedback
    assert (
        # Not `<-[:DEPENDS_ON]-(:Software …)`: the statement already reaches a Software that
        # way, so that relationship would lead to the software that depends, not to postgres.
        "Reach the Version from that node: (v:Version)<-[:VERSION]-(:Software {name: "
        "'postgres'}), e.g. " + through
    ) in feedback
    assert result.outcome == "answered" and result.rows == [["webserver"]]


def _ubuntu(db: GraphDB) -> None:
    db.run_write(
        "CREATE (:OS {name: 'Ubuntu'})-[:VERSION]->(:Version {name: '16.04'}), "
        "(:OS {name: 'Debian'})-[:VERSION]->(:Version {name: '8-Jessie'})"
    )


def test_a_correction_that_keeps_the_filter_the_note_was_about_runs_the_statement_shown(
    scratch_db: GraphDB,
) -> None:
    # No Version is named 'Ubuntu', an OS next to the versions is. A 1.5B model shown the
    # statement through the OS kept `(v:Version {name: 'Ubuntu'})` on every run (or dropped
    # the filter on a re-ask: "23 versions of Ubuntu").
    _ubuntu(scratch_db)
    wrong = "MATCH (v:Version {name: 'Ubuntu'}) RETURN v.name AS version"
    model = ScriptedChatModel(
        replies=[
            guard_reply(),
            cypher_reply(wrong),
            cypher_reply("MATCH (v:Version {name: 'ubuntu'}) RETURN DISTINCT v.name AS version"),
            evaluation_reply(answer="16.04"),
        ]
    )
    agent, spy = _agent(scratch_db, model)
    result = agent.run("Which versions of Ubuntu are there?")
    assert [a.stage for a in result.attempts] == ["value_next_door", "ok"]
    assert spy.ran[-1].startswith("MATCH (v:Version)<-[:VERSION]-(:OS {name: 'Ubuntu'})")
    assert result.llm_steps == ["guard", "generate", "correct", "evaluate"]
    assert result.outcome == "answered" and result.rows == [["16.04"]]


def test_a_statement_sent_back_unchanged_after_the_value_next_door_note_is_asked_again(
    scratch_db: GraphDB,
) -> None:
    # With the filter in a WHERE there is no statement to show: the repeat gets the re-ask.
    _ubuntu(scratch_db)
    wrong = "MATCH (v:Version) WHERE v.name = 'Ubuntu' RETURN v.name AS version"
    through = "MATCH (v:Version)<-[:VERSION]-(:OS {name: 'Ubuntu'}) RETURN v.name AS version"
    model = ScriptedChatModel(
        replies=[
            guard_reply(),
            cypher_reply(wrong),
            cypher_reply(wrong),
            cypher_reply(through),
            evaluation_reply(answer="16.04"),
        ]
    )
    agent, _spy = _agent(scratch_db, model)
    result = agent.run("Which versions of Ubuntu are there?")
    assert [a.stage for a in result.attempts] == ["value_next_door", "ok"]
    assert result.llm_steps == ["guard", "generate", "correct", "correct", "evaluate"]
    assert result.outcome == "answered" and result.rows == [["16.04"]]


def test_the_statement_shown_through_the_neighbour_is_one_that_matches(
    scratch_db: GraphDB,
) -> None:
    # The network graph's OS processes are named after their version ('16.04') and point at it
    # through INSTANCE; the OS named 'Ubuntu' reaches its versions through VERSION. Showing the
    # INSTANCE statement (the schema's order) sent a 1.5B model to a query with no rows.
    scratch_db.run_write(
        "CREATE (v:Version {name: '16.04'}), (:OS {name: '16.04'})-[:INSTANCE]->(v), "
        "(:OS {name: 'Ubuntu'})-[:VERSION]->(v)"
    )
    wrong = "MATCH (v:Version {name: 'Ubuntu'}) RETURN v.name AS version"
    model = ScriptedChatModel(
        replies=[
            guard_reply(),
            cypher_reply(wrong),
            cypher_reply(wrong),
            evaluation_reply(answer="ok"),
        ]
    )
    agent, spy = _agent(scratch_db, model)
    result = agent.run("Which versions of Ubuntu are there?")
    shown = "MATCH (v:Version)<-[:VERSION]-(:OS {name: 'Ubuntu'}) RETURN v.name AS version"
    assert "Reach the Version from that node: (v:Version)<-[:VERSION]-" in model.prompts[2]
    assert f"e.g. {shown}" in model.prompts[2]
    assert spy.ran[-1].startswith(shown)
    assert result.rows == [["16.04"]]


def test_a_value_of_a_node_the_statement_already_matches_is_filtered_there(
    demo_db: GraphDB,
) -> None:
    # The demo eval: the statement through "another Person on the same project" was shown and
    # run, and listed projects. London is the location of the person already matched.
    [[title]] = demo_db.run_read(
        "MATCH (p:Person {location: 'London'}) RETURN p.title LIMIT 1"
    ).rows
    model = ScriptedChatModel(
        replies=[
            guard_reply(),
            cypher_reply(
                f"MATCH (p:Person {{title: '{title}'}})-[:WORKS_ON]->(pr:Project "
                "{location: 'London'}) RETURN p.name AS name"
            ),
            cypher_reply(
                f"MATCH (p:Person {{title: '{title}', location: 'London'}}) RETURN p.name AS name"
            ),
            evaluation_reply(answer="ok"),
        ]
    )
    agent, _spy = _agent(demo_db, model)
    result = agent.run(f"Which people with the title {title} work from London?")
    feedback = model.prompts[2]
    assert "no Project has location 'London', but 'London' is a Person's location" in feedback
    assert "the statement already matches p (Person): filter p on location = 'London'" in feedback
    assert "WORKS_ON]-(:Person" not in feedback
    assert [a.stage for a in result.attempts] == ["value_next_door", "ok"]


def test_a_count_of_zero_that_missed_the_hinted_value_gets_one_correction(
    demo_db: GraphDB,
) -> None:
    # A count over no match is one row, [0]: a playground follow-up answered "0" for
    # `t.type = 'xs-1/1/1'` where that is a Type's name, and no value check looked.
    model = ScriptedChatModel(
        replies=[
            guard_reply(),
            cypher_reply(
                "MATCH (t:Team)-[:OWNS]->(s:Service) WHERE t.name STARTS WITH 'pay' "
                "RETURN count(s) AS services"
            ),
            cypher_reply(
                "MATCH (t:Team {name: 'Payments'})-[:OWNS]->(s:Service) RETURN count(s) AS services"
            ),
            evaluation_reply(answer="ok"),
        ]
    )
    agent, _spy = _agent(demo_db, model)
    result = agent.run("How many services does the Payments team own?")
    assert [a.stage for a in result.attempts] == ["missed_value", "ok"]
    assert "The stored value is exactly 'Payments' (Team.name)" in model.prompts[2]
    assert result.outcome == "answered" and result.rows[0][0] > 0


def test_a_count_of_zero_with_the_stored_value_used_is_an_answer(demo_db: GraphDB) -> None:
    model = ScriptedChatModel(
        replies=[
            guard_reply(),
            cypher_reply(
                "MATCH (t:Team {name: 'Payments'})-[:OWNS]->(s:Service {lifecycle: 'deprecated'}) "
                "RETURN count(s) AS services"
            ),
            evaluation_reply(answer="None."),
        ]
    )
    agent, _spy = _agent(demo_db, model)
    result = agent.run("How many deprecated services does the Payments team own?")
    assert [a.stage for a in result.attempts] == ["ok"] and result.rows == [[0]]
    assert result.llm_calls == 3
