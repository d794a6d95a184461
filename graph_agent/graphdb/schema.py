"""Schema discovery by bounded sampling (shared by the adapters) and the schema text the LLM sees."""

from __future__ import annotations

import datetime as dt
import functools
import hashlib
import logging
import math
import re
from collections import Counter, defaultdict
from collections.abc import Callable, Collection, Iterable, Mapping, Sequence
from typing import Any

from graph_agent.graphdb.protocol import GraphSchema, LabelInfo, PropertyInfo, RelPattern
from guardrails import Vocabulary

logger = logging.getLogger(__name__)

Read = Callable[[str], list[list[Any]]]
"""Runs a read-only statement and returns rows of native Python values."""

NUMBER_TYPES = frozenset({"INTEGER", "FLOAT"})
"""The value types of a number property (as `PropertyInfo.types` names them)."""
MAX_SAMPLE_VALUES = 8
LOW_CARDINALITY = 10
"""A string property with at most this many distinct sampled values gets sample values."""
_NUMBER_TEXT = re.compile(r"[-+]?(?:\d{1,3}(?:,\d{3})+|\d+)(?:\.\d+)?")
NUMBERS_AS_TEXT_SHARE = 0.4
"""Of a string property's sampled values, at least this share are numbers written as text…"""
NUMBERS_AS_TEXT_PLACEHOLDERS = 3
"""…and the others at most this many distinct placeholders, for it to hold numbers as text."""
_PATTERN_PROBE = 200
"""Nodes per label whose outgoing relationships are probed for patterns the type sample missed."""


def quote_name(name: str) -> str:
    """Backtick-quote a label, type or property name for Cypher."""
    return "`" + name.replace("`", "``") + "`"


def quote_name_if_needed(name: str) -> str:
    """A name as a person would write it in Cypher: bare when it is a plain identifier,
    backtick-quoted otherwise (a statement the model wrote keeps its look)."""
    return name if re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", name) else quote_name(name)


def type_name(value: Any) -> str:
    """The Cypher type name of a native Python value."""
    if value is None:
        return "NULL"
    if isinstance(value, bool):
        return "BOOLEAN"
    if isinstance(value, int):
        return "INTEGER"
    if isinstance(value, float):
        return "FLOAT"
    if isinstance(value, str):
        return "STRING"
    if isinstance(value, dt.datetime):
        return "DATETIME"
    if isinstance(value, dt.date):
        return "DATE"
    if isinstance(value, dt.time):
        return "TIME"
    if isinstance(value, list | tuple):
        inner = sorted({type_name(v) for v in value} - {"NULL"})
        return f"LIST<{inner[0]}>" if len(inner) == 1 else "LIST"
    if isinstance(value, Mapping):
        return "MAP"
    return type(value).__name__.upper()


def numbers_as_text(values: Counter[str]) -> bool:
    """Whether sampled string values (with how often each came) are numbers written as text:
    three or more distinct numbers ("172", "1,358", " 36.8 "), at least
    `NUMBERS_AS_TEXT_SHARE` of the values, and at most `NUMBERS_AS_TEXT_PLACEHOLDERS` other
    values ("unknown", "n/a"). "1 standard" or "30-165" is not a number."""
    others = [v for v in values if not _NUMBER_TEXT.fullmatch(v.strip())]
    numbers = sum(n for v, n in values.items() if v not in others)
    return (
        len(values) - len(others) >= 3
        and numbers >= NUMBERS_AS_TEXT_SHARE * sum(values.values())
        and len(others) <= NUMBERS_AS_TEXT_PLACEHOLDERS
    )


DATE_TEXT = re.compile(r"\s*(\d{1,2})([/.-])(\d{1,2})\2(\d{4})\s*")


