"""Prompts a server can cache (issue 29): every step's stable part (instructions, schema) comes
first and is byte-identical across questions, so a server's prompt cache serves it; the
cached tokens the server reports reach the result and the eval's figures.

The scripted model reports usage as llama-server does: its prompt's longest common start with
any earlier prompt counts as cached (`prompt_tokens_details.cached_tokens`).
"""

from __future__ import annotations

from typing import Any

from langchain_core.messages import BaseMessage

from graph_agent.agent import Agent
from graph_agent.evaluation.report import cached_share
from graph_agent.examples import InMemoryExampleStore
from graph_agent.graphdb import GraphDB
from graph_agent.llm import LLMs
from rig.scripted_llm import ScriptedChatModel, cypher_reply, evaluation_reply, guard_reply

QUESTIONS = {
    "How many teams are there?": "MATCH (t:Team) RETURN count(t) AS teams",
    "Which services does the payments team own?": (
        "MATCH (t:Team)-[:OWNS]->(s:Service) WHERE toLower(t.name) CONTAINS 'payments' "
        "RETURN s.name AS service"
    ),
    "Who is on call this week?": "MATCH (p:Person) RETURN p.name AS person LIMIT 3",
    "Which repositories use Python?": (
        "MATCH (r:Repository)-[:USES]->(t:Technology {name: 'Python'}) RETURN r.name AS repo"
    ),
}


def _respond(messages: list[BaseMessage]) -> str:
    system, prompt = str(messages[0].content), str(messages[-1].content)
    if system.startswith("You are the front desk"):
        return guard_reply()
    if system.startswith("You write"):
        asked = next(q for q in QUESTIONS if q in prompt)
        return cypher_reply(QUESTIONS[asked])
    return evaluation_reply(answer="Here is what the graph holds.")


def test_later_questions_are_served_mostly_from_the_prompt_cache(demo_db: GraphDB) -> None:
    model = ScriptedChatModel(responder=_respond)
    agent = Agent(demo_db, LLMs(cypher=model, fast=model), InMemoryExampleStore())
    records: list[dict[str, Any]] = []
    for question in QUESTIONS:
        result = agent.run(question)
        assert result.llm_calls >= 2, result.llm_steps
        records.append(
            {
                "prompt_tokens": result.prompt_tokens,
                "cached_prompt_tokens": result.cached_prompt_tokens,
            }
        )
    assert records[0]["cached_prompt_tokens"] < records[0]["prompt_tokens"] / 2, records[0]
    share = cached_share(records)
    assert share is not None and share >= 0.5, records
    # The system part of each step is the same text for every question.
    systems: dict[str, set[str]] = {}
    for call in model.calls:
        systems.setdefault(str(call[0].content)[:40], set()).add(str(call[0].content))
    assert len(systems) >= 2 and all(len(texts) == 1 for texts in systems.values()), systems.keys()


def test_a_server_that_reports_no_cache_gives_no_share() -> None:
    records = [{"prompt_tokens": 100}, {"prompt_tokens": 120}]
    assert cached_share(records) is None
    assert cached_share([{"prompt_tokens": 100, "cached_prompt_tokens": 0}] * 2) == 0.0
    assert cached_share([]) is None
