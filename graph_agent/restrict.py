"""The schema a channel may see: a policy's hidden labels, types and properties taken out."""

from __future__ import annotations

from dataclasses import replace

from graph_agent.graphdb.protocol import GraphSchema, PropertyInfo
from guardrails import CypherPolicy


def restricted_schema(schema: GraphSchema, policy: CypherPolicy | None) -> GraphSchema:
    """The schema a policy's hidden names leave: labels, relationship types and properties.

    Names compare case-insensitively, as the policy does. A hidden `Label.property` goes from
    every label and relationship, because the policy refuses that key everywhere (a variable's
    label is not always known); showing it elsewhere would only invite refused queries.
    """
    if policy is None or not policy.has_hidden_names:
        return schema
    labels = {name.casefold() for name in policy.hidden_labels}
    rel_types = {name.casefold() for name in policy.hidden_rel_types}
    props = {name.rsplit(".", 1)[-1].casefold() for name in policy.hidden_properties}

    def visible(properties: tuple[PropertyInfo, ...]) -> tuple[PropertyInfo, ...]:
        return tuple(p for p in properties if p.name.casefold() not in props)

    return replace(
        schema,
        labels=tuple(
            replace(label, properties=visible(label.properties))
            for label in schema.labels
            if label.name.casefold() not in labels
        ),
        relationships=tuple(
            replace(rel, properties=visible(rel.properties))
            for rel in schema.relationships
            if rel.type.casefold() not in rel_types
            and rel.start.casefold() not in labels
            and rel.end.casefold() not in labels
        ),
    )
