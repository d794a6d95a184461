"""Grounding: what an answer claims against the rows, the empty-result sentence, and follow-ups
that still lean on the history."""

from __future__ import annotations

import datetime as dt
from typing import Any

import pytest

from graph_agent.grounding import (
    Evidence,
    capitalised_names,
    dropped_reference,
    leaning_words,
    lost_referent,
    nothing_found,
    question_entities,
    unsupported_claims,
    with_referent,
)

FILMS: list[list[Any]] = [["The Matrix", 1999, 8.7], ["Speed", 1994, 7.2]]
ASKED = (
    "Which films did Keanu Reeves act in? "
    "MATCH (p:Person {name: 'Keanu Reeves'})-[:ACTED_IN]->(m:Movie) "
    "RETURN m.title AS title, m.released AS released, m.rating AS rating LIMIT 5"
)


@pytest.mark.parametrize(
    ("answer", "missing"),
    [
        ("Keanu Reeves acted in The Matrix (1999) and Speed (1994).", []),
        ("There are 2 films: The Matrix and Speed.", []),  # the row count
        ("1. The Matrix\n2. Speed", []),  # list numbers claim nothing
        ("- The Matrix\n- Speed", []),
        ("Films: The Matrix, Speed", []),
        ("The Matrix is rated 8.70 and Speed 7.2.", []),  # 8.70 == 8.7
        ("The top 5 are listed.", []),  # a number of the query
        ("Its 1st film is The Matrix.", []),  # ordinals are positions
        ("Movies by rating: The Matrix first.", []),  # "Movies" is the query's `:Movie`
        ("Keanu Reeves was born in 1964.", ["1964"]),
        ("Clint Eastwood directed 'The Godfather'.", ["The Godfather", "Clint Eastwood"]),
        ("- The Matrix\n- Inception", ["Inception"]),  # a list item is a name, capital or not
        ("Keanu acted in 100 movies.", ["100"]),
        ("The average rating is 7.95.", ["7.95"]),
        ("Speed grossed $350,448,145.", ["350,448,145"]),
        # A real 1.5B model copied the evaluate prompt's placeholders into its answer.
        ("Keanu Reeves acted in: <films> with no <property>", ["<films>", "<property>"]),
    ],
)
def test_claims_must_be_in_the_rows_or_the_question(answer: str, missing: list[str]) -> None:
    assert unsupported_claims(answer, Evidence(FILMS, ASKED)) == missing


@pytest.mark.parametrize(
    ("rows", "answer", "grounded"),
    [
        ([[1234]], "There are 1,234 of them.", True),
        ([[12.5]], "It costs 12.50.", True),
        ([[4.666666]], "The mean is 4.67.", True),  # rounded as written
        ([[4.666666]], "The mean is 4.6.", False),
        ([[0.45]], "45% of them.", True),
        ([[["Ann", "Bo", "Cy"]]], "Three names: Ann, Bo and Cy (3 in all).", True),  # list length
        ([["2021-03-05"]], "It began on 5 March 2021.", True),  # the parts of a date
        ([[dt.date(2021, 3, 5)]], "It began in 2021.", True),
        ([[{"name": "Ada Lovelace", "_labels": ["Person"]}]], "Ada Lovelace.", True),
        ([["Lovelace, Ada"]], "It was Ada Lovelace.", True),  # every word of one value
        ([["Apollo 13"]], "Apollo 13 it is.", True),
        ([["Ann"]], "Ann and Grace Hopper.", False),
        ([[-5]], "It fell by 5.", True),
        ([[True]], "Yes.", True),
    ],
)
def test_numbers_and_names_in_their_printed_forms(
    rows: list[list[Any]], answer: str, grounded: bool
) -> None:
    assert (unsupported_claims(answer, Evidence(rows)) == []) is grounded


@pytest.mark.parametrize(
    ("text", "names"),
    [
        ("Keanu Reeves was born in 1964.", ["Keanu Reeves"]),
        ("Books by Ursula Le Guin.", ["Ursula Le Guin"]),  # a sentence-opening common word
        ("There are 3. Inception is one.", []),  # one word opening a sentence is left out
        ("I saw The Matrix and Speed.", ["Matrix", "Speed"]),  # articles trimmed
        ("Tom Hanks's films.", ["Tom Hanks"]),
        ("In March, Ada wrote.", ["Ada"]),
    ],
)
def test_capitalised_names_skip_grammar_capitals(text: str, names: list[str]) -> None:
    assert capitalised_names(text) == names


