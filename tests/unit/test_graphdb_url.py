"""GRAPH_URL parsing: every accepted form, redaction, and the errors for the rest."""

from __future__ import annotations

import pytest

from graph_agent.graphdb import GraphURLError, parse_graph_url, redact
from graph_agent.graphdb.neo4j_db import driver_uri


@pytest.mark.parametrize(
    ("url", "kind", "host", "port", "graph"),
    [
        ("", "embedded", "", None, None),
        ("embedded", "embedded", "", None, None),
        ("falkordb://localhost:6380/movies", "falkordb", "localhost", 6380, "movies"),
        ("falkordb://db.internal", "falkordb", "db.internal", 6379, None),
        ("neo4j://graph:7687", "neo4j", "graph", 7687, None),
        (
            "neo4j+s://abcd1234.databases.neo4j.io",
            "neo4j",
            "abcd1234.databases.neo4j.io",
            7687,
            None,
        ),
        ("bolt://127.0.0.1:7688", "neo4j", "127.0.0.1", 7688, None),
        ("bolt+s://graph.example.com", "neo4j", "graph.example.com", 7687, None),
    ],
)
def test_accepted_forms(
    url: str, kind: str, host: str, port: int | None, graph: str | None
) -> None:
    target = parse_graph_url(url)
    assert (target.kind, target.host, target.port, target.graph) == (kind, host, port, graph)


def test_password_is_never_in_the_safe_url() -> None:
    target = parse_graph_url("falkordb://user:p%40ss@host:6379/g")
    assert target.password == "p@ss" and target.username == "user"
    assert "p%40ss" not in target.url and "***" in target.url
    assert redact("neo4j://neo4j:secret@h:7687") == "neo4j://neo4j:***@h:7687"
    assert redact("neo4j://h:7687") == "neo4j://h:7687"


def test_driver_uri_drops_credentials_keeps_routing_context() -> None:
    target = parse_graph_url("neo4j://neo4j:secret@h:7687?region=eu")
    assert driver_uri(target) == "neo4j://h:7687?region=eu"


@pytest.mark.parametrize(
    ("url", "expected"),
    [
        ("mysql://h:3306", "scheme 'mysql' is not supported"),
        ("localhost:7687", "is not a URL"),
        ("neo4j://", "names no host"),
        ("bolt://h:notaport", "invalid port"),
    ],
)
def test_bad_urls_say_what_is_accepted(url: str, expected: str) -> None:
    with pytest.raises(GraphURLError) as caught:
        parse_graph_url(url)
    assert expected in str(caught.value)
