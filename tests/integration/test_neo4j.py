"""The Neo4j adapter against a real server (NEO4J_URI, NEO4J_USER, NEO4J_PASSWORD); skipped otherwise.

The tests load the demo graph into the database named by NEO4J_DATABASE (default: the server's
default) after emptying it, so point them at a throwaway database.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from graph_agent.demo import is_loaded, load_demo
from graph_agent.graphdb import (
    CypherSyntaxError,
    GraphAuthError,
    GraphDB,
    NotReadOnlyError,
    QueryTimeoutError,
    connect,
    schema_text,
)

pytestmark = pytest.mark.neo4j


def _connect(tmp: Path, password: str | None = None) -> GraphDB:
    return connect(
        os.environ.get("NEO4J_URI", ""),
        data_dir=tmp,
        user=os.environ.get("NEO4J_USER", "neo4j"),
        password=os.environ.get("NEO4J_PASSWORD", "") if password is None else password,
        database=os.environ.get("NEO4J_DATABASE") or None,
    )


@pytest.fixture(scope="module")
def neo4j_db(tmp_path_factory: pytest.TempPathFactory) -> Iterator[GraphDB]:
    db = _connect(tmp_path_factory.mktemp("neo4j"))
    db.run_write("MATCH (n) DETACH DELETE n")
    load_demo(db)
    yield db
    db.close()


def test_ping_and_demo(neo4j_db: GraphDB) -> None:
    assert "Neo4j" in neo4j_db.ping()
    assert is_loaded(neo4j_db)


def test_schema(neo4j_db: GraphDB) -> None:
    schema = neo4j_db.schema()
    assert {"Person", "Team", "Service"} <= {label.name for label in schema.labels}
    assert "(:Person)-[:MEMBER_OF" in schema_text(schema)
    exact = neo4j_db.schema(sample=0)
    assert ("Service", "DEPENDS_ON", "Service") in {
        (r.start, r.type, r.end) for r in exact.relationships
    }


def test_validate(neo4j_db: GraphDB) -> None:
    assert neo4j_db.validate("MATCH (p:Person) RETURN p").read_only is True
    assert neo4j_db.validate("CREATE (:X)").read_only is False
    bad = neo4j_db.validate("MATCH (p:Person RETURN p")
    assert not bad.ok and bad.error and bad.position is not None


def test_run_read_params_truncation_and_errors(neo4j_db: GraphDB) -> None:
    result = neo4j_db.run_read(
        "MATCH (t:Technology {name: $n}) RETURN t", {"n": "PostgreSQL"}, max_rows=5
    )
    assert result.rows[0][0]["name"] == "PostgreSQL"
    assert neo4j_db.run_read("MATCH (p:Person) RETURN p.name", max_rows=5).truncated
    before = neo4j_db.counts()
    with pytest.raises(NotReadOnlyError):
        neo4j_db.run_read("CREATE (:Person {name: 'Mallory'})")
    assert neo4j_db.counts() == before
    with pytest.raises(CypherSyntaxError):
        neo4j_db.run_read("MATCH (p:Person RETURN p")
    with pytest.raises(QueryTimeoutError):
        neo4j_db.run_read(
            "UNWIND range(1, 100000000) AS x WITH x WHERE x % 7 = 0 RETURN count(x)",
            timeout_s=0.2,
        )


def test_lookup_values(neo4j_db: GraphDB) -> None:
    assert any(m.value == "PostgreSQL" for m in neo4j_db.lookup_values("Postgres"))
    assert any(m.value == "Kubernetes" for m in neo4j_db.lookup_values("k8s"))


def test_wrong_password(tmp_path: Path) -> None:
    with pytest.raises(GraphAuthError, match="NEO4J_PASSWORD"):
        _connect(tmp_path, password="definitely-wrong")
