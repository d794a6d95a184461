"""Question normalisation and FTS query building."""

from __future__ import annotations

import pytest

from memory import normalise_question
from memory.text import content_words, fts_query, jaccard, normalise_cypher, token_set


@pytest.mark.parametrize(
    ("a", "b"),
    [
        ("How many movies?", "how many movies"),
        ("  How   many\tMOVIES ?! ", "how many movies"),
        ("Who directed 'The Matrix'?", "who directed the matrix"),
        ("Tom-Hanks movies", "tom hanks movies"),
        ("Ｆｕｌｌwidth", "fullwidth"),
        ("Straße", "strasse"),
    ],
)
def test_normalise_equal(a: str, b: str) -> None:
    assert normalise_question(a) == b


@pytest.mark.parametrize(
    ("a", "b"),
    [
        ("movies after 2000", "movies after 2001"),
        ("movies with Tom Hanks", "movies without Tom Hanks"),
        ("how many movies", "how many movies are there"),
        ("3.5 stars", "35 stars"),
    ],
)
def test_normalise_near_miss_differs(a: str, b: str) -> None:
    assert normalise_question(a) != normalise_question(b)


def test_content_words_drop_stopwords() -> None:
    assert content_words("How many movies did Tom Hanks act in?") == [
        "movies",
        "tom",
        "hanks",
        "act",
    ]


def test_fts_query_quotes_tokens() -> None:
    assert fts_query('NEAR "AND" movies*') == '"near" OR "movies"'
    assert fts_query("???") is None
    # Only stopwords: fall back to all words rather than matching nothing.
    assert fts_query("what is this") == '"what" OR "is" OR "this"'


def test_jaccard_and_cypher() -> None:
    assert jaccard(token_set("movies by Tom Hanks"), token_set("Tom Hanks movies")) == 1.0
    assert jaccard(frozenset(), frozenset()) == 1.0
    assert normalise_cypher("MATCH (n)\n  RETURN n ;") == "MATCH (n) RETURN n"
