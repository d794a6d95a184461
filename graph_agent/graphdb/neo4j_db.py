"""The Neo4j 5.x adapter through the official driver: READ routing, execute_read, EXPLAIN checks."""

from __future__ import annotations

import logging
import re
import time
from collections.abc import Iterable, Mapping, Sequence
from typing import Any
from urllib.parse import urlsplit

import neo4j
import neo4j.exceptions as neo4j_errors
from neo4j.graph import Node, Path, Relationship
from neo4j.spatial import Point
from neo4j.time import Date, DateTime, Duration, Time

from graph_agent.graphdb.errors import (
    CypherSyntaxError,
    GraphAuthError,
    GraphConnectionError,
    GraphError,
    GraphURLError,
    NotReadOnlyError,
    QueryTimeoutError,
)
from graph_agent.graphdb.lookup import ValueCatalog, contains_search
from graph_agent.graphdb.protocol import (
    GraphSchema,
    LabelInfo,
    PropertyInfo,
    QueryResult,
    RelPattern,
    Validation,
    ValueMatch,
    write_in_batches,
)
from graph_agent.graphdb.schema import jsonable, quote_name, sample_schema
from graph_agent.graphdb.url import GraphTarget

logger = logging.getLogger(__name__)

_POSITION = re.compile(r"\(offset: (\d+)\)")
_READ_ONLY_TYPES = frozenset({"r"})
_CATALOG_TTL_S = 300.0
_FETCH_SIZE_MAX = 1000
_LOAD_OPERATORS = frozenset({"loadcsv"})
# Neo4j's type names in db.schema.*TypeProperties, mapped to the names the schema text uses.
_PROCEDURE_TYPES = {
    "String": "STRING",
    "Long": "INTEGER",
    "Double": "FLOAT",
    "Boolean": "BOOLEAN",
    "Date": "DATE",
    "DateTime": "DATETIME",
    "LocalDateTime": "DATETIME",
    "StringArray": "LIST<STRING>",
    "LongArray": "LIST<INTEGER>",
    "DoubleArray": "LIST<FLOAT>",
    "Point": "POINT",
}


