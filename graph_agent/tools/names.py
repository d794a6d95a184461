"""Names to nodes: the candidates a name may mean, with scores; ambiguity and near misses."""

from __future__ import annotations

import logging
import re
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from graph_agent.graphdb.lookup import coverage, similarity
from graph_agent.graphdb.protocol import GraphReader, GraphSchema
from graph_agent.graphdb.schema import quote_name
from graph_agent.tools.reads import DEFAULT_LIMITS, ToolLimits, ToolReader
from graph_agent.tools.view import GraphView
from guardrails import CypherPolicy

logger = logging.getLogger(__name__)

CANDIDATE_SCORE = 0.55
"""A node whose name scores this much against the asked name is a candidate (the value
lookup's "distinctive word" score: "Gatwick" for "London Gatwick")."""
NEAR_MISS_SCORE = 0.2
"""Below a candidate, above noise: shown as "closest" when nothing matches."""
AMBIGUITY_RATIO = 0.9
"""The name is ambiguous when the second candidate scores at least this share of the first:
"Alice" for Alice Nguyen (0.73) and Alice Smith (0.73), not "Payments" for the team (1.0)
and payments-api (0.8)."""
TRUSTED_LOOKUP = 0.9
"""A value lookup match this good (exact, an alias, a stem) counts as it is."""
LOOKUP_LIMIT = 10
_WORD = re.compile(r"[^\W_]+")
_NUMBER = re.compile(r"-?\d+(\.\d+)?")
_PREFIX = 3
"""Letters of each word a near-miss search keeps ("alicia" → "ali")."""


@dataclass(frozen=True)
class Entity:
    """One node as a channel may see it. `key` is the engine's id, for the tools' own
    follow-up reads only: it is never shown and means nothing outside this graph."""

    key: int | str
    label: str
    labels: tuple[str, ...]
    name: str
    """What it is called: its identifying value (`Order 10248` for a number)."""
    detail: str = ""
    """A visible property that tells it from a namesake (`email: tom.a@example.com`)."""

    def text(self) -> str:
        """`Alice Nguyen (Person)`; `Order 10248` needs no label beside it."""
        number = self.name.removeprefix(f"{self.label} ")
        named_by_number = number != self.name and _NUMBER.fullmatch(number) is not None
        shown = self.name if named_by_number else f"{self.name} ({self.label})"
        return f"{shown}, {self.detail}" if self.detail else shown


@dataclass(frozen=True)
class Candidate:
    """A node a name may mean, and how well the name fits it (0 to 1)."""

    entity: Entity
    score: float


@dataclass(frozen=True)
class Resolution:
    """What a name means in the graph: one entity, several (ambiguous) or none (near misses)."""

    query: str
    candidates: tuple[Candidate, ...] = ()
    """Best first, at most `ToolLimits.candidates`."""
    near_misses: tuple[Candidate, ...] = ()
    """Only when there is no candidate: the closest names, best first."""

    @property
    def none(self) -> bool:
        """Nothing in the graph is called this."""
        return not self.candidates

    @property
    def ambiguous(self) -> bool:
        """Several candidates fit about equally well (see `is_ambiguous`)."""
        return is_ambiguous([c.score for c in self.candidates])

    @property
    def entity(self) -> Entity | None:
        """The one entity the name means, or None when it means none or several."""
        if self.none or self.ambiguous:
            return None
        return self.candidates[0].entity

    columns = ("candidate", "label", "score")

    def rows(self) -> list[list[Any]]:
        """The candidates (or, when there are none, the near misses) as plain rows."""
        shown = self.candidates or self.near_misses
        return [[c.entity.name, c.entity.label, round(c.score, 3)] for c in shown]

    def text(self) -> str:
        """One line: the entity, a "did you mean" list, or "nothing is called…"."""
        if self.entity is not None:
            return self.entity.text()
        if self.candidates:
            return f"“{self.query}” could be: " + "; ".join(
                c.entity.text() for c in self.candidates
            )
        if self.near_misses:
            return f"Nothing is called “{self.query}”. Closest: " + "; ".join(
                c.entity.text() for c in self.near_misses
            )
        return f"Nothing is called “{self.query}”."


def is_ambiguous(scores: Sequence[float], ratio: float = AMBIGUITY_RATIO) -> bool:
    """Whether the best two of `scores` (best first) are too close to pick one."""
    return len(scores) >= 2 and scores[1] >= ratio * scores[0]


def words(text: str) -> list[str]:
    """The lower-case words of a name, letters of any script ("Müller" is one word)."""
    return [w for w in _WORD.findall(text.lower()) if len(w) >= 2 or w.isdigit()]


def resolve(
    graph: GraphReader,
    schema: GraphSchema,
    name: str,
    *,
    policy: CypherPolicy | None = None,
    limits: ToolLimits = DEFAULT_LIMITS,
) -> Resolution:
    """What `name` means among the nodes a channel may see (case- and typo-tolerant)."""
    return resolve_with(ToolReader(graph, GraphView.of(schema, policy), limits), name)


