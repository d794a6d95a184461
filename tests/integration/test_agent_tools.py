"""Questions a graph tool answers, through the agent on the real embedded demo graph with the
scripted chat model: cards, connections and neighbourhoods in two LLM calls, "did you mean"
with choices that continue the question, the fallback to generated Cypher, follow-ups across
both paths, a restricted channel, and the CLI's numbered prompt."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any, cast

import pytest
from typer.testing import CliRunner

import bot.cli
from graph_agent.agent import Agent
from graph_agent.config import AgentConfig
from graph_agent.examples import InMemoryExampleStore
from graph_agent.graphdb import GraphDB
from graph_agent.llm import LLMs
from graph_agent.result import AgentResult, Choice, ProgressEvent
from graph_agent.tool_routing import is_tool_note
from guardrails import CypherPolicy
from memory.types import Turn
from rig.scripted_llm import ScriptedChatModel, cypher_reply, evaluation_reply, guard_reply
from tests.support.fake_openai import FakeOpenAI
from tests.support.spy import SpyDB


@pytest.fixture
def spy(demo_db: GraphDB) -> SpyDB:
    return SpyDB(demo_db)


@pytest.fixture
def store() -> InMemoryExampleStore:
    return InMemoryExampleStore()


def make_agent(
    db: SpyDB | GraphDB,
    model: ScriptedChatModel | None,
    store: InMemoryExampleStore | None = None,
    policy: CypherPolicy | None = None,
    **config: Any,
) -> Agent:
    llms = LLMs(cypher=model, fast=model) if model is not None else None
    examples = store if store is not None else InMemoryExampleStore()
    # These tests script the worded answer; the default (the tool's own text) has its own.
    config.setdefault("word_tool_answers", True)
    return Agent(cast(GraphDB, db), llms, examples, AgentConfig(**config), policy)


def _turn(question: str, result: AgentResult) -> Turn:
    return Turn(
        question=question,
        standalone_question=result.standalone_question,
        cypher=result.cypher,
        answer=result.answer,
        outcome=result.outcome,
    )


# --- the three tools ----------------------------------------------------------------------------


def test_a_card_is_answered_with_two_llm_calls_and_no_generated_cypher(spy: SpyDB) -> None:
    model = ScriptedChatModel(
        replies=[
            guard_reply(),
            evaluation_reply(answer="Alice Nguyen is the VP of Engineering, in Payments."),
        ]
    )
    events: list[ProgressEvent] = []
    result = make_agent(spy, model).run("Tell me about Alice Nguyen", on_progress=events.append)
    assert result.outcome == "answered" and result.tool == "card"
    assert result.llm_steps == ["guard", "evaluate"] and result.llm_calls == 2
    assert result.answer == "Alice Nguyen is the VP of Engineering, in Payments."
    assert result.cypher == '// graph tool: card("Alice Nguyen")'
    assert result.columns == ["entity", "label", "field", "value", "count"]
    assert ["Alice Nguyen", "Person", "title", "VP of Engineering", None] in result.rows
    assert [e.step for e in events] == ["understand", "use_tool", "evaluate"]
    assert "use_tool" in result.timings_ms and len(result.attempts) == 1
    # Only the tools' own reads ran, the name as a parameter: nothing was validated.
    assert spy.validated == [] and spy.ran
    assert not [s for s in spy.ran if "Alice" in s]
    # The answer step saw the tool's note where a statement would be, and its rows.
    assert '// graph tool: card("Alice Nguyen")' in model.prompts[1]
    assert "VP of Engineering" in model.prompts[1]


def test_a_connection_shows_its_path_to_the_answer_step(spy: SpyDB) -> None:
    chain = "Wei Nguyen —MEMBER_OF→ Payments ←MEMBER_OF— Hana Smith"
    model = ScriptedChatModel(replies=[guard_reply(), evaluation_reply(answer=chain)])
    result = make_agent(spy, model).run("How is Wei Nguyen connected to Hana Smith?")
    assert result.outcome == "answered" and result.tool == "connection"
    assert result.llm_steps == ["guard", "evaluate"]
    assert result.cypher == '// graph tool: connection("Wei Nguyen", "Hana Smith")'
    assert result.columns == ["route", "hops", "chain", "through"]
    assert [1, 2, chain, ["Payments (Team)"]] in result.rows
    assert chain in model.prompts[1] and result.answer == chain


def test_a_neighbourhood_groups_what_the_entity_is_linked_to(spy: SpyDB) -> None:
    model = ScriptedChatModel(
        replies=[
            guard_reply(),
            evaluation_reply(answer="Payments has 11 members and owns 9 things."),
        ]
    )
    result = make_agent(spy, model).run("What is the Payments team linked to?")
    assert result.outcome == "answered" and result.tool == "neighbourhood"
    assert result.cypher == '// graph tool: neighbourhood("Payments")'
    assert ["Payments", "OWNS", "outgoing", "OnCallRotation", 1, ["Payments primary"]] in (
        result.rows
    )


def test_without_a_worded_answer_the_tool_s_own_text_is_the_answer(spy: SpyDB) -> None:
    # The model's answer names what the rows do not hold: the tool's rendering replaces it.
    model = ScriptedChatModel(
        replies=[guard_reply(), evaluation_reply(answer="Alice Nguyen leads 300 people.")]
    )
    result = make_agent(spy, model).run("Tell me about Alice Nguyen")
    assert result.ungrounded and result.tool == "card"
    assert result.answer.startswith("Alice Nguyen (Person)\n")
    assert "—MEMBER_OF→ 1 Team: Payments" in result.answer


# --- did you mean -------------------------------------------------------------------------------


def test_an_ambiguous_name_asks_back_with_choices(spy: SpyDB) -> None:
    model = ScriptedChatModel(replies=[guard_reply()])
    result = make_agent(spy, model).run("Tell me about Alice")
    assert result.outcome == "needs_clarification" and result.tool is None
    assert result.llm_steps == ["guard"] and result.cypher is None and spy.validated == []
    assert result.answer.startswith("Which “Alice” do you mean?\n• Alice ")
    *candidates, none = result.choices
    assert {c.name for c in candidates} == {
        "Alice Nguyen", "Alice Smith", "Alice Garcia", "Alice Okafor", "Alice Kowalski",
    }  # fmt: skip
    assert all(c.label == "Person" and c.text == f"{c.name} (Person)" for c in candidates)
    smith = next(c for c in candidates if c.name == "Alice Smith")
    assert smith.question == "Tell me about Alice Smith"
    assert smith.request is not None and smith.request.tool == "card"
    assert none.text == "None of these" and none.request is None
    assert none.question == "Tell me about Alice"


def test_choosing_continues_the_same_question_with_one_llm_call(spy: SpyDB) -> None:
    model = ScriptedChatModel(replies=[guard_reply()])
    agent = make_agent(spy, model)
    asked = agent.run("Tell me about Alice")
    smith = next(c for c in asked.choices if c.name == "Alice Smith")
    # The choice travels as JSON (a Slack button's value) and back.
    smith = Choice.from_dict(json.loads(json.dumps(smith.to_dict())))
    model.extend([evaluation_reply(answer="Alice Smith works in Search.")])
    history = [_turn("Tell me about Alice", asked)]
    result = agent.run(smith.question, history=history, choice=smith)
    assert result.outcome == "answered" and result.tool == "card"
    assert result.llm_steps == ["evaluate"]  # understood in the first round already
    assert result.standalone_question == "Tell me about Alice Smith"
    assert result.cypher == '// graph tool: card("Alice Smith")'
    assert {row[0] for row in result.rows} == {"Alice Smith"}


def test_a_connection_asks_about_one_name_then_continues(spy: SpyDB) -> None:
    model = ScriptedChatModel(replies=[guard_reply()])
    agent = make_agent(spy, model)
    asked = agent.run("How is Kenji connected to Payments?")
    assert asked.outcome == "needs_clarification"
    nguyen = next(c for c in asked.choices if c.name == "Kenji Nguyen")
    assert nguyen.question == "How is Kenji Nguyen connected to Payments?"
    model.extend([evaluation_reply(answer="Kenji Nguyen manages a team.")])
    result = agent.run(nguyen.question, choice=nguyen)
    assert result.tool == "connection" and result.outcome == "answered"
    assert all(row[2].startswith("Kenji Nguyen ") for row in result.rows)


def test_a_second_unclear_name_is_never_asked_back(spy: SpyDB) -> None:
    # Both names fit several people: one round asks about the first; after the choice the
    # second goes to the statement loop, not back to the person.
    model = ScriptedChatModel(replies=[guard_reply()])
    agent = make_agent(spy, model)
    asked = agent.run("How is Kenji connected to Alice?")
    assert asked.outcome == "needs_clarification"
    assert {c.name for c in asked.choices[:-1]} >= {"Kenji Nguyen", "Kenji Smith"}
    statement = (
        "MATCH (a:Person {name: 'Kenji Nguyen'})-[:REPORTS_TO]->(b:Person) RETURN b.name AS manager"
    )
    model.extend([cypher_reply(statement), evaluation_reply(answer="Alice Nguyen.")])
    kenji = next(c for c in asked.choices if c.name == "Kenji Nguyen")
    result = agent.run(kenji.question, choice=kenji)
    assert result.llm_steps == ["generate", "evaluate"] and result.tool is None
    assert result.outcome == "answered" and not result.choices


def test_none_of_these_writes_a_statement_for_the_question(spy: SpyDB) -> None:
    model = ScriptedChatModel(replies=[guard_reply()])
    agent = make_agent(spy, model)
    asked = agent.run("Tell me about Alice")
    none = asked.choices[-1]
    statement = "MATCH (p:Person) WHERE p.name STARTS WITH 'Alice' RETURN p.name AS name"
    model.extend(
        [cypher_reply(statement), evaluation_reply(answer="Five people are called Alice.")]
    )
    result = agent.run(none.question, choice=none)
    assert result.llm_steps == ["generate", "evaluate"] and result.tool is None
    assert result.outcome == "answered" and result.cypher is not None
    assert result.cypher.startswith("MATCH (p:Person)")


def test_a_name_close_to_stored_names_offers_them(spy: SpyDB) -> None:
    model = ScriptedChatModel(replies=[guard_reply()])
    result = make_agent(spy, model).run("Tell me about Alicia Nakamura")
    assert result.outcome == "needs_clarification"
    assert result.answer.startswith("Nothing in the graph is called “Alicia Nakamura”.")
    assert all((c.name or "").startswith("Alice ") for c in result.choices[:-1])


def test_a_choice_of_a_node_the_channel_cannot_see_is_not_read(spy: SpyDB) -> None:
    # A forged or stale choice: the entity is read again by its key under the channel's view.
    model = ScriptedChatModel(replies=[guard_reply()])
    agent = make_agent(spy, model)
    alice = next(c for c in agent.run("Tell me about Alice").choices if c.name == "Alice Smith")
    hidden = CypherPolicy(hidden_labels=frozenset({"Person"}))
    statement = "MATCH (t:Team) RETURN t.name AS team"
    model.extend([cypher_reply(statement), evaluation_reply(answer="Teams.")])
    result = agent.run(alice.question, choice=alice, policy=hidden)
    assert result.tool is None and "Alice" not in json.dumps(result.rows)


# --- falling back to generated Cypher -----------------------------------------------------------


def test_a_name_nothing_in_the_graph_resembles_is_answered_as_not_there(spy: SpyDB) -> None:
    # Written statements only filtered on the unknown name and came back empty (dev items:
    # 3 of 3 failed after 4-7 LLM calls); neither the tool nor the value lookup finds it.
    model = ScriptedChatModel(replies=[guard_reply()])
    result = make_agent(spy, model).run("Tell me about Zebulon Quux")
    assert result.llm_steps == ["guard"] and spy.validated == []
    assert result.tool is None and result.outcome == "no_data" and not result.choices
    assert "Zebulon Quux" in result.answer
    connection = make_agent(spy, ScriptedChatModel(replies=[guard_reply()])).run(
        "How is Quaxley Zumbrowski connected to Wei Nguyen?"
    )
    assert connection.outcome == "no_data" and "Quaxley Zumbrowski" in connection.answer


def test_a_doubted_tool_answer_starts_the_statement_loop(spy: SpyDB) -> None:
    statement = "MATCH (p:Person {name: 'Alice Nguyen'}) RETURN p.title AS title"
    model = ScriptedChatModel(
        replies=[
            guard_reply(),
            evaluation_reply(answers=False, feedback="Only her title was asked."),
            cypher_reply(statement),
            evaluation_reply(answer="VP of Engineering."),
        ]
    )
    result = make_agent(spy, model).run("Who is Alice Nguyen?")
    assert result.llm_steps == ["guard", "evaluate", "generate", "evaluate"]
    assert result.tool is None and result.answer == "VP of Engineering."
    assert result.cypher is not None and result.cypher.startswith("MATCH (p:Person")


def test_plain_questions_still_write_cypher(spy: SpyDB) -> None:
    statement = "MATCH (p:Person {name: 'Hana Smith'})-[:REPORTS_TO]->(m) RETURN m.name AS m"
    for question in ("Who is Hana Smith's manager?", "Who is the VP of Engineering?"):
        model = ScriptedChatModel(
            replies=[guard_reply(), cypher_reply(statement), evaluation_reply(answer="ok")]
        )
        result = make_agent(spy, model).run(question)
        assert result.llm_steps == ["guard", "generate", "evaluate"], question
        assert result.tool is None


# --- follow-ups across both paths ---------------------------------------------------------------


def test_a_follow_up_after_a_card_is_a_connection(spy: SpyDB) -> None:
    model = ScriptedChatModel(
        replies=[guard_reply(), evaluation_reply(answer="Alice Nguyen is the VP of Engineering.")]
    )
    agent = make_agent(spy, model)
    first = agent.run("Tell me about Alice Nguyen")
    history = [_turn("Tell me about Alice Nguyen", first)]
    chain = "Alice Nguyen ←REPORTS_TO— Wei Nguyen"
    model.extend(
        [
            guard_reply(standalone="How is Alice Nguyen connected to Wei Nguyen?"),
            evaluation_reply(answer=f"Wei Nguyen reports to her: {chain}"),
        ]
    )
    result = agent.run("and how is she connected to Wei Nguyen?", history=history)
    assert result.tool == "connection" and result.llm_steps == ["guard", "evaluate"]
    assert result.standalone_question == "How is Alice Nguyen connected to Wei Nguyen?"
    assert result.rows[0][2] == chain
    # The rewrite step saw what answered the first turn: the tool's note.
    assert 'cypher: // graph tool: card("Alice Nguyen")' in model.prompts[2]


def test_a_follow_up_after_a_tool_answer_that_needs_cypher_gets_no_note_as_statement(
    spy: SpyDB,
) -> None:
    model = ScriptedChatModel(
        replies=[guard_reply(), evaluation_reply(answer="Alice Nguyen is the VP of Engineering.")]
    )
    agent = make_agent(spy, model)
    first = agent.run("Tell me about Alice Nguyen")
    assert first.cypher is not None and is_tool_note(first.cypher)
    statement = (
        "MATCH (p:Person)-[:REPORTS_TO]->(:Person {name: 'Alice Nguyen'}) "
        "RETURN count(p) AS reports"
    )
    model.extend(
        [
            guard_reply(standalone="How many people report to Alice Nguyen?"),
            cypher_reply(statement),
            evaluation_reply(answer="20 people report to her."),
        ]
    )
    result = agent.run(
        "how many people report to her?", history=[_turn("Tell me about Alice Nguyen", first)]
    )
    assert result.llm_steps == ["guard", "generate", "evaluate"] and result.tool is None
    generate_prompt = model.prompts[3]
    assert "graph tool" not in generate_prompt
    assert "follows up on the previous one" not in generate_prompt


def test_a_taught_tool_answer_is_reused_by_its_question(
    spy: SpyDB, store: InMemoryExampleStore
) -> None:
    store.add("Tell me about Alice Nguyen", '// graph tool: card("Alice Nguyen")', source="admin")
    model = ScriptedChatModel(replies=[evaluation_reply(answer="Alice Nguyen, VP.")])
    result = make_agent(spy, model, store).run("tell me about alice nguyen")
    assert result.reused_example_id == 1 and result.tool == "card"
    assert result.llm_steps == ["evaluate"] and spy.validated == []
    # Never shown to the generate step as Cypher.
    other = ScriptedChatModel(
        replies=[
            guard_reply(),
            cypher_reply("MATCH (t:Team) RETURN t.name AS team"),
            evaluation_reply(answer="ok"),
        ]
    )
    make_agent(spy, other, store).run("Which teams is Alice Nguyen about to join?")
    assert "graph tool" not in other.prompts[1]


def test_without_a_model_a_choice_is_answered_from_the_tool_s_text(spy: SpyDB) -> None:
    model = ScriptedChatModel(replies=[guard_reply()])
    smith = next(
        c
        for c in make_agent(spy, model).run("Tell me about Alice").choices
        if c.name == "Alice Smith"
    )
    result = make_agent(spy, None).run(smith.question, choice=smith)
    assert result.outcome == "answered" and result.llm_calls == 0
    assert result.answer.startswith("Alice Smith (Person)\n")


# --- a restricted channel -----------------------------------------------------------------------


def test_a_restricted_channel_never_sees_a_hidden_label_on_a_path(spy: SpyDB) -> None:
    # Team is hidden: the two people's shared team is no route; their shared manager is.
    policy = CypherPolicy(hidden_labels=frozenset({"Team"}))
    chain = "Wei Nguyen —REPORTS_TO→ Alice Nguyen ←REPORTS_TO— Hana Smith"
    model = ScriptedChatModel(replies=[guard_reply(), evaluation_reply(answer=chain)])
    result = make_agent(spy, model, policy=policy).run("How is Wei Nguyen connected to Hana Smith?")
    assert result.tool == "connection" and [row[2] for row in result.rows] == [chain]
    shown = json.dumps([result.rows, result.answer, model.prompts[1]], ensure_ascii=False)
    assert "Payments" not in shown and "MEMBER_OF" not in shown and "Team" not in shown


def test_a_hidden_node_on_the_only_path_leaves_the_question_to_the_policy(
    scratch_db: GraphDB,
) -> None:
    scratch_db.run_write(
        "CREATE (:Person {name: 'Ann'})-[:KNOWS]->(:Person:Secret {name: 'Mole'})"
        "-[:KNOWS]->(:Person {name: 'Ben'})"
    )
    policy = CypherPolicy(hidden_labels=frozenset({"Secret"}))
    statement = (
        "MATCH (:Person {name: 'Ann'})-[:KNOWS]->(m:Secret)-[:KNOWS]->(:Person {name: 'Ben'}) "
        "RETURN m.name AS between"
    )
    model = ScriptedChatModel(replies=[guard_reply(), cypher_reply(statement)])
    result = make_agent(scratch_db, model, policy=policy, max_attempts=1).run(
        "How is Ann connected to Ben?"
    )
    # The tool found no route the channel may see: the statement loop took the question,
    # and the policy refused the statement that named the hidden label.
    assert result.tool is None and result.outcome == "failed"
    assert result.llm_steps == ["guard", "generate"]
    assert "Mole" not in result.answer and "Secret" not in result.answer


# --- the CLI ------------------------------------------------------------------------------------


def respond(messages: list[dict[str, Any]]) -> str:
    system = str(messages[0]["content"])
    if system.startswith("You are the front desk"):
        return guard_reply()
    return evaluation_reply(answer="Here is what the graph holds about her.")


@pytest.fixture
def cli_env(
    monkeypatch: pytest.MonkeyPatch, demo_db: GraphDB, graph_data_dir: Path
) -> Iterator[FakeOpenAI]:
    with FakeOpenAI(respond=respond).running() as fake:
        monkeypatch.setenv("DATA_DIR", str(graph_data_dir))
        monkeypatch.setenv("GRAPH_URL", "embedded")
        monkeypatch.setenv("GRAPH_NAME", "demo")
        monkeypatch.setenv("OPENAI_BASE_URL", fake.base_url)
        monkeypatch.setenv("LLM_MODEL", "local-test")
        monkeypatch.setenv("LLM_MAX_RETRIES", "0")
        monkeypatch.delenv("OPENAI_API_KEY", raising=False)
        yield fake


def test_cli_chat_numbers_the_choices_and_continues_with_the_picked_one(
    cli_env: FakeOpenAI,
) -> None:
    outcome = CliRunner().invoke(
        bot.cli.app, ["chat", "--no-memory"], input="Tell me about Alice\n2\n\n"
    )
    assert outcome.exit_code == 0, outcome.output
    out = outcome.stdout
    assert "Which “Alice” do you mean?" in out
    assert "  1. Alice " in out and "  6. None of these" in out
    picked = out.split("  2. ", 1)[1].split(" (Person)", 1)[0]
    assert f'// graph tool: card("{picked}")' in out
    # No call at all: the question is in the graph's words (no guard, the product's default)
    # and the continuation is answered from the card.
    assert picked in out.split("  6. None of these", 1)[1]
    assert cli_env.requests == []


def test_cli_ask_prints_the_choices_and_json_carries_them(cli_env: FakeOpenAI) -> None:
    outcome = CliRunner().invoke(bot.cli.app, ["ask", "Tell me about Alice", "--no-memory"])
    assert outcome.exit_code == 0, outcome.output
    assert "Which “Alice” do you mean?" in outcome.stdout
    assert "  6. None of these" in outcome.stdout
    outcome = CliRunner().invoke(
        bot.cli.app, ["ask", "Tell me about Alice", "--no-memory", "--json"]
    )
    result = json.loads(outcome.stdout)
    assert result["outcome"] == "needs_clarification" and result["tool"] is None
    assert len(result["choices"]) == 6 and result["choices"][-1]["request"] is None
    assert result["choices"][0]["request"]["tool"] == "card"


def test_by_default_a_tool_answers_in_its_own_words_with_one_llm_call(spy: SpyDB) -> None:
    # Worded by a 1.5B model, a route lost its middle ("Tofu → Konbu"); the tool's own
    # rendering keeps every hop, and needs no call.
    model = ScriptedChatModel(replies=[guard_reply()])
    result = make_agent(spy, model, word_tool_answers=False).run(
        "How is Wei Nguyen connected to Hana Smith?"
    )
    assert result.outcome == "answered" and result.tool == "connection"
    assert result.llm_steps == ["guard"]
    assert "Wei Nguyen —MEMBER_OF→ Payments ←MEMBER_OF— Hana Smith" in result.answer
    card = make_agent(spy, ScriptedChatModel(replies=[guard_reply()]), word_tool_answers=False)
    answered = card.run("Tell me about Alice Nguyen")
    assert answered.llm_steps == ["guard"] and "VP of Engineering" in answered.answer