def date_format(values: Counter[str]) -> str:
    """How sampled string values (with how often each came) write a date, when they are dates
    written as day, month and year ("24/08/2017", "7/08/2017": a CSV import with no types):
    `d/m/y` or `m/d/y` with the separator the values use; "" when they are not, or when no
    sampled value tells the day from the month (neither part above 12). The same shares as
    `numbers_as_text`: three or more distinct dates, at most a few placeholders."""
    found = {v: m for v in values if (m := DATE_TEXT.fullmatch(v))}
    dated = sum(n for v, n in values.items() if v in found)
    if (
        len(found) < 3
        or dated < NUMBERS_AS_TEXT_SHARE * sum(values.values())
        or len(values) - len(found) > NUMBERS_AS_TEXT_PLACEHOLDERS
        or len({m[2] for m in found.values()}) != 1
    ):
        return ""
    sep = next(iter(found.values()))[2]
    day_first = any(int(m[1]) > 12 for m in found.values())
    month_first = any(int(m[3]) > 12 for m in found.values())
    if day_first == month_first:
        return ""
    return f"d{sep}m{sep}y" if day_first else f"m{sep}d{sep}y"


ISO_DATE_TEXT = re.compile(r"\s*\d{4}-\d{2}-\d{2}(?:[ T]\d{2}:\d{2}(?::\d{2}(?:\.\d+)?)?)?\s*")


def iso_dates(values: Counter[str]) -> bool:
    """Whether sampled string values (with how often each came) are ISO dates or date-times
    written as text ("1961-08-26", "1951-01-24 00:00:00"), by the shares `date_format` uses."""
    found = [v for v in values if ISO_DATE_TEXT.fullmatch(v)]
    return (
        len(found) >= 3
        and sum(values[v] for v in found) >= NUMBERS_AS_TEXT_SHARE * sum(values.values())
        and len(values) - len(found) <= NUMBERS_AS_TEXT_PLACEHOLDERS
    )


UNIQUE_MIN = 5
"""Sampled nodes below which no property counts as unique (two nodes share nothing by luck)."""


_TEXT_DATES = ("%Y-%m-%d", "%b %d, %Y", "%B %d, %Y", "%d %b %Y", "%d %B %Y", "%d/%m/%Y", "%m/%d/%Y")
TWIN_MIN = 5
"""Nodes that must hold both a string and a typed property, alike, for the string to count
as the typed one written as text."""


def _same_value(text: str, typed: Any) -> bool:
    """Whether `text` writes `typed` (a number or a date) as text."""
    if isinstance(typed, bool):
        return False
    if isinstance(typed, int | float):
        try:
            number = float(text.replace(",", "").strip())
        except ValueError:
            return False
        return math.isclose(number, float(typed), rel_tol=1e-6, abs_tol=1e-9)
    if isinstance(typed, dt.date) and not isinstance(typed, dt.datetime):
        for form in _TEXT_DATES:
            try:
                if dt.datetime.strptime(text.strip(), form).date() == typed:
                    return True
            except ValueError:
                continue
    return False


def _number_or_date(value: Any) -> bool:
    """None, a number (not a boolean) or a date (not a date and time)."""
    if isinstance(value, bool | dt.datetime):
        return False
    return value is None or isinstance(value, int | float | dt.date)


def _text_twins(samples: Sequence[Mapping[str, Any]]) -> dict[str, str]:
    """For each string property, the typed property (number or date) whose value it writes
    on every sampled node that holds both (at least TWIN_MIN of them)."""
    keys = {k for props in samples for k, v in props.items() if v is not None}
    texts = sorted(k for k in keys if all(isinstance(p.get(k), str | None) for p in samples))
    typed = sorted(k for k in keys if all(_number_or_date(p.get(k)) for p in samples))
    twins: dict[str, str] = {}
    for text in texts:
        for other in typed:
            pairs = [
                (p[text], p[other])
                for p in samples
                if p.get(text) not in (None, "") and p.get(other) is not None
            ]
            if len(pairs) >= TWIN_MIN and all(_same_value(a, b) for a, b in pairs):
                twins[text] = other
                break
    return twins


