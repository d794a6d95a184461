"""Day-one few-shot examples: (question, Cypher) pairs built from the graph's own schema, no LLM."""

from __future__ import annotations

import datetime as dt
import itertools
import logging
import re
import statistics
import time
from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from graph_agent.graphdb.errors import GraphError
from graph_agent.graphdb.protocol import (
    GraphReader,
    GraphSchema,
    LabelInfo,
    PropertyInfo,
    RelPattern,
)
from graph_agent.graphdb.schema import display_property, quote_name
from graph_agent.pruning import name_words, question_words
from graph_agent.words import article, plural
from graph_agent.words import singular as word_singular
from guardrails.cypher_tokens import referenced_names
from guardrails.words import split_name
from memory.types import Example

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
SHAPES: tuple[Shape, ...] = (
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
)
DEFAULT_CAP = 8
"""Examples kept per shape unless the caller says otherwise (SCHEMA_EXAMPLES_CAP)."""
SAMPLE_ROWS = 50
"""Rows read by each sampling query: bounded whatever the graph's size."""
TOP_N = 5
_TRIES_PER_KEPT = 4
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


# --- words ------------------------------------------------------------------------------------

_PREPOSITIONS = frozenset(
    [
        "on",
        "in",
        "at",
        "for",
        "from",
        "to",
        "with",
        "under",
        "near",
        "of",
        "by",
        "into",
        "onto",
        "over",
        "inside",
        "within",
        "about",
    ]
)
# Irregular past tenses with their participles ("Which books has author X written?").
_IRREGULAR_PAST = {
    "wrote": "written",
    "made": "made",
    "led": "led",
    "built": "built",
    "took": "taken",
    "gave": "given",
    "won": "won",
    "bought": "bought",
    "sold": "sold",
    "held": "held",
    "ran": "run",
    "taught": "taught",
    "drove": "driven",
    "knew": "known",
    "met": "met",
    "sent": "sent",
    "saw": "seen",
    "began": "begun",
    "chose": "chosen",
    "paid": "paid",
}
# Participles that describe a state ("located in"), read with "is", not "has".
_STATIVE = frozenset(
    [
        "located",
        "based",
        "born",
        "situated",
        "listed",
        "included",
        "contained",
        "involved",
        "employed",
        "married",
        "related",
        "connected",
        "linked",
        "assigned",
        "tagged",
        "named",
        "scheduled",
        "deployed",
        "hosted",
        "stored",
        "registered",
        "enrolled",
        "classified",
        "categorized",
        "categorised",
    ]
)
_MASS_NOUNS = frozenset({"part", "staff", "head", "home"})


def words(name: str) -> list[str]:
    """Lower-case words of an identifier: `ACTED_IN` → acted, in; `OnCallRotation` → on, call…"""
    found: list[str] = []
    for part in re.split(r"[_\s\-]+", name):
        found.extend(w.lower() for w in (split_name(part) if part else []))
    return found


def singular(label: str) -> str:
    """A label as a noun in a sentence: `OnCallRotation` → "on call rotation", `OS` → "OS"."""
    return word_singular(label) if words(label) else label


def plural_noun(label: str) -> str:
    """A label as a plural noun: `Person` → "people", `Repository` → "repositories"."""
    return plural(label) if words(label) else label


def _base_form(verb: str) -> str:
    """Third-person singular → base form: owns → own, teaches → teach, applies → apply."""
    if verb.endswith("ies") and len(verb) > 4:
        return verb[:-3] + "y"
    if verb.endswith(("sses", "shes", "ches", "xes", "zzes", "oes")):
        return verb[:-2]
    return verb[:-1]


@dataclass(frozen=True)
class Phrase:
    """A relationship type as an English verb phrase, in the forms the questions need."""

    singular: str
    """After a singular subject: "acted in", "owns", "is a member of"."""
    plural: str
    """After a plural subject: "acted in", "own", "are members of"."""
    aux: Literal["does", "has", "is"]
    """The auxiliary of a question about the object: "Which teams *does* X own?"."""
    rest: str
    """What follows the subject in such a question, singular subject: "own", "a member of"."""
    rest_many: str
    """The same after a plural subject: "own", "members of"."""

    def ask(self, subject: str, *, many: bool = False) -> str:
        """ "does team X own", "has person X acted in", "are the films that … members of"."""
        aux = {"does": "do", "has": "have", "is": "are"}[self.aux] if many else self.aux
        return f"{aux} {subject} {self.rest_many if many else self.rest}"


