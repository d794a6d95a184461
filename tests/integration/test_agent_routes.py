"""Every route of the agent on the real embedded demo graph, with the scripted chat model."""

from __future__ import annotations

import threading
from typing import Any, cast

import pytest

from graph_agent.agent import Agent
from graph_agent.config import AgentConfig
from graph_agent.examples import InMemoryExampleStore
from graph_agent.graphdb import GraphDB
from graph_agent.llm import LLMs
from graph_agent.result import ProgressEvent
from guardrails.cypher_policy import CypherPolicy
from memory.types import Turn
from rig.scripted_llm import (
    ScriptedChatModel,
    cypher_reply,
    evaluation_reply,
    guard_reply,
)
from tests.support.spy import SpyDB

TEAM_SIZES = (
    "MATCH (p:Person)-[:MEMBER_OF]->(t:Team) "
    "RETURN t.name AS team, count(p) AS people ORDER BY people DESC LIMIT 3"
)
POSTGRES_TEAMS = (
    "MATCH (t:Team)-[:OWNS]->(:Service)-[:USES]->(x:Technology {name: 'PostgreSQL'}) "
    "RETURN DISTINCT t.name AS team ORDER BY team"
)


@pytest.fixture
def spy(demo_db: GraphDB) -> SpyDB:
    return SpyDB(demo_db)


@pytest.fixture
def store() -> InMemoryExampleStore:
    return InMemoryExampleStore()


def make_agent(
    spy: SpyDB,
    model: ScriptedChatModel | None,
    store: InMemoryExampleStore,
    **config: Any,
) -> Agent:
    llms = LLMs(cypher=model, fast=model) if model is not None else None
    return Agent(cast(GraphDB, spy), llms, store, AgentConfig(**config))


def test_happy_path_makes_exactly_three_llm_calls(spy: SpyDB, store: InMemoryExampleStore) -> None:
    model = ScriptedChatModel(
        replies=[
            guard_reply(),
            cypher_reply(TEAM_SIZES),
            evaluation_reply(answer="Notifications, Mobile and Checkout have 11 people each."),
        ]
    )
    events: list[ProgressEvent] = []
    result = make_agent(spy, model, store).run(
        "Which teams have the most people?", on_progress=events.append
    )
    assert result.outcome == "answered"
    assert result.answer.startswith("Notifications")
    assert result.columns == ["team", "people"]
    assert len(result.rows) == 3
    assert result.llm_calls == 3
    assert result.llm_steps == ["guard", "generate", "evaluate"]
    assert result.prompt_tokens > 0 and result.completion_tokens > 0
    assert [e.step for e in events] == ["understand", "generate", "validate", "execute", "evaluate"]
    assert events[1].text == "Writing a query…"
    assert {"understand", "generate", "validate", "execute", "evaluate", "llm"} <= set(
        result.timings_ms
    )
    assert result.attempts[-1].stage == "ok" and len(result.attempts) == 1
    assert not result.self_healed and store.examples == []


def test_the_rows_are_shown_before_the_model_words_them(
    spy: SpyDB, store: InMemoryExampleStore
) -> None:
    """Rows first (issue 29): the evaluate step's progress event carries the rows in words,
    sent before its model call, so Slack can show them while the answer is written."""
    events: list[ProgressEvent] = []
    seen_at_evaluate: list[list[ProgressEvent]] = []

    def evaluate(_messages: Any) -> str:
        seen_at_evaluate.append(list(events))
        return evaluation_reply(answer="Notifications, Mobile and Checkout have 11 people each.")

    model = ScriptedChatModel(replies=[guard_reply(), cypher_reply(TEAM_SIZES), evaluate])
    result = make_agent(spy, model, store).run(
        "Which teams have the most people?", on_progress=events.append
    )
    assert result.outcome == "answered"
    [before_call] = seen_at_evaluate
    preview = before_call[-1]
    assert preview.step == "evaluate" and "Notifications" in preview.preview, preview
    assert [e.preview for e in events if e.step != "evaluate"] == ["", "", "", ""]


def test_no_preview_when_no_model_call_follows(spy: SpyDB, store: InMemoryExampleStore) -> None:
    model = ScriptedChatModel(replies=[guard_reply(), cypher_reply(TEAM_SIZES)])
    events: list[ProgressEvent] = []
    result = make_agent(spy, model, store, evaluate_plain_rows=False).run(
        "Which teams have the most people?", on_progress=events.append
    )
    assert result.outcome == "answered" and result.llm_steps == ["guard", "generate"]
    assert all(e.preview == "" for e in events), events


def test_no_history_means_no_rewrite(spy: SpyDB, store: InMemoryExampleStore) -> None:
    model = ScriptedChatModel(
        replies=[
            # A model may paraphrase even without history; the question stays as asked.
            guard_reply(standalone="Something else entirely"),
            cypher_reply(TEAM_SIZES),
            evaluation_reply(answer="ok"),
        ]
    )
    result = make_agent(spy, model, store).run("Which teams have the most people?")
    assert result.standalone_question == "Which teams have the most people?"
    assert "Previous turns" not in model.prompts[0]
    assert "Question: Which teams have the most people?" in model.prompts[1]


