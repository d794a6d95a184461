"""The entity card and the neighbourhood: one node's properties and what it is linked to."""

from __future__ import annotations

import logging
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from graph_agent.graphdb.protocol import GraphReader, GraphSchema
from graph_agent.tools.names import Candidate, Entity, Resolution, resolve_with
from graph_agent.tools.reads import DEFAULT_LIMITS, ToolLimits, ToolReader
from graph_agent.tools.view import GraphView
from guardrails import CypherPolicy

logger = logging.getLogger(__name__)

NEIGHBOURHOOD_EXAMPLES = 5
"""Example names per group in a neighbourhood (a card shows `ToolLimits.examples`)."""


def arrow(rel_type: str, outgoing: bool) -> str:
    """`—TYPE→` for a relationship that leaves the node before it, `←TYPE—` for one that enters it."""
    return f"—{rel_type}→" if outgoing else f"←{rel_type}—"


@dataclass(frozen=True)
class NeighbourGroup:
    """The neighbours one entity reaches by one relationship type, in one direction, of one label."""

    relationship: str
    outgoing: bool
    label: str
    count: int
    """Relationships of this group (a neighbour linked twice counts twice)."""
    examples: tuple[str, ...]
    """A few neighbours by name."""

    def text(self) -> str:
        """`—MEMBER_OF→ 1 Team: Payments`."""
        names = ", ".join(self.examples)
        more = ", …" if self.count > len(self.examples) and self.examples else ""
        return f"{arrow(self.relationship, self.outgoing)} {self.count} {self.label}" + (
            f": {names}{more}" if names else ""
        )


@dataclass(frozen=True)
class LinkSummary:
    """A card's line for one relationship type and direction, whatever the neighbours' labels."""

    relationship: str
    outgoing: bool
    count: int
    labels: tuple[str, ...]
    examples: tuple[str, ...]

    def text(self) -> str:
        group = NeighbourGroup(
            self.relationship, self.outgoing, "/".join(self.labels), self.count, self.examples
        )
        return group.text()


@dataclass(frozen=True)
class EntityCard:
    """One entity: its label, its visible properties, and per relationship type and direction
    how many neighbours and a few of their names. Unresolved names leave `entity` None."""

    resolution: Resolution
    entity: Entity | None = None
    properties: Mapping[str, Any] = field(default_factory=dict)
    links: tuple[LinkSummary, ...] = ()
    partial: bool = False
    """A read reached the row cap: counts may be short."""

    columns = ("entity", "label", "field", "value", "count")

    def rows(self) -> list[list[Any]]:
        """One row per property, then one per relationship type and direction."""
        if self.entity is None:
            return []
        name, label = self.entity.name, self.entity.label
        rows: list[list[Any]] = [
            [name, label, key, value, None] for key, value in self.properties.items()
        ]
        rows += [
            [name, label, f"{arrow(link.relationship, link.outgoing)} {'/'.join(link.labels)}",
             list(link.examples), link.count]
            for link in self.links
        ]  # fmt: skip
        return rows

    def text(self) -> str:
        """The entity, its properties on one line, then one line per relationship."""
        if self.entity is None:
            return self.resolution.text()
        lines = [self.entity.text()]
        # Its name heads the card already.
        shown = {k: v for k, v in self.properties.items() if v != self.entity.name}
        if shown:
            lines.append("; ".join(f"{k}: {_shown(v)}" for k, v in shown.items()))
        lines += [link.text() for link in self.links]
        return "\n".join(lines)


@dataclass(frozen=True)
class Neighbourhood:
    """What one entity is linked to, by relationship type, direction and neighbour label."""

    resolution: Resolution
    entity: Entity | None = None
    groups: tuple[NeighbourGroup, ...] = ()
    partial: bool = False

    columns = ("entity", "relationship", "direction", "neighbour_label", "count", "examples")

    def rows(self) -> list[list[Any]]:
        if self.entity is None:
            return []
        return [
            [self.entity.name, g.relationship, "outgoing" if g.outgoing else "incoming",
             g.label, g.count, list(g.examples)]
            for g in self.groups
        ]  # fmt: skip

    def text(self) -> str:
        if self.entity is None:
            return self.resolution.text()
        if not self.groups:
            return f"{self.entity.text()} is linked to nothing."
        return "\n".join([f"{self.entity.text()} is linked to:", *(g.text() for g in self.groups)])