def native(value: Any) -> Any:
    """Driver values as plain Python: entities as maps, temporal values as datetime objects."""
    if isinstance(value, Node):
        return {"_labels": sorted(value.labels), **{k: native(v) for k, v in value.items()}}
    if isinstance(value, Relationship):
        return {"_type": value.type, **{k: native(v) for k, v in value.items()}}
    if isinstance(value, Path):
        return {
            "_nodes": [native(n) for n in value.nodes],
            "_relationships": [native(r) for r in value.relationships],
        }
    if isinstance(value, Date | DateTime | Time):
        return value.to_native()
    if isinstance(value, Duration):
        return value.iso_format()
    if isinstance(value, Point):
        return {"srid": value.srid, "coordinates": list(value)}
    if isinstance(value, Mapping):
        return {str(k): native(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [native(v) for v in value]
    return value


def to_json(value: Any) -> Any:
    """A driver value as plain JSON-able data."""
    return jsonable(native(value))


def driver_uri(target: GraphTarget) -> str:
    """The URL for the driver: GRAPH_URL without credentials (they go in `auth`)."""
    parts = urlsplit(target.url)
    netloc = parts.hostname or target.host
    if parts.port is not None:
        netloc += f":{parts.port}"
    return parts._replace(netloc=netloc).geturl()


def position_of(message: str) -> int | None:
    found = _POSITION.search(message)
    return int(found.group(1)) if found else None


def properties_from_procedure(
    rows: Iterable[Mapping[str, Any]],
) -> dict[str, tuple[PropertyInfo, ...]]:
    """Label → properties from `db.schema.nodeTypeProperties()` rows (or rel types from
    `db.schema.relTypeProperties()`, keyed by `relType`)."""
    found: dict[str, dict[str, set[str]]] = {}
    for row in rows:
        names = row.get("nodeLabels")
        if names is None:
            names = [str(row.get("relType", "")).strip(":`")]
        for name in names or []:
            props = found.setdefault(str(name), {})
            prop = row.get("propertyName")
            if prop is None:
                continue
            kinds = props.setdefault(str(prop), set())
            kinds.update(
                _PROCEDURE_TYPES.get(str(t), str(t).upper()) for t in row.get("propertyTypes") or []
            )
            if not row.get("mandatory", True):
                kinds.add("NULL")
    return {
        name: tuple(
            PropertyInfo(
                name=prop,
                types=tuple(sorted(kinds - {"NULL"})) + (("NULL",) if "NULL" in kinds else ()),
            )
            for prop, kinds in sorted(props.items())
        )
        for name, props in found.items()
    }


def patterns_from_visualization(
    nodes: Sequence[Mapping[str, Any]],
    rels: Sequence[tuple[Mapping[str, Any], str, Mapping[str, Any]]],
) -> list[tuple[str, str, str]]:
    """(start, type, end) label patterns from `db.schema.visualization()` output, where each
    node carries its label in `name` and each relationship is (start node, type, end node)."""
    names = {str(n.get("name")) for n in nodes}
    patterns = {
        (str(start.get("name")), rel_type, str(end.get("name")))
        for start, rel_type, end in rels
        if start.get("name") in names and end.get("name") in names
    }
    return sorted(patterns)


def assemble_schema(
    label_counts: Mapping[str, int],
    node_props: Mapping[str, tuple[PropertyInfo, ...]],
    patterns: Iterable[tuple[str, str, str]],
    rel_props: Mapping[str, tuple[PropertyInfo, ...]],
    *,
    include: Sequence[str] | None = None,
    exclude: Sequence[str] | None = None,
) -> GraphSchema:
    """A GraphSchema from the built-in procedures' output (no sampling, no sample values)."""

    def keep(name: str) -> bool:
        return (not include or name in include) and not (exclude and name in exclude)

    labels = tuple(
        LabelInfo(
            name=name, count=int(label_counts.get(name, 0)), properties=node_props.get(name, ())
        )
        for name in sorted(set(label_counts) | set(node_props))
        if keep(name)
    )
    kept = {label.name for label in labels}
    rels = tuple(
        RelPattern(start=s, type=t, end=e, properties=rel_props.get(t, ()))
        for s, t, e in sorted(set(patterns))
        if s in kept and e in kept
    )
    return GraphSchema(labels=labels, relationships=rels)


def plan_operators(plan: Any) -> set[str]:
    """Operator names of an EXPLAIN plan (a nested dict), lower-case, no spaces or `@neo4j`."""
    found: set[str] = set()
    stack = [plan]
    while stack:
        node = stack.pop()
        if not isinstance(node, Mapping):
            continue
        name = str(node.get("operatorType") or node.get("operator_type") or "")
        found.add(name.split("@", 1)[0].replace(" ", "").lower())
        stack.extend(node.get("children") or [])
    found.discard("")
    return found


def stream_rows(
    tx: Any, cypher: str, params: Mapping[str, Any] | None, max_rows: int
) -> tuple[list[str], list[list[Any]], bool]:
    """EXPLAIN (refusing anything not read-only), then read up to max_rows rows and stop.

    Returns (columns, rows, truncated). The records after the cap are never pulled: the
    caller closes the transaction, which discards them on the server.
    """
    # EXPLAIN first: refuse writes (and schema/admin commands) before anything runs.
    kind = tx.run("EXPLAIN " + cypher, dict(params or {})).consume()
    if kind.query_type not in _READ_ONLY_TYPES:
        raise NotReadOnlyError(
            f"Refused: the statement is not read-only (query type {kind.query_type!r})."
        )
    if plan_operators(kind.plan) & _LOAD_OPERATORS:
        raise NotReadOnlyError("Refused: LOAD CSV reads files or URLs.")
    result = tx.run(cypher, dict(params or {}))
    columns = list(result.keys())
    rows: list[list[Any]] = []
    for record in result:
        if len(rows) >= max_rows:
            return columns, rows, True
        rows.append([to_json(v) for v in record.values()])
    return columns, rows, False


# Built-in roles that cannot write (PUBLIC is granted to everyone).
READ_ONLY_ROLES = frozenset({"reader", "PUBLIC"})


class Neo4jGraph:
    """A GraphDB on one Neo4j database."""

    dialect = "Neo4j 5 Cypher"

    def __init__(self, driver: neo4j.Driver, url: str, database: str | None) -> None:
        self.url = url
        self._driver = driver
        self._database = database
        self._catalog: ValueCatalog | None = None

    def _session(self, write: bool = False, fetch_size: int | None = None) -> neo4j.Session:
        mode = neo4j.WRITE_ACCESS if write else neo4j.READ_ACCESS
        extra: dict[str, Any] = {} if fetch_size is None else {"fetch_size": fetch_size}
        return self._driver.session(database=self._database, default_access_mode=mode, **extra)

    def _translate(self, exc: Exception) -> GraphError:
        if isinstance(exc, neo4j_errors.AuthError):
            return GraphAuthError(f"Neo4j at {self.url} refused the credentials: {exc.message}")
        if isinstance(exc, neo4j_errors.ServiceUnavailable | neo4j_errors.SessionExpired):
            return GraphConnectionError(
                f"Cannot reach Neo4j at {self.url} ({exc}). Check the server and GRAPH_URL."
            )
        if isinstance(exc, neo4j_errors.Neo4jError):
            code, message = exc.code or "", exc.message or str(exc)
            if "TransactionTimedOut" in code or "Terminated" in code:
                return QueryTimeoutError(f"The query ran longer than its timeout: {message}")
            if "AccessMode" in code or "ForbiddenOnReadOnlyDatabase" in code:
                return NotReadOnlyError(f"Refused: the statement writes to the graph ({message}).")
            return CypherSyntaxError(
                f"Neo4j rejected the query: {message}",
                engine_message=message,
                position=position_of(message),
            )
        return GraphError(f"Neo4j at {self.url} failed: {exc}")

    def _read_native(self, cypher: str, params: Mapping[str, Any] | None = None) -> list[list[Any]]:
        def work(tx: neo4j.ManagedTransaction) -> list[list[Any]]:
            result = tx.run(cypher, dict(params or {}))
            return [[native(v) for v in record.values()] for record in result]

        try:
            with self._session() as session:
                return session.execute_read(work)
        except (neo4j_errors.Neo4jError, neo4j_errors.DriverError) as exc:
            raise self._translate(exc) from None

    def schema(
        self,
        *,
        include: Sequence[str] | None = None,
        exclude: Sequence[str] | None = None,
        sample: int = 1000,
    ) -> GraphSchema:
        if sample <= 0:
            return self._schema_from_procedures(include, exclude)
        return sample_schema(self._read_native, include=include, exclude=exclude, sample=sample)

    def _schema_from_procedures(
        self, include: Sequence[str] | None, exclude: Sequence[str] | None
    ) -> GraphSchema:
        """Exact types from the built-in procedures; they scan the store, so only on request."""
        node_rows = self._read_native(
            "CALL db.schema.nodeTypeProperties() "
            "YIELD nodeLabels, propertyName, propertyTypes, mandatory "
            "RETURN {nodeLabels: nodeLabels, propertyName: propertyName, "
            "propertyTypes: propertyTypes, mandatory: mandatory}"
        )
        rel_rows = self._read_native(
            "CALL db.schema.relTypeProperties() "
            "YIELD relType, propertyName, propertyTypes, mandatory "
            "RETURN {relType: relType, propertyName: propertyName, "
            "propertyTypes: propertyTypes, mandatory: mandatory}"
        )

        def work(tx: neo4j.ManagedTransaction) -> list[tuple[str, str, str]]:
            record = tx.run("CALL db.schema.visualization()").single()
            if record is None:
                return []
            nodes = [dict(n) for n in record["nodes"]]
            rels = [
                (dict(r.start_node or {}), r.type, dict(r.end_node or {}))
                for r in record["relationships"]
            ]
            return patterns_from_visualization(nodes, rels)

        try:
            with self._session() as session:
                patterns = session.execute_read(work)
        except (neo4j_errors.Neo4jError, neo4j_errors.DriverError) as exc:
            raise self._translate(exc) from None
        node_props = properties_from_procedure(r[0] for r in node_rows)
        counts = {
            name: int(self._read_native(f"MATCH (n:{quote_name(name)}) RETURN count(n)")[0][0])
            for name in node_props
        }
        return assemble_schema(
            counts,
            node_props,
            patterns,
            properties_from_procedure(r[0] for r in rel_rows),
            include=include,
            exclude=exclude,
        )

    def validate(self, cypher: str) -> Validation:
        def work(tx: neo4j.ManagedTransaction) -> tuple[str | None, set[str]]:
            summary = tx.run("EXPLAIN " + cypher).consume()
            return summary.query_type, plan_operators(summary.plan)

        try:
            with self._session() as session:
                query_type, operators = session.execute_read(work)
        except neo4j_errors.Neo4jError as exc:
            if isinstance(exc, neo4j_errors.ClientError) and not isinstance(
                exc, neo4j_errors.AuthError
            ):
                message = exc.message or str(exc)
                return Validation(ok=False, error=message, position=position_of(message))
            raise self._translate(exc) from None
        except neo4j_errors.DriverError as exc:
            raise self._translate(exc) from None
        if operators & _LOAD_OPERATORS:
            # Neo4j calls `LOAD CSV … RETURN row` a read (query type "r"); it still fetches URLs.
            return Validation(ok=False, error="LOAD CSV reads files or URLs, which is not allowed")
        return Validation(
            ok=True, read_only=query_type in _READ_ONLY_TYPES, plan=tuple(sorted(operators))
        )

    def run_read(
        self,
        cypher: str,
        params: Mapping[str, Any] | None = None,
        *,
        timeout_s: float = 10.0,
        max_rows: int = 100,
    ) -> QueryResult:
        """Stream at most `max_rows` rows (+1 to tell truncation) and cancel the rest.

        An explicit transaction rather than execute_read: a managed transaction must read
        every record before it commits, so 3M rows under a model's own LIMIT would all cross
        the wire. Rolling back discards what the server has not sent, which stops the query.
        """
        started = time.perf_counter()
        try:
            with self._session(fetch_size=min(max_rows + 1, _FETCH_SIZE_MAX)) as session:
                tx = session.begin_transaction(timeout=timeout_s)
                try:
                    columns, rows, truncated = stream_rows(tx, cypher, params, max_rows)
                finally:
                    tx.close()
        except (neo4j_errors.Neo4jError, neo4j_errors.DriverError) as exc:
            raise self._translate(exc) from None
        elapsed = (time.perf_counter() - started) * 1000
        return QueryResult(columns=columns, rows=rows, truncated=truncated, elapsed_ms=elapsed)

    def run_write(self, cypher: str, params: Mapping[str, Any] | None = None) -> None:
        self._catalog = None

        def work(tx: neo4j.ManagedTransaction) -> None:
            tx.run(cypher, dict(params or {})).consume()

        try:
            with self._session(write=True) as session:
                session.execute_write(work)
        except (neo4j_errors.Neo4jError, neo4j_errors.DriverError) as exc:
            raise self._translate(exc) from None

    def write_batches(
        self, cypher: str, batches: Iterable[list[dict[str, Any]]], *, param: str = "rows"
    ) -> int:
        return write_in_batches(self, cypher, batches, param)

    def lookup_values(self, text: str, limit: int = 5) -> list[ValueMatch]:
        catalog = self._catalog
        if catalog is None or time.monotonic() - catalog.built_at > _CATALOG_TTL_S:
            catalog = self._catalog = ValueCatalog.build(self._read_native, self.schema(sample=200))
        return catalog.match(text, limit, contains_search(self._read_native))

    def counts(self) -> tuple[int, int]:
        nodes = self._read_native("MATCH (n) RETURN count(n)")
        rels = self._read_native("MATCH ()-[r]->() RETURN count(r)")
        return int(nodes[0][0]), int(rels[0][0])

    def ping(self) -> str:
        try:
            info = self._driver.get_server_info()
        except (neo4j_errors.Neo4jError, neo4j_errors.DriverError) as exc:
            raise self._translate(exc) from None
        return f"{info.agent} (protocol {'.'.join(map(str, info.protocol_version))})"

    def write_access(self) -> tuple[bool | None, str]:
        """Whether the configured user may write, found without writing anything.

        First the user's roles (`SHOW CURRENT USER`, Enterprise/Aura): only `reader`/`PUBLIC`
        means read-only. Otherwise the server is asked to EXPLAIN a write in a write session:
        a refusal proves read-only; acceptance means it may write (Community edition has no
        roles, so every user there can write).
        """
        try:
            with self._driver.session(database="system") as session:
                record = session.run("SHOW CURRENT USER YIELD roles").single()
            roles = set(record["roles"] or []) if record is not None else set()
        except (neo4j_errors.Neo4jError, neo4j_errors.DriverError):
            roles = set()
        if roles and roles <= READ_ONLY_ROLES:
            return False, f"roles {', '.join(sorted(roles))}: read-only"
        try:
            with self._session(write=True) as session:
                session.run("EXPLAIN CREATE (:CypherbotWriteProbe)").consume()
        except neo4j_errors.Neo4jError as exc:
            if "Forbidden" in (exc.code or "") or "AccessMode" in (exc.code or ""):
                return False, f"writes are refused ({exc.code})"
            return None, f"could not tell ({exc.code}: {exc.message})"
        except neo4j_errors.DriverError as exc:
            return None, f"could not tell ({exc})"
        shown = f"roles {', '.join(sorted(roles))}" if roles else "no role information"
        return True, f"the server accepts write statements for this user ({shown})"

    def close(self) -> None:
        self._driver.close()

    def create_index(self, label: str, prop: str) -> None:
        name = f"cypherbot_{label}_{prop}".lower()
        self.run_write(
            f"CREATE INDEX {quote_name(name)} IF NOT EXISTS "
            f"FOR (n:{quote_name(label)}) ON (n.{quote_name(prop)})"
        )

    def create_fulltext_index(self, label: str, prop: str) -> None:
        name = f"cypherbot_ft_{label}_{prop}".lower()
        self.run_write(
            f"CREATE FULLTEXT INDEX {quote_name(name)} IF NOT EXISTS "
            f"FOR (n:{quote_name(label)}) ON EACH [n.{quote_name(prop)}]"
        )


def connect_neo4j(
    target: GraphTarget, *, user: str, password: str, database: str | None
) -> Neo4jGraph:
    try:
        driver = neo4j.GraphDatabase.driver(
            driver_uri(target), auth=(user, password), connection_timeout=10
        )
    except (neo4j_errors.ConfigurationError, ValueError) as exc:
        raise GraphURLError(f"GRAPH_URL {target.url!r} is not usable for Neo4j: {exc}") from None
    graph = Neo4jGraph(driver, target.url, database)
    try:
        driver.verify_connectivity()
    except neo4j_errors.AuthError:
        driver.close()
        raise GraphAuthError(
            f"Neo4j at {target.url} refused user {user!r}: check NEO4J_USER and NEO4J_PASSWORD."
        ) from None
    except (neo4j_errors.Neo4jError, neo4j_errors.DriverError, OSError) as exc:
        driver.close()
        raise GraphConnectionError(
            f"Cannot reach Neo4j at {target.url} ({exc}). Check that the server is running, "
            "the host and port in GRAPH_URL, and the scheme (neo4j+s:// for Aura)."
        ) from None
    logger.debug("Connected to Neo4j at %s", target.url)
    return graph


__all__ = [
    "Neo4jGraph",
    "assemble_schema",
    "connect_neo4j",
    "driver_uri",
    "native",
    "patterns_from_visualization",
    "plan_operators",
    "properties_from_procedure",
    "stream_rows",
    "to_json",
]
