"""What generation starts from: the shapes, the report, and a bounded sample of the graph's own
values per label and relationship."""

from __future__ import annotations

import logging
import time
from collections import Counter
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal, get_args

from graph_agent.graphdb.errors import GraphError
from graph_agent.graphdb.protocol import (
    GraphReader,
    GraphSchema,
    LabelInfo,
    PropertyInfo,
    RelPattern,
)
from graph_agent.graphdb.schema import NUMBER_TYPES, display_property
from graph_agent.schema_examples.wording import (
    DATE_TYPES,
    FREE_TEXT,
    ID_LIKE,
    ISO_DATE,
    cy_name,
    identifier_like,
    literal,
    plural_noun,
    singular,
    words,
)

logger = logging.getLogger(__name__)

Shape = Literal[
    "count",
    "list",
    "lookup",
    "one_hop",
    "two_hop",
    "both",
    "top_count",
    "top_value",
    "range",
    "negation",
    "follow_up",
]
SHAPES: tuple[Shape, ...] = get_args(Shape)
DEFAULT_CAP = 8
"""Examples kept per shape unless the caller says otherwise (SCHEMA_EXAMPLES_CAP)."""
SAMPLE_ROWS = 50
"""Rows read by each sampling query: bounded whatever the graph's size."""
TOP_N = 5
TRIES_PER_KEPT = 4
"""Candidates tried per example a shape may keep: empty results must not cost unbounded queries."""


@dataclass(frozen=True)
class SchemaExample:
    """One generated pair, with the shape of question it teaches."""

    question: str
    cypher: str
    shape: Shape


@dataclass
class GenerationReport:
    """What one generation run tried and kept."""

    kept: list[SchemaExample] = field(default_factory=list)
    tried: Counter[str] = field(default_factory=Counter)
    """Candidates run per shape (kept or not)."""
    seconds: float = 0.0
    queries: int = 0
    """Statements sent to the graph (sampling and candidates)."""

    def per_shape(self) -> dict[str, int]:
        """Kept examples per shape, every shape listed."""
        counts = Counter(example.shape for example in self.kept)
        return {shape: counts.get(shape, 0) for shape in SHAPES}


# --- what the generator knows about each label --------------------------------------------------


@dataclass
class SampledLabel:
    info: LabelInfo
    var: str
    display: str | None
    values: list[str] = field(default_factory=list)
    """Identifier-like values of the display property, sampled."""
    categories: list[PropertyInfo] = field(default_factory=list)
    numbers: list[PropertyInfo] = field(default_factory=list)
    dates: list[PropertyInfo] = field(default_factory=list)
    date_kind: dict[str, str] = field(default_factory=dict)
    """Property → "string" (ISO text) or the Cypher function of a native temporal type."""

    @property
    def name(self) -> str:
        return self.info.name

    @property
    def noun(self) -> str:
        return singular(self.info.name)

    @property
    def nouns(self) -> str:
        return plural_noun(self.info.name)

    def node(self, var: str | None = None, value: Any = None) -> str:
        inner = f"{var or self.var}:{cy_name(self.name)}"
        if value is not None and self.display is not None:
            inner += f" {{{cy_name(self.display)}: {literal(value)}}}"
        return f"({inner})"

    def subject(self, value: Any) -> str:
        return f"{self.noun} {value}"


def label_variables(labels: Sequence[LabelInfo]) -> dict[str, str]:
    taken: set[str] = set()
    out: dict[str, str] = {}
    for label in labels:
        base = (words(label.name) or ["n"])[0][0]
        base = base if base.isalpha() else "n"
        var, i = base, 2
        while var in taken:
            var, i = f"{base}{i}", i + 1
        taken.add(var)
        out[label.name] = var
    return out