def test_follow_up_is_rewritten_from_previous_turns(
    spy: SpyDB, store: InMemoryExampleStore
) -> None:
    history = [
        Turn(
            question="Which teams own services that use Postgres?",
            standalone_question="Which teams own services that use PostgreSQL?",
            cypher=POSTGRES_TEAMS,
            answer="Checkout and Payments.",
        )
    ]
    standalone = "Which of the teams owning PostgreSQL services are in the Platform department?"
    model = ScriptedChatModel(
        replies=[
            guard_reply(standalone=standalone),
            cypher_reply(
                "MATCH (t:Team {department: 'Platform'})-[:OWNS]->(:Service)-[:USES]->"
                "(:Technology {name: 'PostgreSQL'}) RETURN DISTINCT t.name AS team"
            ),
            evaluation_reply(answer="ok"),
        ]
    )
    result = make_agent(spy, model, store).run(
        "and which of those are in Platform?", history=history
    )
    assert result.llm_steps == ["guard", "generate", "evaluate"]
    guard_prompt = model.prompts[0]
    assert "Which teams own services that use Postgres?" in guard_prompt
    assert POSTGRES_TEAMS in guard_prompt
    assert guard_prompt.endswith("Question: and which of those are in Platform?")
    assert result.standalone_question == standalone
    assert model.prompts[1].endswith(f"Question: {standalone}")
    # The generator sees the statement the follow-up builds on.
    previous = model.prompts[1].split("follows up on the previous one", 1)[1]
    assert "Which teams own services that use PostgreSQL?" in previous
    assert POSTGRES_TEAMS in previous


def test_a_question_without_history_gets_no_previous_statement(
    spy: SpyDB, store: InMemoryExampleStore
) -> None:
    model = ScriptedChatModel(
        replies=[guard_reply(), cypher_reply(TEAM_SIZES), evaluation_reply(answer="ok")]
    )
    make_agent(spy, model, store).run("Which teams have the most people?")
    assert "follows up on the previous one" not in model.prompts[1]


def test_out_of_scope_refuses_helpfully_without_running_cypher(
    spy: SpyDB, store: InMemoryExampleStore
) -> None:
    model = ScriptedChatModel(replies=[guard_reply("out_of_scope", reason="elections")])
    result = make_agent(spy, model, store).run("Who won the last election in Paris?")
    assert result.outcome == "out_of_scope"
    assert result.cypher is None and spy.ran == [] and spy.validated == []
    assert 2 <= len(result.suggestions) <= 3
    for suggestion in result.suggestions:
        assert suggestion in result.answer
    assert "people" in result.answer  # the description says what the graph holds
    assert result.llm_calls == 1


@pytest.mark.parametrize(
    ("history", "question"),
    [
        ([], "Delete all the incidents from last year."),
        ([], "Can you set the tier of every service to 1?"),
        (
            [
                Turn(
                    "Which teams use PostgreSQL?",
                    "Which teams use PostgreSQL?",
                    POSTGRES_TEAMS,
                    "Data",
                )
            ],
            "Then remove them.",
        ),
    ],
)
def test_a_request_to_change_the_graph_is_refused_without_the_model(
    spy: SpyDB, store: InMemoryExampleStore, history: list[Turn], question: str
) -> None:
    # The model would call it in scope and write a SET: it is never asked.
    model = ScriptedChatModel(replies=[guard_reply("in_scope")])
    result = make_agent(spy, model, store).run(question, history=history)
    assert result.outcome == "out_of_scope"
    assert "only read the graph" in result.answer
    assert model.calls == [] and spy.ran == [] and spy.validated == []


@pytest.mark.parametrize(
    ("question", "says"),
    [
        ("What's the weather going to be like in Berlin tomorrow?", "something else"),
        ("Tell me a joke about the Payments team.", "something else"),
        ("Book me a meeting with the Payments team on Friday.", "errands"),
        ("Write a Python function that retries an HTTP call.", "errands"),
    ],
)
def test_a_general_topic_or_an_errand_is_declined_without_the_model(
    spy: SpyDB, store: InMemoryExampleStore, question: str, says: str
) -> None:
    # A small model's guard calls these in scope because a word matches the graph.
    model = ScriptedChatModel(replies=[guard_reply("in_scope")])
    result = make_agent(spy, model, store).run(question)
    assert result.outcome == "out_of_scope"
    assert says in result.answer
    assert model.calls == [] and spy.validated == []


def test_a_question_using_the_graphs_words_still_reaches_the_model(
    spy: SpyDB, store: InMemoryExampleStore
) -> None:
    model = ScriptedChatModel(
        replies=[guard_reply(), cypher_reply(TEAM_SIZES), evaluation_reply(answer="ok")]
    )
    result = make_agent(spy, model, store).run("Write a list of the teams with the most people.")
    assert result.outcome == "answered"
    assert result.llm_steps == ["guard", "generate", "evaluate"]


