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


def test_a_node_returned_whole_is_shown_by_its_names_first_not_as_a_map() -> None:
    # The POLE trial: Jessica Kelly's crimes printed as raw property maps with a hashed id.
    crime = {
        "_labels": ["Crime"],
        "date": "11/08/2017",
        "id": "de1c4d40bdb618664ce29c7edd6b329218b0c8ff01c18ab446755b38ab363d05",
        "type": "Violence and sexual offences",
        "last_outcome": "Unable to prosecute suspect",
        "charge": None,
    }
    text = plain_answer(["c"], [[crime]])
    assert text.startswith("c: Crime (type: Violence and sexual offences, date: 11/08/2017, ")
    assert text.endswith("last_outcome: Unable to prosecute suspect, charge: (none), …)")
    assert "de1c4d" not in text  # a hashed id comes last, past the fields shown
    assert "_labels" not in text
    route = {"_type": "HAS_ROUTE", "distance": 1207}
    path = {
        "_nodes": [{"_labels": ["Airport"], "iata": "EDI"}, {"_labels": ["Airport"], "iata": "ATH"}]
    }
    assert plain_answer(["r", "p"], [[route, path]]) == (
        "• r: HAS_ROUTE (distance: 1,207), p: Airport (iata: EDI) → Airport (iata: ATH)"
    )
    assert plain_answer(["m"], [[{"a": 1}]]) == "m: {a: 1}"


def test_a_year_an_id_or_a_code_is_written_without_thousands_separators() -> None:
    # A trial on a movie graph: "What is the oldest movie?" answered "m.year: 2,007".
    assert plain_answer(["title", "m.year"], [["Enchanted", 2007]]) == (
        "• title: Enchanted, m.year: 2007"
    )
    assert plain_answer(["year"], [[2007], [2010]]) == "year (2): 2007, 2010"
    assert plain_answer(["u.userId"], [[12345]]) == "u.userId: 12345"
    movie = {"_labels": ["Movie"], "title": "Enchanted", "year": 2007}
    assert plain_answer(["m"], [[movie]]) == "m: Movie (title: Enchanted, year: 2007)"
    # an amount keeps them
    assert plain_answer(["revenue"], [[1234567]]) == "revenue: 1,234,567"
    assert plain_answer(["posts"], [[12345]]) == "posts: 12,345"


def test_a_rate_below_one_keeps_its_figures() -> None:
    # A trial on a bank-fraud graph: an APR of 0.0541 was answered "0.05".
    assert plain_answer(["u.APR"], [[0.0541]]) == "u.APR: 0.0541"
    assert plain_answer(["share"], [[0.123456]]) == "share: 0.1235"
    assert plain_answer(["balance"], [[7054.43]]) == "balance: 7,054.43"