def properties_from_samples(samples: Sequence[Mapping[str, Any]]) -> tuple[PropertyInfo, ...]:
    """Property names/types (with NULL when some sampled entities lack it) and sample values."""
    types: dict[str, set[str]] = defaultdict(set)
    present: Counter[str] = Counter()
    strings: dict[str, Counter[str]] = defaultdict(Counter)
    for props in samples:
        for key, value in props.items():
            if value is None:
                continue
            present[key] += 1
            types[key].add(type_name(value))
            if isinstance(value, str):
                strings[key][value] += 1
    twins = _text_twins(samples)
    result = []
    for key in sorted(types):
        kinds = set(types[key])
        if present[key] < len(samples):
            kinds.add("NULL")
        values: tuple[str, ...] = ()
        counter = strings.get(key)
        # Values repeat (at most half as many distinct as present): a category, not an id.
        if counter and len(counter) <= LOW_CARDINALITY and 2 * len(counter) <= present[key]:
            ranked = sorted(counter.items(), key=lambda kv: (-kv[1], kv[0]))
            values = tuple(v for v, _ in ranked[:MAX_SAMPLE_VALUES])
        ordered = tuple(sorted(kinds - {"NULL"})) + (("NULL",) if "NULL" in kinds else ())
        as_text = kinds - {"NULL"} == {"STRING"} and numbers_as_text(strings[key])
        text = kinds - {"NULL"} == {"STRING"}
        dates = date_format(strings[key]) if text else ""
        iso = text and iso_dates(strings[key])
        unique = (
            ordered == ("STRING",)
            and len(samples) >= UNIQUE_MIN
            and counter is not None
            and len(counter) == present[key]
            and not as_text
            and not dates
            and not iso
        )
        result.append(
            PropertyInfo(
                name=key,
                types=ordered,
                sample_values=values,
                numbers_as_text=as_text,
                unique=unique,
                date_format=dates,
                iso_dates=iso,
                text_of=twins.get(key, ""),
            )
        )
    return tuple(result)


def _keep(name: str, include: Sequence[str] | None, exclude: Sequence[str] | None) -> bool:
    return (not include or name in include) and not (exclude and name in exclude)


def _within(name: str, rows: Sequence[Sequence[Any]], shown: Sequence[str]) -> tuple[str, ...]:
    """The shown labels other than `name` that every sampled node (`labels(n)` second in each
    row) carries; none where nothing was sampled. A label the channel cannot see is left out."""
    if not rows:
        return ()
    common = set.intersection(*(set(row[1] or ()) for row in rows)) - {name}
    return tuple(label for label in shown if label in common)