def card(
    graph: GraphReader,
    schema: GraphSchema,
    name: str | Entity,
    *,
    policy: CypherPolicy | None = None,
    limits: ToolLimits = DEFAULT_LIMITS,
) -> EntityCard:
    """The card of the entity `name` means (see `EntityCard`); unresolved: only the resolution."""
    reader = ToolReader(graph, GraphView.of(schema, policy), limits)
    resolution, entity = _entity(reader, name)
    if entity is None:
        return EntityCard(resolution)
    properties = _properties(reader, entity)
    groups = neighbour_groups(reader, entity, limits.examples)
    return EntityCard(
        resolution, entity, properties, summarise(groups, limits.examples), reader.partial
    )


def neighbourhood(
    graph: GraphReader,
    schema: GraphSchema,
    name: str | Entity,
    *,
    policy: CypherPolicy | None = None,
    limits: ToolLimits = DEFAULT_LIMITS,
) -> Neighbourhood:
    """What the entity `name` means is linked to (see `Neighbourhood`)."""
    reader = ToolReader(graph, GraphView.of(schema, policy), limits)
    resolution, entity = _entity(reader, name)
    if entity is None:
        return Neighbourhood(resolution)
    groups = neighbour_groups(reader, entity, max(limits.examples, NEIGHBOURHOOD_EXAMPLES))
    return Neighbourhood(resolution, entity, tuple(groups), reader.partial)


def _entity(reader: ToolReader, name: str | Entity) -> tuple[Resolution, Entity | None]:
    """A name resolved, or an entity a caller already resolved (checked against the view)."""
    if isinstance(name, str):
        resolution = resolve_with(reader, name)
        return resolution, resolution.entity
    resolution = Resolution(name.name, (Candidate(name, 1.0),))
    return resolution, name if reader.view.sees(name.labels) else None


def _properties(reader: ToolReader, entity: Entity) -> dict[str, Any]:
    visible = reader.view.visible_properties(entity.labels)
    result = reader.read(
        f"MATCH (n) WHERE {reader.dialect.key('n')} = $key "
        f"WITH n WHERE {reader.label_filter('n')} "
        f"RETURN {reader.projection('n', visible)} AS properties",
        reader.base_params() | {"key": entity.key},
    )
    if not result.rows or not isinstance(result.rows[0][0], dict):
        return {}
    allowed = set(visible)
    return {k: v for k, v in sorted(result.rows[0][0].items()) if k in allowed and v is not None}


def neighbour_groups(reader: ToolReader, entity: Entity, examples: int) -> list[NeighbourGroup]:
    """One read: the entity's relationships of visible types to visible nodes, grouped by
    type, direction and the neighbour's labels, with counts and the first names."""
    view, dialect = reader.view, reader.dialect
    if not view.rel_types:
        return []
    result = reader.read(
        f"MATCH (n) WHERE {dialect.key('n')} = $key WITH n WHERE {reader.label_filter('n')} "
        f"MATCH (n)-{reader.rel_pattern('r')}-(m) WITH n, r, m WHERE {reader.label_filter('m')} "
        f"WITH type(r) AS relationship, startNode(r) = n AS outgoing, labels(m) AS kinds, "
        f"{reader.name_expression('m')} AS name ORDER BY name "
        f"RETURN relationship, outgoing, kinds, count(*) AS total, "
        f"collect(name)[..{int(examples)}] AS examples",
        reader.base_params() | {"key": entity.key},
    )
    groups = []
    for rel_type, outgoing, labels, count, names in result.rows:
        if not view.sees_type(rel_type) or not view.sees(labels or []):
            logger.warning("a graph tool read returned a hidden name; dropped")
            continue
        groups.append(
            NeighbourGroup(
                relationship=rel_type,
                outgoing=bool(outgoing),
                label=view.primary_label(labels) or "?",
                count=int(count),
                examples=tuple(view.name_of(labels, v) for v in names or [] if v is not None),
            )
        )
    return sorted(groups, key=lambda g: (-g.count, g.relationship, not g.outgoing, g.label))


def summarise(groups: list[NeighbourGroup], examples: int) -> tuple[LinkSummary, ...]:
    """The groups merged per relationship type and direction (a card's lines)."""
    merged: dict[tuple[str, bool], list[NeighbourGroup]] = {}
    for group in groups:
        merged.setdefault((group.relationship, group.outgoing), []).append(group)
    links = [
        LinkSummary(
            relationship=rel_type,
            outgoing=outgoing,
            count=sum(g.count for g in parts),
            labels=tuple(dict.fromkeys(g.label for g in parts)),
            examples=tuple(name for g in parts for name in g.examples)[:examples],
        )
        for (rel_type, outgoing), parts in merged.items()
    ]
    return tuple(
        sorted(links, key=lambda link: (-link.count, link.relationship, not link.outgoing))
    )


def _shown(value: Any) -> str:
    if isinstance(value, list):
        return ", ".join(str(v) for v in value)
    return str(value)
