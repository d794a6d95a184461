"""Which results get a chart, and what it looks like: bot/charts.py, no Slack, no graph."""

from __future__ import annotations

import os
import signal
from datetime import date
from typing import Any

import pytest

from bot import charts

SEVERITIES = [["SEV1", 4], ["SEV2", 11], ["SEV3", 25], ["SEV4", 9]]


@pytest.mark.parametrize(
    ("columns", "rows", "kind", "horizontal"),
    [
        # one category + one number → bar
        (["severity", "incidents"], SEVERITIES, "bar", False),
        (["team", "people"], [["Payments", 5], ["Search", 3]], "bar", False),
        # long labels or many rows → horizontal
        (["service", "deps"], [["payments-gateway-api", 9], ["search", 3]], "bar", True),
        (["team", "n"], [[f"t{i}", i] for i in range(20)], "bar", True),
        # number first, label second: still a bar
        (["people", "team"], [[5, "Payments"], [3, "Search"]], "bar", False),
        # negative numbers, floats, ties
        (["team", "delta"], [["A", -3], ["B", 2.5], ["C", 2.5]], "bar", False),
        # shares of a whole in ≤ 6 rows: a bar, never a pie
        (["tier", "share"], [["1", 0.2], ["2", 0.5], ["3", 0.3]], "bar", False),
        # a null label or a null number in one row
        (["team", "n"], [[None, 4], ["A", None], ["B", 2]], "bar", False),
        # a category + several numbers → grouped bar
        (["team", "open", "closed"], [["A", 1, 4], ["B", 2, 3]], "grouped_bar", False),
        # a time column + a number → line
        (["month", "incidents"], [["2026-01", 4], ["2026-02", 7], ["2026-03", 2]], "line", False),
        (["day", "n"], [["2026-01-01", 4], ["2026-01-02", 7]], "line", False),
        (["year", "n"], [[2024, 4], [2025, 7], [2026, 2]], "line", False),
        (["opened", "n"], [[date(2026, 1, 1), 4], [date(2026, 1, 2), 5]], "line", False),
        (["month", "a", "b"], [["2026-01", 1, 2], ["2026-02", 3, 4]], "line", False),
        # two numbers → scatter
        (["size", "incidents"], [[10, 2], [30, 5], [25, 4]], "scatter", False),
    ],
)
def test_shapes_that_get_a_chart(
    columns: list[str], rows: list[list[Any]], kind: str, horizontal: bool
) -> None:
    decision = charts.decide(columns, rows)
    assert decision.kind == kind, decision.reason
    assert decision.horizontal is horizontal


@pytest.mark.parametrize(
    ("columns", "rows", "reason"),
    [
        (["incidents"], [[42]], "single value"),
        (["team", "people"], [["Payments", 5]], "single value"),
        (["name"], [["Alice"], ["Bob"], ["Carol"]], "list"),
        (["name", "email"], [["Alice", "a@x"], ["Bob", "b@x"]], "no numbers"),
        (["team", "n"], [[f"t{i}", i] for i in range(31)], "more than 30"),
        (["month", "n"], [[f"2026-01-{d:02d}", d] for d in range(1, 29)] * 8, "more than 200"),
        (["a", "b", "c", "d", "e", "f"], [["x", 1, 2, 3, 4, 5], ["y", 1, 2, 3, 4, 5]], "wide"),
        (["team", "members"], [["A", ["x", "y"]], ["B", ["z"]]], "no numbers"),
        (["team", "lead", "n"], [["A", "Ann", 1], ["B", "Bo", 2]], "wide"),
        (["team", "n"], [["A", None], ["B", None]], "no numbers"),
        (["a", "b", "c"], [[1, 2, 3], [4, 5, 6]], "numbers without labels"),
        (["flag", "n"], [[True, 1], [False, 2]], "wide"),
        # strings that look like numbers are labels, not numbers
        (["code", "zip"], [["A", "01234"], ["B", "02345"]], "no numbers"),
    ],
)
def test_shapes_that_read_best_as_text(
    columns: list[str], rows: list[list[Any]], reason: str
) -> None:
    decision = charts.decide(columns, rows)
    assert decision.kind is None
    assert reason in decision.reason


def test_a_bar_spec_is_titled_sorted_and_colour_blind_safe() -> None:
    decision = charts.decide(["severity", "incident_count"], SEVERITIES)
    spec = charts.spec(
        "How many incidents of each severity?", ["severity", "incident_count"], SEVERITIES, decision
    )
    assert spec["title"]["text"] == "How many incidents of each severity?"
    assert spec["encoding"]["x"]["title"] == "Severity"
    assert spec["encoding"]["y"]["title"] == "Incident count"
    assert spec["encoding"]["x"]["sort"] is None, "the query sorted them (SEV1..SEV4)"
    assert spec["encoding"]["x"]["axis"]["labelAngle"] == 0, "short labels read level"
    assert spec["mark"]["color"] == charts.PALETTE[0]
    assert spec["config"]["range"]["category"] == list(charts.PALETTE)
    assert [v["value"] for v in spec["data"]["values"]] == [4, 11, 25, 9]


