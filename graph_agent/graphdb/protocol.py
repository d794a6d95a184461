"""The protocol every graph adapter implements, and the plain values it returns."""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Protocol, runtime_checkable


@dataclass(frozen=True)
class PropertyInfo:
    """One property of a label or relationship type."""

    name: str
    types: tuple[str, ...]
    """Value types seen (e.g. ("STRING",), ("INTEGER", "NULL"))."""
    sample_values: tuple[str, ...] = ()
    """A few distinct values, for low-cardinality string properties only."""
    numbers_as_text: bool = False
    """A string property whose sampled values are mostly numbers written as text ("172",
    "1,358"), the rest a few placeholders ("unknown", "n/a"): a CSV import with no types.
    Sorted, compared or summed, it must be read as a number first (sampled schemas only)."""
    unique: bool = False
    """A string every sampled node has and no two share (at least five sampled): a key such
    as a vehicle's registration, what a node without a name is told apart by (sampled
    schemas only)."""
    date_format: str = ""
    """`d/m/y` or `m/d/y` (with the values' separator) for a string property whose sampled
    values are dates written as text ("24/08/2017"): sorted or compared, it must be read as
    a date first (sampled schemas only); "" otherwise."""
    iso_dates: bool = False
    """A string property whose sampled values are ISO dates written as text ("1961-08-26",
    "1951-01-24 00:00:00": a CSV import with no types): sorted and compared as written, but
    a point in time for a superlative ("the oldest", "opened first") (sampled schemas only)."""
    text_of: str = ""
    """The typed property of the same node whose values this string property holds as text
    (an import that kept its column and added a typed copy: `end_date` "Apr 1, 2016" beside
    `end` 2016-04-01, `number_transactions` "68" beside `transactions` 68); the schema text
    leaves it out and reads of it go to the typed one (sampled schemas only); "" otherwise."""


@dataclass(frozen=True)
class LabelInfo:
    """A node label with its properties and node count."""

    name: str
    count: int
    properties: tuple[PropertyInfo, ...]
    within: tuple[str, ...] = ()
    """The other labels every sampled node of this label also carries: a kind of a broader
    label (`:Web` and `:Classroom` nodes are all `:Course` nodes), one node with both."""


@dataclass(frozen=True)
class RelPattern:
    """One relationship pattern `(:start)-[:type]->(:end)` with its properties."""

    start: str
    type: str
    end: str
    count: int = 0
    properties: tuple[PropertyInfo, ...] = ()


@dataclass(frozen=True)
class GraphSchema:
    """What the graph holds, as the LLM and the validators need it."""

    labels: tuple[LabelInfo, ...]
    relationships: tuple[RelPattern, ...]

    def label(self, name: str) -> LabelInfo | None:
        return next((label for label in self.labels if label.name == name), None)


@dataclass(frozen=True)
class Validation:
    """The engine's verdict on a statement, without running it."""

    ok: bool
    error: str | None = None
    """The engine's own error text when not ok."""
    position: int | None = None
    """0-based character offset of the error, when the engine reports one."""
    read_only: bool | None = None
    """True/False where the engine can tell (Neo4j query_type), else None."""
    plan: tuple[str, ...] = ()
    """The plan's steps, one per line as the engine prints them (FalkorDB), or its operator
    names (Neo4j): what guardrails.plan_problem reads in a restricted channel."""


@dataclass(frozen=True)
class QueryResult:
    """Rows of a read-only run, as plain JSON-able values."""

    columns: list[str]
    rows: list[list[Any]]
    truncated: bool = False
    """True when the query returned more than max_rows rows."""
    elapsed_ms: float = 0.0


@dataclass(frozen=True)
class ValueMatch:
    """A stored value that resembles a phrase of the question."""

    label: str
    property: str
    value: str
    score: float = 0.0


@runtime_checkable
class GraphReader(Protocol):
    """What the agent sees of a graph database: reads only. The agent's context, its probes
    and its tools are typed with this, so no agent code can even name a write."""

    url: str
    """Where the engine lives, safe to show (no password)."""
    dialect: str
    """Human name of the Cypher dialect, for prompts (e.g. "Neo4j 5 Cypher")."""

    def schema(
        self,
        *,
        include: Sequence[str] | None = None,
        exclude: Sequence[str] | None = None,
        sample: int = 1000,
    ) -> GraphSchema: ...

    def validate(self, cypher: str) -> Validation: ...

    def run_read(
        self,
        cypher: str,
        params: Mapping[str, Any] | None = None,
        *,
        timeout_s: float = 10.0,
        max_rows: int = 100,
    ) -> QueryResult: ...

    def lookup_values(self, text: str, limit: int = 5) -> list[ValueMatch]: ...

    def counts(self) -> tuple[int, int]:
        """(nodes, relationships) in the graph."""
        ...

    def ping(self) -> str:
        """Check the engine answers; return its version string."""
        ...


@runtime_checkable
class GraphDB(GraphReader, Protocol):
    """A graph database the bot opens: the reads, plus writes for loaders and tests."""

    def run_write(self, cypher: str, params: Mapping[str, Any] | None = None) -> None:
        """Loaders and tests only; the agent never calls this."""
        ...

    def write_batches(
        self, cypher: str, batches: Iterable[list[dict[str, Any]]], *, param: str = "rows"
    ) -> int:
        """Run `cypher` once per batch with `$rows`; return the number of rows written."""
        ...

    def close(self) -> None: ...


@runtime_checkable
class SupportsIndexes(Protocol):
    """Optional extra of an adapter: indexes the demo loader creates where the engine has them."""

    def create_index(self, label: str, prop: str) -> None:
        """A lookup index on `label.prop` (idempotent)."""
        ...

    def create_fulltext_index(self, label: str, prop: str) -> None:
        """A full-text index on `label.prop`, used by lookup_values (idempotent)."""
        ...


def write_in_batches(
    db: GraphDB, cypher: str, batches: Iterable[list[dict[str, Any]]], param: str = "rows"
) -> int:
    """`write_batches` for any adapter: one `run_write` per non-empty batch."""
    written = 0
    for batch in batches:
        if batch:
            db.run_write(cypher, {param: batch})
            written += len(batch)
    return written


def persist(db: GraphDB) -> None:
    """Put a freshly loaded graph on disk now, where the adapter can (the embedded engine
    saves and records its node count, so a crash cannot silently empty it); else nothing."""
    save = getattr(db, "persist", None)
    if callable(save):
        save()


def batched(rows: Iterable[dict[str, Any]], size: int) -> Iterator[list[dict[str, Any]]]:
    """`rows` in lists of at most `size`, for `write_batches` (the last one may be shorter)."""
    batch: list[dict[str, Any]] = []
    for row in rows:
        batch.append(row)
        if len(batch) >= size:
            yield batch
            batch = []
    if batch:
        yield batch
