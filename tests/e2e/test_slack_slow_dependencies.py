"""A slow example store, a slow graph and a slow embeddings endpoint never hold an ack (or
`/healthz`): each read is held until the test has seen the emulator record the ack of the
delivery that caused it.

Order, not time: the reads behind a mention, a DM and `/cypherbot` block on a `Hold` that the
test opens only once the emulator has recorded the delivery, and the test waits (with a hang
detector, never a clock assertion) until the bot is blocked inside one of them. A bot that
read before its ack could not ack until the test opened the hold, which the test does only
after the emulator's ack deadline has passed: the delivery would be recorded unacknowledged
and retried, as Slack does.
"""

from __future__ import annotations

import functools
import json
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler
from pathlib import Path
from typing import Any, cast

import pytest
from pydantic import SecretStr

from bot.playground.emulator import Delivery, Transport
from bot.wiring import build_agent, open_memory_for
from graph_agent.graphdb import GraphDB
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
from tests.support.fake_openai import FakeOpenAI

TEAM_SIZES = (
    "MATCH (p:Person)-[:MEMBER_OF]->(t:Team) "
    "RETURN t.name AS team, count(p) AS people ORDER BY people DESC, team LIMIT 3"
)
HANG_S = 60.0
"""Hang detector: how long anything here waits before the test fails instead of hanging."""
EXAMPLE_READS = frozenset({"similar", "exact", "list", "get", "has_schema_examples"})
GRAPH_READS = frozenset({"schema", "validate", "run_read", "lookup_values", "counts", "ping"})


class Hold:
    """A door the reads behind an answer wait at while it is shut (`shut()`): the test opens
    it once it has seen what it waits for. Records what came through and what waited."""

    def __init__(self) -> None:
        self._open = True
        self._changed = threading.Condition()
        self.waiting = 0
        """Reads blocked at the door now."""
        self.reads: list[str] = []
        """What read through the door (`examples`, `graph`, `embeddings`), in order."""
        self.hung: list[str] = []
        """Reads that waited HANG_S and were let through: the test never opened the door."""

    @contextmanager
    def shut(self) -> Iterator[None]:
        with self._changed:
            self._open = False
        try:
            yield
        finally:
            with self._changed:
                self._open = True
                self._changed.notify_all()

    def wait(self, what: str) -> None:
        with self._changed:
            if not self._open:
                self.waiting += 1
                self._changed.notify_all()
                if not self._changed.wait_for(lambda: self._open, HANG_S):
                    self.hung.append(what)
                self.waiting -= 1
            self.reads.append(what)

    def wait_for_a_blocked_read(self) -> None:
        """Until the bot is inside a read (the work after an ack has reached it)."""
        with self._changed:
            if not self._changed.wait_for(lambda: self.waiting > 0, HANG_S):
                raise TimeoutError("the bot never reached a held read")


class Held:
    """`target` with its `reads` held at `hold` (everything else passes straight through)."""

    def __init__(self, target: object, hold: Hold, what: str, reads: frozenset[str]) -> None:
        self._target = target
        self._hold = hold
        self._what = what
        self._reads = reads

    def __getattr__(self, name: str) -> Any:
        found = getattr(self._target, name)
        if name not in self._reads:
            return found

        @functools.wraps(found)
        def held(*args: Any, **kwargs: Any) -> Any:
            self._hold.wait(self._what)
            return found(*args, **kwargs)

        return held


@dataclass
class HeldRig:
    rig: SlackRig
    hold: Hold


@pytest.fixture
def held(
    demo_db: GraphDB, tmp_path: Path, transport: Transport, monkeypatch: pytest.MonkeyPatch
) -> Iterator[HeldRig]:
    """The app (on `transport`) whose example store and graph reads wait at one `Hold`."""
    hold = Hold()
    model = ScriptedChatModel(responder=graph_responder(lambda q: TEAM_SIZES))
    with open_memory(tmp_path / "cypherbot.sqlite3") as memory:
        monkeypatch.setattr(
            memory, "examples", Held(memory.examples, hold, "examples", EXAMPLE_READS)
        )
        settings = rig_settings(tmp_path)
        graph = cast(GraphDB, Held(demo_db, hold, "graph", GRAPH_READS))
        agent = build_agent(
            settings, memory.examples, db=graph, llms=LLMs(cypher=model, fast=model)
        )
        with slack_rig(agent, tmp_path, memory=memory, transport=transport) as rig:
            yield HeldRig(rig, hold)


def posted_while_held(
    rig: SlackRig, hold: Hold, channel: str, text: str
) -> tuple[dict[str, Any], list[Delivery]]:
    """Alice posts with the hold shut; it opens only once the emulator has recorded every
    delivery of the message and the bot is blocked inside a held read."""
    with hold.shut():
        message, deliveries = rig.emulator.post_message(ALICE, channel, text)
        hold.wait_for_a_blocked_read()
    return message, deliveries


