"""The graph tools' pure parts: chains, ambiguity, identifying properties, the channel's view,
the hub cap, and the statements they build (read-only, no hidden name, on both dialects)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import pytest

from graph_agent.graphdb.protocol import (
    GraphSchema,
    LabelInfo,
    PropertyInfo,
    QueryResult,
    RelPattern,
    ValueMatch,
)
from graph_agent.tools import (
    Candidate,
    Entity,
    GraphView,
    Resolution,
    Step,
    ToolLimits,
    card,
    chain,
    connection,
    hub_cap,
    identifying_property,
    is_ambiguous,
    neighbourhood,
    resolve,
    typical_degree,
)
from graph_agent.tools.names import words
from graph_agent.tools.routes import _joined
from guardrails import CypherPolicy, check_cypher, referenced_names


def _prop(name: str, *types: str) -> PropertyInfo:
    return PropertyInfo(name=name, types=types or ("STRING",))


SCHEMA = GraphSchema(
    labels=(
        LabelInfo("Person", 100, (_prop("email"), _prop("name"), _prop("salary", "INTEGER"))),
        LabelInfo("Team", 10, (_prop("name"),)),
        LabelInfo("Secret", 5, (_prop("code"),)),
        LabelInfo("Case", 50, (_prop("gender"), _prop("primaryid", "INTEGER"))),
        LabelInfo("AgeGroup", 5, (_prop("ageGroup"),)),
    ),
    relationships=(
        RelPattern("Person", "MEMBER_OF", "Team", 100),
        RelPattern("Person", "KNOWS", "Person", 50),
        RelPattern("Person", "HOLDS", "Secret", 5),
        RelPattern("Case", "FALLS_UNDER", "AgeGroup", 50),
    ),
)
POLICY = CypherPolicy(
    hidden_labels=frozenset({"Secret"}),
    hidden_rel_types=frozenset({"knows"}),
    hidden_properties=frozenset({"Person.salary"}),
)


# --- chains ----------------------------------------------------------------------------------

CHAINS = [
    (["Alice"], [], "Alice"),
    (["Alice", "Platform"], [Step("MEMBER_OF", True)], "Alice —MEMBER_OF→ Platform"),
    (
        ["Alice", "Platform", "Billing"],
        [Step("MEMBER_OF", True), Step("OWNS", False)],
        "Alice —MEMBER_OF→ Platform ←OWNS— Billing",
    ),
    (["A", "B", "C"], [Step("X", False), Step("Y", False)], "A ←X— B ←Y— C"),
]


@pytest.mark.parametrize(("names", "steps", "expected"), CHAINS)
def test_chain_renders_each_step_with_its_direction(
    names: list[str], steps: list[Step], expected: str
) -> None:
    assert chain(names, steps) == expected


def test_a_chain_needs_one_name_more_than_steps() -> None:
    with pytest.raises(ValueError):
        chain(["A", "B"], [])


def test_two_half_searches_join_into_one_route_from_start_to_end() -> None:
    # Start side: a -MEMBER_OF-> t ; end side: b -MEMBER_OF-> t (read from b's side).
    head: list[Any] = ["a", Step("MEMBER_OF", True), "t"]
    tail: list[Any] = ["b", Step("MEMBER_OF", True), "t"]
    route = _joined(head, tail)
    assert route.keys == ("a", "t", "b")
    assert chain(list(route.keys), route.steps) == "a —MEMBER_OF→ t ←MEMBER_OF— b"
    # The end itself as the meeting node: nothing is reversed.
    route = _joined(["a", Step("OWNS", False), "b"], ["b"])
    assert chain(list(route.keys), route.steps) == "a ←OWNS— b"


# --- ambiguity -------------------------------------------------------------------------------

AMBIGUITY = [
    ([], False),
    ([1.0], False),
    ([1.0, 1.0], True),  # two nodes with the same name
    ([0.725, 0.707], True),  # "Alice": Alice Nguyen, Alice Kowalski
    ([1.0, 0.8], False),  # "Payments": the team, then payments-api
    ([1.0, 0.857], False),  # "Alice Nguyen": the person, then "Alice Nguyen 2"
    ([0.6, 0.55], True),
]


@pytest.mark.parametrize(("scores", "expected"), AMBIGUITY)
def test_a_name_is_ambiguous_when_the_best_two_are_close(
    scores: list[float], expected: bool
) -> None:
    assert is_ambiguous(scores) is expected


def _entity(name: str, label: str = "Person", key: int = 1, detail: str = "") -> Entity:
    return Entity(key, label, (label,), name, detail)


def test_a_resolution_names_one_entity_several_or_the_closest() -> None:
    one = Resolution("alice nguyen", (Candidate(_entity("Alice Nguyen"), 1.0),))
    assert one.entity is not None and not one.ambiguous and not one.none
    assert one.text() == "Alice Nguyen (Person)"

    two = Resolution(
        "tom",
        (
            Candidate(_entity("Tom", key=1, detail="email: tom.a@example.com"), 1.0),
            Candidate(_entity("Tom", key=2, detail="email: tom.b@example.com"), 1.0),
        ),
    )
    assert two.ambiguous and two.entity is None
    assert two.text() == (
        "“tom” could be: Tom (Person), email: tom.a@example.com; "
        "Tom (Person), email: tom.b@example.com"
    )
    assert two.rows() == [["Tom", "Person", 1.0], ["Tom", "Person", 1.0]]

    none = Resolution("alicia", near_misses=(Candidate(_entity("Alice Nguyen"), 0.31),))
    assert none.none and none.entity is None
    assert none.text() == "Nothing is called “alicia”. Closest: Alice Nguyen (Person)"
    assert Resolution("zzz").text() == "Nothing is called “zzz”."


def test_an_entity_called_by_a_number_carries_its_label() -> None:
    assert _entity("Order 10248", "Order").text() == "Order 10248"
    assert _entity("Team Rocket", "Team").text() == "Team Rocket (Team)"


def test_words_keep_letters_of_any_script_and_numbers() -> None:
    assert words("Jonas Müller") == ["jonas", "müller"]
    assert words("order 7 of payments-api") == ["order", "7", "of", "payments", "api"]


# --- what identifies a label, and what a channel sees ------------------------------------------

IDENTIFYING = [
    (LabelInfo("Person", 1, (_prop("email"), _prop("name"))), "name"),
    (LabelInfo("AgeGroup", 1, (_prop("ageGroup"),)), "ageGroup"),
    (LabelInfo("Port", 1, (_prop("port", "INTEGER"),)), "port"),
    (LabelInfo("Case", 1, (_prop("gender"), _prop("primaryid", "INTEGER"))), "primaryid"),
    (LabelInfo("Interface", 1, (_prop("ip"),)), "ip"),
    (LabelInfo("Empty", 1, ()), None),
]


@pytest.mark.parametrize(("label", "expected"), IDENTIFYING)
def test_identifying_property(label: LabelInfo, expected: str | None) -> None:
    assert identifying_property(label) == expected


def test_the_view_leaves_out_what_the_policy_hides() -> None:
    view = GraphView.of(SCHEMA, POLICY)
    assert "Secret" not in view.labels
    assert set(view.rel_types) == {"MEMBER_OF", "FALLS_UNDER"}
    assert view.properties["Person"] == ("email", "name")
    assert view.identifying["Case"] == "primaryid" and "Case" in view.numbered
    assert {"secret", "knows", "salary"} <= view.hidden
    assert not view.sees(["Person", "Secret"]) and view.sees(["Person"])
    assert view.name_of(["Case"], 100654764) == "Case 100654764"
    assert view.name_of(["Person"], "Alice") == "Alice"
    assert view.name_of(["Team"], None) == "Team"
    unrestricted = GraphView.of(SCHEMA)
    assert "Secret" in unrestricted.labels and not unrestricted.hidden


# --- hubs ------------------------------------------------------------------------------------


def test_the_typical_degree_is_the_median_node_s_label_mean() -> None:
    # Person: (100 + 2*50 + 5) / 100 = 2.05; Team: 10; Secret: 1; Case: 1; AgeGroup: 10.
    # Over 170 nodes, sorted by mean, the 85th node is a Person.
    assert typical_degree(SCHEMA) == pytest.approx(2.05)
    assert typical_degree(GraphSchema((), ())) == 0.0


def test_the_hub_cap_scales_the_typical_degree_within_bounds() -> None:
    assert hub_cap(SCHEMA) == 103  # ceil(50 * 2.05)
    assert hub_cap(SCHEMA, ToolLimits(hub_factor=1)) == 20  # the floor
    assert hub_cap(SCHEMA, ToolLimits(hub_max_degree=50)) == 50


# --- the statements --------------------------------------------------------------------------


class RecordingGraph:
    """A GraphReader that records every statement and finds nothing."""

    url = "memory"

    def __init__(self, dialect: str) -> None:
        self.dialect = dialect
        self.statements: list[tuple[str, dict[str, Any]]] = []

    def run_read(
        self,
        cypher: str,
        params: Mapping[str, Any] | None = None,
        *,
        timeout_s: float = 10.0,
        max_rows: int = 100,
    ) -> QueryResult:
        assert 0 < timeout_s <= 5.0 and max_rows == ToolLimits().max_rows
        self.statements.append((cypher, dict(params or {})))
        return QueryResult(columns=[], rows=[])

    def lookup_values(self, text: str, limit: int = 5) -> list[ValueMatch]:
        return [ValueMatch("Person", "name", "Alice Nguyen", 1.0)]


@pytest.mark.parametrize("dialect", ["FalkorDB Cypher", "Neo4j 5 Cypher"])
@pytest.mark.parametrize("policy", [None, POLICY])
def test_every_statement_is_read_only_and_names_nothing_hidden(
    dialect: str, policy: CypherPolicy | None
) -> None:
    graph = RecordingGraph(dialect)
    alice, bob = _entity("Alice", key=1), _entity("Bob", key=2)
    resolve(graph, SCHEMA, "Alicia Nguyen 7", policy=policy)  # type: ignore[arg-type]
    card(graph, SCHEMA, alice, policy=policy)  # type: ignore[arg-type]
    neighbourhood(graph, SCHEMA, alice, policy=policy)  # type: ignore[arg-type]
    connection(graph, SCHEMA, alice, bob, policy=policy)  # type: ignore[arg-type]
    assert len(graph.statements) >= 6
    key = "elementId(" if dialect.startswith("Neo4j") else "id("
    for cypher, params in graph.statements:
        assert check_cypher(cypher).allowed, cypher
        assert key in cypher
        assert "Alicia" not in cypher and "Nguyen" not in cypher  # values travel as parameters
        if policy is not None:
            names = referenced_names(cypher)
            named = {n.casefold() for n in names.labels | names.rel_types | names.properties}
            assert not named & {"secret", "knows", "salary"}, cypher
            assert "Secret" not in params.get("labels", [])
