"""The relevance check before the model guard, and errands recognised in the question."""

from __future__ import annotations

import pytest

from guardrails.intent import asks_for_a_task
from guardrails.relevance import Vocabulary, content_words, name_words, relevance, stem

LIBRARY = Vocabulary(
    ["Book", "Author", "WROTE", "BORROWED_BY", "Member", "title", "publishedYear", "genre"],
    ["Science Fiction", "Poetry"],
)
WEATHER_GRAPH = Vocabulary(["Station", "Forecast", "temperature", "RECORDED_AT"])


@pytest.mark.parametrize(
    ("word", "expected"),
    [
        ("Suppliers", "supplier"),
        ("categories", "category"),
        ("people", "person"),
        ("Nancy's", "nancy"),
        ("directed", "direct"),
        ("boxes", "box"),
        ("status", "status"),
        ("is", "is"),
    ],
)
def test_stem(word: str, expected: str) -> None:
    assert stem(word) == expected


def test_name_words_split_camel_and_snake_case() -> None:
    assert name_words("unitsInStock") == ["units", "In", "Stock"]
    assert name_words("ACTED_IN") == ["ACTED", "IN"]


def test_content_words_leave_out_how_a_question_is_asked() -> None:
    assert content_words("Which of the books did Orwell write in 1949?") == [
        "books",
        "Orwell",
        "write",
    ]


@pytest.mark.parametrize(
    "question",
    [
        "What's the weather like in London tomorrow?",
        "Give me a recipe for pancakes.",
        "Tell me a joke about authors.",
        "What is the capital of France?",
        "Who is the prime minister of Ireland?",
        "What is the price of Bitcoin right now?",
    ],
)
def test_a_general_topic_the_graph_lacks_is_declined(question: str) -> None:
    verdict = relevance(question, LIBRARY)
    assert verdict.decline
    assert verdict.general_topic is not None and verdict.general_topic in verdict.reason


@pytest.mark.parametrize(
    "question",
    [
        "Which books did George Orwell write?",
        "Which members borrowed a science fiction book?",
        "Who wrote the most poetry?",
        "Which bookz were published after 1950?",  # a typo still touches the graph
        "Which novels came out in 1984?",  # names nothing of the graph: the model decides
        "How many nodes are in the graph?",
    ],
)
def test_a_question_without_a_foreign_topic_goes_on(question: str) -> None:
    assert not relevance(question, LIBRARY).decline


def test_a_topic_word_the_graph_has_is_not_declined() -> None:
    question = "What is the temperature forecast for station 12?"
    assert not relevance(question, WEATHER_GRAPH).decline
    assert relevance(question, LIBRARY).decline


def test_stored_values_count_as_the_graphs_words() -> None:
    question = "Which members borrowed Dune?"
    assert "Dune" in relevance(question, LIBRARY, ["Dune"]).touching
    assert "Dune" in relevance(question, LIBRARY).foreign


def test_misspellings_match_the_vocabulary() -> None:
    vocabulary = Vocabulary(["Service", "Team", "OWNS"])
    assert vocabulary.knows("servics")
    assert vocabulary.knows("Teams")
    assert not vocabulary.knows("weather")


def test_a_noun_made_of_a_verb_the_graph_names_is_known() -> None:
    # A competence-graph trial: "endorsement" was declined beside ENDORSES {level}.
    vocabulary = Vocabulary(["Employee", "ENDORSES", "CREATES", "SHIPS"])
    assert [vocabulary.knows(w) for w in ("endorsement", "creation", "shipments")] == [True] * 3
    assert not vocabulary.knows("employment")  # "employ" is no name of it: Employee is
    assert not vocabulary.knows("shipyard")  # no noun's ending
    assert not Vocabulary(["ON", "AT"]).knows("onion")  # a name too short to grow a word


@pytest.mark.parametrize(
    ("question", "task"),
    [
        ("Book me a flight to Rome next Friday.", True),
        ("Please schedule a meeting with the Search team.", True),
        ("Can you write me a poem about databases?", True),
        ("Write a Python function that reverses a string.", True),
        ("Remind me to check the incidents tomorrow.", True),
        ("Write a query that lists every customer.", False),
        ("Write a list of the products in stock.", False),
        ("Which books did Orwell write?", False),
        ("Book titles by Orwell?", False),
        ("Who wrote a book about Rome?", False),
    ],
)
def test_errands_and_writing_tasks(question: str, task: bool) -> None:
    assert asks_for_a_task(question) is task


def test_asking_for_a_query_is_never_a_general_topic() -> None:
    assert not relevance("Translate to Cypher: which books are poetry?", LIBRARY).decline
    assert relevance('Translate "good morning" into Spanish.', LIBRARY).decline


def test_one_stemmer_for_every_word_helper() -> None:
    # The disagreement: "processes" and "people" stemmed three ways in three modules.
    from graph_agent import pruning, question_fit, schema_check
    from guardrails import words

    assert {m.stem for m in (pruning, question_fit, schema_check)} == {words.stem}
    assert [stem(w) for w in ("processes", "people", "CPUs", "OSes", "status")] == [
        "process",
        "person",
        "cpu",
        "os",
        "status",
    ]


DIRECTORY = Vocabulary(["User", "Computer", "pwdlastset", "lastlogon", "operatingsystem"])


@pytest.mark.parametrize(
    "question",
    [
        "Which user changed their password longest ago?",  # pwd, its short form
        "When was the last login of each user?",  # logon
    ],
)
def test_a_topic_word_inside_a_glued_name_is_the_graphs(question: str) -> None:
    assert not relevance(question, DIRECTORY).decline
    assert relevance(question, LIBRARY).decline


def test_a_topic_word_is_looked_for_inside_long_names_and_as_its_short_form() -> None:
    assert Vocabulary(["pwd_hash"]).inside_a_name("password")
    assert Vocabulary(["capitalcity"]).inside_a_name("capital")
    # A name split by case or underscores is matched by its words: no "login" inside "log_in".
    assert not Vocabulary(["log_in_count"]).inside_a_name("login")
    assert not Vocabulary(["User", "Computer"]).inside_a_name("weather")
    assert relevance("Tell me a joke about users.", DIRECTORY).decline
