"""Which graph tool a question asks for, decided without a model: the question shapes on two
graphs' vocabularies (positive and negative, as data), names checked against the value hints,
the note a tool answer leaves, choices that travel as JSON, and the routers around the tool."""

from __future__ import annotations

import json
from typing import Any

import pytest

from graph_agent.graphdb.protocol import GraphSchema, LabelInfo, PropertyInfo, RelPattern
from graph_agent.result import Choice
from graph_agent.routing import after_evaluate, after_tool, after_understand
from graph_agent.state import AgentState
from graph_agent.tool_routing import (
    SHAPES,
    SchemaWords,
    ToolRequest,
    clean_name,
    continued,
    is_tool_note,
    parse_note,
    route,
    stored_name,
)
from graph_agent.tools import Entity, GraphView


def _labels(**labels: tuple[str, ...]) -> tuple[LabelInfo, ...]:
    return tuple(
        LabelInfo(name, 10, tuple(PropertyInfo(p, ("STRING",)) for p in props))
        for name, props in labels.items()
    )


ENGINEERING = GraphSchema(
    labels=_labels(
        Person=("name", "title", "email"),
        Team=("name", "department"),
        Technology=("name", "category"),
        Incident=("title", "key", "severity"),
    ),
    relationships=(
        RelPattern("Person", "MEMBER_OF", "Team", 10),
        RelPattern("Person", "REPORTS_TO", "Person", 10),
        RelPattern("Team", "USES", "Technology", 10),
        RelPattern("Person", "RESPONDED_TO", "Incident", 10),
    ),
)
RETAIL = GraphSchema(
    labels=_labels(
        Product=("productName", "unitPrice"),
        Supplier=("companyName", "country"),
        Category=("categoryName", "description"),
        Employee=("lastName", "firstName", "title"),
        Customer=("companyName", "country"),
    ),
    relationships=(
        RelPattern("Supplier", "SUPPLIES", "Product", 10),
        RelPattern("Product", "PART_OF", "Category", 10),
        RelPattern("Employee", "REPORTS_TO", "Employee", 10),
    ),
)
GRAPHS = {"engineering": ENGINEERING, "retail": RETAIL}

