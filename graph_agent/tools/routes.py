"""How two entities are connected: the shortest routes between them, not through hubs.

The search is a breadth-first search from both ends, one read per level, in Python:

* FalkorDB's `allShortestPaths` finds only the shortest paths and filters them afterwards: a
  predicate on the path's nodes (not through a hub, no hidden label) leaves nothing when every
  shortest path fails it, though a longer one would do. Its `shortestPath` is refused outside
  WITH/RETURN and undirected. A variable-length `MATCH p=(a)-[*1..4]-(b)` enumerates every
  path (7.9 s between two drugs of the healthcare graph).
* One level of the search is a one-hop read both engines run the same way (only the node id
  and degree expressions differ), and each level drops hubs and nodes carrying a hidden label
  before they are searched through.
"""

from __future__ import annotations

import logging
import math
from collections import Counter
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

from graph_agent.graphdb.protocol import GraphReader, GraphSchema
from graph_agent.tools.entity_card import arrow
from graph_agent.tools.names import Candidate, Entity, Resolution, entities_by_key, resolve_with
from graph_agent.tools.reads import DEFAULT_LIMITS, ToolLimits, ToolReader
from graph_agent.tools.view import GraphView
from guardrails import CypherPolicy

logger = logging.getLogger(__name__)

Key = int | str
ROUTES_CONSIDERED = 30
"""Shortest routes put together before the most specific few are kept."""
HUBS_SHOWN = 3


@dataclass(frozen=True)
class Step:
    """One relationship of a route, and whether it points forward (from the node before it)."""

    relationship: str
    forward: bool


def chain(names: Sequence[str], steps: Sequence[Step]) -> str:
    """`Alice —MEMBER_OF→ Platform ←OWNS— Billing`: names joined by their relationships."""
    if len(names) != len(steps) + 1:
        raise ValueError("a chain has one name more than it has steps")
    parts = [names[0]]
    for step, name in zip(steps, names[1:], strict=True):
        parts += [arrow(step.relationship, step.forward), name]
    return " ".join(parts)


@dataclass(frozen=True)
class Route:
    """A path between the two entities: its nodes in order and the relationships between them."""

    nodes: tuple[Entity, ...]
    steps: tuple[Step, ...]

    @property
    def hops(self) -> int:
        return len(self.steps)

    def text(self) -> str:
        return chain([node.name for node in self.nodes], self.steps)


@dataclass(frozen=True)
class Connection:
    """The shortest routes (a few, the most specific first) between what two names mean."""

    source: Resolution
    target: Resolution
    routes: tuple[Route, ...] = ()
    max_hops: int = DEFAULT_LIMITS.max_hops
    hubs: tuple[Entity, ...] = ()
    """Nodes with so many relationships that routes through them were not taken."""
    partial: bool = False
    """A level of the search reached the row cap: a route may have been missed."""

    @property
    def resolved(self) -> bool:
        return self.source.entity is not None and self.target.entity is not None

    columns = ("route", "hops", "chain", "through")

    def rows(self) -> list[list[Any]]:
        return [
            [n, route.hops, route.text(), [node.text() for node in route.nodes[1:-1]]]
            for n, route in enumerate(self.routes, start=1)
        ]

    def text(self) -> str:
        """One chain per line, or why there is none."""
        if not self.resolved:
            return "\n".join(r.text() for r in (self.source, self.target) if r.entity is None)
        if self.routes:
            return "\n".join(route.text() for route in self.routes)
        assert self.source.entity is not None and self.target.entity is not None
        text = (
            f"No connection within {self.max_hops} hops between {self.source.entity.text()} "
            f"and {self.target.entity.text()}"
        )
        if self.hubs:
            text += " (not counting routes through " + ", ".join(h.text() for h in self.hubs) + ")"
        return text + "."


