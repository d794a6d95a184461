"""Reading a vendored CSV into typed rows, and writing nodes and relationships through GraphDB."""

from __future__ import annotations

import csv
import io
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from enum import Enum
from importlib import resources
from typing import Any

from graph_agent.graphdb.protocol import GraphDB, SupportsIndexes, batched
from graph_agent.graphdb.schema import quote_name

BATCH_ROWS = 2000
Progress = Callable[[int, int], None]


class Kind(Enum):
    """How a CSV column is stored: the engines order and sum these, not strings."""

    INT = "int"
    FLOAT = "float"
    BOOL = "bool"
    DATE = "date"
    """An ISO `YYYY-MM-DD` string in the file, a native date in the graph (Cypher `date()`)."""


def _convert(kind: Kind, text: str) -> Any:
    if kind is Kind.INT:
        return int(text)
    if kind is Kind.FLOAT:
        return float(text)
    if kind is Kind.BOOL:
        return text.strip() not in ("0", "false", "False")
    return text


def read_csv(package: str, name: str, kinds: Mapping[str, Kind]) -> list[dict[str, Any]]:
    """Rows of a CSV shipped in `package`; an empty field is a missing value (no key at all)."""
    text = resources.files(package).joinpath(name).read_text(encoding="utf-8")
    rows: list[dict[str, Any]] = []
    for raw in csv.DictReader(io.StringIO(text, newline="")):
        row: dict[str, Any] = {}
        for column, value in raw.items():
            if value is None or value == "":
                continue
            kind = kinds.get(column)
            row[column] = value if kind is None else _convert(kind, value)
        rows.append(row)
    return rows


def _batches(
    rows: Iterable[dict[str, Any]], size: int = BATCH_ROWS
) -> Iterator[list[dict[str, Any]]]:
    return batched(rows, size)


@dataclass(frozen=True)
class Rel:
    """One relationship to write: start and end node keys, and its properties."""

    start: Any
    end: Any
    properties: dict[str, Any] = field(default_factory=dict)


class GraphWriter:
    """Writes labelled nodes (matched later by one key property) and relationships between them."""

    def __init__(self, db: GraphDB, total: int, progress: Progress | None = None) -> None:
        self.db = db
        self.nodes = 0
        self.relationships = 0
        self._total = total
        self._done = 0
        self._progress = progress
        self._indexes = db if isinstance(db, SupportsIndexes) else None

    def _advance(self, n: int) -> None:
        self._done = min(self._total, self._done + n)
        if self._progress is not None:
            self._progress(self._done, self._total)

    def index(self, label: str, prop: str) -> None:
        """A lookup index where the engine has them; relationship loading matches on it."""
        if self._indexes is not None:
            self._indexes.create_index(label, prop)

    def fulltext(self, label: str, prop: str) -> None:
        """A full-text index for value lookup, where the engine has them."""
        if self._indexes is not None:
            self._indexes.create_fulltext_index(label, prop)

    def nodes_of(
        self, label: str, rows: Iterable[dict[str, Any]], dates: Iterable[str] = ()
    ) -> int:
        """CREATE one `label` node per row with the row as its properties; `dates` become dates."""
        converts = "".join(f", n.{quote_name(d)} = date(r.{quote_name(d)})" for d in dates)
        cypher = f"UNWIND $rows AS r CREATE (n:{quote_name(label)}) SET n = r{converts}"
        written = 0
        for batch in _batches(rows):
            written += self.db.write_batches(cypher, [batch])
            self._advance(len(batch))
        self.nodes += written
        return written

    def rels_of(
        self,
        rel_type: str,
        start: tuple[str, str],
        end: tuple[str, str],
        rels: Iterable[Rel],
    ) -> int:
        """CREATE `(start)-[:rel_type]->(end)` for each Rel; start/end are (label, key property)."""
        (start_label, start_key), (end_label, end_key) = start, end
        cypher = (
            f"UNWIND $rows AS r "
            f"MATCH (a:{quote_name(start_label)} {{{quote_name(start_key)}: r.s}}) "
            f"MATCH (b:{quote_name(end_label)} {{{quote_name(end_key)}: r.t}}) "
            f"CREATE (a)-[x:{quote_name(rel_type)}]->(b) SET x = r.p"
        )
        rows = ({"s": rel.start, "t": rel.end, "p": rel.properties} for rel in rels)
        written = 0
        for batch in _batches(rows):
            written += self.db.write_batches(cypher, [batch])
            self._advance(len(batch))
        self.relationships += written
        return written

    def finish(self) -> None:
        """Report the whole load as done (the estimate may have been off)."""
        if self._progress is not None:
            self._progress(self._total, self._total)