def test_a_property_the_graph_lacks_is_named_instead_of_failing(
    spy: SpyDB, store: InMemoryExampleStore
) -> None:
    salary = cypher_reply("MATCH (p:Person {name: 'Kenji Smith'}) RETURN p.salary AS salary")
    model = ScriptedChatModel(replies=[guard_reply(), salary, salary, salary])
    result = make_agent(spy, model, store, max_attempts=3).run("What is Kenji Smith's salary?")
    assert result.outcome == "out_of_scope"
    assert "no data on “salary”" in result.answer
    assert "people" in result.answer  # what the graph does hold
    # The second statement named the same missing property: no third attempt.
    assert result.llm_steps == ["guard", "generate", "correct"]
    assert [f.rule for f in result.rules_fired] == ["asked-but-missing", "asked-but-missing"]
    assert spy.ran == []


def test_a_missing_name_the_question_did_not_use_is_an_ordinary_failure(
    spy: SpyDB, store: InMemoryExampleStore
) -> None:
    wrong = cypher_reply("MATCH (p:Person) RETURN p.fullname AS name")
    model = ScriptedChatModel(replies=[guard_reply(), wrong, wrong, wrong, wrong])
    result = make_agent(spy, model, store, max_attempts=3).run("Who works here?")
    assert result.outcome == "failed"
    assert result.error_kind == "attempts_exhausted"
    # One writing call per statement: a repeated statement is not asked again (that re-ask
    # never turned a dev item right; docs/eval.md).
    assert result.llm_steps == ["guard", "generate", "correct", "correct"]


def test_an_unbound_variable_with_one_way_to_bind_it_is_bound_without_a_correction(
    spy: SpyDB, store: InMemoryExampleStore
) -> None:
    # The engine's own error ("'p' not defined"), and then the hint naming the pattern, came
    # back unchanged from a 1.5B model: the question names one label the statement lacks and
    # one relationship reaches it, so the pattern is written in.
    model = ScriptedChatModel(
        replies=[
            guard_reply(),
            cypher_reply("MATCH (t:Team {name: 'Payments'}) RETURN count(p) AS people"),
            evaluation_reply(answer="ok"),
        ]
    )
    # Without schema paths: their probes would be the first reads.
    agent = make_agent(spy, model, store, schema_paths=0)
    result = agent.run("How many people are in the Payments team?")
    assert result.outcome == "answered" and [a.stage for a in result.attempts] == ["ok"]
    assert spy.ran[0].startswith(
        "MATCH (t:Team {name: 'Payments'}), (t)<-[:MEMBER_OF]-(p:Person) RETURN count(p)"
    )
    [[people]] = spy.run_read(
        "MATCH (p:Person)-[:MEMBER_OF]->(:Team {name: 'Payments'}) RETURN count(p)"
    ).rows
    assert result.rows == [[people]] and people > 1


def test_rows_from_a_statement_that_counts_another_label_get_one_correction(
    spy: SpyDB, store: InMemoryExampleStore
) -> None:
    # "How many machines are in rack R?" answered "1 machine" by counting the rack: a real
    # 1.5B statement that its evaluator accepted. Behind a WITH, which counted-road leaves
    # alone (without it, counted-road writes the people in: test_statement_repairs).
    gold = "MATCH (p:Person)-[:MEMBER_OF]->(t:Team {name: 'Payments'}) RETURN count(p) AS people"
    model = ScriptedChatModel(
        replies=[
            guard_reply(),
            cypher_reply("MATCH (t:Team {name: 'Payments'}) WITH t RETURN count(t) AS people"),
            cypher_reply(gold),
            evaluation_reply(answer="ok"),
        ]
    )
    result = make_agent(spy, model, store).run("How many people are in the Payments team?")
    assert [a.stage for a in result.attempts] == ["counted_label", "ok"]
    assert (
        "The question counts people, but the statement never matches a Person (it counts t, "
        "a Team): match the people and count p, e.g. through (p:Person)-[:MEMBER_OF]->(t:Team)"
    ) in model.prompts[2]
    assert result.outcome == "answered" and result.rows[0][0] > 1


def test_a_statement_sent_back_after_the_counted_label_note_is_judged_on_its_rows(
    spy: SpyDB, store: InMemoryExampleStore
) -> None:
    same = "MATCH (t:Team {name: 'Payments'}) WITH t RETURN count(t) AS people"  # no counted-road
    model = ScriptedChatModel(
        replies=[
            guard_reply(),
            cypher_reply(same),
            cypher_reply(same),
            evaluation_reply(answer="1"),
        ]
    )
    result = make_agent(spy, model, store).run("How many people are in the Payments team?")
    assert [a.stage for a in result.attempts] == ["counted_label", "ok"]
    assert result.outcome == "answered" and result.rows == [[1]]
    assert result.llm_steps == ["guard", "generate", "correct", "evaluate"]