def connection(
    graph: GraphReader,
    schema: GraphSchema,
    a: str | Entity,
    b: str | Entity,
    *,
    policy: CypherPolicy | None = None,
    limits: ToolLimits = DEFAULT_LIMITS,
) -> Connection:
    """The shortest routes, up to `limits.max_hops` relationships in either direction, between
    what `a` and `b` mean, not through hubs (see `hub_cap`) nor anything the policy hides."""
    reader = ToolReader(graph, GraphView.of(schema, policy), limits)
    source, target = _resolved(reader, a), _resolved(reader, b)
    done = Connection(source, target, max_hops=limits.max_hops)
    start, end = source.entity, target.entity
    if start is None or end is None:
        return done
    if start.key == end.key:
        return Connection(source, target, (Route((start,), ()),), limits.max_hops)
    search = _Search(reader, start.key, end.key, hub_cap(schema, limits))
    found = search.run()
    inner = {key for route in found for key in route.keys[1:-1]} | set(search.top_hubs())
    named = entities_by_key(reader, inner) | {start.key: start, end.key: end}
    routes = tuple(
        Route(tuple(named[k] for k in route.keys), route.steps)
        for route in found
        if all(k in named for k in route.keys)
    )
    hubs = tuple(named[k] for k in search.top_hubs() if k in named)
    return Connection(source, target, routes, limits.max_hops, hubs, reader.partial)


def _resolved(reader: ToolReader, name: str | Entity) -> Resolution:
    if isinstance(name, str):
        return resolve_with(reader, name)
    if not reader.view.sees(name.labels):
        return Resolution(name.name)
    return Resolution(name.name, (Candidate(name, 1.0),))


def typical_degree(schema: GraphSchema) -> float:
    """The relationships of a typical node, from the schema's counts alone: the median over
    nodes of their label's mean degree (each relationship counts at both its ends)."""
    ends: Counter[str] = Counter()
    for rel in schema.relationships:
        ends[rel.start] += rel.count
        ends[rel.end] += rel.count
    per_label = sorted(
        (ends[label.name] / label.count, label.count) for label in schema.labels if label.count > 0
    )
    total = sum(count for _, count in per_label)
    seen = 0
    for mean, count in per_label:
        seen += count
        if 2 * seen >= total:
            return mean
    return 0.0


def hub_cap(schema: GraphSchema, limits: ToolLimits = DEFAULT_LIMITS) -> int:
    """The most relationships a node may have and still be gone through: `hub_factor` times
    the typical node's, at least `hub_min_degree`, at most `hub_max_degree`."""
    scaled = math.ceil(limits.hub_factor * typical_degree(schema))
    return min(limits.hub_max_degree, max(limits.hub_min_degree, scaled))


@dataclass(frozen=True)
class _Found:
    keys: tuple[Key, ...]
    steps: tuple[Step, ...]


@dataclass
class _Side:
    """One end of the search: what it reached, at which depth, and from where."""

    seed: Key
    depth: dict[Key, int] = field(default_factory=dict)
    parents: dict[Key, list[tuple[Key, Step]]] = field(default_factory=dict)
    """node → (parent, the relationship read from the parent towards the node)."""
    frontier: list[Key] = field(default_factory=list)
    level: int = 0

    def __post_init__(self) -> None:
        self.depth[self.seed] = 0
        self.frontier = [self.seed]

    def walks(self, node: Key, degree: dict[Key, int], limit: int) -> Iterator[list[Key | Step]]:
        """Seed-to-node walks as [seed, step, node, step, …, node], least-linked parents first."""
        if node == self.seed:
            yield [node]
            return
        made = 0
        parents = sorted(self.parents[node], key=lambda p: (degree.get(p[0], 0), str(p[0])))
        for parent, step in parents:
            for walk in self.walks(parent, degree, limit):
                yield [*walk, step, node]
                made += 1
                if made >= limit:
                    return