def test_unsorted_rows_draw_the_largest_bar_first() -> None:
    rows = [["Payments", 3], ["Search", 9], ["Ads", 5]]
    decision = charts.decide(["team", "people"], rows)
    spec = charts.spec("People per team", ["team", "people"], rows, decision)
    assert spec["encoding"]["x"]["sort"] == "-y"


def test_rows_without_a_number_are_left_out_and_a_null_label_is_named() -> None:
    rows = [[None, 4], ["A", None], ["B", 2]]
    decision = charts.decide(["team", "n"], rows)
    spec = charts.spec("q", ["team", "n"], rows, decision)
    assert spec["data"]["values"] == [
        {"label": "(none)", "series": "N", "value": 4},
        {"label": "B", "series": "N", "value": 2},
    ]


def test_a_grouped_bar_has_one_colour_per_number_column() -> None:
    rows = [["A", 1, 4], ["B", 2, 3]]
    decision = charts.decide(["team", "open", "closed"], rows)
    spec = charts.spec("q", ["team", "open", "closed"], rows, decision)
    assert spec["encoding"]["color"]["field"] == "series"
    assert {v["series"] for v in spec["data"]["values"]} == {"Open", "Closed"}


def test_a_long_question_makes_a_short_title() -> None:
    decision = charts.decide(["severity", "n"], SEVERITIES)
    spec = charts.spec("why " * 50, ["severity", "n"], SEVERITIES, decision)
    assert len(spec["title"]["text"]) <= 90


def test_no_spec_without_a_kind() -> None:
    with pytest.raises(ValueError, match="single value"):
        charts.spec("q", ["n"], [[1]], charts.decide(["n"], [[1]]))


def test_alt_text_states_the_data() -> None:
    rows = [[f"team{i}", i] for i in range(8)]
    decision = charts.decide(["team", "people"], rows)
    text = charts.alt_text("Team sizes", ["team", "people"], rows, decision)
    assert text.startswith("Bar chart for “Team sizes”: team team0, people 0;")
    assert "and 3 more rows" in text


def test_a_chart_renders_to_png_and_svg() -> None:
    chart = charts.chart_for("How many incidents of each severity?", ["severity", "n"], SEVERITIES)
    assert isinstance(chart, charts.Chart)
    assert chart.png[:8] == b"\x89PNG\r\n\x1a\n"
    width = int.from_bytes(chart.png[16:20], "big")
    assert width >= charts.WIDTH, "drawn at twice the size: sharp in Slack's preview"
    assert "SEV3" in charts.render_svg(chart.spec)


def test_no_chart_says_why() -> None:
    none = charts.chart_for("Who is on call?", ["name"], [["Alice"], ["Bob"]])
    assert isinstance(none, charts.Decision) and "list" in none.reason


def test_charts_are_drawn_in_a_process_of_their_own() -> None:
    """vl-convert holds the GIL while it draws: in the bot's process it stopped every thread."""
    chart = charts.chart_for("How many incidents of each severity?", ["severity", "n"], SEVERITIES)
    assert isinstance(chart, charts.Chart)
    assert charts.drawer.pid is not None
    assert charts.drawer.pid != os.getpid()


def test_a_drawing_process_that_died_is_replaced() -> None:
    drawer = charts.Drawer()
    try:
        assert "<svg" in drawer.draw("svg", charts._TINY_SPEC, 1.0)
        first = drawer.pid
        assert first is not None
        os.kill(first, signal.SIGKILL)
        assert "<svg" in drawer.draw("svg", charts._TINY_SPEC, 1.0)
        assert drawer.pid not in (None, first)
    finally:
        drawer.close()
    assert drawer.pid is None


def test_a_slow_drawing_is_given_up_and_the_next_one_is_drawn() -> None:
    drawer = charts.Drawer()
    try:
        assert "<svg" in drawer.draw("svg", charts._TINY_SPEC, 1.0)
        stuck = drawer.pid
        assert stuck is not None
        os.kill(stuck, signal.SIGSTOP)  # a drawing that never ends, however fast the machine
        drawer.timeout_s = 0.2
        with pytest.raises(charts.ChartError, match="longer than"):
            drawer.draw("png", charts._TINY_SPEC, 1.0)
        assert drawer.pid is None
        with pytest.raises(ProcessLookupError):
            os.kill(stuck, 0)  # killed and reaped, not left behind
        drawer.timeout_s = 60.0
        assert drawer.draw("png", charts._TINY_SPEC, 1.0)[:4] == b"\x89PNG"
    finally:
        drawer.close()


def test_a_spec_the_engine_refuses_is_an_error_and_the_process_lives_on() -> None:
    drawer = charts.Drawer()
    try:
        with pytest.raises(charts.ChartError, match="conversion failed"):
            drawer.draw("png", {"mark": 42}, 1.0)
        pid = drawer.pid
        assert "<svg" in drawer.draw("svg", charts._TINY_SPEC, 1.0)
        assert drawer.pid == pid
    finally:
        drawer.close()