Hints = list[tuple[str, str, str]]
ALICE: Hints = [("Person", "name", "Alice Nguyen")]
# (graph, question, value hints the lookup found, expected tool, expected names)
ROUTED: list[tuple[str, str, Hints, str, tuple[str, ...]]] = [
    # connection
    ("engineering", "How is Alice Nguyen connected to Wei Nguyen?", [], "connection",
     ("Alice Nguyen", "Wei Nguyen")),
    ("engineering", "how's Alice Nguyen related to the Payments team", [], "connection",
     ("Alice Nguyen", "Payments team")),
    ("engineering", "How are Alice Nguyen and PostgreSQL linked?", [], "connection",
     ("Alice Nguyen", "PostgreSQL")),
    ("engineering", "What links Alice Nguyen and Wei Nguyen?", [], "connection",
     ("Alice Nguyen", "Wei Nguyen")),
    ("engineering", "What do Payments and Checkout have in common?", [], "connection",
     ("Payments", "Checkout")),
    ("engineering", "What's the relationship between Kafka and Billing?", [], "connection",
     ("Kafka", "Billing")),
    ("engineering", "and how is Hana Smith connected to Wei Nguyen?", [], "connection",
     ("Hana Smith", "Wei Nguyen")),
    ("engineering", "Can you show me how Hana Smith is linked to Postgres?", [], "connection",
     ("Hana Smith", "Postgres")),
    ("retail", "How does Chai relate to Chang?", [], "connection", ("Chai", "Chang")),
    ("retail", "Are Chai and Chang related to each other?", [], "connection", ("Chai", "Chang")),
    ("retail", "Is Tofu connected to Konbu?", [], "connection", ("Tofu", "Konbu")),
    ("retail", "Show me the path between Exotic Liquids and Tokyo Traders.", [], "connection",
     ("Exotic Liquids", "Tokyo Traders")),
    # neighbourhood
    ("engineering", "What is Alice Nguyen linked to?", [], "neighbourhood", ("Alice Nguyen",)),
    ("engineering", "Who is Alice Nguyen connected to?", [], "neighbourhood", ("Alice Nguyen",)),
    ("engineering", "What's connected to payments-api?", [], "neighbourhood", ("payments-api",)),
    ("engineering", "What is around the Payments team?", [], "neighbourhood", ("Payments team",)),
    ("retail", "What does Exotic Liquids connect to?", [], "neighbourhood", ("Exotic Liquids",)),
    ("retail", "Show me the neighbours of Chai", [], "neighbourhood", ("Chai",)),
    # card
    ("engineering", "Tell me about Alice Nguyen.", [], "card", ("Alice Nguyen",)),
    ("engineering", "Please tell me more about 'INC-1003'", [], "card", ("INC-1003",)),
    ("engineering", "Could you describe the Checkout team?", [], "card", ("Checkout team",)),
    ("engineering", "What do you know about Alicia Nakamura?", [], "card", ("Alicia Nakamura",)),
    ("engineering", "Who is Alice Nguyen?", ALICE, "card", ("Alice Nguyen",)),
    ("engineering", "What is PostgreSQL?", [("Technology", "name", "PostgreSQL")], "card",
     ("PostgreSQL",)),
    ("engineering", "What is the Payments team?", [("Team", "name", "Payments")], "card",
     ("Payments team",)),
    ("retail", "Who is Nancy Davolio?",
     [("Employee", "firstName", "Nancy"), ("Employee", "lastName", "Davolio")], "card",
     ("Nancy Davolio",)),
    ("retail", "Give me the details of order 10248", [], "card", ("order 10248",)),
    ("retail", "Tell me about Germany", [("Customer", "country", "Germany")], "card",
     ("Germany",)),
    ("retail", "Tell me about Chef Anton's Gumbo Mix",
     [("Product", "productName", "Chef Anton's Gumbo Mix")], "card",
     ("Chef Anton's Gumbo Mix",)),
]  # fmt: skip

NOT_ROUTED: list[tuple[str, str, Hints]] = [
    # Plain questions: generated Cypher answers them.
    ("engineering", "Which teams have the most people?", []),
    ("engineering", "Who is on the Payments team?", [("Team", "name", "Payments")]),
    ("engineering", "Who is the VP of Engineering?", [("Person", "title", "VP of Engineering")]),
    ("engineering", "Who is Hana Smith's manager?", [("Person", "name", "Hana Smith")]),
    ("engineering", "What is Kenji Smith's salary?", [("Person", "name", "Kenji Smith")]),
    ("engineering", "What is the average severity of incidents?", []),
    ("engineering", "Who is the oldest?", []),
    # "Who is X?" for a part of several names, or a name the lookup did not find.
    ("engineering", "Who is Alice?", [("Person", "name", "Alice Smith")]),
    ("engineering", "What is Zebulon?", []),
    # A key on another property than the label's name: the statement loop reads it.
    ("engineering", "What is INC-1003?", [("Incident", "key", "INC-1003")]),
    # Pronouns the rewrite left, vocabulary words, the graph itself.
    ("engineering", "Tell me about it", []),
    ("engineering", "and how is she connected to Wei Nguyen?", []),
    ("engineering", "tell me about teams", []),
    ("engineering", "Tell me about the people", []),
    ("engineering", "Describe the schema", []),
    ("engineering", "How are teams related to technologies?", []),
    ("engineering", "What is linked to incidents?", []),
    # Descriptions, not names.
    ("retail", "Tell me about suppliers from Germany", [("Supplier", "country", "Germany")]),
    ("retail", "How are customers connected to suppliers?", []),
    ("retail", "Are products and categories linked?", []),
    ("retail", "What's in the Dairy Products category?", [("Category", "categoryName", "Dairy Products")]),
    ("retail", "What's the phone number of Exotic Liquids?", [("Supplier", "companyName", "Exotic Liquids")]),
    # "the maker of <a long name>": the name is most of the phrase, but the phrase describes
    # (a trial on a books graph: "Who is the author of Harry Potter and the Philosophers
    # Stone?" got the card of the series Harry Potter).
    ("retail", "Who is the maker of Chef Anton's Cajun Seasoning Gumbo Mix?",
     [("Product", "productName", "Chef Anton's Cajun Seasoning Gumbo Mix")]),
    ("retail", "What is the average unit price of our products?", []),
    ("retail", "Tell me a joke about databases.", []),
    ("retail", "How is Chai connected to chai?", []),
    # A label word left off a name says the label of the named thing: "the Dairy Products
    # employees" are employees, not the category (a conference trial: "Who are the keynote
    # speakers?" got the card of the Keynotes category).
    ("retail", "Who are the Dairy Products employees?",
     [("Category", "categoryName", "Dairy Products")]),
]  # fmt: skip


