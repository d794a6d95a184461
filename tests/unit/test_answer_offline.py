"""Plain answers from rows, and spotting answers that deny the rows exist."""

from __future__ import annotations

import pytest

from graph_agent.answer_offline import denies_rows, plain_answer


@pytest.mark.parametrize(
    ("answer", "denies"),
    [
        ("The graph has no data on services with no tier set.", True),
        ("the graph holds no information about awards", True),
        ("There are no results for that.", True),
        ("No data found.", True),
        ("I couldn't find any matching services.", True),
        ("13 services have no tier: billing-worker, growth-gateway, …", False),
        ("Services with no tier set: billing-worker and 12 more.", False),
        ("No services depend on Redis in the graph.", False),
        ("Payments has the most people (11).", False),
    ],
)
def test_denies_rows(answer: str, denies: bool) -> None:
    assert denies_rows(answer) is denies


def test_plain_answer_names_the_values() -> None:
    text = plain_answer(["service"], [["billing-worker"], ["search-api"]], truncated=False)
    assert "billing-worker" in text and "search-api" in text
