"""The Neo4j adapter without a server: record conversion and schema assembly from procedure output."""

from __future__ import annotations

import datetime as dt
from typing import Any

from neo4j.graph import Graph, Node
from neo4j.time import Date, DateTime, Duration

from graph_agent.graphdb.neo4j_db import (
    assemble_schema,
    patterns_from_visualization,
    position_of,
    properties_from_procedure,
    to_json,
)


def _entities() -> tuple[Any, Any]:
    # Built the way the driver builds them for records: entities hang off a Graph.
    graph = Graph()
    alice = Node(graph, "e1", 1, ["Person"], {"name": "Alice", "born": Date(1990, 4, 2)})
    rel = graph.relationship_type("MEMBER_OF")(graph, "e3", 3, {"since": 2020})
    return alice, rel


def test_nodes_relationships_and_temporal_values_become_plain_json() -> None:
    alice, rel = _entities()
    assert to_json(alice) == {"_labels": ["Person"], "name": "Alice", "born": "1990-04-02"}
    assert to_json(rel) == {"_type": "MEMBER_OF", "since": 2020}
    assert to_json(DateTime(2024, 1, 2, 3, 4, 5)) == "2024-01-02T03:04:05"
    assert to_json(Duration(days=2)) == "P2D"
    assert to_json([{"a": Date(2020, 1, 1)}]) == [{"a": "2020-01-01"}]
    assert to_json(dt.date(2020, 1, 1)) == "2020-01-01"


def test_error_position_from_the_engine_message() -> None:
    message = "Invalid input 'RETRN': expected ... (line 1, column 18 (offset: 17))"
    assert position_of(message) == 17
    assert position_of("no position here") is None


def test_schema_assembly_from_procedure_output_shapes() -> None:
    node_rows = [
        {"nodeType": ":`Person`", "nodeLabels": ["Person"], "propertyName": "name",
         "propertyTypes": ["String"], "mandatory": True},
        {"nodeType": ":`Person`", "nodeLabels": ["Person"], "propertyName": "level",
         "propertyTypes": ["Long"], "mandatory": False},
        {"nodeType": ":`Team`", "nodeLabels": ["Team"], "propertyName": "aliases",
         "propertyTypes": ["StringArray"], "mandatory": True},
        {"nodeType": ":`Empty`", "nodeLabels": ["Empty"], "propertyName": None,
         "propertyTypes": None, "mandatory": False},
    ]  # fmt: skip
    rel_rows = [
        {"relType": ":`MEMBER_OF`", "propertyName": "since", "propertyTypes": ["Date"],
         "mandatory": True},
    ]  # fmt: skip
    viz_nodes = [{"name": "Person"}, {"name": "Team"}, {"name": "Empty"}]
    viz_rels = [({"name": "Person"}, "MEMBER_OF", {"name": "Team"}),
                ({"name": "Person"}, "REPORTS_TO", {"name": "Person"}),
                ({"name": "Ghost"}, "HAUNTS", {"name": "Team"})]  # fmt: skip
    node_props = properties_from_procedure(node_rows)
    assert [(p.name, p.types) for p in node_props["Person"]] == [
        ("level", ("INTEGER", "NULL")),
        ("name", ("STRING",)),
    ]
    assert node_props["Team"][0].types == ("LIST<STRING>",)
    assert node_props["Empty"] == ()
    patterns = patterns_from_visualization(viz_nodes, viz_rels)
    assert patterns == [("Person", "MEMBER_OF", "Team"), ("Person", "REPORTS_TO", "Person")]
    schema = assemble_schema(
        {"Person": 10, "Team": 2, "Empty": 0},
        node_props,
        patterns,
        properties_from_procedure(rel_rows),
        exclude=["Empty"],
    )
    assert [label.name for label in schema.labels] == ["Person", "Team"]
    member = next(r for r in schema.relationships if r.type == "MEMBER_OF")
    assert member.properties[0].types == ("DATE",)
    only_people = assemble_schema({"Person": 10, "Team": 2}, node_props, patterns, {},
                                  include=["Person"])  # fmt: skip
    assert [(r.start, r.type, r.end) for r in only_people.relationships] == [
        ("Person", "REPORTS_TO", "Person")
    ]