@pytest.mark.parametrize(
    ("graph", "question", "hints", "tool", "names"),
    ROUTED,
    ids=[f"{g}:{q}" for g, q, *_ in ROUTED],
)
def test_a_question_of_a_tool_s_shape_routes_to_it(
    graph: str, question: str, hints: Hints, tool: str, names: tuple[str, ...]
) -> None:
    request = route(question, GRAPHS[graph], hints)
    assert request is not None
    assert (request.tool, request.names) == (tool, names)


@pytest.mark.parametrize(
    ("graph", "question", "hints"), NOT_ROUTED, ids=[f"{g}:{q}" for g, q, _ in NOT_ROUTED]
)
def test_other_questions_are_left_to_generated_cypher(
    graph: str, question: str, hints: Hints
) -> None:
    assert route(question, GRAPHS[graph], hints) is None


def test_a_name_the_lookup_found_is_marked_so() -> None:
    hinted = route("Tell me about Alice Nguyen", ENGINEERING, ALICE)
    unknown = route("Tell me about Alicia Nakamura", ENGINEERING, ALICE)
    assert hinted is not None and hinted.hinted == (True,)
    assert unknown is not None and unknown.hinted == (False,)


def test_every_shape_routes_its_own_example() -> None:
    filled = {"<a>": "Alice Nguyen", "<b>": "Wei Nguyen"}
    for shape in SHAPES:
        question = shape.example
        for slot, name in filled.items():
            question = question.replace(slot, name)
        hints = ALICE if shape.stored_name else []
        request = route(question, ENGINEERING, hints)
        assert request is not None and request.tool == shape.tool, shape.name


STORED = [
    ("Alice Nguyen", ALICE, "identifying"),
    ("Payments team", [("Team", "name", "Payments")], "identifying"),
    ("Munich International Airport", [("Airport", "descr", "Munich International Airport")],
     "identifying"),
    ("Nancy Davolio", [("Employee", "firstName", "Nancy"), ("Employee", "lastName", "Davolio")],
     "identifying"),
    ("Germany", [("Customer", "country", "Germany")], "other"),
    ("Alice", [("Person", "name", "Alice Smith")], None),
    ("Hana Smith's manager", [("Person", "name", "Hana Smith"),
                              ("Person", "title", "Engineering Manager")], None),
]  # fmt: skip


@pytest.mark.parametrize(("name", "hints", "expected"), STORED)
def test_a_stored_name_is_what_values_of_one_label_make_up(
    name: str, hints: Hints, expected: str | None
) -> None:
    schema = GraphSchema(
        ENGINEERING.labels
        + RETAIL.labels[3:4]
        + _labels(Airport=("descr", "city"))
        + RETAIL.labels[4:5],
        (),
    )
    view = GraphView.of(schema)
    assert stored_name(name, hints, view, SchemaWords.of(schema)) == expected