def test_rows_that_count_another_label_on_the_last_attempt_are_unconfirmed(
    spy: SpyDB, store: InMemoryExampleStore
) -> None:
    model = ScriptedChatModel(
        replies=[
            guard_reply(),
            cypher_reply("MATCH (t:Team {name: 'Payments'})-[:EMPLOYS]->(p) RETURN count(p)"),
            cypher_reply("MATCH (t:Team {name: 'Payments'}) WITH t RETURN count(t) AS people"),
        ]
    )
    result = make_agent(spy, model, store, max_attempts=2).run(
        "How many people are in the Payments team?"
    )
    assert [a.stage for a in result.attempts] == ["schema", "counted_label"]
    assert result.unconfirmed and result.rows == [[1]]
    assert result.answer.startswith("I couldn't confirm that these results answer your question")


def test_a_property_of_the_related_node_is_read_from_it_without_a_correction(
    scratch_db: GraphDB, store: InMemoryExampleStore
) -> None:
    # `m.type` where the type is a related node: a 1.5B model sent it back on every attempt.
    scratch_db.run_write(
        "CREATE (xs:Type {type: 'xs', ram: 1}), (xl:Type {type: 'xl', ram: 256}), "
        "(:Machine {name: 'a'})-[:TYPE]->(xs), (:Machine {name: 'b'})-[:TYPE]->(xs), "
        "(:Machine {name: 'c'})-[:TYPE]->(xl)"
    )
    spy = SpyDB(scratch_db)
    model = ScriptedChatModel(
        replies=[
            guard_reply(),
            cypher_reply(
                "MATCH (m:Machine) RETURN m.type AS type, count(*) AS machines "
                "ORDER BY machines DESC"
            ),
            evaluation_reply(answer="2 xs machines and 1 xl machine."),
        ]
    )
    result = make_agent(spy, model, store).run("How many machines of each type are there?")
    assert result.outcome == "answered" and len(result.attempts) == 1
    assert result.rows == [["xs", 2], ["xl", 1]]
    assert spy.ran[0].startswith("MATCH (m:Machine), (m)-[:TYPE]->(t:Type) RETURN t.type AS type")
    assert result.llm_steps == ["guard", "generate", "evaluate"]


@pytest.mark.parametrize(
    ("answer", "kept"),
    [
        ("zone", False),  # a real 1.5B answer to "Which zone is rack R in?" (zone 2)
        ("There are {n} teams.", True),
    ],
)
def test_an_answer_that_leaves_out_the_one_value_is_replaced_by_it(
    spy: SpyDB, store: InMemoryExampleStore, demo_db: GraphDB, answer: str, kept: bool
) -> None:
    cypher = "MATCH (t:Team) RETURN count(t) AS teams"
    [[n]] = demo_db.run_read(cypher).rows
    model = ScriptedChatModel(
        replies=[guard_reply(), cypher_reply(cypher), evaluation_reply(answer=answer.format(n=n))]
    )
    result = make_agent(spy, model, store).run("How many teams are there?")
    assert result.outcome == "answered"
    assert result.answer == (answer.format(n=n) if kept else f"teams: {n}")


@pytest.mark.parametrize(
    ("cypher", "answer", "kept"),
    [
        # 5 rows because 5 is the cap: the number is not a count of anything.
        ("MATCH (p:Person) RETURN p.name AS name", "There are 5 people in each team.", False),
        (
            "MATCH (t:Team)<-[:MEMBER_OF]-(:Person) RETURN DISTINCT t.name AS team LIMIT 3",
            "There are 3 teams.",
            True,
        ),
    ],
)
def test_the_row_cap_is_not_a_count_the_answer_may_state(
    spy: SpyDB, store: InMemoryExampleStore, cypher: str, answer: str, kept: bool
) -> None:
    model = ScriptedChatModel(
        replies=[guard_reply(), cypher_reply(cypher), evaluation_reply(answer=answer)]
    )
    result = make_agent(spy, model, store, max_rows=5).run("How many people are in each team?")
    assert result.outcome == "answered"
    assert (result.answer == answer) is kept and result.ungrounded is not kept
    assert ("the row limit: more may exist" in model.prompts[2]) is not kept


def test_needs_clarification_asks_back(spy: SpyDB, store: InMemoryExampleStore) -> None:
    model = ScriptedChatModel(
        replies=[guard_reply("needs_clarification", clarification="Which team do you mean?")]
    )
    result = make_agent(spy, model, store).run("tell me about it")
    assert result.outcome == "needs_clarification"
    assert result.answer.startswith("Which team do you mean?")
    assert result.suggestions and spy.ran == []


def test_syntax_error_is_corrected_and_handed_off_as_self_healed(
    spy: SpyDB, store: InMemoryExampleStore
) -> None:
    model = ScriptedChatModel(
        replies=[
            guard_reply(),
            cypher_reply("MATCH (p:Person)-[:MEMBER_OF]->(t:Team RETURN t.name, count(p)"),
            cypher_reply(TEAM_SIZES),
            evaluation_reply(answer="ok"),
        ]
    )
    result = make_agent(spy, model, store).run("Which teams have the most people?")
    assert result.outcome == "answered"
    assert result.llm_steps == ["guard", "generate", "correct", "evaluate"]
    assert [a.stage for a in result.attempts] == ["validate", "ok"]
    assert result.attempts[0].error and "rejected" in result.attempts[0].error
    assert "did not work" in model.prompts[2] and "rejected" in model.prompts[2]
    assert result.self_healed
    (candidate,) = store.examples
    assert candidate.status == "candidate" and candidate.source == "self_healed"
    assert candidate.question == "Which teams have the most people?"
    assert candidate.cypher == result.cypher
    assert candidate.schema_fingerprint


