"""Superlatives and "which X" from English and the schema (graph_agent/superlatives.py), and the
Statement type they read statements with."""

from __future__ import annotations

import pytest

from graph_agent.graphdb.protocol import GraphSchema, LabelInfo, PropertyInfo, RelPattern
from graph_agent.statement import Statement
from graph_agent.superlatives import (
    TIE_ROWS,
    age_property_fix,
    asked_label,
    identify_fix,
    name_properties,
    one_row_fix,
    property_kind,
    sort_direction_fix,
    thing_of_measure_fix,
    tie_read,
    tied_rows,
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
                PropertyInfo("hireDate", ("DATE",)),
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
    # How long since a point in time: the earliest start first; the longest tenure first.
    assert wants_descending("Who has been with the company the longest?", "time") is False
    assert wants_descending("the longest-serving employee", "time") is False
    assert wants_descending("Who has been here the shortest?", "time") is True
    assert wants_descending("Who has been here the longest?", "span") is True


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


def test_the_sole_return_is_the_return_of_a_statement_of_one_part() -> None:
    one_part = Statement("MATCH (a:A) RETURN a.name AS name, a.size")
    returned = one_part.sole_return()
    assert returned is not None and [item.alias for item in returned[1]] == ["name", None]
    assert Statement("MATCH (a:A) WITH a RETURN a.name").sole_return() is None
    assert Statement("WITH 1 AS x MATCH (a:A) RETURN a.name").sole_return() is None
    assert (
        Statement("MATCH (a:A) RETURN a.name UNION MATCH (b:B) RETURN b.name").sole_return() is None
    )
    assert Statement("MATCH (a:A) DELETE a").sole_return() is None


def test_oldest_and_youngest_sort_on_the_birth_date_not_another_date() -> None:
    written = (
        "MATCH (e:Employee) RETURN e.firstName AS first, e.hireDate AS hireDate "
        "ORDER BY hireDate ASC LIMIT 1"
    )
    fixed = age_property_fix(written, "Who is our oldest employee?", SCHEMA)
    assert fixed is not None
    assert fixed[0] == (
        "MATCH (e:Employee) RETURN e.firstName AS first, e.birthDate AS birthDate "
        "ORDER BY birthDate ASC LIMIT 1"
    )
    assert age_property_fix(written, "Who was hired earliest?", SCHEMA) is None  # a hire date
    on_birth = "MATCH (e:Employee) RETURN e.firstName ORDER BY e.birthDate LIMIT 1"
    assert age_property_fix(on_birth, "Who is the youngest employee?", SCHEMA) is None
    film = "MATCH (f:Film) RETURN f.title ORDER BY f.released LIMIT 1"
    assert age_property_fix(film, "What is the oldest film?", SCHEMA) is None  # no birth date


def test_a_limit_of_one_on_a_returned_key_is_read_again_for_ties() -> None:
    written = (
        "MATCH (d:DataCenter)-[:CONTAINS]->(r:Rack) "
        "RETURN d.name AS dc, count(r) AS racks ORDER BY racks DESC LIMIT 1"
    )
    assert tie_read(written) == (written.replace("LIMIT 1", f"LIMIT {TIE_ROWS + 1}"), 1)
    by_expression = written.replace("ORDER BY racks", "ORDER BY count(r)").replace(
        "count(r) AS racks", "count(r)"
    )
    assert tie_read(by_expression) == (by_expression.replace("LIMIT 1", "LIMIT 11"), 1)
    for other in (
        written.replace("LIMIT 1", "LIMIT 3"),
        written.replace("ORDER BY racks", "ORDER BY size(d.name)"),
        written.replace("LIMIT 1", "SKIP 1 LIMIT 1"),
        "MATCH (d:DataCenter) WITH d ORDER BY d.name LIMIT 1 RETURN d.name",
    ):
        assert tie_read(other) is None, other


def test_tied_rows_are_the_ones_equal_to_the_first_on_the_key() -> None:
    rows = [["a", 5], ["b", 5], ["c", 4]]
    assert tied_rows(rows, 1) == [["a", 5], ["b", 5]]
    assert tied_rows([["a", 5], ["b", 5.0]], 1) == [["a", 5]]  # 5 and 5.0: not the same value
    assert tied_rows([["a", None], ["b", None]], 1) == [["a", None]]
    assert tied_rows([], 0) == []


_PRICED = GraphSchema(
    labels=(
        LabelInfo("Region", 3, (PropertyInfo("name", S),)),
        LabelInfo("EC2InstanceType", 9, (PropertyInfo("name", S), PropertyInfo("memory", INT))),
        LabelInfo("Price", 9, (PropertyInfo("cost_per_hour", ("FLOAT",)),)),
        LabelInfo("Critic", 9, (PropertyInfo("name", S),)),
    ),
    relationships=(
        RelPattern("Region", "CHARGES", "Price"),
        RelPattern("Price", "FOR_INSTANCE", "EC2InstanceType"),
    ),
)


def test_the_thing_a_superlative_asks_for_is_named_where_the_measure_is_its_neighbours() -> None:
    # A trial on an AWS infrastructure graph: "instance" for EC2InstanceType (a kind's word
    # after it), and the price read from the Price node beside the one instance matched.
    written = (
        "MATCH (r:Region {name: 'Oregon'})-[:CHARGES]->(p:Price)-[:FOR_INSTANCE]->"
        "(e:EC2InstanceType) RETURN p.cost_per_hour ORDER BY p.cost_per_hour DESC LIMIT 1"
    )
    fixed = thing_of_measure_fix(written, "What is the most expensive instance in Oregon?", _PRICED)
    assert fixed is not None
    assert "RETURN e.name AS name, p.cost_per_hour ORDER BY" in fixed[0]
    for question in (
        "What is the highest price per hour?",  # no label after the superlative
        "What is the most expensive price a region charges?",  # "price" is Price's own word
        "What is the highest cost_per_hour a critic pays?",  # the phrase ends before "critic"
    ):
        assert thing_of_measure_fix(written, question, _PRICED) is None, question
    which = "Which compute optimized instance in Oregon is the most expensive?"
    assert thing_of_measure_fix(written, which, _PRICED) == fixed  # "which <words> instance"
    two = written.replace("(e:EC2InstanceType)", "(e:EC2InstanceType), (f:EC2InstanceType)")
    assert thing_of_measure_fix(two, "What is the most expensive instance?", _PRICED) is None