@pytest.mark.parametrize(
    ("question", "hints", "entities", "sentence"),
    [
        (
            "Which films did Keanu Reeves direct?",
            ["Keanu Reeves"],
            ["Keanu Reeves"],
            'The graph has nothing that matches this question about "Keanu Reeves".',
        ),
        (
            "Who directed 'The Matrix' for Warner Bros?",
            [],
            ["The Matrix", "Warner Bros"],
            'The graph has nothing that matches this question about "The Matrix" and '
            '"Warner Bros".',
        ),
        (
            "which films did keanu reeves direct?",  # the stored value, in its stored form
            ["Keanu Reeves", "Speed"],
            ["Keanu Reeves"],
            'The graph has nothing that matches this question about "Keanu Reeves".',
        ),
        (
            "How many Movie nodes are there?",  # a label is not a thing the question names
            [],
            [],
            "The graph has nothing that matches this question.",
        ),
    ],
)
def test_an_empty_result_names_what_the_question_named(
    question: str, hints: list[str], entities: list[str], sentence: str
) -> None:
    found = question_entities(question, hints, ignore=["Movie", "ACTED_IN"])
    assert found == entities
    assert nothing_found(found) == sentence


def test_a_value_several_labels_hold_is_named_once() -> None:
    # "postgres" is a Software, a Service and a Process name in the network graph.
    found = question_entities(
        "Which applications depend on postgres?", ["postgres", "postgres", "Postgres"]
    )
    assert found == ["postgres"]
    assert (
        nothing_found(found) == 'The graph has nothing that matches this question about "postgres".'
    )


@pytest.mark.parametrize(
    ("standalone", "question", "leaning"),
    [
        ("What else did he write?", "What else did he write?", ["he"]),
        ("What else did Tom Hanks write?", "What else did he write?", []),
        ("Which of those are older than 1990?", "and which of those are older?", ["those"]),
        ("Which of the books by Le Guin are older than 1990?", "and which of those?", []),
        ("Who wrote that one?", "who wrote that one?", ["that one"]),
        ("Which of them did the same publisher print?", "and them?", ["them", "the same"]),
        ("Which books have authors that live in Paris?", "and in Paris?", []),  # a relative
        ("What is its title?", "its title?", ["its"]),
        ("How many books are there?", "how many?", []),
    ],
)
def test_a_rewrite_that_still_leans_on_the_history(
    standalone: str, question: str, leaning: list[str]
) -> None:
    assert leaning_words(standalone, question) == leaning


COMPUTERS = "Which computers run Windows Server 2003?"


@pytest.mark.parametrize(
    ("standalone", "question", "previous", "lost"),
    [
        ("Which computer has the most admins?", "which of those has the most admins?", COMPUTERS, ["of those"]),
        ("Which computers running Windows Server 2003 have the most admins?", "which of those has the most admins?", COMPUTERS, []),
        ("Which of the 2003 computers has the most admins?", "which of those has the most admins?", COMPUTERS, []),
        ("Which computer has the most admins?", "which computer has the most admins?", COMPUTERS, []),
        ("Which services are tier 1?", "and which among them are tier 1?", "Which services are critical?", ["among them"]),
        ("Which critical services are tier 1?", "and which of them are tier 1?", "Which services are critical?", []),
        ("Which services are tier 1?", "which of those are tier 1?", "Which services are there?", []),
    ],
    ids=["lost", "kept", "a number kept", "no partitive", "among them", "a word kept", "nothing to keep"],
)  # fmt: skip
def test_a_rewrite_that_lost_of_those(
    standalone: str, question: str, previous: str, lost: list[str]
) -> None:
    assert dropped_reference(standalone, question, previous, ["Computer", "Service"]) == lost


SAN_DIEGO = "• description: San Diego Distribution Center, count: 3"


@pytest.mark.parametrize(
    ("standalone", "question", "answer", "lost"),
    [
        ("Which destination centers does the distribution center supply?", "which destination centers does it supply?", SAN_DIEGO, ("it", "San Diego Distribution Center")),
        ("What is the reference?", "what is its reference?", SAN_DIEGO, ("its", "San Diego Distribution Center")),
        ("Which destination centers does San Diego Distribution Center supply?", "which destination centers does it supply?", SAN_DIEGO, None),
        ("Which destination centers do they supply?", "which destination centers do they supply?", SAN_DIEGO, None),
        ("Which centers does it supply?", "which centers does it supply?", "Vancouver Distribution Center, Toronto Distribution Center.", None),
        ("Which centers does it supply?", "which centers does it supply?", "t.id: 1421412P", None),
    ],
    ids=["lost", "its", "kept", "no singular reference", "several names", "no name"],
)  # fmt: skip
def test_a_rewrite_that_lost_it(
    standalone: str, question: str, answer: str, lost: tuple[str, str] | None
) -> None:
    assert lost_referent(standalone, question, answer) == lost


def test_the_lost_name_takes_the_pronouns_place() -> None:
    name = "San Diego Distribution Center"
    assert with_referent("which centers does it supply?", "it", name) == (
        "Which centers does San Diego Distribution Center supply?"
    )
    assert with_referent("what is its reference?", "its", name) == (
        "What is San Diego Distribution Center's reference?"
    )
    assert (
        with_referent("is it in item 3?", "it", name)
        == "Is San Diego Distribution Center in item 3?"
    )