def sample_schema(
    read: Read,
    *,
    include: Sequence[str] | None = None,
    exclude: Sequence[str] | None = None,
    sample: int = 1000,
    label_counts: Mapping[str, int] | None = None,
    type_counts: Mapping[str, int] | None = None,
) -> GraphSchema:
    """Build a GraphSchema from at most `sample` nodes per label and relationships per type.

    Cost is bounded by labels x sample, not by the graph's size. Counts come from the
    engine's count store when the adapter passes them in, else from count() queries.
    """
    cap = max(1, int(sample))
    labels = sorted(str(row[0]) for row in read("CALL db.labels()"))
    rel_types = sorted(str(row[0]) for row in read("CALL db.relationshipTypes()"))
    labels = [name for name in labels if _keep(name, include, exclude)]

    label_infos = []
    for name in labels:
        count = (label_counts or {}).get(name)
        if count is None:
            count = int(read(f"MATCH (n:{quote_name(name)}) RETURN count(n)")[0][0])
        rows = read(
            f"MATCH (n:{quote_name(name)}) WITH n LIMIT {cap} RETURN properties(n), labels(n)"
        )
        props = properties_from_samples([row[0] or {} for row in rows])
        label_infos.append(
            LabelInfo(name=name, count=count, properties=props, within=_within(name, rows, labels))
        )

    wanted = set(labels)
    patterns: dict[tuple[str, str, str], int] = {}
    pattern_props: dict[tuple[str, str, str], list[Mapping[str, Any]]] = defaultdict(list)
    for rel_type in rel_types:
        total = (type_counts or {}).get(rel_type)
        if total is None:
            total = int(read(f"MATCH ()-[r:{quote_name(rel_type)}]->() RETURN count(r)")[0][0])
        rows = read(
            f"MATCH (a)-[r:{quote_name(rel_type)}]->(b) WITH a, r, b LIMIT {cap} "
            "RETURN labels(a), labels(b), properties(r)"
        )
        seen: Counter[tuple[str, str, str]] = Counter()
        for start_labels, end_labels, props in rows:
            for start in start_labels or []:
                for end in end_labels or []:
                    key = (start, rel_type, end)
                    seen[key] += 1
                    pattern_props[key].append(props or {})
        for key, n in seen.items():
            # Scale the sample's share up to the type's total; exact when nothing was cut.
            patterns[key] = n if len(rows) >= total else max(1, round(total * n / len(rows)))
    for name in labels:
        probe = min(cap, _PATTERN_PROBE)
        rows = read(
            f"MATCH (a:{quote_name(name)}) WITH a LIMIT {probe} "
            "MATCH (a)-[r]->(b) RETURN type(r), labels(b), count(*)"
        )
        for rel_type, end_labels, n in rows:
            for end in end_labels or []:
                patterns.setdefault((name, str(rel_type), end), int(n))
    for start, rel_type, end in patterns:
        if pattern_props.get((start, rel_type, end)) or start not in wanted or end not in wanted:
            continue
        # A pattern the type's capped sample never reached (one type between many labels,
        # the first thousand all of one pair): its own properties are read, or it would show
        # none (a co-occurrence graph's weight on a group's relationships).
        rows = read(
            f"MATCH (:{quote_name(start)})-[r:{quote_name(rel_type)}]->(:{quote_name(end)}) "
            f"WITH r LIMIT {min(cap, _PATTERN_PROBE)} RETURN properties(r)"
        )
        pattern_props[(start, rel_type, end)] = [row[0] or {} for row in rows]

    rels = [
        RelPattern(
            start=start,
            type=rel_type,
            end=end,
            count=count,
            properties=properties_from_samples(pattern_props.get((start, rel_type, end), [])),
        )
        for (start, rel_type, end), count in sorted(patterns.items())
        if start in wanted and end in wanted
    ]
    return GraphSchema(labels=tuple(label_infos), relationships=tuple(rels))


_DISPLAY_FIRST = ("name", "fullname", "displayname")
_DISPLAY_LAST = ("title", "key", "code", "label", "descr", "description")
_DISPLAY_SUFFIXES = ("name", "title")
# Prefixes of `…Name` properties that name the entity itself; `shipName` on an order or
# `contactName` on a company name something else.
_NAME_PREFIXES = ("company", "organization", "organisation", "business", "common", "short")
_NAME_PARTS = ("last", "surname", "family", "first", "given")


def display_property(label: LabelInfo) -> str | None:
    """The property a person would call this label's entities by (name, productName, title…).

    `name` first, then `<label>Name`, a company or common name, a last or first name, then
    `title`/`key`/`code`/`description` (a person's `title` is more often a job title than what
    they are called), then the label's own number (`orderID`: "order 10248"), then a plain `id` (a
    FinCEN trial: a Filing has only `id` and twenty other columns, and "Which filing has the
    largest amount?" came back as an amount alone); a `description` before a number (a
    supply-chain trial: a distribution center has a numeric `id` and "Madrid Distribution
    Center" as its description). None when nothing fits.
    """
    strings = [
        p.name for p in label.properties if "STRING" in p.types and not p.name.startswith("_")
    ]
    lowered = {name.lower(): name for name in strings}
    own = label.name.lower()
    wanted = [
        *_DISPLAY_FIRST,
        *(own + suffix for suffix in _DISPLAY_SUFFIXES),
        *(prefix + "name" for prefix in _NAME_PREFIXES + _NAME_PARTS),
        *_DISPLAY_LAST,
    ]
    found = next((lowered[w] for w in wanted if w in lowered), None)
    if found is not None:
        return found
    numbers = {
        p.name.lower(): p.name for p in label.properties if {"INTEGER", "STRING"} & set(p.types)
    }
    return next(
        (
            numbers[key]
            for key in (*(own + s for s in ("id", "_id", "number", "no")), "id")
            if key in numbers
        ),
        None,
    )


NAME_MARK = "identifies it"
"""Marks, in the schema text, the property a label's nodes are called by."""


