"""Parsing GRAPH_URL into a target the adapters can connect to (no driver imports here)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal
from urllib.parse import unquote, urlsplit

from graph_agent.graphdb.errors import GraphURLError

NEO4J_SCHEMES = ("neo4j", "neo4j+s", "neo4j+ssc", "bolt", "bolt+s", "bolt+ssc")
ACCEPTED_FORMS = (
    "`embedded` (default: FalkorDB started by cypherbot under DATA_DIR), "
    "`falkordb://host:port/graph`, "
    "`neo4j://host:7687`, `neo4j+s://xxxx.databases.neo4j.io` (Aura), "
    "`bolt://host:7687`, `bolt+s://host:7687`"
)

EngineKind = Literal["embedded", "falkordb", "neo4j"]


@dataclass(frozen=True)
class GraphTarget:
    """Where GRAPH_URL points, split into the parts an adapter needs."""

    kind: EngineKind
    url: str
    """The URL as given, minus any password: safe for logs and error messages."""
    host: str = ""
    port: int | None = None
    graph: str | None = None
    """FalkorDB graph key from the URL path, when one was given."""
    username: str | None = None
    password: str | None = None


def redact(url: str) -> str:
    """`url` without the password part of its userinfo."""
    parts = urlsplit(url)
    if parts.password is None:
        return url
    user = parts.username or ""
    host = parts.hostname or ""
    netloc = f"{user}:***@{host}" if user else f":***@{host}"
    if parts.port is not None:
        netloc += f":{parts.port}"
    return parts._replace(netloc=netloc).geturl()


def parse_graph_url(url: str) -> GraphTarget:
    """Split GRAPH_URL; raise GraphURLError naming the accepted forms when it is not one."""
    text = url.strip()
    if text in ("", "embedded"):
        return GraphTarget(kind="embedded", url="embedded")
    if "://" not in text:
        raise GraphURLError(
            f"GRAPH_URL {redact(text)!r} is not a URL. Use one of: {ACCEPTED_FORMS}."
        )
    parts = urlsplit(text)
    scheme = parts.scheme.lower()
    safe = redact(text)
    try:
        port = parts.port
    except ValueError:
        raise GraphURLError(f"GRAPH_URL {safe!r} has an invalid port.") from None
    if not parts.hostname:
        raise GraphURLError(f"GRAPH_URL {safe!r} names no host. Use one of: {ACCEPTED_FORMS}.")
    username = unquote(parts.username) if parts.username else None
    password = unquote(parts.password) if parts.password else None
    if scheme in ("falkordb", "falkor", "redis"):
        graph = parts.path.strip("/") or None
        return GraphTarget(
            kind="falkordb",
            url=safe,
            host=parts.hostname,
            port=port or 6379,
            graph=unquote(graph) if graph else None,
            username=username,
            password=password,
        )
    if scheme in NEO4J_SCHEMES:
        return GraphTarget(
            kind="neo4j",
            url=safe,
            host=parts.hostname,
            port=port or 7687,
            username=username,
            password=password,
        )
    raise GraphURLError(
        f"GRAPH_URL scheme {parts.scheme!r} is not supported. Use one of: {ACCEPTED_FORMS}."
    )