class Sampler:
    """Reads the graph's own values (bounded) for the shape builders to phrase questions with."""

    def __init__(
        self, db: GraphReader, schema: GraphSchema, *, cap: int, timeout_s: float, deadline: float
    ) -> None:
        self.db = db
        self.schema = schema
        self.cap = cap
        self.timeout_s = timeout_s
        self.deadline = deadline
        self.report = GenerationReport()
        variables = label_variables(schema.labels)
        self.labels = {
            label.name: SampledLabel(label, variables[label.name], display_property(label))
            for label in schema.labels
        }
        self.rels = sorted(
            (
                r
                for r in schema.relationships
                if r.start in self.labels and r.end in self.labels and r.count != 0
            ),
            key=lambda r: (-r.count, r.start, r.type, r.end),
        )

    # --- reading ---------------------------------------------------------------------------

    def read(self, cypher: str, max_rows: int = SAMPLE_ROWS) -> list[list[Any]]:
        if time.monotonic() > self.deadline:
            return []
        self.report.queries += 1
        try:
            return self.db.run_read(cypher, timeout_s=self.timeout_s, max_rows=max_rows).rows
        except GraphError as exc:
            logger.debug("schema example query failed (%s): %s", exc, cypher)
            return []

    def sample(self) -> None:
        for label in self.labels.values():
            self._sample_label(label)

    def _sample_label(self, label: SampledLabel) -> None:
        v = label.var
        if label.display is not None:
            rows = self.read(
                f"MATCH {label.node()} WHERE {v}.{cy_name(label.display)} IS NOT NULL "
                f"WITH {v}.{cy_name(label.display)} AS value LIMIT {SAMPLE_ROWS} RETURN value"
            )
            values = [row[0] for row in rows if identifier_like(row[0])]
            label.values = list(dict.fromkeys(values))
            if not label.values:
                label.display = None  # a name nobody types (free text): no lookups by it
        for prop in label.info.properties:
            if prop.name == label.display or prop.name.startswith("_"):
                continue
            if ID_LIKE.search(prop.name) or FREE_TEXT.search(prop.name):
                continue
            kinds = set(prop.types) - {"NULL"}
            if kinds and kinds <= NUMBER_TYPES:
                label.numbers.append(prop)
            elif kinds & set(DATE_TYPES):
                label.dates.append(prop)
                label.date_kind[prop.name] = next(k.lower() for k in DATE_TYPES if k in kinds)
            elif kinds == {"STRING"} and prop.sample_values:
                if all(identifier_like(s) for s in prop.sample_values):
                    label.categories.append(prop)
            elif kinds == {"STRING"}:
                rows = self.read(
                    f"MATCH {label.node()} WHERE {v}.{cy_name(prop.name)} IS NOT NULL "
                    f"WITH {v}.{cy_name(prop.name)} AS value LIMIT 5 RETURN value"
                )
                if rows and all(isinstance(r[0], str) and ISO_DATE.match(r[0]) for r in rows):
                    label.dates.append(prop)
                    label.date_kind[prop.name] = "string"

    def values(self, label: SampledLabel, prop: PropertyInfo) -> list[Any]:
        v = label.var
        rows = self.read(
            f"MATCH {label.node()} WHERE {v}.{cy_name(prop.name)} IS NOT NULL "
            f"WITH {v}.{cy_name(prop.name)} AS value LIMIT 200 RETURN value",
            max_rows=200,
        )
        return [row[0] for row in rows if row[0] is not None]

    def date_literal(self, label: SampledLabel, prop: PropertyInfo, value: Any) -> str:
        kind = label.date_kind.get(prop.name, "string")
        text = str(value)
        if kind == "string":
            return literal(text)
        if kind == "date":
            return f"date({literal(text[:10])})"
        return f"{kind}({literal(text)})"

    def pairs(self, rel: RelPattern, limit: int = SAMPLE_ROWS) -> list[tuple[Any, Any]]:
        """Sampled (start display value, end display value) pairs that this pattern links."""
        a, b = self.labels[rel.start], self.labels[rel.end]
        bv = b.var if b.var != a.var else b.var + "_"
        a_value = f"{a.var}.{cy_name(a.display)}" if a.display else "null"
        b_value = f"{bv}.{cy_name(b.display)}" if b.display else "null"
        where = [f"{x} IS NOT NULL" for x in (a_value, b_value) if x != "null"]
        rows = self.read(
            f"MATCH {a.node()}-[:{cy_name(rel.type)}]->{b.node(bv)} "
            + (f"WHERE {' AND '.join(where)} " if where else "")
            + f"WITH {a_value} AS x, {b_value} AS y LIMIT {limit} RETURN x, y",
            max_rows=limit,
        )
        return [
            (x, y)
            for x, y in rows
            if (x is None or identifier_like(x)) and (y is None or identifier_like(y))
        ]

    # --- running ---------------------------------------------------------------------------

    def run(self, builders: dict[Shape, Callable[[], Iterator[SchemaExample]]]) -> None:
        seen: set[str] = set()
        for shape in SHAPES:
            kept = 0
            for candidate in builders[shape]():
                if kept >= self.cap or self.report.tried[shape] >= self.cap * TRIES_PER_KEPT:
                    break
                if time.monotonic() > self.deadline:
                    logger.warning("schema examples: time budget spent; stopping early")
                    return
                key = " ".join(candidate.question.lower().split())
                if key in seen:
                    continue
                seen.add(key)
                self.report.tried[shape] += 1
                rows = self.read(candidate.cypher)
                if any(any(cell not in (None, 0, "", []) for cell in row) for row in rows):
                    self.report.kept.append(candidate)
                    kept += 1

    # --- shapes ----------------------------------------------------------------------------