def _prop_text(prop: PropertyInfo) -> str:
    kinds = [k for k in prop.types if k != "NULL"] or ["NULL"]
    text = f"{prop.name}: {'|'.join(kinds)}"
    if "NULL" in prop.types and kinds != ["NULL"]:
        text += " (may be null)"
    if prop.sample_values:
        text += " e.g. " + ", ".join(f'"{v}"' for v in prop.sample_values)
    return text


def schema_text(schema: GraphSchema, *, labels: Collection[str] | None = None) -> str:
    """The compact schema text given to the LLM, optionally limited to `labels`."""
    keep = set(labels) if labels is not None else None
    lines = ["Node labels and properties:"]
    for label in schema.labels:
        if keep is not None and label.name not in keep:
            continue
        # The property people call these nodes by goes first, marked in words: a small model
        # copied a "display:" marker as if it were a property name.
        display = display_property(label)
        # A column kept as text beside its typed copy is left out: the model sorted and
        # compared "Apr 1, 2016" as text where `end` held the date (a FinCEN trial).
        shown = [p for p in label.properties if not p.text_of]
        ordered = sorted(shown, key=lambda p: p.name != display)
        props = "; ".join(
            _prop_text(p) + (f" ({NAME_MARK})" if p.name == display else "") for p in ordered
        )
        # A label that is a kind of another (every `:Web` node is a `:Course`): the model wrote
        # `(c:Course)-[:FULFILLED_BY]->(w:Web)` for "Which courses are web courses?" (a trial
        # on a learning graph nobody here wrote), a relationship between one node's labels.
        within = [name for name in label.within if keep is None or name in keep]
        kind = ""
        if within:
            both = ":".join([*within, label.name])
            kind = f", each also {' and '.join(':' + n for n in within)}: match (x:{both})"
        lines.append(f"(:{label.name}) [{label.count} nodes{kind}] {{{props}}}")
    lines.append("Relationships:")
    for rel in schema.relationships:
        if keep is not None and not (rel.start in keep and rel.end in keep):
            continue
        props = ""
        if rel.properties:
            props = " {" + "; ".join(_prop_text(p) for p in rel.properties) + "}"
        lines.append(f"(:{rel.start})-[:{rel.type}{props}]->(:{rel.end})")
    return "\n".join(lines)


def _fingerprint_lines(schema: GraphSchema) -> Iterable[str]:
    for label in sorted(schema.labels, key=lambda item: item.name):
        names = ",".join(sorted(p.name for p in label.properties))
        yield f"L {label.name} {names}"
    for rel in sorted(schema.relationships, key=lambda r: (r.start, r.type, r.end)):
        yield f"R {rel.start} {rel.type} {rel.end}"


def schema_fingerprint(schema: GraphSchema) -> str:
    """A short stable hash of labels, property names and patterns (not counts or samples)."""
    digest = hashlib.sha256("\n".join(_fingerprint_lines(schema)).encode()).hexdigest()
    return digest[:12]


def jsonable(value: Any) -> Any:
    """A native Python value as plain JSON-able data (dates as ISO strings)."""
    if value is None or isinstance(value, bool | int | float | str):
        return value
    if isinstance(value, dt.date | dt.datetime | dt.time):
        return value.isoformat()
    if isinstance(value, Mapping):
        return {str(k): jsonable(v) for k, v in value.items()}
    if isinstance(value, list | tuple | set | frozenset):
        return [jsonable(v) for v in value]
    return str(value)


@functools.lru_cache(maxsize=8)
def schema_vocabulary(schema: GraphSchema) -> Vocabulary:
    """The graph's own words for the relevance check: label, relationship type and property
    names, and the sampled values of category-like properties ("database", "SEV1")."""
    names: list[str] = []
    values: list[str] = []
    for label in schema.labels:
        names.append(label.name)
        for prop in label.properties:
            names.append(prop.name)
            values.extend(prop.sample_values)
    for rel in schema.relationships:
        names.append(rel.type)
        names.extend(p.name for p in rel.properties)
    return Vocabulary(names, values)
