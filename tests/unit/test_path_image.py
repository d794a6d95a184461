"""The picture of a connection's routes: bot/path_image.py read back from the connection tool's
own rows (no graph), the Vega spec it makes, and one drawing through the chart process."""

from __future__ import annotations

import json
from typing import Any

import pytest

from bot import charts, path_image
from graph_agent.tools import Candidate, Connection, Entity, Resolution, Route, Step

COLUMNS = list(Connection.columns)


def _entity(key: int, name: str, label: str, detail: str = "") -> Entity:
    return Entity(key, label, (label,), name, detail)


HANA = _entity(1, "Hana Smith", "Person")
ROTATION = _entity(2, "Payments primary", "OnCallRotation")
SERVICE = _entity(3, "payments-service", "Service")
POSTGRES = _entity(4, "PostgreSQL", "Technology")
ALICE = _entity(5, "Alice Nguyen", "Person", "email: alice@example.com")
ORDER = _entity(6, "Order 10248", "Order")
TEAM = _entity(7, "Payments", "Team")

THREE_HOPS = Route(
    (HANA, ROTATION, SERVICE, POSTGRES),
    (Step("ON_CALL_FOR", True), Step("COVERS", True), Step("USES", True)),
)
BACKWARDS = Route(
    (ALICE, HANA, ROTATION, ORDER, POSTGRES),
    (
        Step("REPORTS_TO", False),
        Step("ON_CALL_FOR", True),
        Step("COVERS", True),
        Step("USES", True),
    ),
)
TWO_HOPS = Route((HANA, TEAM, ALICE), (Step("MEMBER_OF", True), Step("MEMBER_OF", False)))


def _rows(*routes: Route) -> list[list[Any]]:
    """The rows the connection tool answers with (what `AgentResult.rows` carries)."""
    ends = routes[0].nodes[0], routes[0].nodes[-1]
    found = Connection(
        Resolution(ends[0].name, (Candidate(ends[0], 1.0),)),
        Resolution(ends[1].name, (Candidate(ends[1], 1.0),)),
        routes,
    )
    return found.rows()


def test_the_tool_s_rows_read_back_as_its_routes() -> None:
    [three, back] = path_image.routes_in(COLUMNS, _rows(THREE_HOPS, BACKWARDS))
    assert [n.name for n in three.nodes] == [n.name for n in THREE_HOPS.nodes]
    assert three.steps == THREE_HOPS.steps and three.chain == THREE_HOPS.text()
    # Inner nodes carry the label the rows show; the ends' labels are in no row.
    assert [n.label for n in three.nodes] == [None, "OnCallRotation", "Service", None]
    assert back.steps == BACKWARDS.steps and back.hops == 4
    # A node named by its number shows no label beside it; a detail is not a label.
    assert [n.label for n in back.nodes] == [None, "Person", "OnCallRotation", None, None]


@pytest.mark.parametrize(
    ("columns", "rows"),
    [
        # a column the channel's redaction removed
        (["route", "hops", "chain"], [[1, 3, THREE_HOPS.text()]]),
        # the hops do not match the chain
        (COLUMNS, [[1, 2, THREE_HOPS.text(), ["Payments primary (OnCallRotation)"]]]),
        # a name holding an arrow: the chain has more arrows than hops
        (
            COLUMNS,
            [[1, 1, "Ann —KNOWS→ Bob —OWNS→ Cat", []]],
        ),
        # an inner node's text that is not the node in the chain
        (
            COLUMNS,
            [[1, 2, "Ann —KNOWS→ Bob —KNOWS→ Cat", ["Dan (Person)"]]],
        ),
        # the inner nodes do not match the hops
        (COLUMNS, [[1, 2, "Ann —KNOWS→ Bob —KNOWS→ Cat", []]]),
        # values of the wrong kind, a short row
        (COLUMNS, [[1, "3", THREE_HOPS.text(), []]]),
        (COLUMNS, [[1, 1, "Ann —KNOWS→ Bob", "not a list"]]),
        (COLUMNS, [[1, 1]]),
        # an arrow with no name on one side
        (COLUMNS, [[1, 1, " —KNOWS→ Bob", []]]),
    ],
)
def test_rows_that_do_not_read_back_exactly_get_no_picture(
    columns: list[str], rows: list[list[Any]]
) -> None:
    assert path_image.routes_in(columns, rows) == ()
    assert path_image.image_for(columns, rows) is None


def test_one_unreadable_row_leaves_every_route_undrawn() -> None:
    rows = [*_rows(THREE_HOPS), [2, 1, "Ann —KNOWS→ Bob —OWNS→ Cat", []]]
    assert path_image.routes_in(COLUMNS, rows) == ()


@pytest.mark.parametrize(
    ("routes", "wanted"),
    [
        ((TWO_HOPS,), False),
        ((Route((HANA, ALICE), (Step("REPORTS_TO", True),)),), False),
        ((THREE_HOPS,), True),
        ((BACKWARDS,), True),
        ((TWO_HOPS, THREE_HOPS), True),
    ],
)
def test_only_a_route_longer_than_two_hops_gets_a_picture(
    routes: tuple[Route, ...], wanted: bool
) -> None:
    assert path_image.wanted(path_image.routes_in(COLUMNS, _rows(*routes))) is wanted


def _spec(*routes: Route) -> dict[str, Any]:
    return path_image.spec(path_image.routes_in(COLUMNS, _rows(*routes)))


def _data(spec: dict[str, Any], name: str) -> list[dict[str, Any]]:
    return next(d["values"] for d in spec["data"] if d["name"] == name)


