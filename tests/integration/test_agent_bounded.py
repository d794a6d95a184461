"""Bounded generations: a token cap per step, LLM_MAX_TOKENS over all, and replies cut off at
the cap handled as such (a repair for JSON, a failed attempt for a statement), with the
scripted model and through real HTTP against the fake OpenAI server."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any, cast

import pytest
from langchain_core.messages import AIMessage

from bot.settings import Settings
from bot.wiring import agent_config
from graph_agent.agent import Agent
from graph_agent.config import AgentConfig
from graph_agent.examples import InMemoryExampleStore
from graph_agent.graphdb import GraphDB
from graph_agent.llm import STEP_MAX_TOKENS, LLMs, make_llms
from graph_agent.nodes.answer import MANY_ROWS_NOTE, PLAIN_ROWS
from rig.scripted_llm import (
    ScriptedChatModel,
    cypher_reply,
    evaluation_reply,
    guard_reply,
)
from tests.support.fake_openai import FakeOpenAI

TEAMS = "MATCH (t:Team) RETURN t.name AS team ORDER BY team LIMIT 3"
QUESTION = "Which teams are there?"


def _agent(db: GraphDB, model: ScriptedChatModel, **config: Any) -> Agent:
    return Agent(db, LLMs(cypher=model, fast=model), InMemoryExampleStore(), AgentConfig(**config))


def _cut(text: str) -> AIMessage:
    return AIMessage(content=text, response_metadata={"finish_reason": "length"})


def test_each_step_has_its_own_cap(demo_db: GraphDB) -> None:
    model = ScriptedChatModel(
        replies=[guard_reply(), cypher_reply(TEAMS), evaluation_reply(answer="Three teams.")]
    )
    result = _agent(demo_db, model).run(QUESTION)
    assert result.outcome == "answered"
    assert [kw.get("max_tokens") for kw in model.call_kwargs] == [
        STEP_MAX_TOKENS["guard"],
        STEP_MAX_TOKENS["generate"],
        STEP_MAX_TOKENS["evaluate"],
    ]


def test_llm_max_tokens_overrides_every_step(demo_db: GraphDB) -> None:
    model = ScriptedChatModel(
        replies=[guard_reply(), cypher_reply(TEAMS), evaluation_reply(answer="Three teams.")]
    )
    _agent(demo_db, model, llm_max_tokens=123).run(QUESTION)
    assert [kw.get("max_tokens") for kw in model.call_kwargs] == [123, 123, 123]


def test_the_setting_reaches_the_agent_config() -> None:
    assert agent_config(Settings(llm_max_tokens=321)).llm_max_tokens == 321
    assert agent_config(Settings()).llm_max_tokens is None


def test_a_statement_cut_off_is_a_failed_attempt_never_run(demo_db: GraphDB) -> None:
    ran: list[str] = []

    class Spy:
        def __getattr__(self, name: str) -> Any:
            return getattr(demo_db, name)

        def run_read(self, cypher: str, params: Any = None, **kw: Any) -> Any:
            ran.append(cypher)
            return demo_db.run_read(cypher, params, **kw)

    model = ScriptedChatModel(
        replies=[
            guard_reply(),
            _cut("Let me think about this step by step. ```cypher\nMATCH (t:Team) RETURN t.na"),
            cypher_reply(TEAMS),
            evaluation_reply(answer="Three teams."),
        ]
    )
    agent = Agent(cast(GraphDB, Spy()), LLMs(cypher=model, fast=model), InMemoryExampleStore())
    result = agent.run(QUESTION)
    assert result.outcome == "answered"
    assert [a.stage for a in result.attempts] == ["cut_off", "ok"]
    assert "cut off at the length limit" in model.prompts[2]
    assert all("t.na\n" not in q and not q.endswith("t.na") for q in ran)
    assert result.llm_steps == ["guard", "generate", "correct", "evaluate"]


def test_cut_off_on_the_last_attempt_gives_up_cleanly(demo_db: GraphDB) -> None:
    model = ScriptedChatModel(replies=[guard_reply(), _cut("```cypher\nMATCH (t:Team) RETURN")])
    result = _agent(demo_db, model, max_attempts=1).run(QUESTION)
    assert result.outcome == "failed" and result.error_kind == "attempts_exhausted"
    assert [a.stage for a in result.attempts] == ["cut_off"]


def test_a_json_reply_cut_off_before_its_verdict_is_repaired_shorter(demo_db: GraphDB) -> None:
    model = ScriptedChatModel(
        replies=[
            guard_reply(),
            cypher_reply(TEAMS),
            _cut('{"reasoning": "The teams are, in great detail, '),
            evaluation_reply(answer="Three teams."),
        ]
    )
    result = _agent(demo_db, model).run(QUESTION)
    assert result.outcome == "answered"
    assert result.llm_steps == ["guard", "generate", "evaluate", "evaluate:repair"]
    assert "cut off at the length limit; reply shorter" in str(model.calls[3][-1].content)


def test_an_evaluation_cut_off_after_its_verdict_keeps_it_without_a_repair_call(
    demo_db: GraphDB,
) -> None:
    # The model copied the rows into its answer until the cap: its "true" came first, whole.
    model = ScriptedChatModel(
        replies=[
            guard_reply(),
            cypher_reply(TEAMS),
            _cut('{"answers_question": true, "answer": "The teams are Checkout, Data, Gro'),
        ]
    )
    result = _agent(demo_db, model).run(QUESTION)
    assert result.outcome == "answered"
    assert result.llm_steps == ["guard", "generate", "evaluate"]
    teams = [row[0] for row in result.rows]
    assert len(teams) == 3 and all(team in result.answer for team in teams)
    assert "Gro" not in result.answer.replace(teams[-1], "")  # not the model's half list


def test_an_evaluation_cut_off_after_a_no_corrects_with_its_feedback(demo_db: GraphDB) -> None:
    model = ScriptedChatModel(
        replies=[
            guard_reply(),
            cypher_reply(TEAMS),
            _cut('{"answers_question": false, "feedback": "Filter the teams by their depar'),
            cypher_reply(TEAMS),
            evaluation_reply(answer="Three teams."),
        ]
    )
    result = _agent(demo_db, model, retry_candidates=1).run(QUESTION)
    assert result.llm_steps == ["guard", "generate", "evaluate", "correct", "evaluate"]
    assert "Filter the teams by their depar" in model.prompts[3]


def test_many_rows_ask_for_one_sentence_few_rows_do_not(demo_db: GraphDB) -> None:
    people = "MATCH (p:Person) RETURN p.name AS person, p.title AS title ORDER BY person"
    model = ScriptedChatModel(
        replies=[guard_reply(), cypher_reply(people), evaluation_reply(answer="Many people.")]
    )
    result = _agent(demo_db, model).run("Who works here?")
    assert len(result.rows) > PLAIN_ROWS
    assert MANY_ROWS_NOTE in model.prompts[-1]
    model = ScriptedChatModel(
        replies=[guard_reply(), cypher_reply(TEAMS), evaluation_reply(answer="Three teams.")]
    )
    _agent(demo_db, model).run(QUESTION)
    assert MANY_ROWS_NOTE not in model.prompts[-1]


# --- through HTTP: the server stops at the cap and says finish_reason "length" -----------------

RAMBLE = "Let me explain my reasoning in detail before writing the query. " * 60


class Rambler:
    """Writes an endless preamble instead of the statement the first time, and a guard reply
    padded past its cap the first time; sensible replies after that."""

    def __init__(self) -> None:
        self.guard_calls = 0

    def __call__(self, messages: list[dict[str, Any]]) -> str:
        system, user = str(messages[0]["content"]), str(messages[-1]["content"])
        if system.startswith("You are the front desk"):
            self.guard_calls += 1
            if self.guard_calls == 1:
                return json.dumps(
                    {"scope": "in_scope", "reason": RAMBLE, "standalone_question": ""}
                )
            return guard_reply()
        if system.startswith("You write one read-only Cypher"):
            if "did not work" in user:
                return cypher_reply(TEAMS)
            return RAMBLE + cypher_reply(TEAMS)
        return evaluation_reply(answer="Three teams.")


def _llms(server: FakeOpenAI) -> LLMs:
    llms = make_llms(
        api_key=None, base_url=server.base_url, model="big", fast_model="small",
        timeout_s=10, max_retries=0,
    )  # fmt: skip
    assert llms is not None
    return llms


@pytest.fixture
def rambling() -> Iterator[FakeOpenAI]:
    with FakeOpenAI(respond=Rambler()).running() as server:
        yield server


def test_runaway_replies_over_http_are_cut_and_recovered(
    demo_db: GraphDB, rambling: FakeOpenAI
) -> None:
    result = Agent(demo_db, _llms(rambling), InMemoryExampleStore()).run(QUESTION)
    assert result.outcome == "answered", result.answer
    assert result.llm_steps == ["guard", "guard:repair", "generate", "correct", "evaluate"]
    assert [a.stage for a in result.attempts] == ["cut_off", "ok"]
    caps = [r.get("max_completion_tokens") or r.get("max_tokens") for r in rambling.requests]
    assert caps == [200, 200, 400, 400, 500]


def test_a_cut_off_json_reply_asked_as_json_object_is_repaired_too(
    demo_db: GraphDB, rambling: FakeOpenAI
) -> None:
    # With a response_format (LLM_JSON_MODE=json_object, the setting for local servers) the
    # OpenAI client raises LengthFinishReasonError on a reply cut at the cap instead of
    # returning it; a playground question then failed as "couldn't reach the language model".
    config = AgentConfig(json_mode="json_object")
    result = Agent(demo_db, _llms(rambling), InMemoryExampleStore(), config).run(QUESTION)
    assert result.outcome == "answered", result.answer
    assert result.llm_steps == ["guard", "guard:repair", "generate", "correct", "evaluate"]
    guard = rambling.requests[0]
    assert guard.get("response_format") == {"type": "json_object"}
    assert result.prompt_tokens > 0
