"""The agent sends the engine only canonical text, refuses comments, never re-runs a costly read."""

from __future__ import annotations

from typing import Any, cast

import pytest

from graph_agent.agent import Agent
from graph_agent.config import AgentConfig
from graph_agent.examples import InMemoryExampleStore
from graph_agent.graphdb import GraphDB
from graph_agent.graphdb.errors import ResourceLimitError
from graph_agent.llm import LLMs
from rig.scripted_llm import (
    ScriptedChatModel,
    cypher_reply,
    evaluation_reply,
    guard_reply,
)
from tests.support.spy import SpyDB

COSTLY = "MATCH (a:Person), (b:Person) RETURN count(a) AS pairs"
CHEAP = "MATCH (p:Person) RETURN count(p) AS people"


class EngineSpy(SpyDB):
    """The demo graph, recording what reaches it; the COSTLY read fails at the memory cap."""

    def run_read(self, cypher: str, params: Any = None, **kw: Any) -> Any:
        if "(b:Person)" in cypher:
            self.ran.append(cypher)
            raise ResourceLimitError("The query needed more memory than one read may use.")
        return super().run_read(cypher, params, **kw)


@pytest.fixture
def spy(demo_db: GraphDB) -> EngineSpy:
    return EngineSpy(demo_db)


def _agent(spy: EngineSpy, model: ScriptedChatModel) -> Agent:
    llms = LLMs(cypher=model, fast=model)
    return Agent(cast(GraphDB, spy), llms, InMemoryExampleStore(), AgentConfig())


def test_a_statement_with_comments_is_sent_back_and_never_reaches_the_engine(
    spy: EngineSpy,
) -> None:
    model = ScriptedChatModel(
        replies=[
            guard_reply(),
            cypher_reply("CALL db./**/labels() YIELD label RETURN label"),
            cypher_reply("CALL db.labels() YIELD label RETURN label ORDER BY label"),
            evaluation_reply(answer="Labels listed."),
        ]
    )
    result = _agent(spy, model).run("Which kinds of things are in the graph?")
    assert result.outcome == "answered"
    assert result.attempts[0].stage == "comment"
    assert "without any comments" in str(model.calls[2][-1].content)
    assert not any("/*" in c or "//" in c for c in spy.validated + spy.ran)


def test_a_read_that_hit_the_memory_cap_is_not_run_again_in_another_spacing(
    spy: EngineSpy,
) -> None:
    model = ScriptedChatModel(
        replies=[
            guard_reply(),
            cypher_reply(COSTLY),
            cypher_reply(COSTLY.replace(" ", "  ").replace("count", "COUNT")),
            cypher_reply(CHEAP),
            evaluation_reply(answer="Many people."),
        ]
    )
    result = _agent(spy, model).run("How many pairs of people are there?")
    assert [a.stage for a in result.attempts] == ["resource", "resource", "ok"]
    assert sum("(b:Person)" in c for c in spy.ran) == 1, spy.ran
    assert "not run again" in (result.attempts[1].error or "")
    assert result.outcome == "answered"
