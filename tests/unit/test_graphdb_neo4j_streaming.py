"""The Neo4j adapter reads at most MAX_ROWS rows and cancels the rest (driver objects faked)."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

import pytest

from graph_agent.graphdb.errors import NotReadOnlyError
from graph_agent.graphdb.neo4j_db import Neo4jGraph, plan_operators


@dataclass
class FakeRecord:
    value: int

    def values(self) -> list[Any]:
        return [self.value]


@dataclass
class FakeSummary:
    query_type: str
    plan: dict[str, Any]


@dataclass
class FakeResult:
    total: int
    summary: FakeSummary
    pulled: int = 0
    consumed: bool = False

    def keys(self) -> list[str]:
        return ["n"]

    def __iter__(self) -> Iterator[FakeRecord]:
        for i in range(self.total):
            self.pulled += 1
            yield FakeRecord(i)

    def consume(self) -> FakeSummary:
        self.consumed = True
        return self.summary


@dataclass
class FakeTx:
    rows: int
    query_type: str = "r"
    plan: dict[str, Any] = field(default_factory=lambda: {"operatorType": "ProduceResults@neo4j"})
    runs: list[FakeResult] = field(default_factory=list)
    closed: bool = False

    def run(self, cypher: str, params: dict[str, Any]) -> FakeResult:
        total = 0 if cypher.startswith("EXPLAIN ") else self.rows
        result = FakeResult(total, FakeSummary(self.query_type, self.plan))
        self.runs.append(result)
        return result

    def close(self) -> None:
        self.closed = True


@dataclass
class FakeSession:
    tx: FakeTx
    config: dict[str, Any]
    timeouts: list[float] = field(default_factory=list)

    def __enter__(self) -> FakeSession:
        return self

    def __exit__(self, *exc: object) -> None:
        return None

    def begin_transaction(self, timeout: float) -> FakeTx:
        self.timeouts.append(timeout)
        return self.tx


@dataclass
class FakeDriver:
    tx: FakeTx
    sessions: list[FakeSession] = field(default_factory=list)

    def session(self, **config: Any) -> FakeSession:
        self.sessions.append(FakeSession(self.tx, config))
        return self.sessions[-1]


def test_three_million_rows_under_the_models_limit_are_never_pulled() -> None:
    tx = FakeTx(rows=3_000_000)
    driver = FakeDriver(tx)
    graph = Neo4jGraph(driver, "neo4j://example", None)  # type: ignore[arg-type]
    result = graph.run_read("MATCH (n) RETURN n LIMIT 3000000", timeout_s=4.0, max_rows=50)
    assert len(result.rows) == 50 and result.truncated
    run = tx.runs[-1]
    assert run.pulled == 51, "one row past the cap tells truncation; no more are read"
    assert not run.consumed, "consume() would pull (and wait for) every remaining record"
    assert tx.closed, "closing the transaction discards the rest on the server"
    session = driver.sessions[-1]
    assert session.config["fetch_size"] == 51 and session.timeouts == [4.0]


def test_a_short_result_is_read_whole_and_not_truncated() -> None:
    tx = FakeTx(rows=7)
    graph = Neo4jGraph(FakeDriver(tx), "neo4j://example", None)  # type: ignore[arg-type]
    result = graph.run_read("MATCH (n) RETURN n", max_rows=50)
    assert [r[0] for r in result.rows] == list(range(7)) and not result.truncated
    assert tx.closed


@pytest.mark.parametrize(
    ("query_type", "plan"),
    [
        ("rw", {"operatorType": "Create@neo4j"}),
        ("r", {"operatorType": "ProduceResults@neo4j", "children": [{"operatorType": "LoadCSV"}]}),
    ],
)
def test_writes_and_load_csv_are_refused_before_anything_runs(
    query_type: str, plan: dict[str, Any]
) -> None:
    tx = FakeTx(rows=5, query_type=query_type, plan=plan)
    graph = Neo4jGraph(FakeDriver(tx), "neo4j://example", None)  # type: ignore[arg-type]
    with pytest.raises(NotReadOnlyError):
        graph.run_read("LOAD CSV FROM 'https://x' AS r RETURN r")
    assert len(tx.runs) == 1 and tx.closed  # only the EXPLAIN ran


def test_plan_operator_names_are_read_as_the_engine_prints_them() -> None:
    plan = {
        "operatorType": "ProduceResults@neo4j",
        "children": [{"operatorType": "Load CSV@neo4j", "children": []}],
    }
    assert plan_operators(plan) == {"produceresults", "loadcsv"}