def _copula(phrase_words: list[str]) -> Phrase:
    first, tail = phrase_words[0], phrase_words[1:]
    text = " ".join(phrase_words)
    if first in _PREPOSITIONS or first in _MASS_NOUNS or first in _STATIVE:
        return Phrase(f"is {text}", f"are {text}", "is", text, text)
    if not tail or tail[-1] not in _PREPOSITIONS:
        tail = [*tail, "of"]
    one = " ".join([first, *tail])
    many = " ".join([plural(first), *tail])
    a = article(first)
    return Phrase(f"is {a} {one}", f"are {many}", "is", f"{a} {one}", many)


def relationship_phrase(rel_type: str, end_label: str | None = None) -> Phrase:
    """`ACTED_IN` → "acted in", `OWNS` → "owns"/"own", `MEMBER_OF` → "is a member of",
    `PUBLISHED_BY` → "is published by", `IN_GENRE` (to Genre) → "is in"."""
    ws = words(rel_type) or [rel_type.lower()]
    end = words(end_label) if end_label else []
    if end and len(ws) > len(end) and ws[-len(end) :] == end:
        ws = ws[: -len(end)]  # HAS_GENRE → has; IN_GENRE → in
    if ws[0] in ("is", "was", "are", "be") and len(ws) > 1:
        ws = ws[1:]
    first, tail = ws[0], ws[1:]
    text = " ".join(ws)
    if first in ("has", "have", "had"):
        return Phrase("has", "have", "does", "have", "have")
    if first in _STATIVE or ((first.endswith("ed") or first in _IRREGULAR_PAST) and ws[-1] == "by"):
        return Phrase(f"is {text}", f"are {text}", "is", text, text)
    if first.endswith("ed") or first in _IRREGULAR_PAST:
        participle = " ".join([_IRREGULAR_PAST.get(first, first), *tail])
        return Phrase(text, text, "has", participle, participle)
    if (
        len(first) > 2
        and first.endswith("s")
        and not first.endswith(("ss", "us", "is"))
        and first not in _PREPOSITIONS
    ):
        base = " ".join([_base_form(first), *tail])
        return Phrase(text, base, "does", base, base)
    return _copula(ws)


# --- Cypher text ------------------------------------------------------------------------------

_IDENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_ID_LIKE = re.compile(r"(^|_)(id|uuid|guid)$|[a-z]Id$|^id", re.IGNORECASE)
_FREE_TEXT = re.compile(
    r"desc|summary|text|body|comment|note|content|bio|abstract|message|url|uri|email|"
    r"html|markdown|plot|overview|tagline|embedding|vector|password|hash|path",
    re.IGNORECASE,
)
_ISO_DATE = re.compile(r"^\d{4}-\d{2}-\d{2}")
_NUMERIC = ("INTEGER", "FLOAT")
_DATE_TYPES = ("DATE", "DATETIME", "LOCALDATETIME")


def _n(name: str) -> str:
    """A label, type or property name as Cypher needs it (backticks only when they are needed)."""
    return name if _IDENT.fullmatch(name) else quote_name(name)


def _alias(name: str, taken: Iterable[str] = ()) -> str:
    alias = re.sub(r"\W+", "_", name).strip("_") or "value"
    if alias[0].isdigit():
        alias = "v_" + alias
    while alias in set(taken):
        alias += "_2"
    return alias