class _Search:
    """The breadth-first search from both ends (see the module docstring)."""

    def __init__(self, reader: ToolReader, start: Key, end: Key, cap: int) -> None:
        self.reader = reader
        self.cap = cap
        self.sides = (_Side(start), _Side(end))
        self.degree: dict[Key, int] = {}
        self.hubs: dict[Key, int] = {}

    def run(self) -> list[_Found]:
        a, b = self.sides
        limits = self.reader.limits
        if not self.reader.view.rel_types:
            return []
        while a.frontier and b.frontier and a.level + b.level < limits.max_hops:
            side, other = (a, b) if len(a.frontier) <= len(b.frontier) else (b, a)
            reached = self._expand(side, other)
            meetings = [n for n in reached if n in other.depth]
            if meetings:
                return self._routes(meetings)
        return []

    def top_hubs(self) -> list[Key]:
        ranked = sorted(self.hubs.items(), key=lambda kv: (-kv[1], str(kv[0])))
        return [key for key, _ in ranked[:HUBS_SHOWN]]

    def _expand(self, side: _Side, other: _Side) -> list[Key]:
        reader, dialect = self.reader, self.reader.dialect
        result = reader.read(
            f"UNWIND $keys AS k MATCH (n) WHERE {dialect.key('n')} = k "
            f"WITH k, n WHERE {reader.label_filter('n')} "
            f"MATCH (n)-{reader.rel_pattern('r')}-(m) WITH k, r, m WHERE {reader.label_filter('m')} "
            f"RETURN k AS node, {dialect.key('m')} AS other, type(r) AS relationship, "
            f"{dialect.key('startNode(r)')} = k AS outgoing, {dialect.degree_of('m')} AS degree "
            f"LIMIT {int(reader.limits.max_rows) + 1}",
            reader.base_params() | {"keys": side.frontier},
        )
        depth = side.level + 1
        reached: list[Key] = []
        for node, neighbour, rel_type, outgoing, degree in sorted(result.rows, key=_row_order):
            if not reader.view.sees_type(rel_type) or neighbour == side.seed:
                continue
            self.degree[neighbour] = int(degree)
            if int(degree) > self.cap and neighbour != other.seed:
                self.hubs[neighbour] = int(degree)
                continue
            step = Step(rel_type, bool(outgoing))
            known = side.depth.get(neighbour)
            if known is None:
                side.depth[neighbour] = depth
                side.parents[neighbour] = [(node, step)]
                reached.append(neighbour)
            elif known == depth and (node, step) not in side.parents[neighbour]:
                side.parents[neighbour].append((node, step))
        side.frontier, side.level = reached, depth
        return reached

    def _routes(self, meetings: list[Key]) -> list[_Found]:
        found: dict[tuple[Key | Step, ...], _Found] = {}
        for route in self._shortest(meetings):
            found.setdefault((*route.keys, *route.steps), route)
            if len(found) >= ROUTES_CONSIDERED:
                break
        ranked = sorted(found.values(), key=self._specificity)
        return ranked[: self.reader.limits.max_paths]

    def _shortest(self, meetings: list[Key]) -> Iterator[_Found]:
        """Every shortest route through the nodes where the two searches met."""
        a, b = self.sides
        hops = min(a.depth[m] + b.depth[m] for m in meetings)
        for meeting in sorted((m for m in meetings if a.depth[m] + b.depth[m] == hops), key=str):
            for head in a.walks(meeting, self.degree, ROUTES_CONSIDERED):
                for tail in b.walks(meeting, self.degree, ROUTES_CONSIDERED):
                    yield _joined(head, tail)

    def _specificity(self, route: _Found) -> tuple[int, tuple[str, ...], tuple[str, ...]]:
        """Routes through less-linked nodes first (a team of 8 says more than a city of 8000)."""
        inner = route.keys[1:-1]
        return (
            sum(self.degree.get(k, 0) for k in inner),
            tuple(f"{s.relationship}{s.forward}" for s in route.steps),
            tuple(str(k) for k in inner),
        )


def _joined(head: list[Key | Step], tail: list[Key | Step]) -> _Found:
    """A seed-to-meeting walk and an end-to-meeting walk as one route from seed to end."""
    keys = [k for k in head if not isinstance(k, Step)]
    steps = [s for s in head if isinstance(s, Step)]
    back_keys = [k for k in tail if not isinstance(k, Step)]
    back_steps = [s for s in tail if isinstance(s, Step)]
    keys += list(reversed(back_keys))[1:]
    steps += [Step(s.relationship, not s.forward) for s in reversed(back_steps)]
    return _Found(tuple(keys), tuple(steps))


def _row_order(row: list[Any]) -> tuple[str, str, str, bool]:
    return (str(row[0]), str(row[1]), str(row[2]), bool(row[3]))