def test_rows_doubted_on_every_attempt_are_given_with_a_caveat(
    spy: SpyDB, store: InMemoryExampleStore
) -> None:
    doubt = evaluation_reply(False, feedback="These are not the teams asked for.")
    first, second = POSTGRES_TEAMS, POSTGRES_TEAMS.replace("ORDER BY team", "ORDER BY team DESC")
    model = ScriptedChatModel(
        replies=[
            guard_reply(),
            cypher_reply(first),
            doubt,
            cypher_reply(second),
            doubt,
            cypher_reply(TEAM_SIZES),
            doubt,
        ]
    )
    result = make_agent(spy, model, store, max_attempts=3).run("Which teams use Postgres?")
    assert result.outcome == "answered" and result.unconfirmed
    assert result.error_kind is None
    assert result.cypher is not None and result.cypher.startswith(first)  # the first rows
    assert result.rows and result.columns == ["team"]
    assert result.answer.startswith("I couldn't confirm")
    assert "not the teams asked for" not in result.answer  # the model's doubt is not shown
    assert [a.stage for a in result.attempts] == ["evaluate", "evaluate", "evaluate"]
    assert not result.self_healed and store.examples == []


def test_a_doubted_result_is_dropped_when_a_later_attempt_is_confirmed(
    spy: SpyDB, store: InMemoryExampleStore
) -> None:
    model = ScriptedChatModel(
        replies=[
            guard_reply(),
            cypher_reply(TEAM_SIZES),
            evaluation_reply(False, feedback="Wrong teams."),
            cypher_reply(POSTGRES_TEAMS),
            evaluation_reply(answer="Several teams."),
        ]
    )
    result = make_agent(spy, model, store).run("Which teams use Postgres?")
    assert result.outcome == "answered" and not result.unconfirmed
    assert result.cypher is not None and result.cypher.startswith(POSTGRES_TEAMS)
    assert result.answer == "Several teams."


def test_empty_rows_get_evaluator_feedback_then_correction(
    spy: SpyDB, store: InMemoryExampleStore
) -> None:
    model = ScriptedChatModel(
        replies=[
            guard_reply(),
            # Uses the hinted stored value, so only the evaluator can say what is wrong.
            cypher_reply(POSTGRES_TEAMS.replace("RETURN", "WHERE t.name = 'Nobody' RETURN")),
            evaluation_reply(False, feedback="No rows: drop the filter named 'Nobody'."),
            cypher_reply(POSTGRES_TEAMS),
            evaluation_reply(answer="Several teams."),
        ]
    )
    result = make_agent(spy, model, store).run("Which teams use Postgres?")
    assert result.outcome == "answered" and result.rows
    assert result.llm_steps == ["guard", "generate", "evaluate", "correct", "evaluate"]
    assert [a.stage for a in result.attempts] == ["evaluate", "ok"]
    assert "named 'Nobody'" in model.prompts[3]
    assert result.self_healed and len(store.examples) == 1


def test_an_empty_result_doubted_on_every_attempt_is_said_as_nothing_found(
    spy: SpyDB, store: InMemoryExampleStore
) -> None:
    nobody = POSTGRES_TEAMS.replace("RETURN", "WHERE t.name = 'Nobody' RETURN")
    doubt = evaluation_reply(False, feedback="No rows: that cannot be right.")
    model = ScriptedChatModel(
        replies=[guard_reply(), cypher_reply(nobody), doubt, cypher_reply(nobody), doubt]
    )
    result = make_agent(spy, model, store, max_attempts=2).run("Which teams use Postgres?")
    assert result.outcome == "no_data" and result.unconfirmed
    assert result.error_kind is None and result.rows == []
    assert result.cypher is not None and "'Nobody'" in result.cypher  # the query that ran
    assert result.answer.startswith("My query found nothing")
    assert "cannot be right" not in result.answer  # the model's doubt is not shown
    assert [a.stage for a in result.attempts] == ["evaluate", "evaluate"]


def test_rows_found_after_a_doubted_empty_result_are_the_ones_given(
    spy: SpyDB, store: InMemoryExampleStore
) -> None:
    nobody = POSTGRES_TEAMS.replace("RETURN", "WHERE t.name = 'Nobody' RETURN")
    doubt = evaluation_reply(False, feedback="Not these.")
    model = ScriptedChatModel(
        replies=[guard_reply(), cypher_reply(nobody), doubt, cypher_reply(POSTGRES_TEAMS), doubt]
    )
    result = make_agent(spy, model, store, max_attempts=2).run("Which teams use Postgres?")
    assert result.outcome == "answered" and result.unconfirmed and result.rows
    assert result.cypher is not None and result.cypher.startswith(POSTGRES_TEAMS)