def resolve_with(reader: ToolReader, name: str) -> Resolution:
    """`resolve` inside a tool call that already has its reader."""
    query = " ".join(name.split())
    if not query or not reader.view.identifying:
        return Resolution(query)
    found = _search(reader, query, {}, words(query))
    if not any(f.score >= 1.0 for f in found.values()):
        # Not named outright: the value lookup knows aliases, typos and keys (and costs more).
        looked_up = _looked_up(reader, query)
        if looked_up:
            for key, item in _search(reader, query, looked_up, []).items():
                if key not in found or found[key].score < item.score:
                    found[key] = item
    keep = reader.limits.candidates
    fitting = [f for f in sorted(found.values(), key=_rank) if f.score >= CANDIDATE_SCORE]
    if fitting:
        return Resolution(query, _told_apart(reader.view, fitting[:keep]))
    # Nothing fits: look wider (each word's first letters) for the names it comes closest to.
    prefixes = sorted({w[:_PREFIX] for w in words(query) if len(w) >= _PREFIX and not w.isdigit()})
    if prefixes:
        wider = _search(reader, query, {}, [], prefixes=prefixes)
        found |= {key: f for key, f in wider.items() if key not in found}
    near = [f for f in sorted(found.values(), key=_rank) if f.score >= NEAR_MISS_SCORE]
    return Resolution(query, near_misses=tuple(f.candidate() for f in near[:keep]))


def recheck(
    graph: GraphReader,
    schema: GraphSchema,
    entity: Entity,
    *,
    policy: CypherPolicy | None = None,
    limits: ToolLimits = DEFAULT_LIMITS,
) -> Entity | None:
    """`entity` as the graph and the channel's view hold it now, read again by its key: a
    choice made in an earlier turn may be stale (the node gone, its id reused) or made up.
    None when no node the channel may see has that key and that name any more."""
    reader = ToolReader(graph, GraphView.of(schema, policy), limits)
    found = entities_by_key(reader, {entity.key}).get(entity.key)
    if found is None or found.name != entity.name:
        return None
    return Entity(found.key, found.label, found.labels, found.name, entity.detail)


def entities_by_key(reader: ToolReader, keys: set[int | str]) -> dict[int | str, Entity]:
    """The nodes with these keys, by name (visible ones only)."""
    if not keys:
        return {}
    view = reader.view
    result = reader.read(
        f"UNWIND $keys AS k MATCH (n) WHERE {reader.dialect.key('n')} = k "
        f"WITH k, n WHERE {reader.label_filter('n')} "
        f"RETURN k AS node, labels(n) AS kinds, {reader.name_expression('n')} AS name",
        reader.base_params() | {"keys": sorted(keys, key=str)},
    )
    found: dict[int | str, Entity] = {}
    for key, labels, name in result.rows:
        if not view.sees(labels or []):
            continue
        label = view.primary_label(labels) or "?"
        found[key] = Entity(key, label, tuple(labels), view.name_of(labels, name))
    return found


@dataclass(frozen=True)
class _Found:
    """A node a search read: its entity, score and visible properties (to tell namesakes apart)."""

    entity: Entity
    score: float
    properties: Mapping[str, Any]

    def candidate(self, detail: str = "") -> Candidate:
        entity = self.entity
        if detail:
            entity = Entity(entity.key, entity.label, entity.labels, entity.name, detail)
        return Candidate(entity, self.score)


def _rank(found: _Found) -> tuple[float, int, str, str]:
    entity = found.entity
    return (-found.score, len(entity.name), entity.name, entity.label)


Looked = dict[tuple[str, str], dict[str, float]]
"""(label, property) → stored value → the value lookup's score."""


def _looked_up(reader: ToolReader, query: str) -> Looked:
    """The graph's value lookup (aliases, typos, stems) on visible properties: any match on a
    label's identifying property; on another property (a key or a code: "INC-1003", "LHR")
    only a near-exact one (`TRUSTED_LOOKUP`), which must then name one node alone."""
    view = reader.view
    found: Looked = {}
    for match in reader.graph.lookup_values(query, LOOKUP_LIMIT):
        if match.property not in view.properties.get(match.label, ()):
            continue
        if view.identifying.get(match.label) == match.property or match.score >= TRUSTED_LOOKUP:
            values = found.setdefault((match.label, match.property), {})
            values[match.value] = max(values.get(match.value, 0.0), match.score)
    return found


def _lookup_score(query: str, value: str, score: float) -> float:
    """The lookup's score for the whole name: it scores the best window of words, so a
    partial match ("Alice" of "Alice Nguyen" in "Alice Smith") counts by the share of the
    name the value accounts for; a near-exact one (an alias: "k8s") counts as it is."""
    if score >= TRUSTED_LOOKUP:
        return score
    return score * coverage(value, query)


@dataclass(frozen=True)
class _Branch:
    """One part of a name search: the nodes of one label, tested on one property."""

    label: str
    property: str
    identifying: str
    tests: tuple[str, ...]


