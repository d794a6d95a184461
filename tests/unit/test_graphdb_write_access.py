"""Neo4j write-access check (for `cypherbot doctor`): roles first, then an EXPLAIN of a write."""

from __future__ import annotations

from typing import Any

import neo4j
import pytest
from neo4j import exceptions as neo4j_errors

from graph_agent.graphdb.neo4j_db import Neo4jGraph


class FakeResult:
    def __init__(self, record: dict[str, Any] | None) -> None:
        self.record = record

    def single(self) -> dict[str, Any] | None:
        return self.record

    def consume(self) -> None:
        return None


class FakeSession:
    def __init__(self, driver: FakeDriver, database: str | None, mode: str | None) -> None:
        self.driver, self.database, self.mode = driver, database, mode

    def __enter__(self) -> FakeSession:
        return self

    def __exit__(self, *exc: object) -> None:
        return None

    def run(self, query: str) -> FakeResult:
        self.driver.queries.append((self.database, self.mode, query))
        if query.startswith("SHOW CURRENT USER"):
            if self.driver.roles is None:
                raise neo4j_errors.ClientError("Unsupported administration command")
            return FakeResult({"roles": self.driver.roles})
        if self.driver.explain_error is not None:
            raise self.driver.explain_error
        return FakeResult(None)


class FakeDriver:
    def __init__(self, roles: list[str] | None, explain_error: Exception | None = None) -> None:
        self.roles, self.explain_error = roles, explain_error
        self.queries: list[tuple[str | None, str | None, str]] = []

    def session(self, database: str | None = None, default_access_mode: str | None = None) -> Any:
        return FakeSession(self, database, default_access_mode)


def forbidden() -> neo4j_errors.Neo4jError:
    error = neo4j_errors.ClientError("Create node with labels is not allowed")
    error._neo4j_code = "Neo.ClientError.Security.Forbidden"  # type: ignore[attr-defined]
    return error


def graph(driver: FakeDriver) -> Neo4jGraph:
    return Neo4jGraph(driver, "neo4j://db:7687", None)  # type: ignore[arg-type]


def test_reader_role_is_read_only_without_any_write_statement() -> None:
    driver = FakeDriver(roles=["reader", "PUBLIC"])
    assert graph(driver).write_access()[0] is False
    assert [q for _, _, q in driver.queries] == ["SHOW CURRENT USER YIELD roles"]
    assert driver.queries[0][0] == "system"


@pytest.mark.parametrize(
    ("roles", "explain_error", "expected"),
    [
        (["editor", "PUBLIC"], None, True),  # the server plans the write: it may write
        (["custom_role"], forbidden(), False),  # the EXPLAIN is refused: read-only
        (None, None, True),  # Community edition: no roles, every user writes
    ],
)
def test_write_probe_is_an_explain_in_a_write_session(
    roles: list[str] | None, explain_error: Exception | None, expected: bool
) -> None:
    driver = FakeDriver(roles=roles, explain_error=explain_error)
    can_write, detail = graph(driver).write_access()
    assert can_write is expected, detail
    probe = driver.queries[-1]
    assert probe[1] == neo4j.WRITE_ACCESS and probe[2].startswith("EXPLAIN CREATE")