def literal(value: Any) -> str:
    """A value as a Cypher literal (strings single-quoted and escaped)."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int | float):
        return repr(value)
    text = str(value).replace("\\", "\\\\").replace("'", "\\'")
    return f"'{text}'"


def _date_phrase(prop: str) -> str:
    """`created`/`resolved_at` → "were created"; `start_date` → "have a start date"."""
    ws = [w for w in words(prop) if w not in ("at", "on", "date", "time")] or words(prop)
    if len(ws) == 1 and ws[0].endswith("ed"):
        return f"were {ws[0]}"
    return f"have a {' '.join(words(prop))}"


def _identifier_like(value: Any) -> bool:
    """A value someone would type to name a thing: short, one line, a few words."""
    if not isinstance(value, str):
        return False
    text = value.strip()
    return 0 < len(text) <= 60 and "\n" not in text and len(text.split()) <= 8


# --- what the generator knows about each label --------------------------------------------------


@dataclass
class _Label:
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
        inner = f"{var or self.var}:{_n(self.name)}"
        if value is not None and self.display is not None:
            inner += f" {{{_n(self.display)}: {literal(value)}}}"
        return f"({inner})"

    def subject(self, value: Any) -> str:
        return f"{self.noun} {value}"


def _variables(labels: Sequence[LabelInfo]) -> dict[str, str]:
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


class _Generator:
    def __init__(
        self, db: GraphReader, schema: GraphSchema, *, cap: int, timeout_s: float, deadline: float
    ) -> None:
        self.db = db
        self.schema = schema
        self.cap = cap
        self.timeout_s = timeout_s
        self.deadline = deadline
        self.report = GenerationReport()
        variables = _variables(schema.labels)
        self.labels = {
            label.name: _Label(label, variables[label.name], display_property(label))
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

    def _sample_label(self, label: _Label) -> None:
        v = label.var
        if label.display is not None:
            rows = self.read(
                f"MATCH {label.node()} WHERE {v}.{_n(label.display)} IS NOT NULL "
                f"WITH {v}.{_n(label.display)} AS value LIMIT {SAMPLE_ROWS} RETURN value"
            )
            values = [row[0] for row in rows if _identifier_like(row[0])]
            label.values = list(dict.fromkeys(values))
            if not label.values:
                label.display = None  # a name nobody types (free text): no lookups by it
        for prop in label.info.properties:
            if prop.name == label.display or prop.name.startswith("_"):
                continue
            if _ID_LIKE.search(prop.name) or _FREE_TEXT.search(prop.name):
                continue
            kinds = set(prop.types) - {"NULL"}
            if kinds and kinds <= set(_NUMERIC):
                label.numbers.append(prop)
            elif kinds & set(_DATE_TYPES):
                label.dates.append(prop)
                label.date_kind[prop.name] = next(k.lower() for k in _DATE_TYPES if k in kinds)
            elif kinds == {"STRING"} and prop.sample_values:
                if all(_identifier_like(s) for s in prop.sample_values):
                    label.categories.append(prop)
            elif kinds == {"STRING"}:
                rows = self.read(
                    f"MATCH {label.node()} WHERE {v}.{_n(prop.name)} IS NOT NULL "
                    f"WITH {v}.{_n(prop.name)} AS value LIMIT 5 RETURN value"
                )
                if rows and all(isinstance(r[0], str) and _ISO_DATE.match(r[0]) for r in rows):
                    label.dates.append(prop)
                    label.date_kind[prop.name] = "string"

    def values(self, label: _Label, prop: PropertyInfo) -> list[Any]:
        v = label.var
        rows = self.read(
            f"MATCH {label.node()} WHERE {v}.{_n(prop.name)} IS NOT NULL "
            f"WITH {v}.{_n(prop.name)} AS value LIMIT 200 RETURN value",
            max_rows=200,
        )
        return [row[0] for row in rows if row[0] is not None]

    def date_literal(self, label: _Label, prop: PropertyInfo, value: Any) -> str:
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
        a_value = f"{a.var}.{_n(a.display)}" if a.display else "null"
        b_value = f"{bv}.{_n(b.display)}" if b.display else "null"
        where = [f"{x} IS NOT NULL" for x in (a_value, b_value) if x != "null"]
        rows = self.read(
            f"MATCH {a.node()}-[:{_n(rel.type)}]->{b.node(bv)} "
            + (f"WHERE {' AND '.join(where)} " if where else "")
            + f"WITH {a_value} AS x, {b_value} AS y LIMIT {limit} RETURN x, y",
            max_rows=limit,
        )
        return [
            (x, y)
            for x, y in rows
            if (x is None or _identifier_like(x)) and (y is None or _identifier_like(y))
        ]

    # --- running ---------------------------------------------------------------------------

    def run(self, builders: dict[Shape, Callable[[], Iterator[SchemaExample]]]) -> None:
        seen: set[str] = set()
        for shape in SHAPES:
            kept = 0
            for candidate in builders[shape]():
                if kept >= self.cap or self.report.tried[shape] >= self.cap * _TRIES_PER_KEPT:
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

    def count(self) -> Iterator[SchemaExample]:
        for label in sorted(self.labels.values(), key=lambda item: -item.info.count):
            v = label.var
            yield SchemaExample(
                f"How many {label.nouns} are there?",
                f"MATCH {label.node()} RETURN count({v}) AS count",
                "count",
            )
            for prop in label.categories[:1]:
                alias = _alias(prop.name, ["count"])
                yield SchemaExample(
                    f"How many {label.nouns} are there per {' '.join(words(prop.name))}?",
                    f"MATCH {label.node()} RETURN {v}.{_n(prop.name)} AS {alias}, "
                    f"count({v}) AS count ORDER BY count DESC, {alias}",
                    "count",
                )

    def list_(self) -> Iterator[SchemaExample]:
        for label in sorted(self.labels.values(), key=lambda item: item.info.count):
            if label.display is None:
                continue
            v, alias = label.var, _alias(label.display)
            yield SchemaExample(
                f"List the {label.nouns}.",
                f"MATCH {label.node()} RETURN {v}.{_n(label.display)} AS {alias} ORDER BY {alias}",
                "list",
            )

    def lookup(self) -> Iterator[SchemaExample]:
        for label in sorted(self.labels.values(), key=lambda item: -item.info.count):
            if label.display is None or not label.values:
                continue
            value, v = label.values[0], label.var
            props = [*label.categories, *label.numbers, *label.dates]
            if not props:
                continue
            first = props[0]
            yield SchemaExample(
                f"What is the {' '.join(words(first.name))} of {label.subject(value)}?",
                f"MATCH {label.node(value=value)} "
                f"RETURN {v}.{_n(first.name)} AS {_alias(first.name)}",
                "lookup",
            )
            shown = [label.display, *[p.name for p in props[:5]]]
            columns = ", ".join(f"{v}.{_n(p)} AS {_alias(p)}" for p in shown)
            yield SchemaExample(
                f"Show the details of {label.subject(label.values[-1])}.",
                f"MATCH {label.node(value=label.values[-1])} RETURN {columns}",
                "lookup",
            )

    def _rel_columns(self, rel: RelPattern, var: str, taken: list[str]) -> list[str]:
        columns = []
        for prop in rel.properties[:2]:
            if _FREE_TEXT.search(prop.name) or _ID_LIKE.search(prop.name):
                continue
            alias = _alias(prop.name, taken)
            taken.append(alias)
            columns.append(f"{var}.{_n(prop.name)} AS {alias}")
        return columns

    def one_hop(self) -> Iterator[SchemaExample]:
        for rel in self.rels:
            a, b = self.labels[rel.start], self.labels[rel.end]
            phrase = relationship_phrase(rel.type, rel.end)
            pairs = self.pairs(rel, 5)
            bv = b.var if b.var != a.var else b.var + "2"
            if a.display and b.display and pairs:
                x, _y = pairs[0]
                alias = _alias(b.display)
                columns = [f"{bv}.{_n(b.display)} AS {alias}"]
                columns += self._rel_columns(rel, "r", [alias])
                rvar = "r" if len(columns) > 1 else ""
                yield SchemaExample(
                    f"Which {b.nouns} {phrase.ask(a.subject(x))}?",
                    f"MATCH {a.node(value=x)}-[{rvar}:{_n(rel.type)}]->{b.node(bv)} "
                    f"RETURN {', '.join(columns)} ORDER BY {alias}",
                    "one_hop",
                )
            if a.display and b.display and pairs:
                _x, y = pairs[-1]
                alias = _alias(a.display)
                yield SchemaExample(
                    f"Which {a.nouns} {phrase.plural} {b.subject(y)}?",
                    f"MATCH {a.node()}-[:{_n(rel.type)}]->{b.node(bv, value=y)} "
                    f"RETURN {a.var}.{_n(a.display)} AS {alias} ORDER BY {alias}",
                    "one_hop",
                )

    def two_hop(self) -> Iterator[SchemaExample]:
        # Co-members first ("other people in the same team as X"), then chains through a
        # node two patterns share ("teams that own the services X affected").
        for rel in self.rels:
            a, m = self.labels[rel.start], self.labels[rel.end]
            if rel.start == rel.end or not a.display:
                continue
            pairs = self.pairs(rel, 5)
            if not pairs:
                continue
            x = pairs[0][0]
            phrase = relationship_phrase(rel.type, rel.end)
            alias = _alias(a.display)
            yield SchemaExample(
                f"Which other {a.nouns} {phrase.plural} the same {m.noun} as {a.subject(x)}?",
                f"MATCH {a.node(value=x)}-[:{_n(rel.type)}]->{m.node()}"
                f"<-[:{_n(rel.type)}]-{a.node('other')} WHERE other <> {a.var} "
                f"RETURN DISTINCT other.{_n(a.display)} AS {alias} ORDER BY {alias}",
                "two_hop",
            )
        for first in self.rels:
            a, m = self.labels[first.start], self.labels[first.end]
            if not a.display or first.start == first.end:
                continue
            pairs = self.pairs(first, 5)
            if not pairs:
                continue
            x = pairs[0][0]
            p1 = relationship_phrase(first.type, first.end)
            for second in self.rels:
                if second == first or first.end not in (second.start, second.end):
                    continue
                if second.start == second.end:
                    continue
                into_m = second.end == first.end
                other = self.labels[second.start if into_m else second.end]
                if not other.display or other.name == a.name:
                    continue
                p2 = relationship_phrase(second.type, second.end)
                ov = other.var if other.var not in (a.var, m.var) else other.var + "2"
                alias = _alias(other.display)
                hop = f"<-[:{_n(second.type)}]-" if into_m else f"-[:{_n(second.type)}]->"
                if into_m:
                    question = (
                        f"Which {other.nouns} {p2.plural} the {m.nouns} that "
                        f"{a.subject(x)} {p1.singular}?"
                    )
                else:
                    subject = f"the {m.nouns} that {a.subject(x)} {p1.singular}"
                    question = f"Which {other.nouns} {p2.ask(subject, many=True)}?"
                yield SchemaExample(
                    question,
                    f"MATCH {a.node(value=x)}-[:{_n(first.type)}]->{m.node()}{hop}"
                    f"{other.node(ov)} RETURN DISTINCT {ov}.{_n(other.display)} AS {alias} "
                    f"ORDER BY {alias}",
                    "two_hop",
                )

    def both(self) -> Iterator[SchemaExample]:
        for rel in self.rels:
            a, b = self.labels[rel.start], self.labels[rel.end]
            if not a.display or not b.display:
                continue
            bv = b.var if b.var != a.var else b.var + "2"
            d = _n(b.display)
            rows = self.read(
                f"MATCH {b.node('x')}<-[:{_n(rel.type)}]-{a.node()}-[:{_n(rel.type)}]->"
                f"{b.node('y')} WHERE x.{d} < y.{d} "
                f"WITH x.{d} AS first, y.{d} AS second LIMIT 5 RETURN first, second",
                max_rows=5,
            )
            rows = [r for r in rows if _identifier_like(r[0]) and _identifier_like(r[1])]
            if not rows:
                continue
            first, second = rows[0]
            phrase = relationship_phrase(rel.type, rel.end)
            alias = _alias(a.display)
            yield SchemaExample(
                f"Which {a.nouns} {phrase.plural} both {b.subject(first)} and {b.subject(second)}?",
                f"MATCH {a.node()}-[:{_n(rel.type)}]->{b.node(bv, value=first)}, "
                f"({a.var})-[:{_n(rel.type)}]->{b.node(bv + 'b', value=second)} "
                f"RETURN DISTINCT {a.var}.{_n(a.display)} AS {alias} ORDER BY {alias}",
                "both",
            )
        # "who also": the same node linked by two different patterns.
        by_start: dict[str, list[RelPattern]] = {}
        for rel in self.rels:
            by_start.setdefault(rel.start, []).append(rel)
        for start, rels in by_start.items():
            a = self.labels[start]
            if not a.display:
                continue
            for r1, r2 in itertools.pairwise(rels):
                b, c = self.labels[r1.end], self.labels[r2.end]
                if not b.display or not c.display or b.name == a.name or c.name == a.name:
                    continue
                bv, cv = b.var, c.var if c.var != b.var else c.var + "2"
                rows = self.read(
                    f"MATCH {b.node(bv)}<-[:{_n(r1.type)}]-{a.node()}-[:{_n(r2.type)}]->"
                    f"{c.node(cv)} WHERE {cv} <> {bv} "
                    f"WITH {bv}.{_n(b.display)} AS first, {cv}.{_n(c.display)} AS second "
                    "LIMIT 5 RETURN first, second",
                    max_rows=5,
                )
                rows = [r for r in rows if _identifier_like(r[0]) and _identifier_like(r[1])]
                if not rows:
                    continue
                first, second = rows[0]
                p1 = relationship_phrase(r1.type, r1.end)
                p2 = relationship_phrase(r2.type, r2.end)
                alias = _alias(a.display)
                yield SchemaExample(
                    f"Which {a.nouns} {p1.plural} {b.subject(first)} and also "
                    f"{p2.plural} {c.subject(second)}?",
                    f"MATCH {a.node()}-[:{_n(r1.type)}]->{b.node(bv, value=first)}, "
                    f"({a.var})-[:{_n(r2.type)}]->{c.node(cv, value=second)} "
                    f"RETURN DISTINCT {a.var}.{_n(a.display)} AS {alias} ORDER BY {alias}",
                    "both",
                )

    def top_count(self) -> Iterator[SchemaExample]:
        for rel in self.rels:
            a, b = self.labels[rel.start], self.labels[rel.end]
            phrase = relationship_phrase(rel.type, rel.end)
            bv = b.var if b.var != a.var else b.var + "2"
            if a.display:
                alias = _alias(a.display, ["count"])
                yield SchemaExample(
                    f"Which {a.noun} {phrase.singular} the most {b.nouns}?",
                    f"MATCH {a.node()}-[:{_n(rel.type)}]->{b.node(bv)} "
                    f"RETURN {a.var}.{_n(a.display)} AS {alias}, count({bv}) AS count "
                    f"ORDER BY count DESC, {alias} LIMIT {TOP_N}",
                    "top_count",
                )
            if b.display and rel.start != rel.end:
                alias = _alias(b.display, ["count"])
                yield SchemaExample(
                    f"Which {b.noun} has the most {a.nouns} that {phrase.plural} it?",
                    f"MATCH {a.node()}-[:{_n(rel.type)}]->{b.node(bv)} "
                    f"RETURN {bv}.{_n(b.display)} AS {alias}, count({a.var}) AS count "
                    f"ORDER BY count DESC, {alias} LIMIT {TOP_N}",
                    "top_count",
                )

    def top_value(self) -> Iterator[SchemaExample]:
        for label in sorted(self.labels.values(), key=lambda item: -item.info.count):
            if not label.display:
                continue
            for prop, order, word in (
                *((p, "DESC", "highest") for p in label.numbers[:2]),
                *((p, "ASC", "lowest") for p in label.numbers[:1]),
            ):
                v, name = label.var, _alias(label.display)
                measure = _alias(prop.name, [name])
                yield SchemaExample(
                    f"Which {label.nouns} have the {word} {' '.join(words(prop.name))}?",
                    f"MATCH {label.node()} WHERE {v}.{_n(prop.name)} IS NOT NULL "
                    f"RETURN {v}.{_n(label.display)} AS {name}, {v}.{_n(prop.name)} AS {measure} "
                    f"ORDER BY {measure} {order}, {name} LIMIT {TOP_N}",
                    "top_value",
                )

    def range_(self) -> Iterator[SchemaExample]:
        for label in sorted(self.labels.values(), key=lambda item: -item.info.count):
            if not label.display:
                continue
            v, name = label.var, _alias(label.display)
            for prop in label.numbers[:1]:
                values = [x for x in self.values(label, prop) if isinstance(x, int | float)]
                if not values:
                    continue
                middle = statistics.median_low(sorted(values))
                measure = _alias(prop.name, [name])
                yield SchemaExample(
                    f"Which {label.nouns} have a {' '.join(words(prop.name))} above {middle}?",
                    f"MATCH {label.node()} WHERE {v}.{_n(prop.name)} > {literal(middle)} "
                    f"RETURN {v}.{_n(label.display)} AS {name}, {v}.{_n(prop.name)} AS {measure} "
                    f"ORDER BY {measure} DESC, {name}",
                    "range",
                )
            for prop in label.dates[:1]:
                days = sorted(str(x)[:10] for x in self.values(label, prop))
                if len(days) < 2:
                    continue
                low, high = days[len(days) // 4], days[(3 * len(days)) // 4]
                try:
                    after = (dt.date.fromisoformat(high) + dt.timedelta(days=1)).isoformat()
                except ValueError:
                    continue
                measure = _alias(prop.name, [name])
                p = f"{v}.{_n(prop.name)}"
                yield SchemaExample(
                    f"Which {label.nouns} {_date_phrase(prop.name)} between {low} and {high}?",
                    f"MATCH {label.node()} WHERE {p} >= {self.date_literal(label, prop, low)} "
                    f"AND {p} < {self.date_literal(label, prop, after)} "
                    f"RETURN {v}.{_n(label.display)} AS {name}, {p} AS {measure} "
                    f"ORDER BY {measure}",
                    "range",
                )

    def negation(self) -> Iterator[SchemaExample]:
        for rel in self.rels:
            a, b = self.labels[rel.start], self.labels[rel.end]
            phrase = relationship_phrase(rel.type, rel.end)
            if a.display:
                alias = _alias(a.display)
                yield SchemaExample(
                    f"Which {a.nouns} are without any {b.noun} they {phrase.plural}?",
                    f"MATCH {a.node()} WHERE NOT ({a.var})-[:{_n(rel.type)}]->(:{_n(b.name)}) "
                    f"RETURN {a.var}.{_n(a.display)} AS {alias} ORDER BY {alias}",
                    "negation",
                )
            if b.display and rel.start != rel.end:
                alias = _alias(b.display)
                yield SchemaExample(
                    f"Which {b.nouns} are without any {a.noun} that {phrase.singular} them?",
                    f"MATCH {b.node()} WHERE NOT ({b.var})<-[:{_n(rel.type)}]-(:{_n(a.name)}) "
                    f"RETURN {b.var}.{_n(b.display)} AS {alias} ORDER BY {alias}",
                    "negation",
                )

    def follow_up(self) -> Iterator[SchemaExample]:
        # Stored in standalone form: the rewrite step turns "which of those are X?" into this.
        for rel in self.rels:
            a, b = self.labels[rel.start], self.labels[rel.end]
            if not a.display or not b.display or not (b.categories or b.numbers):
                continue
            pairs = self.pairs(rel, 5)
            if not pairs:
                continue
            x = pairs[0][0]
            bv = b.var if b.var != a.var else b.var + "2"
            phrase = relationship_phrase(rel.type, rel.end)
            base = f"MATCH {a.node(value=x)}-[:{_n(rel.type)}]->{b.node(bv)}"
            alias = _alias(b.display)
            prop = (b.categories or b.numbers)[0]
            rows = self.read(
                f"{base} WHERE {bv}.{_n(prop.name)} IS NOT NULL "
                f"WITH {bv}.{_n(prop.name)} AS value LIMIT 1 RETURN value",
                max_rows=1,
            )
            if not rows or not (_identifier_like(rows[0][0]) or isinstance(rows[0][0], int)):
                continue
            value = rows[0][0]
            measure = _alias(prop.name, [alias])
            yield SchemaExample(
                f"Of the {b.nouns} that {a.subject(x)} {phrase.singular}, which have "
                f"{' '.join(words(prop.name))} {value}?",
                f"{base} WHERE {bv}.{_n(prop.name)} = {literal(value)} "
                f"RETURN {bv}.{_n(b.display)} AS {alias}, {bv}.{_n(prop.name)} AS {measure} "
                f"ORDER BY {alias}",
                "follow_up",
            )


def generate_schema_examples(
    db: GraphReader,
    schema: GraphSchema,
    *,
    cap_per_shape: int = DEFAULT_CAP,
    timeout_s: float = 5.0,
    budget_s: float = 60.0,
) -> GenerationReport:
    """Build question/Cypher pairs for every shape from `schema` and values sampled from `db`.

    Every read is bounded (LIMIT, engine timeout, row cap); each candidate runs read-only and
    is kept only when it returns rows; at most `cap_per_shape` are kept per shape. Stops
    early, keeping what it has, when `budget_s` is spent.
    """
    started = time.monotonic()
    gen = _Generator(
        db,
        schema,
        cap=max(0, cap_per_shape),
        timeout_s=timeout_s,
        deadline=started + budget_s,
    )
    if gen.cap and gen.labels:
        gen.sample()
        gen.run(
            {
                "count": gen.count,
                "list": gen.list_,
                "lookup": gen.lookup,
                "one_hop": gen.one_hop,
                "two_hop": gen.two_hop,
                "both": gen.both,
                "top_count": gen.top_count,
                "top_value": gen.top_value,
                "range": gen.range_,
                "negation": gen.negation,
                "follow_up": gen.follow_up,
            }
        )
    gen.report.seconds = time.monotonic() - started
    logger.info(
        "schema examples: kept %d of %d in %.2f s (%d queries)",
        len(gen.report.kept),
        sum(gen.report.tried.values()),
        gen.report.seconds,
        gen.report.queries,
    )
    return gen.report


# --- retrieval: examples that cover the question's shape, not only its words ---------------------

Cue = Literal["top", "negation", "multi_hop", "count", "range"]
_QUESTION_CUES: dict[Cue, re.Pattern[str]] = {
    "top": re.compile(
        r"\b(most|top|highest|lowest|least|largest|biggest|smallest|fewest|maximum|minimum)\b",
        re.IGNORECASE,
    ),
    "negation": re.compile(
        r"\b(no|without|never|none|nobody|nothing|not|lacks?|lacking|missing)\b|n't\b",
        re.IGNORECASE,
    ),
    "multi_hop": re.compile(r"\b(both|also|same|other|others|together)\b|\bco-\w+", re.IGNORECASE),
    "count": re.compile(r"\bhow many\b|\bnumber of\b|\bcount\b", re.IGNORECASE),
    "range": re.compile(
        r"\b(above|below|over|under|more than|less than|greater than|fewer than|at least|"
        r"at most|before|after|between|since|older than|newer than)\b",
        re.IGNORECASE,
    ),
}
# Words the generated questions of each shape use, so lexical retrieval finds them too.
_CUE_WORDS: dict[str, str] = {
    "top": "most highest",
    "negation": "without",
    "multi_hop": "both same other also",
    "range": "above between",
}
_TOP = re.compile(r"\bORDER\s+BY\b.*\bLIMIT\s+\d+", re.IGNORECASE | re.DOTALL)
_NEGATION = re.compile(r"\bNOT\s*(\(|EXISTS\b)|\bIS\s+NULL\b", re.IGNORECASE)
_HOP = re.compile(r"-\[|-->|<--")
_VAR_LENGTH = re.compile(r"\[[^\]]*\*[^\]]*\]")
_COUNT = re.compile(r"\bcount\s*\(", re.IGNORECASE)
_RANGE = re.compile(r"(?<![<\-])[<>]=?\s*(?:-?\d|'|\"|date|datetime|localdatetime)", re.IGNORECASE)


def question_cues(question: str, *, relationships: int = 0, entities: int = 0) -> frozenset[str]:
    """The shapes a question's words point to: most/top → top, no/without → negation,
    both/also/same or two relationships or two named entities → multi_hop, how many → count,
    above/between → range."""
    cues = {cue for cue, pattern in _QUESTION_CUES.items() if pattern.search(question)}
    if relationships >= 2 or entities >= 2:
        cues.add("multi_hop")
    return frozenset(cues)


def cypher_cues(cypher: str) -> frozenset[str]:
    """The shapes a query has, read from its text (works for taught examples too)."""
    cues: set[str] = set()
    if _TOP.search(cypher):
        cues.add("top")
    if _NEGATION.search(cypher):
        cues.add("negation")
    if len(_HOP.findall(cypher)) >= 2 or _VAR_LENGTH.search(cypher):
        cues.add("multi_hop")
    if _COUNT.search(cypher) and "top" not in cues:
        cues.add("count")
    if _RANGE.search(cypher):
        cues.add("range")
    return frozenset(cues)


@dataclass(frozen=True)
class Focus:
    """What a question points at: labels, relationship types and shape cues."""

    labels: frozenset[str] = frozenset()
    rel_types: frozenset[str] = frozenset()
    cues: frozenset[str] = frozenset()


def question_focus(question: str, schema: GraphSchema, hint_labels: Sequence[str] = ()) -> Focus:
    """Labels named in the question (singular or plural) or holding its value hints,
    relationship types whose words it uses, and its shape cues."""
    asked = question_words(question)
    known = {label.name for label in schema.labels}
    labels = {
        label.name
        for label in schema.labels
        if (name_words(label.name) | name_words(plural_noun(label.name))) & asked
    }
    labels |= set(hint_labels) & known
    rel_types = {rel.type for rel in schema.relationships if name_words(rel.type) & asked}
    cues = question_cues(question, relationships=len(rel_types), entities=len(hint_labels))
    return Focus(frozenset(labels), frozenset(rel_types), cues)


def retrieval_query(question: str, focus: Focus) -> str:
    """The question plus its labels' nouns and its shapes' words, for the example store."""
    extra = [singular(label) + " " + plural_noun(label) for label in sorted(focus.labels)]
    extra += [_CUE_WORDS[cue] for cue in sorted(focus.cues) if cue in _CUE_WORDS]
    return " ".join([question, *extra])


def rank_examples(
    examples: Sequence[Example], question: str, focus: Focus, k: int
) -> list[Example]:
    """The k examples that best cover the question: shared words, the same labels and
    relationship types, the same shape. Ties go to taught examples over schema-generated
    ones (people vouched for those), then to the store's own order."""
    asked = question_words(question)
    scored: list[tuple[float, bool, int, Example]] = []
    for index, example in enumerate(examples):
        names = referenced_names(example.cypher)
        lexical = len(asked & question_words(example.question)) / max(1, len(asked))
        covered = len(names.labels & focus.labels) / max(1, len(focus.labels))
        score = lexical + 0.5 * covered
        if names.rel_types & focus.rel_types:
            score += 0.3
        if cypher_cues(example.cypher) & focus.cues:
            score += 0.6
        scored.append((-round(score, 3), example.source == "schema", index, example))
    scored.sort(key=lambda item: item[:3])
    return [item[3] for item in scored[: max(0, k)]]