def test_write_statement_is_refused_before_the_engine(
    spy: SpyDB, store: InMemoryExampleStore
) -> None:
    model = ScriptedChatModel(
        replies=[
            guard_reply(),
            cypher_reply("MATCH (p:Person) DETACH DELETE p"),
            cypher_reply(TEAM_SIZES),
            evaluation_reply(answer="ok"),
        ]
    )
    result = make_agent(spy, model, store).run("Which teams have the most people?")
    assert result.outcome == "answered"
    assert result.attempts[0].stage == "policy"
    assert all("DELETE" not in q for q in spy.validated + spy.ran)


def test_attempts_exhausted_fail_honestly(spy: SpyDB, store: InMemoryExampleStore) -> None:
    bad = cypher_reply("MATCH (p:Person RETURN p")
    model = ScriptedChatModel(replies=[guard_reply(), bad, bad, bad, bad])
    result = make_agent(spy, model, store, max_attempts=3).run("Who is everyone?")
    assert result.outcome == "failed"
    assert result.error_kind == "attempts_exhausted"
    assert len(result.attempts) == 3
    assert "3 attempts" in result.answer and "rephras" in result.answer
    # Three statements, three writing calls.
    assert result.llm_steps == ["guard", "generate", "correct", "correct"]
    assert spy.ran == []


def test_writes_refused_on_every_attempt_say_the_bot_only_reads(
    spy: SpyDB, store: InMemoryExampleStore
) -> None:
    write = cypher_reply("MATCH (p:Person) SET p.name = 'x' RETURN p")
    model = ScriptedChatModel(replies=[guard_reply(), write, write, write])
    # A read question the model answers with writes (an instruction to write never gets
    # this far: the guard declines it before the model is asked).
    result = make_agent(spy, model, store, max_attempts=3).run("What is everyone called?")
    assert result.outcome == "failed" and result.error_kind == "attempts_exhausted"
    assert "only read the graph" in result.answer
    assert spy.ran == [] and spy.validated == []


def test_schema_check_catches_unknown_label_and_fixes_direction(
    spy: SpyDB, store: InMemoryExampleStore
) -> None:
    model = ScriptedChatModel(
        replies=[
            guard_reply(),
            cypher_reply("MATCH (e:Employee)-[:MEMBER_OF]->(t:Team) RETURN t.name, count(e)"),
            # Wrong way round: the graph has (:Person)-[:MEMBER_OF]->(:Team) only.
            cypher_reply(
                "MATCH (t:Team)-[:MEMBER_OF]->(p:Person) "
                "RETURN t.name AS team, count(p) AS people ORDER BY people DESC"
            ),
            evaluation_reply(answer="ok"),
        ]
    )
    result = make_agent(spy, model, store).run("How many people per team?")
    assert result.attempts[0].stage == "schema"
    assert "Employee" in (result.attempts[0].error or "")
    assert spy.validated[0].startswith("MATCH (t:Team)<-[:MEMBER_OF]-(p:Person)")
    assert result.outcome == "answered" and len(result.rows) == 11
    # The flip is a catalogue rule: traced, and gone when the rule is turned off.
    assert [f.rule for f in result.rules_fired] == ["relationship-direction"]


def test_the_direction_flip_is_off_without_its_rule(
    spy: SpyDB, store: InMemoryExampleStore
) -> None:
    backwards = "MATCH (t:Team)-[:MEMBER_OF]->(p:Person) RETURN t.name AS team, count(p) AS n"
    model = ScriptedChatModel(
        replies=[guard_reply(), cypher_reply(backwards), evaluation_reply(answer="none")]
    )
    agent = make_agent(spy, model, store, disabled_rules=frozenset({"relationship-direction"}))
    result = agent.run("How many people per team?")
    assert spy.validated[0] == backwards
    assert result.rules_fired == [] and result.rows == []


def test_malformed_json_is_repaired_once_then_falls_back(
    spy: SpyDB, store: InMemoryExampleStore
) -> None:
    model = ScriptedChatModel(
        replies=[
            "Sure! The scope is in scope.",  # guard: unreadable
            "{'scope': in_scope",  # repair: still unreadable → fallback: in scope
            cypher_reply(TEAM_SIZES),
            '```json\n{"answers_question": true, "answer": "Notifications leads."',  # broken
            evaluation_reply(answer="Notifications leads."),  # repaired
        ]
    )
    result = make_agent(spy, model, store).run("Which teams have the most people?")
    assert result.llm_steps == ["guard", "guard:repair", "generate", "evaluate", "evaluate:repair"]
    assert "could not be read" in model.prompts[1]
    assert result.outcome == "answered" and result.answer == "Notifications leads."
    assert result.llm_steps == ["guard", "guard:repair", "generate", "evaluate", "evaluate:repair"]


def test_unreadable_evaluation_falls_back_to_the_rows(
    spy: SpyDB, store: InMemoryExampleStore
) -> None:
    model = ScriptedChatModel(
        replies=[guard_reply(), cypher_reply(TEAM_SIZES), "nope", "still nope"]
    )
    result = make_agent(spy, model, store).run("Which teams have the most people?")
    assert result.outcome == "answered"
    assert "team: Notifications" in result.answer


