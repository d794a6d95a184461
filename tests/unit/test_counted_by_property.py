"""counted-by-property's edit on its own: the counted label grouped by its property named like
the label a statement matched, only where no relationship links the two labels."""

from __future__ import annotations

from graph_agent.graphdb.protocol import GraphSchema, LabelInfo, PropertyInfo, RelPattern
from graph_agent.repair.edits import counted_by_property

WRITTEN = "MATCH (z:Zone) RETURN z.name AS name, count(*) AS racks ORDER BY racks DESC LIMIT 1"


def _schema(*links: RelPattern) -> GraphSchema:
    def label(name: str, *props: str) -> LabelInfo:
        return LabelInfo(name, 10, tuple(PropertyInfo(p, ("STRING",)) for p in props))

    return GraphSchema(
        labels=(label("Zone", "ip", "zone"), label("Rack", "name", "zone")), relationships=links
    )


def test_unlinked_labels_count_by_the_property() -> None:
    fixed = counted_by_property(WRITTEN, "Which zone has the most racks?", _schema())
    assert fixed is not None
    assert fixed[0] == (
        "MATCH (r:Rack) RETURN r.zone AS name, count(r) AS racks ORDER BY racks DESC LIMIT 1"
    )


def test_linked_labels_are_left_to_the_road() -> None:
    linked = _schema(RelPattern("Zone", "HAS", "Rack"))
    assert counted_by_property(WRITTEN, "Which zone has the most racks?", linked) is None


def test_a_filter_on_the_node_is_left_alone() -> None:
    written = "MATCH (z:Zone) WHERE z.ip = '10.1' RETURN z.zone, count(*) AS racks"
    assert counted_by_property(written, "Which zone has the most racks?", _schema()) is None
