"""What a channel may see of the graph as the tools read it: labels, types, properties, names."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from graph_agent.graphdb.protocol import GraphSchema, LabelInfo
from graph_agent.graphdb.schema import NUMBER_TYPES, display_property
from graph_agent.restrict import restricted_schema
from guardrails import CypherPolicy


def identifying_property(label: LabelInfo) -> str | None:
    """The property a node of `label` is called by in the tools' answers.

    The agent's own choice first (`display_property`: name, title, productName…); failing
    that a property named like the label (`AgeGroup.ageGroup`, `Port.port`), then the
    label's own number (`Case.primaryid`), then its first text property (`Interface.ip`).
    None when the label has no property at all.
    """
    found = display_property(label)
    if found is not None:
        return found
    usable = [p for p in label.properties if set(p.types) - {"NULL"}]
    own = label.name.casefold()
    named = next((p.name for p in usable if p.name.casefold() == own), None)
    if named is not None:
        return named
    number = next(
        (
            p.name
            for p in usable
            if p.name.casefold().endswith("id") and NUMBER_TYPES & set(p.types)
        ),
        None,
    )
    if number is not None:
        return number
    return next((p.name for p in usable if "STRING" in p.types), None)


@dataclass(frozen=True)
class GraphView:
    """The labels, relationship types and properties one channel may see, in schema order,
    and the property each label's nodes are called by. Every tool statement names only
    these, and every result is checked against them again."""

    labels: tuple[str, ...]
    rel_types: tuple[str, ...]
    properties: Mapping[str, tuple[str, ...]] = field(hash=False)
    """Visible property names of each visible label."""
    identifying: Mapping[str, str] = field(hash=False)
    """Label → the property its nodes are called by (labels with none are absent)."""
    numbered: frozenset[str] = frozenset()
    """Labels whose identifying property holds numbers (`Order 10248`, not `10248`)."""
    hidden: frozenset[str] = frozenset()
    """The channel's hidden names, case-folded (labels, types, property keys)."""

    @classmethod
    def of(cls, schema: GraphSchema, policy: CypherPolicy | None = None) -> GraphView:
        """The view a policy leaves of `schema` (the full schema or one already restricted)."""
        seen = restricted_schema(schema, policy)
        identifying: dict[str, str] = {}
        numbered: set[str] = set()
        for label in seen.labels:
            prop = identifying_property(label)
            if prop is None:
                continue
            identifying[label.name] = prop
            kinds = next(set(p.types) - {"NULL"} for p in label.properties if p.name == prop)
            if kinds and kinds <= NUMBER_TYPES:
                numbered.add(label.name)
        hidden: set[str] = set()
        if policy is not None:
            hidden |= {n.casefold() for n in policy.hidden_labels}
            hidden |= {n.casefold() for n in policy.hidden_rel_types}
            hidden |= {n.rsplit(".", 1)[-1].casefold() for n in policy.hidden_properties}
        return cls(
            labels=tuple(label.name for label in seen.labels),
            rel_types=tuple(dict.fromkeys(rel.type for rel in seen.relationships)),
            properties={
                label.name: tuple(p.name for p in label.properties) for label in seen.labels
            },
            identifying=identifying,
            numbered=frozenset(numbered),
            hidden=frozenset(hidden),
        )

    def sees(self, labels: Iterable[str]) -> bool:
        """True when every label of a node is visible (a node with a hidden label is hidden)."""
        names = list(labels)
        return bool(names) and all(name in self.properties for name in names)

    def sees_type(self, rel_type: str) -> bool:
        return rel_type in self.rel_types

    def primary_label(self, labels: Iterable[str]) -> str | None:
        """The label a node is shown by: the first of its labels, in schema order, that has an
        identifying property (else its first visible label)."""
        names = set(labels)
        ordered = [label for label in self.labels if label in names]
        return next((label for label in ordered if label in self.identifying), None) or next(
            iter(ordered), None
        )

    def visible_properties(self, labels: Iterable[str]) -> tuple[str, ...]:
        """The visible property names of a node with these labels (union, schema order)."""
        found: dict[str, None] = {}
        for label in labels:
            found.update(dict.fromkeys(self.properties.get(label, ())))
        return tuple(found)

    def name_of(self, labels: Iterable[str], value: Any) -> str:
        """How a node is called: its identifying value, prefixed with its label when that value
        is a number (`Order 10248`), or the bare label when it has none."""
        label = self.primary_label(labels) or "?"
        if value is None or value == "":
            return label
        if label in self.numbered or not isinstance(value, str):
            return f"{label} {value}"
        return value