def test_llm_timeout_is_a_clear_failure(spy: SpyDB, store: InMemoryExampleStore) -> None:
    model = ScriptedChatModel(replies=[guard_reply(), TimeoutError("read timed out")])
    result = make_agent(spy, model, store).run("Which teams have the most people?")
    assert result.outcome == "failed" and result.error_kind == "llm_timeout"
    assert "took too long" in result.answer


def test_slow_llm_hits_the_question_deadline(spy: SpyDB, store: InMemoryExampleStore) -> None:
    model = ScriptedChatModel(replies=[guard_reply()], delay_s=0.5)
    agent = make_agent(spy, model, store, question_deadline_s=0.2)
    # The schema read first: the first read also runs under the deadline (a paused engine
    # must not hang a question), and on a busy machine it could take the 0.2 s before the
    # model is ever asked (graph_down). This test is about the model's time.
    assert agent.schema.labels
    result = agent.run("Which teams?")
    assert result.outcome == "failed" and result.error_kind in ("llm_timeout", "deadline")


def test_llm_error_is_a_clear_failure(spy: SpyDB, store: InMemoryExampleStore) -> None:
    model = ScriptedChatModel(replies=[ConnectionError("connection refused")])
    result = make_agent(spy, model, store).run("Which teams have the most people?")
    assert result.outcome == "failed" and result.error_kind == "llm_error"
    assert "LLM settings" in result.answer


def test_value_hints_reach_the_prompt_for_a_synonym(
    spy: SpyDB, store: InMemoryExampleStore
) -> None:
    model = ScriptedChatModel(
        replies=[guard_reply(), cypher_reply(POSTGRES_TEAMS), evaluation_reply(answer="ok")]
    )
    make_agent(spy, model, store).run("Which teams run Postgres?")
    assert '(:Technology {name: "PostgreSQL"})' in model.prompts[1]


def test_examples_reach_the_generate_prompt(spy: SpyDB, store: InMemoryExampleStore) -> None:
    store.add("Which teams own services that use PostgreSQL?", POSTGRES_TEAMS, source="thumbs_up")
    model = ScriptedChatModel(
        replies=[guard_reply(), cypher_reply(POSTGRES_TEAMS), evaluation_reply(answer="ok")]
    )
    result = make_agent(spy, model, store).run("Which teams use PostgreSQL for services?")
    assert POSTGRES_TEAMS in model.prompts[1]
    assert result.example_ids == [1]
    assert store.examples[0].times_used == 1


def test_exact_question_reuses_verified_cypher(spy: SpyDB, store: InMemoryExampleStore) -> None:
    store.add("Which teams have the most people?", TEAM_SIZES, source="admin")
    model = ScriptedChatModel(replies=[evaluation_reply(answer="Notifications.")])
    result = make_agent(spy, model, store).run("which teams have the MOST people")
    assert result.llm_steps == ["evaluate"]
    assert result.reused_example_id == 1 and result.example_ids == [1]
    assert result.cypher == TEAM_SIZES and result.outcome == "answered"
    assert spy.validated == [TEAM_SIZES]  # still validated


def test_near_miss_does_not_reuse(spy: SpyDB, store: InMemoryExampleStore) -> None:
    store.add("Which teams have the most people?", TEAM_SIZES, source="admin")
    model = ScriptedChatModel(
        replies=[guard_reply(), cypher_reply(TEAM_SIZES), evaluation_reply(answer="ok")]
    )
    result = make_agent(spy, model, store).run("Which teams have the most senior people?")
    assert result.llm_steps == ["guard", "generate", "evaluate"]
    assert result.reused_example_id is None


def test_reused_query_is_answered_offline_without_llm(
    spy: SpyDB, store: InMemoryExampleStore
) -> None:
    store.add("Which teams have the most people?", TEAM_SIZES, source="seed")
    result = make_agent(spy, None, store).run("Which teams have the most people?")
    assert result.outcome == "answered" and result.llm_calls == 0
    assert result.reused_example_id == 1
    assert "team: Notifications, people: 11" in result.answer


def test_without_llm_other_questions_name_the_settings(
    spy: SpyDB, store: InMemoryExampleStore
) -> None:
    result = make_agent(spy, None, store).run("Which teams have the most people?")
    assert result.outcome == "failed" and result.error_kind == "llm_not_configured"
    assert "OPENAI_BASE_URL" in result.answer and "OPENAI_API_KEY" in result.answer


def test_schema_cannot_answer_says_no_data(spy: SpyDB, store: InMemoryExampleStore) -> None:
    model = ScriptedChatModel(replies=[guard_reply(), "NO_DATA: awards won by people"])
    result = make_agent(spy, model, store).run("Which engineer won the most awards?")
    assert result.outcome == "no_data"
    assert result.answer == "The graph has no data on awards won by people"
    assert spy.ran == []