def _branches(
    reader: ToolReader,
    query: str,
    looked_up: Looked,
    needles: list[str],
    prefixes: list[str] | None,
    params: dict[str, Any],
) -> list[_Branch]:
    view = reader.view
    numbers = [int(w) for w in words(query) if w.isdigit() and len(w) < 19]
    branches: list[_Branch] = []
    for label in view.labels:
        ident = view.identifying.get(label)
        if ident is None:
            continue
        for (other_label, prop), values in looked_up.items():
            if other_label == label and prop != ident:
                params[f"values{len(branches)}"] = list(values)
                test = f"n.{quote_name(prop)} IN $values{len(branches)}"
                branches.append(_Branch(label, prop, ident, (test,)))
        stored = f"n.{quote_name(ident)}"
        tests = []
        if looked_up.get((label, ident)):
            tests.append(f"{stored} IN $values{len(branches)}")
            params[f"values{len(branches)}"] = list(looked_up[(label, ident)])
        if label in view.numbered:
            if numbers:
                tests.append(f"{stored} IN $numbers")
                params["numbers"] = numbers
        elif prefixes:
            tests.append(f"any(w IN $prefixes WHERE toLower(toString({stored})) CONTAINS w)")
            params["prefixes"] = prefixes
        elif needles:
            tests.append(f"all(w IN $words WHERE toLower(toString({stored})) CONTAINS w)")
            params["words"] = needles
        if tests:
            branches.append(_Branch(label, ident, ident, tuple(tests)))
    return branches


def _search(
    reader: ToolReader,
    query: str,
    looked_up: Looked,
    needles: list[str],
    *,
    prefixes: list[str] | None = None,
) -> dict[int | str, _Found]:
    """Nodes of each visible label whose identifying value the lookup found, holds every word
    of the name (with `prefixes`: any of them) or is a number the name holds, and nodes a
    key the lookup found names alone; in one read."""
    view, dialect = reader.view, reader.dialect
    params: dict[str, Any] = reader.base_params()
    branches = _branches(reader, query, looked_up, needles, prefixes, params)
    if not branches:
        return {}
    statement = " UNION ALL ".join(
        f"MATCH (n:{quote_name(b.label)}) WHERE ({' OR '.join(b.tests)}) "
        f"AND {reader.label_filter('n')} "
        f"RETURN {i} AS branch, {dialect.key('n')} AS node, labels(n) AS kinds, "
        f"n.{quote_name(b.identifying)} AS value, n.{quote_name(b.property)} AS matched, "
        f"{reader.projection('n', view.properties.get(b.label, ()))} AS properties "
        f"LIMIT {int(reader.limits.per_label)}"
        for i, b in enumerate(branches)
    )
    rows = reader.read(statement, params).rows
    named = Counter((int(row[0]), str(row[4])) for row in rows)
    found: dict[int | str, _Found] = {}
    for branch_index, key, node_labels, value, matched, properties in rows:
        branch = branches[int(branch_index)]
        if value is None or not view.sees(node_labels or []):
            continue
        entity = Entity(
            key=key,
            label=view.primary_label(node_labels) or branch.label,
            labels=tuple(node_labels),
            name=view.name_of(node_labels, value),
        )
        looked = looked_up.get((branch.label, branch.property), {}).get(str(matched), 0.0)
        if branch.property != branch.identifying:
            if named[(int(branch_index), str(matched))] > 1:
                continue  # a key several nodes share names none of them
            # By the share of the name the key accounts for: the key "ANTON" is not what
            # "Chef Anton's" names.
            score = looked * coverage(str(matched), query)
        else:
            compared = entity.name if branch.label in view.numbered else str(value)
            score = max(similarity(query, compared), _lookup_score(query, str(value), looked))
        visible = set(view.visible_properties(node_labels))
        kept = {k: v for k, v in (properties or {}).items() if k in visible and v is not None}
        if key not in found or found[key].score < score:
            found[key] = _Found(entity, round(score, 3), kept)
    return found


def _told_apart(view: GraphView, found: list[_Found]) -> tuple[Candidate, ...]:
    """The candidates; namesakes (same name and label) each with the first visible property
    whose value differs from all the others' (`email: tom.a@example.com`)."""
    groups: dict[tuple[str, str], list[_Found]] = {}
    for item in found:
        groups.setdefault((item.entity.name, item.entity.label), []).append(item)
    out = []
    for item in found:
        namesakes = [o for o in groups[(item.entity.name, item.entity.label)] if o is not item]
        out.append(item.candidate(_difference(view, item, namesakes) if namesakes else ""))
    return tuple(out)


def _difference(view: GraphView, item: _Found, others: list[_Found]) -> str:
    identifying = view.identifying.get(item.entity.label)
    for key in view.visible_properties(item.entity.labels):
        if key == identifying or key not in item.properties:
            continue
        if all(other.properties.get(key) != item.properties[key] for other in others):
            return f"{key}: {item.properties[key]}"
    return ""
