"""The FalkorDB adapter (embedded or a server) through FalkorDB's own client, never its Bolt endpoint."""

from __future__ import annotations

import logging
import re
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any, TypeVar

import redis.exceptions
from falkordb import FalkorDB
from falkordb.edge import Edge
from falkordb.node import Node
from falkordb.path import Path as GraphPath

from graph_agent.graphdb.embedded import EmbeddedServer, embedded_server
from graph_agent.graphdb.errors import (
    CypherSyntaxError,
    GraphAuthError,
    GraphConnectionError,
    GraphError,
    NotReadOnlyError,
    QueryTimeoutError,
)
from graph_agent.graphdb.lookup import ValueCatalog, contains_search
from graph_agent.graphdb.protocol import (
    GraphSchema,
    QueryResult,
    Validation,
    ValueMatch,
    write_in_batches,
)
from graph_agent.graphdb.schema import jsonable, quote_name, sample_schema
from graph_agent.graphdb.url import GraphTarget

logger = logging.getLogger(__name__)

T = TypeVar("T")

_WRITE_OPS = frozenset(
    {"Create", "Merge", "MergeCreate", "Update", "Delete", "Set", "Remove", "Foreach", "LoadCSV"}
)
_OFFSET = re.compile(r"offset: (\d+)")
_CATALOG_TTL_S = 300.0


