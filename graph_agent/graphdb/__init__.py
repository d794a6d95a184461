"""Graph database adapters behind one small protocol (FalkorDB embedded or server, Neo4j)."""

from __future__ import annotations

from pathlib import Path

from graph_agent.graphdb.errors import (
    CypherSyntaxError,
    EmbeddedUnavailableError,
    GraphAuthError,
    GraphConnectionError,
    GraphError,
    GraphURLError,
    NotReadOnlyError,
    QueryTimeoutError,
)
from graph_agent.graphdb.protocol import (
    GraphDB,
    GraphReader,
    GraphSchema,
    LabelInfo,
    PropertyInfo,
    QueryResult,
    RelPattern,
    SupportsIndexes,
    Validation,
    ValueMatch,
)
from graph_agent.graphdb.schema import schema_fingerprint, schema_text
from graph_agent.graphdb.url import ACCEPTED_FORMS, GraphTarget, parse_graph_url, redact


def connect(
    url: str,
    *,
    data_dir: Path,
    graph_name: str = "cypherbot",
    user: str = "neo4j",
    password: str = "",
    database: str | None = None,
) -> GraphDB:
    """Open the graph GRAPH_URL names: embedded FalkorDB (default), a FalkorDB server or Neo4j.

    Adapters are imported here, lazily, so a missing optional driver only matters when used.
    """
    target = parse_graph_url(url)
    if target.kind == "embedded":
        from graph_agent.graphdb.engine_process import binaries

        binaries()  # fails with EmbeddedUnavailableError before the client is imported
        from graph_agent.graphdb.falkor import connect_embedded

        return connect_embedded(Path(data_dir), graph_name)
    if target.kind == "falkordb":
        from graph_agent.graphdb.falkor import connect_server

        return connect_server(target, graph_name)
    from graph_agent.graphdb.neo4j_db import connect_neo4j

    return connect_neo4j(
        target,
        user=target.username or user,
        password=target.password or password,
        database=database,
    )


__all__ = [
    "ACCEPTED_FORMS",
    "CypherSyntaxError",
    "EmbeddedUnavailableError",
    "GraphAuthError",
    "GraphConnectionError",
    "GraphDB",
    "GraphError",
    "GraphReader",
    "GraphSchema",
    "GraphTarget",
    "GraphURLError",
    "LabelInfo",
    "NotReadOnlyError",
    "PropertyInfo",
    "QueryResult",
    "QueryTimeoutError",
    "RelPattern",
    "SupportsIndexes",
    "Validation",
    "ValueMatch",
    "connect",
    "parse_graph_url",
    "redact",
    "schema_fingerprint",
    "schema_text",
]
