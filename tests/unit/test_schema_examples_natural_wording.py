"""The optional LLM pass that rewords schema examples' questions (SCHEMA_EXAMPLES_WORDING)."""

from __future__ import annotations

import asyncio
import json
import re
from types import SimpleNamespace
from typing import Any, cast

import pytest
from langchain_core.messages import BaseMessage

from bot.settings import Settings
from bot.wiring import reworded_examples
from graph_agent.agent import Agent
from graph_agent.llm import LLMs
from graph_agent.schema_examples import SchemaExample, natural_questions
from graph_agent.schema_examples.natural_wording import acceptable, kept_values
from rig.scripted_llm import ScriptedChatModel

ONE_HOP = SchemaExample(
    "Which books has author Ann Ames written?",
    "MATCH (a:Author {name: 'Ann Ames'})-[:WROTE]->(b:Book) RETURN b.title AS title",
    "one_hop",
)
RANGE = SchemaExample(
    "Which books have a pages above 342?",
    "MATCH (b:Book) WHERE b.pages > 342 RETURN b.title AS title ORDER BY title",
    "range",
)
COUNT = SchemaExample("How many books are there?", "MATCH (b:Book) RETURN count(b) AS n", "count")
EXAMPLES = [ONE_HOP, RANGE, COUNT]


def _numbered(messages: list[BaseMessage]) -> dict[str, str]:
    return dict(re.findall(r"^(\d+)\. (.+)$", str(messages[-1].content), re.MULTILINE))


def _politely(messages: list[BaseMessage]) -> str:
    """A model that rewords every question by asking it politely."""
    return json.dumps({n: f"Could you tell me: {q}" for n, q in _numbered(messages).items()})


def _reword(model: ScriptedChatModel, examples: list[SchemaExample], **kw: Any) -> list[Any]:
    return asyncio.run(natural_questions(examples, model, timeout_s=5, **kw))


@pytest.mark.parametrize(
    ("example", "values"),
    [
        (ONE_HOP, ["Ann Ames"]),
        (RANGE, ["342"]),
        (COUNT, []),
        # A literal the question does not name (a date bound, a LIMIT) is not required.
        (
            SchemaExample(
                "Which books were published between 2020-01-01 and 2020-06-30?",
                "MATCH (b:Book) WHERE b.published >= date('2020-01-01') "
                "AND b.published < date('2020-07-01') RETURN b.title LIMIT 5",
                "range",
            ),
            ["2020-01-01"],
        ),
    ],
)
def test_kept_values_are_the_literals_the_question_names(
    example: SchemaExample, values: list[str]
) -> None:
    assert kept_values(example) == values


@pytest.mark.parametrize(
    ("reworded", "ok"),
    [
        ("What has ann ames written?", True),  # values match whatever their case
        ("What has Ann written?", False),  # a value dropped: it asks about something else
        ("", False),
        ("   ", False),
        (ONE_HOP.question, False),  # nothing reworded
        ("Which books has Ann Ames written? " + "Please answer in detail. " * 20, False),
    ],
)
def test_a_rewording_is_kept_only_when_it_names_every_value(reworded: str, ok: bool) -> None:
    assert acceptable(ONE_HOP, reworded) is ok


def test_rewording_changes_questions_and_keeps_cypher_and_shape() -> None:
    model = ScriptedChatModel(responder=_politely)
    out = _reword(model, EXAMPLES)
    assert [e.question for e in out] == [f"Could you tell me: {e.question}" for e in EXAMPLES]
    assert [(e.cypher, e.shape) for e in out] == [(e.cypher, e.shape) for e in EXAMPLES]
    assert len(model.calls) == 1


def test_a_rewording_that_drops_a_value_is_refused() -> None:
    reply = {"1": "What did she write?", "2": "Which long books are there?", "3": "How many books?"}
    out = _reword(ScriptedChatModel(replies=[json.dumps(reply)]), EXAMPLES)
    assert [e.question for e in out] == [ONE_HOP.question, RANGE.question, "How many books?"]


def test_a_missing_number_keeps_its_plain_question() -> None:
    out = _reword(ScriptedChatModel(replies=['{"2": "Which books run past 342 pages?"}']), EXAMPLES)
    assert [e.question for e in out] == [ONE_HOP.question, "Which books run past 342 pages?", COUNT.question]  # fmt: skip


@pytest.mark.parametrize(
    "replies",
    [
        ["not json", "still not json"],  # unreadable after the one repair
        [RuntimeError("connection refused")],  # any model failure arrives as LLMError
        ['["a list", "not an object"]', '{"1": ["nested"]}'],
    ],
)
def test_a_failed_call_keeps_the_plain_questions(replies: list[Any]) -> None:
    out = _reword(ScriptedChatModel(replies=replies), EXAMPLES)
    assert out == EXAMPLES


def test_questions_are_sent_in_batches() -> None:
    examples = [
        SchemaExample(f"How many things of kind {i}?", f"MATCH (n:K{i}) RETURN count(n)", "count")
        for i in range(31)
    ]
    model = ScriptedChatModel(responder=_politely)
    out = _reword(model, examples, batch_size=15)
    assert len(model.calls) == 3  # ceil(31 / 15)
    assert [len(_numbered(call)) for call in model.calls] == [15, 15, 1]
    assert all(e.question.startswith("Could you tell me: ") for e in out)
    assert [e.cypher for e in out] == [e.cypher for e in examples]


def test_one_failed_batch_keeps_the_others_reworded() -> None:
    examples = [
        SchemaExample(f"How many things of kind {i}?", f"MATCH (n:K{i}) RETURN count(n)", "count")
        for i in range(4)
    ]
    ok = json.dumps({"1": "Count kind 0 things?", "2": "Count kind 1 things?"})
    out = _reword(ScriptedChatModel(replies=[ok, TimeoutError()]), examples, batch_size=2)
    assert [e.question for e in out[:2]] == ["Count kind 0 things?", "Count kind 1 things?"]
    assert out[2:] == examples[2:]


# --- the setting ----------------------------------------------------------------------------


def _agent(model: ScriptedChatModel | None) -> Agent:
    llms = LLMs(cypher=model, fast=model) if model is not None else None
    return cast(Agent, SimpleNamespace(llms=llms))


def _settings(wording: str) -> Settings:
    return Settings(_env_file=None, schema_examples_wording=wording)  # type: ignore[call-arg]


def test_plain_wording_makes_no_llm_call() -> None:
    model = ScriptedChatModel(replies=[])
    assert reworded_examples(_settings("plain"), _agent(model), EXAMPLES) == EXAMPLES
    assert model.calls == []


def test_llm_wording_without_a_configured_llm_keeps_plain_questions() -> None:
    assert reworded_examples(_settings("llm"), _agent(None), EXAMPLES) == EXAMPLES


def test_llm_wording_goes_through_the_fast_model() -> None:
    model = ScriptedChatModel(responder=_politely)
    out = reworded_examples(_settings("llm"), _agent(model), EXAMPLES)
    assert out[0].question == f"Could you tell me: {ONE_HOP.question}"
    assert len(model.calls) == 1


def test_llm_wording_from_async_code_runs_beside_the_loop() -> None:
    model = ScriptedChatModel(responder=_politely)

    async def from_a_loop() -> list[SchemaExample]:
        return reworded_examples(_settings("llm"), _agent(model), EXAMPLES)

    assert asyncio.run(from_a_loop())[2].question == f"Could you tell me: {COUNT.question}"
