"""The FalkorDB adapter (embedded or a server) through FalkorDB's own client, never its Bolt endpoint."""

from __future__ import annotations

import itertools
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
from redis.backoff import NoBackoff
from redis.retry import Retry

from graph_agent.graphdb.embedded import ENGINE_LIMITS, EmbeddedServer, embedded_server
from graph_agent.graphdb.errors import (
    CypherSyntaxError,
    EngineRestartedError,
    GraphAuthError,
    GraphConnectionError,
    GraphDataLossError,
    GraphError,
    NotReadOnlyError,
    QueryTimeoutError,
    ResourceLimitError,
)
from graph_agent.graphdb.falkor_paths import with_path_variables
from graph_agent.graphdb.falkor_uniqueness import with_distinct_relationships
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
from guardrails import fold_word, tokenize

logger = logging.getLogger(__name__)

T = TypeVar("T")

# Plan operator names with spaces removed: the engine prints "Load CSV", older lists say LoadCSV.
_WRITE_OPS = frozenset(
    {"Create", "Merge", "MergeCreate", "Update", "Delete", "Set", "Remove", "Foreach"}
)
_LOAD_OPS = frozenset({"LoadCSV"})
LOAD_CSV_REFUSAL = "LOAD CSV reads files or URLs, which a read-only question may not do"
_OFFSET = re.compile(r"offset: (\d+)")
_CATALOG_TTL_S = 300.0
# What redis-py's ConnectionError is raised from when the statement never reached an engine.
_NOT_DELIVERED = (ConnectionRefusedError, FileNotFoundError, BrokenPipeError)
ENGINE_RESTARTED = (
    "The graph database stopped while it ran this query (it may have needed more memory than "
    "it is allowed) and has been restarted with its saved data. Please ask again."
)
"""EngineRestartedError's message: for the person asking, so no engine detail."""


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
        self._lost: str | None = None
        """Why the embedded graph cannot be trusted (fewer nodes than saved), or None."""

    # --- plumbing ----------------------------------------------------------------------

    def _call(self, fn: Callable[[], T]) -> T:
        """Run one client call; when the embedded engine has died, bring it back.

        A statement the dead engine never received is sent again once, to the new engine; one
        that was running when it died is not (it may be what killed it): EngineRestartedError.
        """
        server = self._server
        try:
            return fn()
        except redis.exceptions.AuthenticationError:
            raise GraphAuthError(f"FalkorDB at {self.url} refused the password.") from None
        except redis.exceptions.ConnectionError as exc:
            if server is None:
                raise self._unreachable(exc) from None
            broken = exc
        # The embedded engine died: kill -9, an allocation past its memory limit, a crash.
        self._recover(server, broken)
        if not _never_sent(broken):
            raise EngineRestartedError(ENGINE_RESTARTED)
        try:
            return fn()
        except redis.exceptions.ConnectionError as again:
            # Down again at once: back up for the next statement, but this one is not re-sent.
            self._recover(server, again)
            raise EngineRestartedError(ENGINE_RESTARTED) from None

    def _recover(self, server: EmbeddedServer, exc: redis.exceptions.ConnectionError) -> None:
        logger.warning("Lost the embedded FalkorDB (%s); bringing it back", _engine_message(exc))
        try:
            server.recover()
            lost = self.check_saved()
        except redis.exceptions.ConnectionError as again:
            raise self._unreachable(again) from None
        if lost is not None:
            raise GraphDataLossError(lost)

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
        if "mem consumption exceeded" in lowered:
            return ResourceLimitError(
                "The query needed more memory than one read may use: it builds huge lists or "
                "combines every row with every other row."
            )
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

    # --- crash safety (embedded) ------------------------------------------------------

    def _node_count(self) -> int:
        try:
            result = self._graph.ro_query("CALL db.meta.stats() YIELD nodeCount")
        except redis.exceptions.ResponseError as exc:
            if _is_missing_graph(exc):
                return 0
            raise
        return int(result.result_set[0][0]) if result.result_set else 0

    def check_saved(self) -> str | None:
        """Compare the embedded graph with the node count recorded at its last save.

        Fewer nodes than saved means a crash lost data, or the data file was replaced: every
        read then fails with GraphDataLossError (so no question gets a silent empty answer)
        until the data is restored, reloaded, or the record is deleted. Returns the problem.
        """
        if self._server is None:
            return None
        expected = self._server.saved_counts().get(self.graph_name)
        nodes = self._node_count() if expected is not None else 0
        if expected is None or nodes >= expected:
            self._lost = None
            return None
        self._lost = (
            f"The embedded FalkorDB came back with {nodes:,} nodes in graph "
            f"{self.graph_name!r}, but {expected:,} were saved: data was lost (a crash before "
            f"a save, or a replaced graph.rdb in {self._server.state_dir}). Restore graph.rdb "
            "from a backup or reload the data (`cypherbot demo-data --reset`); to accept the "
            f"graph as it is, delete {self._server.counts_file}."
        )
        logger.error("%s", self._lost)
        return self._lost

    def _refuse_if_lost(self) -> None:
        if self._lost is not None and self.check_saved() is not None:
            raise GraphDataLossError(self._lost)

    def persist(self) -> None:
        """Save the embedded graph to disk and record its node count (a no-op on a server)."""
        if self._server is None:
            return
        try:
            self._call(self._server.save)
            nodes = self._call(self._node_count)
        except (OSError, redis.exceptions.RedisError) as exc:
            raise GraphError(f"Could not save the embedded graph: {exc}") from None
        self._server.record_count(self.graph_name, nodes)
        self._lost = None

    def _forget_saved(self) -> None:
        # The graph is about to differ from its saved copy: only the next persist() counts.
        if self._server is not None:
            self._server.record_count(self.graph_name, None)

    # --- GraphDB -------------------------------------------------------------------------

    def schema(
        self,
        *,
        include: Sequence[str] | None = None,
        exclude: Sequence[str] | None = None,
        sample: int = 1000,
    ) -> GraphSchema:
        self._refuse_if_lost()
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
        lines = tuple(line.strip() for line in str(plan).splitlines() if line.strip())
        ops = {line.split(" |")[0].strip().replace(" ", "") for line in lines}
        if ops & _LOAD_OPS:
            return Validation(ok=False, error=f"{LOAD_CSV_REFUSAL} (the plan has a Load CSV step)")
        if ops & _WRITE_OPS:
            read_only: bool | None = False
        elif "ProcedureCall" in ops:
            # Procedures may write (index creation); RO_QUERY will tell at run time.
            read_only = None
        else:
            read_only = True
        return Validation(ok=True, read_only=read_only, plan=lines)

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
        self._refuse_if_lost()
        if _loads_csv(cypher):
            raise NotReadOnlyError(f"Refused: {LOAD_CSV_REFUSAL}.")
        timeout_ms = max(1, int(timeout_s * 1000))
        if self._server is not None:
            # The engine rejects a TIMEOUT above its TIMEOUT_MAX instead of clamping it.
            timeout_ms = min(timeout_ms, ENGINE_LIMITS["TIMEOUT_MAX"])
        started = time.perf_counter()
        try:
            result = self._call(
                lambda: self._graph.ro_query(
                    with_path_variables(with_distinct_relationships(cypher)),
                    dict(params or {}),
                    timeout=timeout_ms,
                )
            )
        except redis.exceptions.ResponseError as exc:
            if _is_missing_graph(exc):
                # The graph key does not exist until the first write: an empty graph, unless
                # a restart lost it.
                self._refuse_if_lost()
                return QueryResult(columns=[], rows=[], elapsed_ms=0.0)
            raise self._translate(exc, cypher) from None
        # The server may have been restarted during the call and come back short.
        self._refuse_if_lost()
        elapsed = (time.perf_counter() - started) * 1000
        columns = [str(col[1]) for col in result.header]
        raw = result.result_set
        rows = [[jsonable(native(v)) for v in row] for row in raw[:max_rows]]
        return QueryResult(
            columns=columns, rows=rows, truncated=len(raw) > max_rows, elapsed_ms=elapsed
        )

    def run_write(self, cypher: str, params: Mapping[str, Any] | None = None) -> None:
        self._catalog = None
        self._forget_saved()
        try:
            self._call(lambda: self._graph.query(cypher, dict(params or {})))
        except redis.exceptions.ResponseError as exc:
            raise self._translate(exc, cypher) from None

    def write_batches(
        self, cypher: str, batches: Iterable[list[dict[str, Any]]], *, param: str = "rows"
    ) -> int:
        return write_in_batches(self, cypher, batches, param)

    def lookup_values(self, text: str, limit: int = 5) -> list[ValueMatch]:
        self._refuse_if_lost()
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

        found = self._call(version)
        # Health checks (/healthz, `cypherbot doctor`) call ping: a lost graph is a failure.
        self._refuse_if_lost()
        return found

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
        self._forget_saved()
        try:
            self._call(self._graph.delete)
        except redis.exceptions.ResponseError as exc:
            # Deleting a graph that was never created is fine here.
            if not _is_missing_graph(exc):
                raise


def _never_sent(exc: redis.exceptions.ConnectionError) -> bool:
    """Whether the engine cannot have run the statement: no engine took the connection, or
    the one that did was still loading its data.

    redis-py raises the same ConnectionError when the engine was gone before the statement
    was sent as when it died running it; the OS error it was raised from tells them apart.
    """
    if isinstance(exc, redis.exceptions.BusyLoadingError):
        return True
    return isinstance(exc.__cause__ or exc.__context__, _NOT_DELIVERED)


def _loads_csv(cypher: str) -> bool:
    """LOAD CSV as written (any case, any spacing): the adapter's own check under the policy."""
    words = [fold_word(t.text) for t in tokenize(cypher) if t.is_word]
    return any(a == "LOAD" and b == "CSV" for a, b in itertools.pairwise(words))


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
    # No retries inside the client: it would send a statement the engine died on to the next
    # engine, and wait seconds on a dead one; FalkorGraph._call restarts the engine instead.
    client = _open(url, unix_socket_path=str(server.socket_path), retry=Retry(NoBackoff(), 0))
    graph = FalkorGraph(client, graph_name, url, server)
    graph.check_saved()
    return graph


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
