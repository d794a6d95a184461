"""Schema paths: enumerated from the schema, ranked by the question, rendered with values bound."""

from __future__ import annotations

import pytest

from graph_agent.graphdb.protocol import GraphSchema, LabelInfo, RelPattern
from graph_agent.prompts import GENERATE, render_paths
from graph_agent.schema_paths import path_patterns, rank_paths, schema_paths, unshadowed


def _schema(labels: list[str], rels: list[tuple[str, str, str]]) -> GraphSchema:
    return GraphSchema(
        labels=tuple(LabelInfo(name, 10, ()) for name in labels),
        relationships=tuple(RelPattern(s, t, e, 10) for s, t, e in rels),
    )


ENGINEERING = _schema(
    ["Person", "Team", "Project", "Service", "Incident"],
    [
        ("Person", "MEMBER_OF", "Team"),
        ("Person", "WORKS_ON", "Project"),
        ("Team", "OWNS", "Service"),
        ("Incident", "AFFECTED", "Service"),
        ("Person", "COMMANDED", "Incident"),
        ("Person", "REPORTS_TO", "Person"),
    ],
)
SHOP = _schema(
    ["Customer", "Order", "Product", "Supplier", "Category"],
    [
        ("Customer", "PURCHASED", "Order"),
        ("Order", "ORDERS", "Product"),
        ("Supplier", "SUPPLIES", "Product"),
        ("Product", "PART_OF", "Category"),
    ],
)
ROUTES = _schema(
    ["Airport", "Country", "Airline"],
    [
        ("Airport", "ROUTE", "Airport"),
        ("Country", "CONTAINS", "Airport"),
        ("Airline", "FLIES_FROM", "Airport"),
    ],
)


def test_paths_walk_both_directions_each_pattern_once_shortest_first() -> None:
    paths = schema_paths(ENGINEERING, "Project", "Team")
    assert paths[0].labels == ["Project", "Person", "Team"]
    assert all(len(p.hops) <= 3 for p in paths)
    for path in paths:
        rels = [hop.rel for hop in path.hops]
        assert len(rels) == len(set(rels))
    assert [len(p.hops) for p in paths] == sorted(len(p.hops) for p in paths)


def test_no_path_beyond_three_hops() -> None:
    chain = _schema(
        ["A", "B", "C", "D", "E"],
        [("A", "R1", "B"), ("B", "R2", "C"), ("C", "R3", "D"), ("D", "R4", "E")],
    )
    assert schema_paths(chain, "A", "D")
    assert schema_paths(chain, "A", "E") == []


def test_ranking_prefers_paths_through_every_named_label_and_the_worded_relationship() -> None:
    paths = schema_paths(ENGINEERING, "Team", "Person")
    best = rank_paths(
        paths,
        "Who commanded incidents that affected services of Checkout?",
        named={"Team", "Incident", "Service", "Person"},
    )[0]
    assert best.labels == ["Team", "Service", "Incident", "Person"]


@pytest.mark.parametrize(
    ("schema", "question", "hints", "expected"),
    [
        (
            ENGINEERING,
            "Which teams have people on Project Atlas?",
            [("Project", "name", "Project Atlas")],
            'MATCH (p:Project {name: "Project Atlas"})<-[:WORKS_ON]-(p2:Person)-[:MEMBER_OF]->(t:Team)',
        ),
        (
            SHOP,
            "Which suppliers sell products in the Beverages category?",
            [("Category", "categoryName", "Beverages")],
            'MATCH (c:Category {categoryName: "Beverages"})<-[:PART_OF]-(p:Product)'
            "<-[:SUPPLIES]-(s:Supplier)",
        ),
        (
            ROUTES,
            "Which airlines fly from airports in Portugal?",
            [("Country", "name", "Portugal")],
            'MATCH (c:Country {name: "Portugal"})-[:CONTAINS]->(a:Airport)'
            "<-[:FLIES_FROM]-(a2:Airline)",
        ),
    ],
)
def test_first_pattern_reaches_the_asked_label_with_the_value_bound(
    schema: GraphSchema, question: str, hints: list[tuple[str, str, str]], expected: str
) -> None:
    assert path_patterns(question, schema, hints)[0] == expected


def test_two_named_values_are_joined_on_one_node_of_the_asked_label() -> None:
    patterns = path_patterns(
        "Which people work on both Project Atlas and Project Zeus?",
        ENGINEERING,
        [("Project", "name", "Project Atlas"), ("Project", "name", "Project Zeus")],
    )
    assert patterns[0] == (
        'MATCH (p:Project {name: "Project Atlas"})<-[:WORKS_ON]-(p2:Person), '
        '(p3:Project {name: "Project Zeus"})<-[:WORKS_ON]-(p2)'
    )


def test_a_self_relationship_is_offered_both_ways() -> None:
    patterns = path_patterns(
        "Who reports to Hana Smith?", ENGINEERING, [("Person", "name", "Hana Smith")]
    )
    assert set(patterns) == {
        'MATCH (p:Person {name: "Hana Smith"})-[:REPORTS_TO]->(p2:Person)',
        'MATCH (p:Person {name: "Hana Smith"})<-[:REPORTS_TO]-(p2:Person)',
    }