def test_hidden_labels_per_call_are_refused(spy: SpyDB, store: InMemoryExampleStore) -> None:
    model = ScriptedChatModel(
        replies=[
            guard_reply(),
            cypher_reply("MATCH (i:Incident) RETURN count(i) AS incidents"),
            cypher_reply("MATCH (s:Service) RETURN count(s) AS services"),
            evaluation_reply(answer="ok"),
        ]
    )
    policy = CypherPolicy(hidden_labels=frozenset({"Incident"}))
    result = make_agent(spy, model, store).run("How many incidents?", policy=policy)
    assert result.attempts[0].stage in ("policy", "schema")
    assert "(:Incident)" not in model.prompts[1]
    assert all("Incident" not in q for q in spy.ran)


def test_examples_touching_hidden_labels_are_not_shown(
    spy: SpyDB, store: InMemoryExampleStore
) -> None:
    store.add("How many incidents were there?", "MATCH (i:Incident) RETURN count(i) AS n")
    store.add("How many services are there?", "MATCH (s:Service) RETURN count(s) AS n")
    model = ScriptedChatModel(
        replies=[
            guard_reply(),
            cypher_reply("MATCH (s:Service) RETURN count(s) AS services"),
            evaluation_reply(answer="ok"),
        ]
    )
    policy = CypherPolicy(hidden_labels=frozenset({"Incident"}))
    make_agent(spy, model, store).run("How many incidents or services are there?", policy=policy)
    generate_prompt = model.prompts[1]
    assert "MATCH (s:Service) RETURN count(s) AS n" in generate_prompt
    assert "Incident" not in generate_prompt


def test_an_answer_denying_rows_that_came_back_is_replaced_by_the_rows(
    spy: SpyDB, store: InMemoryExampleStore
) -> None:
    # Seen with a real 1.5B model: "services with no tier" read as "no data".
    model = ScriptedChatModel(
        replies=[
            guard_reply(),
            cypher_reply("MATCH (s:Service) WHERE s.tier IS NULL RETURN s.name AS service"),
            evaluation_reply(answer="The graph has no data on services with no tier set."),
        ]
    )
    result = make_agent(spy, model, store).run("Which services have no tier set?")
    assert result.outcome == "answered" and result.rows
    assert "no data" not in result.answer
    assert str(result.rows[0][0]) in result.answer


def test_run_is_safe_from_worker_threads(spy: SpyDB, store: InMemoryExampleStore) -> None:
    def respond(messages: list[Any]) -> str:
        system = str(messages[0].content)
        if system.startswith("You are the front desk"):
            return guard_reply()
        if system.startswith("You write"):
            return cypher_reply(TEAM_SIZES)
        return evaluation_reply(answer="ok")

    agent = make_agent(spy, ScriptedChatModel(responder=respond), store)
    outcomes: list[str] = []
    threads = [
        threading.Thread(target=lambda: outcomes.append(agent.run("Which teams?").outcome))
        for _ in range(4)
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert outcomes == ["answered"] * 4


def test_the_generate_prompt_offers_the_schema_paths_the_data_has(
    spy: SpyDB, store: InMemoryExampleStore
) -> None:
    # "Which teams have people on Project X?": the model is shown the two-hop pattern from the
    # named project to the asked label (probed on the graph first), not left to invent one.
    model = ScriptedChatModel(
        replies=[
            guard_reply(),
            cypher_reply("MATCH (t:Team) RETURN t.name AS team"),
            evaluation_reply(answer="ok"),
        ]
    )
    project = spy._db.run_read("MATCH (p:Project) RETURN p.name LIMIT 1", max_rows=1).rows[0][0]
    make_agent(spy, model, store).run(f"Which teams have people on {project}?")
    generate = model.prompts[1]
    assert "Paths the schema has from those values" in generate
    pattern = f'(p:Project {{name: "{project}"}})<-[:WORKS_ON]-(p2:Person)-[:MEMBER_OF]->(t:Team)'
    assert pattern in generate
    assert any(c.endswith("RETURN 1 AS found LIMIT 1") and pattern in c for c in spy.ran)


def test_a_correction_reuses_the_schema_paths_generate_probed(
    spy: SpyDB, store: InMemoryExampleStore
) -> None:
    project = spy._db.run_read("MATCH (p:Project) RETURN p.name LIMIT 1", max_rows=1).rows[0][0]
    corrected = (
        f"MATCH (t:Team)<-[:MEMBER_OF]-(:Person)-[:WORKS_ON]->(:Project {{name: '{project}'}}) "
        "RETURN DISTINCT t.name AS team"
    )  # the project kept: a statement without it gets value-left-out's note
    model = ScriptedChatModel(
        replies=[
            guard_reply(),
            cypher_reply("MATCH (t:Team)-[:NO_SUCH]->(p:Project) RETURN t.name AS team"),
            cypher_reply(corrected),
            evaluation_reply(answer="ok"),
        ]
    )
    result = make_agent(spy, model, store).run(f"Which teams have people on {project}?")
    assert result.llm_steps == ["guard", "generate", "correct", "evaluate"]
    probes = [c for c in spy.ran if c.endswith("RETURN 1 AS found LIMIT 1")]
    assert probes and len(probes) == len(set(probes)), "each path probed once"
    # The correction showed the model the same paths.
    assert "Paths the schema has" in model.prompts[2]
    assert (
        model.prompts[1].split("Paths the schema has")[1].split("Question:")[0] in model.prompts[2]
    )