def native(value: Any) -> Any:
    """FalkorDB client values as plain Python: nodes/edges become maps, paths lists of them."""
    if isinstance(value, Node):
        return {
            "_labels": list(value.labels or []),
            **{k: native(v) for k, v in value.properties.items()},
        }
    if isinstance(value, Edge):
        return {"_type": value.relation, **{k: native(v) for k, v in value.properties.items()}}
    if isinstance(value, GraphPath):
        return {
            "_nodes": [native(n) for n in value.nodes()],
            "_relationships": [native(e) for e in value.edges()],
        }
    if isinstance(value, Mapping):
        return {str(k): native(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [native(v) for v in value]
    return value


def _engine_message(exc: BaseException) -> str:
    return str(exc.args[0]) if exc.args else str(exc)


def _is_missing_graph(exc: BaseException) -> bool:
    return "empty key" in _engine_message(exc).lower()


def _position(message: str) -> int | None:
    found = _OFFSET.search(message)
    return int(found.group(1)) if found else None


class FalkorGraph:
    """A GraphDB on one FalkorDB graph key."""

    dialect = "FalkorDB Cypher (OpenCypher; no APOC, no CALL subqueries)"

    def __init__(
        self, client: FalkorDB, graph_name: str, url: str, server: EmbeddedServer | None = None
    ) -> None:
        self.url = url
        self.graph_name = graph_name
        self._client = client
        self._graph = client.select_graph(graph_name)
        self._server = server
        self._catalog: ValueCatalog | None = None
        self._fulltext: set[tuple[str, str]] | None = None

    # --- plumbing ----------------------------------------------------------------------

    def _call(self, fn: Callable[[], T]) -> T:
        try:
            return fn()
        except redis.exceptions.ConnectionError as exc:
            if self._server is None:
                raise self._unreachable(exc) from None
            # The embedded server died (crash, kill -9): start it again once, then retry.
            logger.warning("Embedded FalkorDB connection lost (%s); restarting it", exc)
            try:
                self._server.ensure_running()
                return fn()
            except redis.exceptions.ConnectionError as again:
                raise self._unreachable(again) from None
        except redis.exceptions.AuthenticationError:
            raise GraphAuthError(f"FalkorDB at {self.url} refused the password.") from None

    def _unreachable(self, exc: BaseException) -> GraphConnectionError:
        return GraphConnectionError(
            f"Cannot reach FalkorDB at {self.url} ({_engine_message(exc)}). "
            "Check that the server is running and GRAPH_URL is right."
        )

    def _translate(self, exc: redis.exceptions.ResponseError, cypher: str) -> GraphError:
        message = _engine_message(exc)
        lowered = message.lower()
        if "timed out" in lowered:
            return QueryTimeoutError(f"The query ran longer than its timeout: {message}")
        if "read-only" in lowered or "read only" in lowered:
            return NotReadOnlyError(f"Refused: the statement writes to the graph ({message}).")
        return CypherSyntaxError(
            f"FalkorDB rejected the query: {message}",
            engine_message=message,
            position=_position(message),
        )

    def _read_native(self, cypher: str, params: Mapping[str, Any] | None = None) -> list[list[Any]]:
        try:
            result = self._call(lambda: self._graph.ro_query(cypher, dict(params or {})))
        except redis.exceptions.ResponseError as exc:
            if _is_missing_graph(exc):
                return []
            raise self._translate(exc, cypher) from None
        return [[native(v) for v in row] for row in result.result_set]

    # --- GraphDB -------------------------------------------------------------------------

    def schema(
        self,
        *,
        include: Sequence[str] | None = None,
        exclude: Sequence[str] | None = None,
        sample: int = 1000,
    ) -> GraphSchema:
        stats = self._read_native("CALL db.meta.stats() YIELD labels, relTypes")
        label_counts: dict[str, int] = {}
        type_counts: dict[str, int] = {}
        if stats:
            # The engine's own counters: exact and free, unlike count() over a big label.
            label_counts = {str(k): int(v) for k, v in (stats[0][0] or {}).items()}
            type_counts = {str(k): int(v) for k, v in (stats[0][1] or {}).items()}
        return sample_schema(
            self._read_native,
            include=include,
            exclude=exclude,
            sample=sample,
            label_counts=label_counts,
            type_counts=type_counts,
        )

    def validate(self, cypher: str) -> Validation:
        try:
            plan = self._call(lambda: self._graph.explain(cypher))
        except redis.exceptions.ResponseError as exc:
            if _is_missing_graph(exc) and self._materialise_empty_graph():
                return self.validate(cypher)
            message = _engine_message(exc)
            return Validation(ok=False, error=message, position=_position(message))
        ops = {line.strip().split(" |")[0].strip() for line in str(plan).splitlines()}
        if ops & _WRITE_OPS:
            read_only: bool | None = False
        elif "ProcedureCall" in ops:
            # Procedures may write (index creation); RO_QUERY will tell at run time.
            read_only = None
        else:
            read_only = True
        return Validation(ok=True, read_only=read_only)

    def _materialise_empty_graph(self) -> bool:
        # GRAPH.EXPLAIN needs the graph key to exist, and FalkorDB creates it only on the
        # first query; a no-op RETURN creates an empty graph so statements can be checked
        # (e.g. examples imported before any data is loaded). Nothing is written to it.
        try:
            self._call(lambda: self._graph.query("RETURN 1"))
        except redis.exceptions.ResponseError:
            return False
        return True

    def run_read(
        self,
        cypher: str,
        params: Mapping[str, Any] | None = None,
        *,
        timeout_s: float = 10.0,
        max_rows: int = 100,
    ) -> QueryResult:
        timeout_ms = max(1, int(timeout_s * 1000))
        started = time.perf_counter()
        try:
            result = self._call(
                lambda: self._graph.ro_query(cypher, dict(params or {}), timeout=timeout_ms)
            )
        except redis.exceptions.ResponseError as exc:
            if _is_missing_graph(exc):
                # The graph key does not exist until the first write: an empty graph.
                return QueryResult(columns=[], rows=[], elapsed_ms=0.0)
            raise self._translate(exc, cypher) from None
        elapsed = (time.perf_counter() - started) * 1000
        columns = [str(col[1]) for col in result.header]
        raw = result.result_set
        rows = [[jsonable(native(v)) for v in row] for row in raw[:max_rows]]
        return QueryResult(
            columns=columns, rows=rows, truncated=len(raw) > max_rows, elapsed_ms=elapsed
        )

    def run_write(self, cypher: str, params: Mapping[str, Any] | None = None) -> None:
        self._catalog = None
        try:
            self._call(lambda: self._graph.query(cypher, dict(params or {})))
        except redis.exceptions.ResponseError as exc:
            raise self._translate(exc, cypher) from None

    def write_batches(
        self, cypher: str, batches: Iterable[list[dict[str, Any]]], *, param: str = "rows"
    ) -> int:
        return write_in_batches(self, cypher, batches, param)

    def lookup_values(self, text: str, limit: int = 5) -> list[ValueMatch]:
        catalog = self._catalog
        if catalog is None or time.monotonic() - catalog.built_at > _CATALOG_TTL_S:
            catalog = self._catalog = ValueCatalog.build(self._read_native, self.schema(sample=200))
            self._fulltext = None
        return catalog.match(text, limit, self._search)

    def _search(self, label: str, prop: str, words: Sequence[str], limit: int) -> list[str]:
        if self._fulltext is None:
            self._fulltext = self._fulltext_indexes()
        if (label, prop) not in self._fulltext:
            return contains_search(self._read_native)(label, prop, words, limit)
        # RediSearch syntax: prefix match on each word, any of them.
        query = "|".join(f"{w}*" for w in words if w.isalnum())
        rows = self._read_native(
            f"CALL db.idx.fulltext.queryNodes($label, $query) YIELD node "
            f"RETURN DISTINCT node.{quote_name(prop)} LIMIT {int(limit)}",
            {"label": label, "query": query},
        )
        return [str(r[0]) for r in rows if r[0] is not None]

    def _fulltext_indexes(self) -> set[tuple[str, str]]:
        found: set[tuple[str, str]] = set()
        for row in self._read_native("CALL db.indexes() YIELD label, properties, types"):
            label, props, types = row
            for prop in props or []:
                if "FULLTEXT" in (types or {}).get(prop, []):
                    found.add((str(label), str(prop)))
        return found

    def counts(self) -> tuple[int, int]:
        rows = self._read_native("CALL db.meta.stats() YIELD nodeCount, relCount")
        return (int(rows[0][0]), int(rows[0][1])) if rows else (0, 0)

    def ping(self) -> str:
        def version() -> str:
            conn = self._client.connection
            redis_version = conn.info("server").get("redis_version", "?")
            module = "?"
            for entry in conn.execute_command("MODULE", "LIST"):
                fields = dict(zip(entry[::2], entry[1::2], strict=False))
                if fields.get("name") == "graph":
                    ver = int(fields.get("ver", 0))
                    module = f"{ver // 10000}.{ver // 100 % 100}.{ver % 100}"
            return f"FalkorDB {module} (redis {redis_version})"

        return self._call(version)

    def close(self) -> None:
        self._client.connection.close()

    # --- indexes (demo loader) -----------------------------------------------------------

    def create_index(self, label: str, prop: str) -> None:
        try:
            self.run_write(f"CREATE INDEX FOR (n:{quote_name(label)}) ON (n.{quote_name(prop)})")
        except CypherSyntaxError as exc:
            if "already indexed" not in exc.engine_message:
                raise

    def create_fulltext_index(self, label: str, prop: str) -> None:
        try:
            self.run_write(
                "CALL db.idx.fulltext.createNodeIndex($label, $prop)",
                {"label": label, "prop": prop},
            )
        except CypherSyntaxError as exc:
            if "already indexed" not in exc.engine_message:
                raise
        self._fulltext = None

    def drop_graph(self) -> None:
        """Delete this graph key entirely (tests and `demo-data --reset`)."""
        self._catalog = None
        try:
            self._call(self._graph.delete)
        except redis.exceptions.ResponseError as exc:
            # Deleting a graph that was never created is fine here.
            if not _is_missing_graph(exc):
                raise


def _open(url: str, **kwargs: Any) -> FalkorDB:
    """A connected client, with connection and auth failures in the graph layer's terms."""
    try:
        # The constructor already talks to the server (it probes for sentinel/cluster).
        client = FalkorDB(**kwargs)
        client.connection.ping()
    except redis.exceptions.AuthenticationError:
        raise GraphAuthError(
            f"FalkorDB at {url} refused the credentials; check the password in GRAPH_URL."
        ) from None
    except redis.exceptions.ResponseError as exc:
        if "auth" in str(exc).lower():
            raise GraphAuthError(f"FalkorDB at {url} refused the credentials ({exc}).") from None
        raise
    except (redis.exceptions.ConnectionError, OSError) as exc:
        raise GraphConnectionError(
            f"Cannot reach FalkorDB at {url} ({_engine_message(exc)}). "
            "Check that the server is running and GRAPH_URL is right."
        ) from None
    return client


def connect_embedded(data_dir: Path, graph_name: str) -> FalkorGraph:
    server = embedded_server(data_dir)
    url = f"embedded ({server.state_dir})"
    client = _open(url, unix_socket_path=str(server.socket_path))
    return FalkorGraph(client, graph_name, url, server)


def connect_server(target: GraphTarget, graph_name: str) -> FalkorGraph:
    client = _open(
        target.url,
        host=target.host,
        port=target.port or 6379,
        username=target.username,
        password=target.password,
        socket_connect_timeout=5,
    )
    return FalkorGraph(client, target.graph or graph_name, target.url)
