"""Superlatives and "which X" from English and the schema (graph_agent/superlatives.py), and the
Statement type they read statements with."""

from __future__ import annotations

import pytest

from graph_agent.graphdb.protocol import GraphSchema, LabelInfo, PropertyInfo, RelPattern
from graph_agent.statement import Statement
from graph_agent.superlatives import (
    asked_label,
    identify_fix,
    name_properties,
    one_row_fix,
    property_kind,
    sort_direction_fix,
    wants_descending,
)

S, INT = ("STRING",), ("INTEGER",)
SCHEMA = GraphSchema(
    labels=(
        LabelInfo("DataCenter", 2, (PropertyInfo("name", S),)),
        LabelInfo("Rack", 9, (PropertyInfo("name", S),)),
        LabelInfo(
            "Employee",
            9,
            (
                PropertyInfo("firstName", S),
                PropertyInfo("lastName", S),
                PropertyInfo("birthDate", ("DATE",)),
                PropertyInfo("age", INT),
            ),
        ),
        LabelInfo("Film", 9, (PropertyInfo("title", S), PropertyInfo("released", INT))),
    ),
    relationships=(RelPattern("DataCenter", "CONTAINS", "Rack"),),
)


@pytest.mark.parametrize(
    ("prop", "kind"),
    [
        (PropertyInfo("birthDate", ("DATE",)), "time"),
        (PropertyInfo("created_at", S), "time"),
        (PropertyInfo("year", INT), "time"),
        (PropertyInfo("released", INT), "time"),
        (PropertyInfo("age", INT), "span"),
        (PropertyInfo("duration_minutes", INT), None),
        (PropertyInfo("pages", INT), None),
    ],
)
def test_property_kind(prop: PropertyInfo, kind: str | None) -> None:
    assert property_kind(prop) == kind


def test_direction_words() -> None:
    assert wants_descending("Who is the oldest?", "time") is False
    assert wants_descending("Who is the oldest?", "span") is True
    assert wants_descending("Which film came out most recently?", "time") is True
    assert wants_descending("the youngest person", "span") is False
    assert wants_descending("the oldest and the newest", "time") is None
    assert wants_descending("the longest film", "time") is None


def test_the_sort_is_turned_for_an_age() -> None:
    fixed = sort_direction_fix(
        "MATCH (e:Employee) RETURN e.lastName ORDER BY e.age LIMIT 1", "Who is the oldest?", SCHEMA
    )
    assert fixed is not None and fixed[0].endswith("ORDER BY e.age DESC LIMIT 1")


def test_a_sort_by_a_computed_value_is_left_alone() -> None:
    cypher = "MATCH (f:Film) RETURN f.title ORDER BY size(f.title) DESC LIMIT 1"
    assert sort_direction_fix(cypher, "What is the oldest film?", SCHEMA) is None


def test_asked_label_reads_compound_names_and_number() -> None:
    found = asked_label("Which data centers have racks?", SCHEMA)
    assert found is not None and found[0].name == "DataCenter" and found[1] is False
    found = asked_label("which film is the newest?", SCHEMA)
    assert found is not None and found[0].name == "Film" and found[1] is True
    assert asked_label("How many films are there?", SCHEMA) is None


def test_a_person_is_named_by_both_name_parts() -> None:
    employee = SCHEMA.label("Employee")
    assert employee is not None and name_properties(employee) == ["firstName", "lastName"]
    film = SCHEMA.label("Film")
    assert film is not None and name_properties(film) == ["title"]


def test_identify_keeps_out_of_statements_where_the_node_may_be_out_of_scope() -> None:
    question = "Which data center has the most racks?"
    with_with = (
        "MATCH (d:DataCenter)-[:CONTAINS]->(r:Rack) WITH count(r) AS n RETURN n ORDER BY n DESC"
    )
    assert identify_fix(with_with, question, SCHEMA) is None
    union = "MATCH (d:DataCenter) RETURN count(d) AS n UNION MATCH (r:Rack) RETURN count(r) AS n"
    assert identify_fix(union, question, SCHEMA) is None


def test_one_row_leaves_a_limit_before_the_sort() -> None:
    cypher = "MATCH (f:Film) WITH f LIMIT 10 RETURN f.title ORDER BY f.released DESC"
    fixed = one_row_fix(cypher, "Which film is the newest?", SCHEMA)
    assert fixed is not None and fixed[0].endswith("\nLIMIT 1")


def test_statement_items_and_keys() -> None:
    s = Statement(
        "MATCH (a)-[:R]->(b) WITH a, {k: [1, 2]} AS m "
        "RETURN DISTINCT a.name AS name, count(b) AS n ORDER BY n IS NULL, n DESC, name LIMIT 3"
    )
    returned = s.final_return()
    assert returned is not None
    assert [(item.alias, s.source(item.first, item.end)) for item in returned[1]] == [
        ("name", "a.name"),
        ("n", "count(b)"),
    ]
    keys = s.order_keys()
    assert [s.source(k.first, k.end) for k in keys] == ["n IS NULL", "n", "name"]
    assert [k.descending for k in keys] == [False, True, False]
    assert s.last("LIMIT") is not None and not s.has_union
    assert s.edited([(0, 5, "OPTIONAL MATCH")]).startswith("OPTIONAL MATCH (a)")
