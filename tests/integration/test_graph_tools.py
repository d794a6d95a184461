"""The graph tools on the real embedded FalkorDB: cards, connections, neighbourhoods and names
on the demo graph, hubs and a channel's hidden names on small graphs of their own, Northwind."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from graph_agent.datasets import load_dataset
from graph_agent.demo import load_demo
from graph_agent.graphdb import GraphDB, GraphSchema, connect
from graph_agent.tools import (
    ToolLimits,
    card,
    connection,
    neighbourhood,
    resolve,
)
from guardrails import CypherPolicy


@pytest.fixture(scope="module")
def demo_schema(demo_db: GraphDB) -> GraphSchema:
    return demo_db.schema()


# --- the demo graph: scale 300, seed 7 (graph_agent/demo/generator.py) ----------------------
# Person i is FIRST_NAMES[i % 26] LAST_NAMES[i // 26 % 16], member of team i % 11; the first 11
# people manage those teams and report to Alice Nguyen (person 0, the VP); the others report
# to their team's manager. Team 0 is Payments: Alice Nguyen, Leila Nguyen, Wei Nguyen (22),
# Hana Smith (33), … eleven people.


def _card_checks(db: GraphDB, schema: GraphSchema) -> None:
    found = card(db, schema, "alice nguyen")
    assert found.entity is not None
    assert (found.entity.name, found.entity.label) == ("Alice Nguyen", "Person")
    assert found.properties["title"] == "VP of Engineering"
    links = {(link.relationship, link.outgoing): link for link in found.links}
    assert links["MEMBER_OF", True].count == 1
    assert links["MEMBER_OF", True].examples == ("Payments",)
    reports = links["REPORTS_TO", False]
    assert reports.count == 20 and reports.labels == ("Person",) and len(reports.examples) == 3
    text = found.text()
    assert text.startswith("Alice Nguyen (Person)\n")
    assert "—MEMBER_OF→ 1 Team: Payments" in text
    assert "←REPORTS_TO— 20 Person: " in text
    assert ["Alice Nguyen", "Person", "title", "VP of Engineering", None] in found.rows()
    # A typo finds her too.
    typo = card(db, schema, "Alise Nguyen")
    assert typo.entity is not None and typo.entity.key == found.entity.key


def test_the_card_of_a_person(demo_db: GraphDB, demo_schema: GraphSchema) -> None:
    _card_checks(demo_db, demo_schema)


def _connection_checks(db: GraphDB, schema: GraphSchema) -> None:
    # Two members of Payments who both report to Alice Nguyen.
    found = connection(db, schema, "Wei Nguyen", "hana smith")
    chains = [route.text() for route in found.routes]
    assert "Wei Nguyen —MEMBER_OF→ Payments ←MEMBER_OF— Hana Smith" in chains
    assert "Wei Nguyen —REPORTS_TO→ Alice Nguyen ←REPORTS_TO— Hana Smith" in chains
    assert all(route.hops == 2 for route in found.routes) and len(found.routes) <= 3
    assert found.rows()[0][:2] == [1, 2]
    # A person and a technology, through her team and a service it owns.
    found = connection(db, schema, "Alice Nguyen", "Postgres")
    best = found.routes[0]
    assert best.hops == 3
    assert [node.label for node in best.nodes] == ["Person", "Team", "Service", "Technology"]
    assert best.text().startswith("Alice Nguyen —MEMBER_OF→ Payments —OWNS→ payments-")
    assert best.text().endswith(" —USES→ PostgreSQL")


def test_a_connection_between_two_people_through_a_team_and_a_service(
    demo_db: GraphDB, demo_schema: GraphSchema
) -> None:
    _connection_checks(demo_db, demo_schema)


def _neighbourhood_checks(db: GraphDB, schema: GraphSchema) -> None:
    found = neighbourhood(db, schema, "payments")
    assert found.entity is not None and found.entity.label == "Team"
    groups = {(g.relationship, g.outgoing, g.label): g for g in found.groups}
    assert groups["MEMBER_OF", False, "Person"].count == 11
    assert groups["OWNS", True, "Service"].count == 4
    assert groups["OWNS", True, "Repository"].count == 4
    assert groups["OWNS", True, "OnCallRotation"].examples == ("Payments primary",)
    assert len(groups["MEMBER_OF", False, "Person"].examples) == 5
    assert found.text().splitlines()[0] == "Payments (Team) is linked to:"
    assert ["Payments", "OWNS", "outgoing", "OnCallRotation", 1, ["Payments primary"]] in (
        found.rows()
    )


def test_the_neighbourhood_of_a_team(demo_db: GraphDB, demo_schema: GraphSchema) -> None:
    _neighbourhood_checks(demo_db, demo_schema)


def test_a_first_name_several_people_share_is_ambiguous(
    demo_db: GraphDB, demo_schema: GraphSchema
) -> None:
    found = resolve(demo_db, demo_schema, "alice")
    assert found.ambiguous and found.entity is None and not found.none
    assert len(found.candidates) == 5
    assert {c.entity.name for c in found.candidates} == {
        "Alice Nguyen", "Alice Smith", "Alice Garcia", "Alice Okafor", "Alice Kowalski",
    }  # fmt: skip
    assert found.text().startswith("“alice” could be: Alice ")
    unresolved = card(demo_db, demo_schema, "alice")
    assert unresolved.entity is None and unresolved.rows() == []
    assert unresolved.text() == found.text()
    # An exact name beats its namesakes by first name, and a key names its node.
    assert resolve(demo_db, demo_schema, "Alice Nguyen").entity is not None
    incident = resolve(demo_db, demo_schema, "INC-1003").entity
    assert incident is not None and incident.label == "Incident"


def test_two_nodes_with_the_same_name_are_told_apart(scratch_db: GraphDB) -> None:
    scratch_db.run_write(
        "CREATE (:Person {name: 'Tom', email: 'tom.a@example.com', team: 'Core'}), "
        "(:Person {name: 'Tom', email: 'tom.b@example.com', team: 'Core'}), "
        "(:Person {name: 'Tomasz', email: 'tomasz@example.com', team: 'Web'})"
    )
    found = resolve(scratch_db, scratch_db.schema(), "tom")
    assert found.ambiguous
    assert [(c.entity.name, c.score) for c in found.candidates[:2]] == [("Tom", 1.0)] * 2
    assert {c.entity.detail for c in found.candidates[:2]} == {
        "email: tom.a@example.com",
        "email: tom.b@example.com",
    }
    assert "Tom (Person), email: tom.a@example.com" in found.text()


def test_a_name_that_matches_nothing_gives_the_near_misses(
    demo_db: GraphDB, demo_schema: GraphSchema
) -> None:
    found = resolve(demo_db, demo_schema, "Alicia Nakamura")
    assert found.none and not found.ambiguous and found.entity is None
    assert found.near_misses and all(c.entity.name.startswith("Alice ") for c in found.near_misses)
    assert found.text().startswith("Nothing is called “Alicia Nakamura”. Closest: Alice ")
    nothing = resolve(demo_db, demo_schema, "qqqq zzzz")
    assert nothing.none and not nothing.near_misses
    assert connection(demo_db, demo_schema, "qqqq zzzz", "Alice Nguyen").routes == ()


# --- hubs ------------------------------------------------------------------------------------


def test_a_route_does_not_go_through_a_hub(scratch_db: GraphDB) -> None:
    # Everyone belongs to one club: through it every pair would be two hops apart.
    scratch_db.run_write(
        "CREATE (club:Club {name: 'Everyone'}) "
        "WITH club UNWIND range(1, 70) AS i "
        "CREATE (:Person {name: 'Member ' + toString(i)})-[:MEMBER_OF]->(club)"
    )
    scratch_db.run_write(
        "MATCH (club:Club) "
        "CREATE (ann:Person {name: 'Ann'})-[:MEMBER_OF]->(club), "
        "(ben:Person {name: 'Ben'})-[:MEMBER_OF]->(club), "
        "(ann)-[:KNOWS]->(:Person {name: 'Cat'})-[:KNOWS]->(:Person {name: 'Dan'})"
        "-[:KNOWS]->(ben)"
    )
    schema = scratch_db.schema()
    found = connection(scratch_db, schema, "Ann", "Ben")
    assert [route.text() for route in found.routes] == ["Ann —KNOWS→ Cat —KNOWS→ Dan —KNOWS→ Ben"]
    assert [hub.name for hub in found.hubs] == ["Everyone"]
    # Without the hub rule the club is the shortest way; as an end it is never skipped.
    no_hubs = ToolLimits(hub_min_degree=10_000, hub_max_degree=10_000)
    found = connection(scratch_db, schema, "Ann", "Ben", limits=no_hubs)
    assert [route.text() for route in found.routes] == ["Ann —MEMBER_OF→ Everyone ←MEMBER_OF— Ben"]
    found = connection(scratch_db, schema, "Ann", "Everyone")
    assert [route.text() for route in found.routes] == ["Ann —MEMBER_OF→ Everyone"]


# --- a channel's hidden names ------------------------------------------------------------------

SECRETS = ("Mole", "Acme", "Secret", "Company", "WORKS_AT", "salary", "120000", "BOND")
POLICY = CypherPolicy(
    hidden_labels=frozenset({"Secret", "Company"}),
    hidden_properties=frozenset({"Person.salary"}),
)


def _shown(*results: object) -> str:
    parts = []
    for result in results:
        parts.append(result.text())  # type: ignore[attr-defined]
        parts.append(repr(result.rows()))  # type: ignore[attr-defined]
    return "\n".join(parts)


def test_a_hidden_label_on_the_only_path_is_never_revealed(scratch_db: GraphDB) -> None:
    # Ann and Ben are linked only through a person who is also Secret, and a Company.
    scratch_db.run_write(
        "CREATE (ann:Person {name: 'Ann', salary: 120000})"
        "-[:KNOWS]->(:Person:Secret {name: 'Mole', code: 'BOND'})-[:KNOWS]->"
        "(ben:Person {name: 'Ben'}), "
        "(ann)-[:WORKS_AT]->(acme:Company {name: 'Acme'})<-[:WORKS_AT]-(ben)"
    )
    schema = scratch_db.schema()
    assert len(connection(scratch_db, schema, "Ann", "Ben").routes) == 2  # seen unrestricted

    found = connection(scratch_db, schema, "Ann", "Ben", policy=POLICY)
    assert found.resolved and found.routes == () and found.hubs == ()
    assert found.text() == "No connection within 4 hops between Ann (Person) and Ben (Person)."
    ann = card(scratch_db, schema, "Ann", policy=POLICY)
    around = neighbourhood(scratch_db, schema, "Ann", policy=POLICY)
    mole = resolve(scratch_db, schema, "Mole", policy=POLICY)
    acme = resolve(scratch_db, schema, "Acme", policy=POLICY)
    assert ann.entity is not None and ann.links == () and around.groups == ()
    # Only the asked name comes back, as nothing: no candidate, no near miss.
    assert mole.none and acme.none and mole.rows() == acme.rows() == []
    shown = _shown(found, ann, around)
    assert not [word for word in SECRETS if word.casefold() in shown.casefold()], shown

    # With a longer way round through people the channel may see, that way is the answer.
    scratch_db.run_write(
        "MATCH (ann:Person {name: 'Ann'}), (ben:Person {name: 'Ben'}) "
        "CREATE (ann)-[:KNOWS]->(:Person {name: 'Cat'})-[:KNOWS]->(:Person {name: 'Dan'})"
        "-[:KNOWS]->(ben)"
    )
    found = connection(scratch_db, scratch_db.schema(), "Ann", "Ben", policy=POLICY)
    assert [route.text() for route in found.routes] == ["Ann —KNOWS→ Cat —KNOWS→ Dan —KNOWS→ Ben"]
    assert not [word for word in SECRETS if word.casefold() in _shown(found).casefold()]


def test_a_hidden_relationship_type_is_not_walked(scratch_db: GraphDB) -> None:
    scratch_db.run_write(
        "CREATE (:Person {name: 'Ann'})-[:PAID]->(:Person {name: 'Ben'})"
        "<-[:KNOWS]-(:Person {name: 'Cat'})"
    )
    schema = scratch_db.schema()
    policy = CypherPolicy(hidden_rel_types=frozenset({"PAID"}))
    assert connection(scratch_db, schema, "Ann", "Ben", policy=policy).routes == ()
    ben = card(scratch_db, schema, "Ben", policy=policy)
    assert [(link.relationship, link.count) for link in ben.links] == [("KNOWS", 1)]
    assert "PAID" not in _shown(ben)


# --- another dataset -------------------------------------------------------------------------


def test_the_tools_on_northwind(scratch_db: GraphDB) -> None:
    load_dataset(scratch_db, "northwind")
    schema = scratch_db.schema()
    chai = card(scratch_db, schema, "chai")
    assert chai.entity is not None and chai.entity.label == "Product"
    links = {(link.relationship, link.outgoing): link for link in chai.links}
    assert links["PART_OF", True].examples == ("Beverages",)
    assert links["SUPPLIES", False].examples == ("Exotic Liquids",)
    found = connection(scratch_db, schema, "Chai", "Chang")
    # Of the many two-hop routes (their category, their supplier, every order of both), the
    # most specific come first: the supplier of three products before a category of twelve.
    assert [route.hops for route in found.routes] == [2, 2, 2]
    assert found.routes[0].text() == "Chai ←SUPPLIES— Exotic Liquids —SUPPLIES→ Chang"
    around = neighbourhood(scratch_db, schema, "Exotic Liquids")
    assert {(g.relationship, g.label) for g in around.groups} == {("SUPPLIES", "Product")}
    order = resolve(scratch_db, schema, "order 10248").entity
    assert order is not None and order.name == "Order 10248"


# --- Neo4j (NEO4J_URI) -------------------------------------------------------------------------


@pytest.fixture(scope="module")
def neo4j_demo(tmp_path_factory: pytest.TempPathFactory) -> Iterator[GraphDB]:
    db = connect(
        os.environ.get("NEO4J_URI", ""),
        data_dir=Path(tmp_path_factory.mktemp("neo4j")),
        user=os.environ.get("NEO4J_USER", "neo4j"),
        password=os.environ.get("NEO4J_PASSWORD", ""),
        database=os.environ.get("NEO4J_DATABASE") or None,
    )
    db.run_write("MATCH (n) DETACH DELETE n")
    load_demo(db)
    yield db
    db.close()


@pytest.mark.neo4j
def test_the_same_answers_on_neo4j(neo4j_demo: GraphDB) -> None:
    schema = neo4j_demo.schema()
    _card_checks(neo4j_demo, schema)
    _connection_checks(neo4j_demo, schema)
    _neighbourhood_checks(neo4j_demo, schema)
    assert resolve(neo4j_demo, schema, "alice").ambiguous
