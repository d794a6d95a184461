"""The validate step's lint: string-literal fixes and the empty-result feedback, table-driven."""

from __future__ import annotations

import pytest

from graph_agent.graphdb.protocol import GraphSchema, LabelInfo, PropertyInfo, RelPattern
from graph_agent.lint import (
    empty_result_feedback,
    lint_cypher,
    relabel_for_value,
    value_on_another_label,
)

KEANU = ("Person", "name", "Keanu Reeves")
MATRIX = ("Movie", "title", "The Matrix")


@pytest.mark.parametrize(
    ("cypher", "hints", "fixed"),
    [
        (  # a case function in a pattern map, the value hinted: the stored form
            'MATCH (p:Person {name: toLower("Keanu Reeves")}) RETURN p.born',
            [KEANU],
            'MATCH (p:Person {name: "Keanu Reeves"}) RETURN p.born',
        ),
        (  # … lower-cased inside too
            "MATCH (p:Person {name: toLower('keanu reeves')}) RETURN p.born",
            [KEANU],
            "MATCH (p:Person {name: 'Keanu Reeves'}) RETURN p.born",
        ),
        (  # no hint: inside a map the literal as written
            "MATCH (m:Movie {title: toUpper('Top Gun')}) RETURN m.released",
            [],
            "MATCH (m:Movie {title: 'Top Gun'}) RETURN m.released",
        ),
        (  # compared to a property, hinted
            "MATCH (p:Person) WHERE p.name = toLower('Keanu Reeves') RETURN p.born",
            [KEANU],
            "MATCH (p:Person) WHERE p.name = 'Keanu Reeves' RETURN p.born",
        ),
        (  # … the other way round
            "MATCH (p:Person) WHERE TOLOWER('Keanu Reeves') = p.name RETURN p.born",
            [KEANU],
            "MATCH (p:Person) WHERE 'Keanu Reeves' = p.name RETURN p.born",
        ),
        (  # a bare equality in the wrong case, in a map and in WHERE
            'MATCH (p:Person {name: "keanu reeves"})-[:ACTED_IN]->(m:Movie) '
            'WHERE m.title = "the matrix" RETURN m.title',
            [KEANU, MATRIX],
            'MATCH (p:Person {name: "Keanu Reeves"})-[:ACTED_IN]->(m:Movie) '
            'WHERE m.title = "The Matrix" RETURN m.title',
        ),
        (  # a quote inside the stored value keeps the statement valid
            "MATCH (m:Movie {title: 'one flew over the cuckoo\\'s nest'}) RETURN m",
            [("Movie", "title", "One Flew Over the Cuckoo's Nest")],
            "MATCH (m:Movie {title: 'One Flew Over the Cuckoo\\'s Nest'}) RETURN m",
        ),
    ],
)
def test_fixes(cypher: str, hints: list[tuple[str, str, str]], fixed: str) -> None:
    result = lint_cypher(cypher, hints)
    assert result.cypher == fixed
    assert result.fixes


@pytest.mark.parametrize(
    ("cypher", "hints"),
    [
        # Already right.
        ('MATCH (p:Person {name: "Keanu Reeves"}) RETURN p.born', [KEANU]),
        # Case-insensitive on both sides is a correct pattern.
        ("MATCH (p:Person) WHERE toLower(p.name) = toLower('Keanu Reeves') RETURN p", [KEANU]),
        ("MATCH (p:Person) WHERE toLower(p.name) = 'keanu reeves' RETURN p", [KEANU]),
        # Compared to a property with no hint: not unambiguous.
        ("MATCH (p:Person) WHERE p.name = toLower('Keanu Reeves') RETURN p", []),
        # The hint is for another label or property.
        ("MATCH (m:Movie {title: 'keanu reeves'}) RETURN m", [KEANU]),
        ("MATCH (p:Person) WHERE p.nickname = 'keanu reeves' RETURN p", [KEANU]),
        # Two stored values spelt alike: ambiguous.
        (
            "MATCH (p:Person {name: 'alex'}) RETURN p",
            [("Person", "name", "Alex"), ("Person", "name", "ALEX")],
        ),
        # Not a pattern map: a map literal, a call's argument, a list.
        ("RETURN {name: toLower('Keanu Reeves')} AS m", []),
        ("MATCH (p) RETURN collect({n: toLower('X')})", []),
        ("MATCH (p:Person) WHERE p.name IN ['keanu reeves'] RETURN p", [KEANU]),
        # A string that is not compared with a property.
        ("RETURN toLower('Keanu Reeves') AS x", [KEANU]),
    ],
)
def test_leaves_alone(cypher: str, hints: list[tuple[str, str, str]]) -> None:
    result = lint_cypher(cypher, hints)
    assert result.cypher == cypher and result.fixes == []


