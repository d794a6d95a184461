"""Graph database adapters behind one small protocol (FalkorDB embedded or server, Neo4j)."""

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
    GraphSchema,
    LabelInfo,
    PropertyInfo,
    QueryResult,
    RelPattern,
    Validation,
    ValueMatch,
)

__all__ = [
    "CypherSyntaxError",
    "EmbeddedUnavailableError",
    "GraphAuthError",
    "GraphConnectionError",
    "GraphDB",
    "GraphError",
    "GraphSchema",
    "GraphURLError",
    "LabelInfo",
    "NotReadOnlyError",
    "PropertyInfo",
    "QueryResult",
    "QueryTimeoutError",
    "RelPattern",
    "Validation",
    "ValueMatch",
]