CLEAN = [
    ("the Payments team", "Payments team"),
    ("“Alice Nguyen”", "Alice Nguyen"),
    ("Alice Nguyen please", "Alice Nguyen"),
    ("it", None),
    ("her team", None),
    ("all the teams", None),
    ("on the Payments team", None),
    ("Alpha Beta Gamma Delta Epsilon Zeta Eta Theta Iota", None),
]


@pytest.mark.parametrize(("raw", "expected"), CLEAN)
def test_clean_name(raw: str, expected: str | None) -> None:
    assert clean_name(raw) == expected


# --- the note, the continuation, the choice ----------------------------------------------------


def test_a_note_names_the_tool_and_reads_back() -> None:
    request = ToolRequest("connection", ("Alice Nguyen", 'Tom "T" O’Neil'))
    note = request.note()
    assert note == '// graph tool: connection("Alice Nguyen", "Tom \\"T\\" O’Neil")'
    assert is_tool_note(note) and parse_note(note) == request
    assert parse_note('// graph tool: card("Chai")') == ToolRequest("card", ("Chai",))
    for not_a_note in (
        None,
        "MATCH (n) RETURN n",
        '// graph tool: drop("x")',
        '// graph tool: card("a", "b")',
        "// graph tool: card(oops)",
    ):
        assert not is_tool_note(not_a_note), not_a_note


def test_a_continuation_names_the_chosen_entity() -> None:
    assert continued("Tell me about alice", "alice", "Alice Smith") == "Tell me about Alice Smith"
    assert continued("How is Kenji  connected to Bob?", "Kenji", "Kenji Nguyen") == (
        "How is Kenji Nguyen  connected to Bob?"
    )
    assert continued("Tell me about Tom", "Tom", "Tom") == "Tell me about Tom"
    assert continued("Tell me about \\1", "\\1", "A\\g<0>") == "Tell me about A\\g<0>"


def test_a_choice_travels_as_json_and_back() -> None:
    smith = Entity(42, "Person", ("Person",), "Alice Smith", "email: a@example.com")
    request = ToolRequest("card", ("Alice",), hinted=(False,)).with_entity(0, smith)
    choice = Choice("Alice Smith (Person)", "Tell me about Alice Smith", request, "Person",
                    "Alice Smith")  # fmt: skip
    payload = json.dumps(choice.to_dict())
    assert len(payload) < 2000  # a Slack button's value
    back = Choice.from_dict(json.loads(payload))
    assert back == choice and back.request is not None and back.request.argument(0) == smith
    none = Choice("None of these", "Tell me about Alice")
    assert Choice.from_dict(json.loads(json.dumps(none.to_dict()))) == none
    with pytest.raises(ValueError):
        Choice.from_dict({"text": "x"})
    with pytest.raises(ValueError):
        Choice.from_dict({"question": "q", "request": {"tool": "delete", "names": ["x"]}})


# --- the routers around the tool -----------------------------------------------------------------


def _state(**fields: Any) -> AgentState:
    return {"question": "q", "history": [], "attempt_count": 0, "max_attempts": 3, **fields}  # type: ignore[typeddict-item]


def test_routers_send_a_tool_question_through_the_tool() -> None:
    card = ToolRequest("card", ("Chai",))
    assert after_understand(_state(scope="in_scope", tool_request=card)) == "use_tool"
    assert after_understand(_state(scope="in_scope", tool_request=None)) == "generate"
    assert after_understand(_state(scope="out_of_scope", tool_request=card)) == "refuse"
    assert after_tool(_state(tool="card")) == "evaluate"
    assert after_tool(_state(tool=None)) == "generate"
    assert after_tool(_state(outcome="needs_clarification")) == "__end__"
    assert after_tool(_state(fatal=True)) == "give_up"
    # A doubted tool answer starts the statement loop; a doubted statement is corrected.
    doubted = _state(cypher=card.note(), attempt_count=1, last_error="no")
    assert after_evaluate(doubted) == "generate"
    assert after_evaluate(_state(cypher="MATCH (n) RETURN n", attempt_count=1)) == "correct"