def test_fix_names_what_changed() -> None:
    result = lint_cypher("MATCH (p:Person {name: toLower('Keanu Reeves')}) RETURN p", [KEANU])
    assert result.fixes == ["toLower('Keanu Reeves') → the stored value (Person.name)"]


@pytest.mark.parametrize(
    ("cypher", "hints", "says"),
    [
        (
            "MATCH (p:Person) WHERE p.name CONTAINS 'Keanu' RETURN p",
            [KEANU],
            "The stored value is exactly 'Keanu Reeves' (Person.name)",
        ),
        ("MATCH (p:Person) RETURN count(p)", [KEANU, MATRIX], "'The Matrix' (Movie.title)"),
    ],
)
def test_empty_result_feedback_names_the_stored_value(
    cypher: str, hints: list[tuple[str, str, str]], says: str
) -> None:
    feedback = empty_result_feedback(cypher, hints)
    assert feedback is not None and says in feedback


@pytest.mark.parametrize(
    ("cypher", "hints"),
    [
        ("MATCH (p:Person {name: 'Keanu Reeves'}) RETURN p", [KEANU]),
        ("MATCH (p:Person) WHERE toLower(p.name) = 'keanu reeves' RETURN p", [KEANU]),
        ("MATCH (p:Person) RETURN p", []),
    ],
)
def test_no_feedback_when_the_value_was_used_or_nothing_matched(
    cypher: str, hints: list[tuple[str, str, str]]
) -> None:
    assert empty_result_feedback(cypher, hints) is None


@pytest.mark.parametrize(
    ("cypher", "fixed"),
    [
        (
            "MATCH (p:Product) RETURN p.name AS name, p.unitPrice AS price "
            "ORDER BY price DESC LIMIT 5",
            "MATCH (p:Product) RETURN p.name AS name, p.unitPrice AS price "
            "ORDER BY price IS NULL, price DESC LIMIT 5",
        ),
        (
            "MATCH (p:Product) RETURN p.name ORDER BY p.unitPrice DESC, p.name LIMIT 5",
            "MATCH (p:Product) RETURN p.name "
            "ORDER BY p.unitPrice IS NULL, p.unitPrice DESC, p.name LIMIT 5",
        ),
        (
            "MATCH (p) WITH p ORDER BY p.age descending LIMIT 1 RETURN p.name",
            "MATCH (p) WITH p ORDER BY p.age IS NULL, p.age descending LIMIT 1 RETURN p.name",
        ),
        (
            "MATCH (a) CALL { WITH a RETURN a.x AS x ORDER BY a.x DESC LIMIT 1 } RETURN x",
            "MATCH (a) CALL { WITH a RETURN a.x AS x ORDER BY a.x IS NULL, a.x DESC LIMIT 1 } "
            "RETURN x",
        ),
    ],
)
def test_descending_sorts_put_nulls_last(cypher: str, fixed: str) -> None:
    linted = lint_cypher(cypher)
    assert linted.cypher == fixed
    assert linted.fixes and "nulls last" in linted.fixes[0]


@pytest.mark.parametrize(
    "cypher",
    [
        "MATCH (p) RETURN p.name ORDER BY p.age",  # ascending: nulls already last
        "MATCH (p) RETURN p.name ORDER BY p.age IS NULL, p.age DESC",  # already guarded
        "MATCH (t)<-[:IN]-(p) RETURN t.name, count(p) AS n ORDER BY count(p) DESC",  # a call
        "MATCH (t)<-[:IN]-(p) RETURN t.name, count(p) AS n ORDER BY n DESC",  # never null
        "MATCH (p) RETURN p.name ORDER BY p.age * 2 DESC",  # an expression: left alone
        "MATCH (p) RETURN 'ORDER BY p.age DESC' AS text",  # inside a string
    ],
)
def test_other_sorts_are_left_alone(cypher: str) -> None:
    assert lint_cypher(cypher).cypher == cypher