def test_only_values_the_question_names() -> None:
    hints = [
        ("Team", "name", "Billing"),
        ("Service", "name", "billing-api"),
        ("Technology", "category", "Data"),
    ]
    patterns = path_patterns("Which team is responsible for billing-api?", ENGINEERING, hints)
    assert patterns == ['MATCH (s:Service {name: "billing-api"})<-[:OWNS]-(t:Team)']
    due = path_patterns("Which project is due at the earliest date?", ENGINEERING, hints[2:])
    assert due == []
    typo = path_patterns(
        "Which team owns checkuot-api?", ENGINEERING, [("Service", "name", "checkout-api")]
    )
    assert typo == ['MATCH (s:Service {name: "checkout-api"})<-[:OWNS]-(t:Team)']


def test_nothing_without_a_named_value_or_a_reachable_label() -> None:
    assert path_patterns("Which teams exist?", ENGINEERING, []) == []
    lonely = _schema(["Person", "Planet"], [("Person", "KNOWS", "Person")])
    visited = path_patterns("Which planets has Ann visited?", lonely, [("Person", "name", "Ann")])
    assert visited == []


def test_values_are_quoted_as_string_literals() -> None:
    patterns = path_patterns(
        'Which team owns the service say "hi"?', ENGINEERING, [("Service", "name", 'say "hi"')]
    )
    assert patterns[0].startswith('MATCH (s:Service {name: "say \\"hi\\""})')


def test_the_generate_prompt_shows_the_paths_after_the_hints() -> None:
    block = render_paths(["MATCH (a:A)-[:R]->(b:B)"])
    user = GENERATE.render(
        dialect="x",
        row_limit="1",
        schema="",
        examples="",
        hints="H\n",
        paths=block,
        previous="",
        question="Q?",
    )[1].content
    assert isinstance(user, str)
    assert user.index("H\n") < user.index("- MATCH (a:A)-[:R]->(b:B)") < user.index("Q?")
    assert render_paths([]) == ""


def test_values_of_the_asked_labels_are_linked_to_each_other() -> None:
    patterns = path_patterns(
        "Which engineering managers are in the Search team?",
        ENGINEERING,
        [("Person", "title", "Engineering Manager"), ("Team", "name", "Search")],
    )
    assert patterns[0] == (
        'MATCH (p:Person {title: "Engineering Manager"})-[:MEMBER_OF]->(t:Team {name: "Search"})'
    )


def test_two_values_of_one_label_meet_on_a_neighbour() -> None:
    patterns = path_patterns(
        "Which destinations are served from both Lisbon and Porto?",
        ROUTES,
        [("Airport", "city", "Lisbon"), ("Airport", "city", "Porto")],
    )
    assert patterns[0] == (
        'MATCH (a:Airport {city: "Lisbon"})-[:ROUTE]->(a2:Airport), '
        '(a3:Airport {city: "Porto"})-[:ROUTE]->(a2)'
    )


def test_a_name_spanning_two_properties_binds_one_node() -> None:
    staff = _schema(["Employee"], [("Employee", "REPORTS_TO", "Employee")])
    hints = [("Employee", "firstName", "Andrew"), ("Employee", "lastName", "Fuller")]
    patterns = path_patterns("Who reports directly to Andrew Fuller?", staff, hints)
    assert patterns == [
        'MATCH (e:Employee {firstName: "Andrew", lastName: "Fuller"})-[:REPORTS_TO]->(e2:Employee)',
        'MATCH (e:Employee {firstName: "Andrew", lastName: "Fuller"})<-[:REPORTS_TO]-(e2:Employee)',
    ]


POLICE = _schema(
    ["Crime", "Location", "Person"],
    [
        ("Crime", "OCCURRED_AT", "Location"),
        ("Person", "CURRENT_ADDRESS", "Location"),
        ("Person", "PARTY_TO", "Crime"),
    ],
)


def test_a_value_of_the_asked_label_gets_no_road_back_to_it_the_question_does_not_word() -> None:
    # A trial on the POLE graph: "drug crimes" was written as the cycle offered first.
    drugs = [("Crime", "type", "Drugs")]
    assert path_patterns("How many drug crimes are there?", POLICE, drugs) == []
    worded = path_patterns(
        "Which crimes happened where people party to drug crimes live?", POLICE, drugs
    )
    assert worded and all(":PARTY_TO]" in pattern for pattern in worded)


def test_a_part_of_a_two_property_name_is_no_node_of_its_own() -> None:
    # The POLE trial: "Kelly" is someone's first name and Jessica Kelly's surname; the lookup
    # ranked the surname first, and the model wrote `{name: "Kelly"}`.
    people = _schema(["Person"], [("Person", "KNOWS", "Person")])
    hints = [
        ("Person", "name", "Kelly"),
        ("Person", "surname", "Kelly"),
        ("Person", "name", "Jessica"),
    ]
    patterns = path_patterns("Who knows Jessica Kelly?", people, hints)
    assert patterns == [
        'MATCH (p:Person {name: "Jessica", surname: "Kelly"})-[:KNOWS]->(p2:Person)',
        'MATCH (p:Person {name: "Jessica", surname: "Kelly"})<-[:KNOWS]-(p2:Person)',
    ]
    assert unshadowed("Who knows Jessica Kelly?", hints) == hints[1:]