def assert_acked_first_time(rig: SlackRig, deliveries: list[Delivery]) -> None:
    """Acknowledged within the emulator's deadline, on the first attempt, before any call the
    event caused; and Slack never had to retry anything."""
    assert deliveries and all(d.acked for d in deliveries), [d.status for d in deliveries]
    rig.settle()
    assert {d.transport for d in rig.emulator.deliveries} == {rig.transport}
    assert [d.retry_num for d in rig.emulator.deliveries if d.retry_num] == []
    problems = rig.emulator.ack_problems()
    assert problems == [], "\n".join(problems)


def test_a_mention_is_acked_while_the_store_and_the_graph_are_held(held: HeldRig) -> None:
    rig, hold = held.rig, held.hold
    text = f"<@{rig.bot_user}> Which teams have the most people?"
    message, deliveries = posted_while_held(rig, hold, CHANNEL, text)
    assert [d.payload["event"]["type"] for d in deliveries] == ["app_mention", "message"]
    [answer] = rig.wait_answers(CHANNEL, message["ts"], timeout=HANG_S)
    assert "people" in answer_text(answer)
    assert {"examples", "graph"} <= set(hold.reads) and hold.hung == []
    assert_acked_first_time(rig, deliveries)


def test_a_dm_is_acked_while_the_store_and_the_graph_are_held(held: HeldRig) -> None:
    rig, hold = held.rig, held.hold
    dm = rig.emulator.open_dm(ALICE).id
    message, deliveries = posted_while_held(rig, hold, dm, "Which teams have the most people?")
    [answer] = rig.wait_answers(dm, message["ts"], timeout=HANG_S)
    assert "people" in answer_text(answer)
    assert {"examples", "graph"} <= set(hold.reads) and hold.hung == []
    assert_acked_first_time(rig, deliveries)


def test_the_slash_command_is_acked_while_the_store_and_the_graph_are_held(
    held: HeldRig,
) -> None:
    rig, hold = held.rig, held.hold
    with hold.shut():
        # `help` reads both: the schema (what the graph holds) and the examples (suggestions).
        delivery = rig.emulator.slash_command(ALICE, CHANNEL, "help")
        hold.wait_for_a_blocked_read()
    assert delivery.kind == "slash_commands" and delivery.body == ""
    reply = command_reply(rig, delivery, HANG_S)
    assert reply.params["response_type"] == "ephemeral"
    assert "The graph holds" in json.dumps(reply.params["blocks"])
    assert delivery.acked_seq is not None and delivery.acked_seq < reply.seq
    assert {"examples", "graph"} <= set(hold.reads) and hold.hung == []
    assert_acked_first_time(rig, [delivery])


# ---- a slow embeddings endpoint -------------------------------------------------------


@dataclass
class HeldEmbeddings(FakeOpenAI):
    """The fake OpenAI-compatible server whose `/v1/embeddings` waits at `hold`."""

    hold: Hold | None = None

    def _embeddings(self, handler: BaseHTTPRequestHandler, body: dict[str, Any]) -> None:
        if self.hold is not None:
            self.hold.wait("embeddings")
        super()._embeddings(handler, body)


def test_a_held_embeddings_endpoint_holds_no_ack_and_not_healthz(
    demo_db: GraphDB, tmp_path: Path, transport: Transport
) -> None:
    hold = Hold()
    model = ScriptedChatModel(responder=graph_responder(lambda q: TEAM_SIZES))
    with HeldEmbeddings(hold=hold).running() as endpoint:
        # Semantic example retrieval through the endpoint, as EMBEDDINGS_MODEL configures it.
        embeddings: dict[str, Any] = {
            "embeddings_model": "fake-embeddings",
            "openai_base_url": endpoint.base_url,
            "openai_api_key": SecretStr("sk-test"),
            "llm_max_retries": 0,
        }
        settings = rig_settings(tmp_path, **embeddings)
        with open_memory_for(settings) as memory:
            agent = build_agent(
                settings, memory.examples, db=demo_db, llms=LLMs(cypher=model, fast=model)
            )
            with slack_rig(agent, tmp_path, memory=memory, transport=transport) as rig:
                with hold.shut():
                    message, deliveries = rig.emulator.post_message(
                        ALICE, CHANNEL, f"<@{rig.bot_user}> Which teams have the most people?"
                    )
                    hold.wait_for_a_blocked_read()  # the question's retrieval is at the endpoint
                    # In Alice's DM: the question's calls in the channel are not the command's.
                    dm = rig.emulator.open_dm(ALICE).id
                    command = rig.emulator.slash_command(ALICE, dm, "examples")
                    if rig.server is not None:
                        status, report = health(rig)
                        assert (status, report["memory"]) == (200, {"ok": True})
                    assert command.acked and all(d.acked for d in deliveries)
                [answer] = rig.wait_answers(CHANNEL, message["ts"], timeout=HANG_S)
                assert "people" in answer_text(answer)
                assert "Nobody has taught me" in json.dumps(
                    command_reply(rig, command, HANG_S).params["blocks"]
                )
                assert "embeddings" in hold.reads and hold.hung == []
                assert_acked_first_time(rig, [*deliveries, command])