@pytest.mark.parametrize(
    ("cypher", "fixed"),
    [
        (
            'MATCH (a)-[r:HAS_ROUTE]->(b) RETURN b.city AS "Where can I fly from Dublin?"',
            "MATCH (a)-[r:HAS_ROUTE]->(b) RETURN b.city AS city",
        ),
        (
            "MATCH (c:City) RETURN count(c) AS 'Number of cities'",
            "MATCH (c:City) RETURN count(c) AS number_of_cities",
        ),
        (
            'MATCH (c:City) RETURN c.name AS name, toUpper(c.name) AS "name"',
            "MATCH (c:City) RETURN c.name AS name, toUpper(c.name) AS name_2",
        ),
        ("RETURN 'AS' AS x, 1 AS `a b`", "RETURN 'AS' AS x, 1 AS `a b`"),
        ('RETURN 2024 AS "2024 total"', "RETURN 2024 AS v_2024_total"),
    ],
)
def test_a_column_named_with_a_string_gets_a_name(cypher: str, fixed: str) -> None:
    assert lint_cypher(cypher).cypher == fixed


def test_a_value_held_by_another_label_names_the_pattern_that_exists() -> None:
    # The value hint led a 1.5B model to (:Process {name: 'java'}) on every attempt.
    schema = GraphSchema(
        labels=(
            LabelInfo("Software", 14, (PropertyInfo("name", ("STRING",)),)),
            LabelInfo("Process", 9, (PropertyInfo("name", ("STRING",)),)),
        ),
        relationships=(
            RelPattern("Software", "DEPENDS_ON", "Software"),
            RelPattern("Process", "DEPENDS_ON", "Process"),
        ),
    )
    hints = [("Process", "name", "java"), ("Software", "name", "Java")]
    wrong = "MATCH (s:Software)-[:DEPENDS_ON]->(p:Process {name: 'java'}) RETURN s.name"
    assert value_on_another_label(wrong, schema, hints) == (
        "'Java' is also a Software name: (:Software)-[:DEPENDS_ON]->(:Software {name: 'Java'})"
    )
    reversed_ = "MATCH (p:Process {name: 'java'})<-[:DEPENDS_ON]-(s:Software) RETURN s.name"
    assert "(:Software)-[:DEPENDS_ON]->(:Software {name: 'Java'})" in value_on_another_label(
        reversed_, schema, hints
    )
    right = "MATCH (s:Software)-[:DEPENDS_ON]->(j:Software {name: 'Java'}) RETURN s.name"
    assert value_on_another_label(right, schema, hints) == ""
    assert value_on_another_label(wrong, schema, [("Process", "name", "java")]) == ""


def _software_schema() -> GraphSchema:
    return GraphSchema(
        labels=(
            LabelInfo("Software", 14, (PropertyInfo("name", ("STRING",)),)),
            LabelInfo("Service", 5, (PropertyInfo("name", ("STRING",)),)),
            LabelInfo("Process", 9, (PropertyInfo("name", ("STRING",)),)),
            LabelInfo("Machine", 9, (PropertyInfo("name", ("STRING",)),)),
        ),
        relationships=(
            RelPattern("Software", "DEPENDS_ON", "Software"),
            RelPattern("Process", "DEPENDS_ON", "Process"),
            RelPattern("Machine", "RUNS", "Process"),
        ),
    )


@pytest.mark.parametrize(
    ("cypher", "fixed"),
    [
        (
            "MATCH (s:Software)-[:DEPENDS_ON]->(p:Process {name: 'java'}) RETURN s.name",
            "MATCH (s:Software)-[:DEPENDS_ON]->(p:Software {name: 'java'}) RETURN s.name",
        ),
        (
            "MATCH (p:Process)<-[:DEPENDS_ON]-(s:Software) WHERE p.name = 'java' RETURN s.name",
            "MATCH (p:Software)<-[:DEPENDS_ON]-(s:Software) WHERE p.name = 'java' RETURN s.name",
        ),
    ],
)
def test_a_filtered_node_gets_the_label_that_holds_the_value_and_fits(
    cypher: str, fixed: str
) -> None:
    # A 1.5B model kept (:Process {name: 'java'}) on every attempt and on the re-ask.
    hints = [("Process", "name", "java"), ("Service", "name", "java"), ("Software", "name", "java")]
    assert relabel_for_value(cypher, _software_schema(), hints) == (
        fixed,
        "(:Process {name: 'java'}) → (:Software)",
    )