def test_the_spec_has_a_box_per_node_and_an_arrow_per_relationship() -> None:
    spec = _spec(THREE_HOPS, BACKWARDS)
    assert spec["$schema"] == path_image.VEGA_SCHEMA and charts.is_vega(spec)
    nodes, steps = _data(spec, "nodes"), _data(spec, "steps")
    assert [(n["route"], n["name"], n["label"]) for n in nodes] == [
        (1, "Hana Smith", ""),
        (1, "Payments primary", "OnCallRotation"),
        (1, "payments-service", "Service"),
        (1, "PostgreSQL", ""),
        (2, "Alice Nguyen", ""),
        (2, "Hana Smith", "Person"),
        (2, "Payments primary", "OnCallRotation"),
        (2, "Order 10248", ""),
        (2, "PostgreSQL", ""),
    ]
    assert [(s["route"], s["relationship"], s["forward"], s["head"]) for s in steps] == [
        (1, "ON_CALL_FOR", True, "triangle-right"),
        (1, "COVERS", True, "triangle-right"),
        (1, "USES", True, "triangle-right"),
        (2, "REPORTS_TO", False, "triangle-left"),
        (2, "ON_CALL_FOR", True, "triangle-right"),
        (2, "COVERS", True, "triangle-right"),
        (2, "USES", True, "triangle-right"),
    ]
    # Left to right, each arrow between the boxes it joins, its head at the node it points to.
    first = [n for n in nodes if n["route"] == 1]
    assert [n["x"] for n in first] == sorted(n["x"] for n in first)
    back = steps[3]
    assert back["x"] == path_image.NODE_WIDTH and back["x2"] == nodes[5]["x"]
    assert back["head_x"] < back["text_x"] < steps[4]["head_x"]
    # Routes stacked: the second row below the first; the ends stand out.
    assert all(n["y"] >= first[0]["y"] + path_image.NODE_HEIGHT for n in nodes[4:])
    assert nodes[0]["fill"] == nodes[3]["fill"] != nodes[1]["fill"]
    captions = [c["text"] for c in _data(spec, "captions")]
    assert captions == ["Route 1 · 3 hops", "Route 2 · 4 hops"]
    assert spec["width"] == 5 * path_image.NODE_WIDTH + 4 * path_image.GAP


def test_long_names_labels_and_types_are_shortened() -> None:
    long_name = _entity(8, "a-service-with-a-name-far-too-long-for-its-box", "Service")
    long_label = _entity(9, "db", "ADatabaseLabelLongerThanAnyBox")
    route = Route(
        (HANA, long_name, long_label, POSTGRES),
        (Step("ON_CALL_FOR", True), Step("A_RELATIONSHIP_TYPE_TOO_LONG", True), Step("U", True)),
    )
    spec = _spec(route)
    nodes, steps = _data(spec, "nodes"), _data(spec, "steps")
    assert nodes[1]["name"] == "a-service-with-a-name…"
    assert len(nodes[1]["name"]) == path_image.NAME_CHARS
    assert nodes[2]["label"] == "ADatabaseLabelLongerT…"
    assert steps[1]["relationship"] == "A_RELATIONSHIP_TY…"
    assert len(steps[1]["relationship"]) == path_image.TYPE_CHARS
    # The alt text keeps the whole chain: only the drawing is short of room.
    assert long_name.name in spec["description"]


def test_control_and_bidi_characters_are_not_drawn() -> None:
    assert path_image.shortened("Evil\u202eName\nnext", 40) == "EvilName next"
    assert path_image.shortened("\u200b", 5) == ""


def test_no_more_routes_than_the_tool_finds() -> None:
    rows = _rows(THREE_HOPS, BACKWARDS, THREE_HOPS, BACKWARDS, THREE_HOPS)
    routes = path_image.routes_in(COLUMNS, rows)
    assert len(routes) == path_image.MAX_ROUTES == 3
    spec = path_image.spec(routes)
    assert len(_data(spec, "captions")) == 3
    assert {n["route"] for n in _data(spec, "nodes")} == {1, 2, 3}
    with pytest.raises(ValueError, match="no route"):
        path_image.spec(())


def test_title_and_alt_text_are_the_chains() -> None:
    routes = path_image.routes_in(COLUMNS, _rows(THREE_HOPS, BACKWARDS))
    assert path_image.title(routes) == f"2 routes: {THREE_HOPS.text()}"
    assert path_image.title(routes[:1]) == THREE_HOPS.text()
    text = path_image.alt_text(routes)
    assert text == (
        f"How they are connected, 2 routes: 1. {THREE_HOPS.text()}; 2. {BACKWARDS.text()}."
    )


def test_the_spec_holds_only_what_the_rows_show() -> None:
    # Everything drawn is a piece of the rows' text: nothing comes from elsewhere.
    rows = _rows(THREE_HOPS, BACKWARDS)
    shown = json.dumps(rows, ensure_ascii=False)
    spec = _spec(THREE_HOPS, BACKWARDS)
    drawn = [n["name"] for n in _data(spec, "nodes")] + [
        n["label"] for n in _data(spec, "nodes") if n["label"]
    ]
    drawn += [s["relationship"] for s in _data(spec, "steps")]
    assert all(piece in shown for piece in drawn)
    assert "Technology" not in json.dumps(spec), "an end's label is in no row"


def test_a_long_route_is_drawn_to_png_in_the_chart_process() -> None:
    image = path_image.image_for(COLUMNS, _rows(THREE_HOPS, TWO_HOPS))
    assert image is not None and image.png[:8] == b"\x89PNG\r\n\x1a\n"
    assert charts.drawer.pid is not None
    svg = charts.render_svg(image.spec)
    assert "payments-service" in svg and "ON_CALL_FOR" in svg


def test_short_routes_are_not_drawn() -> None:
    assert path_image.image_for(COLUMNS, _rows(TWO_HOPS)) is None