@pytest.mark.parametrize(
    ("cypher", "hints"),
    [
        # No hint holds the value on another label.
        (
            "MATCH (s:Software)-[:DEPENDS_ON]->(p:Process {name: 'java'}) RETURN s.name",
            [("Process", "name", "java")],
        ),
        # The value is held on another property: changing the label alone would not fit it.
        (
            "MATCH (s:Software)-[:DEPENDS_ON]->(p:Process {name: 'java'}) RETURN s.name",
            [("Software", "title", "java")],
        ),
        # The holder has no such relationship either.
        (
            "MATCH (s:Software)-[:DEPENDS_ON]->(p:Process {name: 'java'}) RETURN s.name",
            [("Machine", "name", "java")],
        ),
        # Another problem stays after the change: no single fix makes the statement fit.
        (
            "MATCH (s:Software)-[:DEPENDS_ON]->(p:Process {name: 'java'}) RETURN s.version",
            [("Software", "name", "java")],
        ),
        # The unfiltered node of that label is not the one to change.
        (
            "MATCH (m:Machine)-[:RUNS]->(:Process), (s:Software)-[:DEPENDS_ON]->(:Process "
            "{name: 'java'}) RETURN s.name",
            [("Machine", "name", "java")],
        ),
    ],
)
def test_no_relabel_unless_one_change_makes_the_statement_fit(
    cypher: str, hints: list[tuple[str, str, str]]
) -> None:
    assert relabel_for_value(cypher, _software_schema(), hints) is None


@pytest.mark.parametrize(
    ("cypher", "fixed"),
    [
        (
            # A real 1.5B statement: the engine's "cannot conclude with WITH" came back 3 times.
            "MATCH (dc:DataCenter) WITH dc, count(*) AS racks ORDER BY racks DESC LIMIT 1",
            "MATCH (dc:DataCenter) RETURN dc, count(*) AS racks ORDER BY racks DESC LIMIT 1",
        ),
        ("MATCH (a:Team) WITH a", "MATCH (a:Team) RETURN a"),
        # Not the last clause, or a WHERE follows: left alone.
        ("MATCH (a) WITH a MATCH (a)-->(b) RETURN b", None),
        ("MATCH (a) WITH a WHERE a.x > 1", None),
        ("MATCH (p) WHERE p.name STARTS WITH 'A' RETURN p.name", None),
    ],
)
def test_a_statement_ending_with_with_returns_instead(cypher: str, fixed: str | None) -> None:
    assert lint_cypher(cypher).cypher == (fixed or cypher)


@pytest.mark.parametrize(
    ("cypher", "fixed"),
    [
        (
            # Each (type) group is one row: count(*) again gave "1 machine of each type".
            "MATCH (m:Machine)-[:TYPE]->(t:Type) WITH t.type AS type, count(*) AS n "
            "RETURN type, count(*) AS n ORDER BY n DESC",
            "MATCH (m:Machine)-[:TYPE]->(t:Type) WITH t.type AS type, count(*) AS n "
            "RETURN type, n AS n ORDER BY n DESC",
        ),
        (
            "MATCH (t:Type)<-[:TYPE]-(m) WITH t, count(m) AS machines RETURN t, count(m) AS machines",
            "MATCH (t:Type)<-[:TYPE]-(m) WITH t, count(m) AS machines RETURN t, machines AS machines",
        ),
        # Fewer keys: counting the groups is a question of its own ("how many types").
        ("MATCH (t:Type) WITH t.type AS type, count(*) AS n RETURN count(*) AS n", None),
        # A WHERE between them: left alone.
        ("MATCH (t:Type) WITH t, count(*) AS n WHERE n > 1 RETURN t, count(*) AS n", None),
        # Another alias: not the count the WITH made.
        ("MATCH (t:Type) WITH t, count(*) AS n RETURN t, count(*) AS m", None),
    ],
)
def test_a_count_of_rows_already_grouped_is_the_first_count(cypher: str, fixed: str | None) -> None:
    assert lint_cypher(cypher).cypher == (fixed or cypher)
