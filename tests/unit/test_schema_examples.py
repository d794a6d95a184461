"""Schema-generated examples: wording, Cypher, bounds and shape-aware ranking, on a library schema."""

from __future__ import annotations

import asyncio
import re
from collections.abc import Iterable, Mapping
from typing import Any

import pytest

from graph_agent import nodes
from graph_agent.config import AgentConfig
from graph_agent.context import Context
from graph_agent.examples import InMemoryExampleStore
from graph_agent.graphdb.protocol import (
    GraphSchema,
    LabelInfo,
    PropertyInfo,
    QueryResult,
    RelPattern,
    Validation,
    ValueMatch,
)
from graph_agent.schema_check import check_schema
from graph_agent.schema_examples import (
    SHAPES,
    Focus,
    cypher_cues,
    generate_schema_examples,
    literal,
    question_cues,
    question_focus,
    rank_examples,
    relationship_phrase,
    retrieval_query,
)
from guardrails.cypher_policy import CypherPolicy, check_cypher
from memory.types import Example


def _p(name: str, *types: str, samples: tuple[str, ...] = ()) -> PropertyInfo:
    return PropertyInfo(name=name, types=types, sample_values=samples)


LIBRARY = GraphSchema(
    labels=(
        LabelInfo(
            "Book",
            40,
            (
                _p("title", "STRING"),
                _p("year", "INTEGER"),
                _p("pages", "INTEGER", "NULL"),
                _p("genre", "STRING", samples=("fantasy", "history")),
                _p("description", "STRING"),
            ),
        ),
        LabelInfo("Author", 20, (_p("name", "STRING"), _p("born", "STRING"))),
        LabelInfo("Publisher", 5, (_p("name", "STRING"), _p("country", "STRING"))),
    ),
    relationships=(
        RelPattern("Author", "WROTE", "Book", 45),
        RelPattern("Book", "PUBLISHED_BY", "Publisher", 40, (_p("edition", "INTEGER"),)),
    ),
)
DOMAIN_WORDS = re.compile(r"\b(film|movie|person|people|team|service|actor)\b", re.IGNORECASE)


class FakeGraph:
    """Answers the generator's sampling queries with plausible values and every candidate
    with one row; records what was asked."""

    url = "fake://"
    dialect = "Cypher"

    def __init__(self, *, empty: bool = False) -> None:
        self.empty = empty
        self.queries: list[tuple[str, int]] = []

    def run_read(
        self,
        cypher: str,
        params: Mapping[str, Any] | None = None,
        *,
        timeout_s: float = 10.0,
        max_rows: int = 100,
    ) -> QueryResult:
        self.queries.append((cypher, max_rows))
        if self.empty:
            return QueryResult(columns=[], rows=[])
        if "RETURN x, y" in cypher or "RETURN first, second" in cypher:
            return QueryResult(["x", "y"], [["Ann Ames", "Beta"], ["Cy Cole", "Delta"]])
        if "AS value" in cypher and ".born" in cypher:
            return QueryResult(["value"], [["1950-01-02"], ["1970-03-04"], ["1990-05-06"]])
        if "AS value" in cypher and (".year" in cypher or ".pages" in cypher):
            return QueryResult(["value"], [[1990], [2001], [2010]])
        if "AS value" in cypher:
            return QueryResult(["value"], [["Alpha"], ["A very long " + "word " * 30]])
        return QueryResult(["c"], [[1]])

    def schema(self, **_: Any) -> GraphSchema:
        return LIBRARY

    def validate(self, cypher: str) -> Validation:
        return Validation(ok=True, read_only=True)

    def run_write(self, cypher: str, params: Mapping[str, Any] | None = None) -> None:
        raise AssertionError("the generator must never write")

    def write_batches(self, cypher: str, batches: Iterable[list[dict[str, Any]]], **_: Any) -> int:
        raise AssertionError("the generator must never write")

    def lookup_values(self, text: str, limit: int = 5) -> list[ValueMatch]:
        return []

    def counts(self) -> tuple[int, int]:
        return (65, 85)

    def ping(self) -> str:
        return "fake"

    def close(self) -> None:
        pass


def test_library_schema_gives_every_shape_with_valid_read_only_cypher() -> None:
    db = FakeGraph()
    report = generate_schema_examples(db, LIBRARY, cap_per_shape=3)  # type: ignore[arg-type]
    per_shape = report.per_shape()
    assert all(per_shape[shape] >= 1 for shape in SHAPES), per_shape
    assert all(n <= 3 for n in per_shape.values())
    for example in report.kept:
        assert check_cypher(example.cypher, CypherPolicy()).allowed, example.cypher
        assert not check_schema(example.cypher, LIBRARY).problems, example.cypher
        assert not DOMAIN_WORDS.search(example.question + example.cypher), example


def test_questions_read_as_english_for_the_library() -> None:
    report = generate_schema_examples(FakeGraph(), LIBRARY, cap_per_shape=8)  # type: ignore[arg-type]
    questions = {e.question for e in report.kept}
    expected = {
        "How many books are there?",
        "Which books has author Ann Ames written?",
        "Which authors wrote book Delta?",
        "Which publishers is book Ann Ames published by?",
        "Which author wrote the most books?",
        "Which authors are without any book they wrote?",
        "Which books have the highest year?",
    }
    assert expected <= questions, sorted(questions)
    by_question = {e.question: e.cypher for e in report.kept}
    # Relationship properties come back with the hop; top-N returns the name with the measure.
    assert "r.edition AS edition" in by_question["Which publishers is book Ann Ames published by?"]
    top = by_question["Which books have the highest year?"]
    assert "IS NOT NULL" in top and "b.title AS title, b.year AS year" in top
    assert "LIMIT 5" in top
    negation = by_question["Which authors are without any book they wrote?"]
    assert "WHERE NOT (a)-[:WROTE]->(:Book)" in negation


def test_free_text_is_never_sampled_or_asked_about() -> None:
    db = FakeGraph()
    report = generate_schema_examples(db, LIBRARY)  # type: ignore[arg-type]
    assert not any("description" in e.cypher for e in report.kept)
    # The long sampled title is not used as a value to look up.
    assert not any("very long" in e.question for e in report.kept)


def test_every_sampling_query_is_bounded() -> None:
    db = FakeGraph()
    report = generate_schema_examples(db, LIBRARY)  # type: ignore[arg-type]
    candidates = {e.cypher for e in report.kept}
    sampling = [q for q, _rows in db.queries if q not in candidates and "count(" not in q]
    assert sampling
    assert all("LIMIT" in q for q in sampling), [q for q in sampling if "LIMIT" not in q]
    assert all(rows <= 200 for _q, rows in db.queries)
    assert report.queries == len(db.queries)


def test_nothing_is_kept_when_no_candidate_returns_rows() -> None:
    report = generate_schema_examples(FakeGraph(empty=True), LIBRARY)  # type: ignore[arg-type]
    assert report.kept == []
    assert sum(report.tried.values()) > 0


def test_graph_without_relationships_or_display_properties() -> None:
    schema = GraphSchema(
        labels=(
            LabelInfo("Reading", 10, (_p("value", "FLOAT"), _p("sensor_id", "STRING"))),
            LabelInfo("Shelf", 3, (_p("code", "STRING"),)),
        ),
        relationships=(),
    )
    report = generate_schema_examples(FakeGraph(), schema)  # type: ignore[arg-type]
    shapes = {e.shape for e in report.kept}
    assert "count" in shapes and "list" in shapes
    assert not shapes & {"one_hop", "two_hop", "negation", "follow_up"}
    assert "How many readings are there?" in {e.question for e in report.kept}
    empty = generate_schema_examples(FakeGraph(), GraphSchema((), ()))  # type: ignore[arg-type]
    assert empty.kept == []


def test_the_time_budget_stops_generation() -> None:
    db = FakeGraph()
    report = generate_schema_examples(db, LIBRARY, budget_s=0.0)  # type: ignore[arg-type]
    assert report.kept == [] and db.queries == []


@pytest.mark.parametrize(
    ("rel_type", "end", "singular", "plural", "ask"),
    [
        ("ACTED_IN", "Movie", "acted in", "acted in", "has X acted in"),
        ("OWNS", "Service", "owns", "own", "does X own"),
        ("MEMBER_OF", "Team", "is a member of", "are members of", "is X a member of"),
        ("PART_OF", "Unit", "is part of", "are part of", "is X part of"),
        ("PUBLISHED_BY", "Publisher", "is published by", "are published by", "is X published by"),
        ("WROTE", "Book", "wrote", "wrote", "has X written"),
        ("HAS_GENRE", "Genre", "has", "have", "does X have"),
        ("IN_GENRE", "Genre", "is in", "are in", "is X in"),
        ("dependsOn", "Service", "depends on", "depend on", "does X depend on"),
        ("reportsTo", "Person", "reports to", "report to", "does X report to"),
        ("LOCATED_IN", "City", "is located in", "are located in", "is X located in"),
    ],
)
def test_relationship_types_become_verb_phrases(
    rel_type: str, end: str, singular: str, plural: str, ask: str
) -> None:
    phrase = relationship_phrase(rel_type, end)
    assert (phrase.singular, phrase.plural, phrase.ask("X")) == (singular, plural, ask)


def test_literals_are_escaped() -> None:
    assert literal("O'Brien") == "'O\\'Brien'"
    assert literal(3) == "3" and literal(True) == "true"


@pytest.mark.parametrize(
    ("question", "cues"),
    [
        ("Which author wrote the most books?", {"top"}),
        ("Which books have no publisher?", {"negation"}),
        ("Authors who never wrote a book", {"negation"}),
        ("Which authors wrote both Beta and Delta?", {"multi_hop"}),
        ("How many books are there?", {"count"}),
        ("Books published after 2001", {"range"}),
        ("Who wrote Beta?", set()),
    ],
)
def test_question_cues(question: str, cues: set[str]) -> None:
    assert question_cues(question) == cues


@pytest.mark.parametrize(
    ("cypher", "cues"),
    [
        ("MATCH (a)-[:WROTE]->(b) RETURN a.name, count(b) AS n ORDER BY n DESC LIMIT 5", {"top"}),
        ("MATCH (a:Author) WHERE NOT (a)-[:WROTE]->() RETURN a.name", {"negation"}),
        ("MATCH (a)-[:WROTE]->(b)-[:PUBLISHED_BY]->(p) RETURN p.name", {"multi_hop"}),
        ("MATCH (b:Book) RETURN count(b)", {"count"}),
        ("MATCH (b:Book) WHERE b.year > 2001 RETURN b.title", {"range"}),
        ("MATCH (b:Book) WHERE b.genre <> 'x' RETURN b.title", set()),
    ],
)
def test_cypher_cues(cypher: str, cues: set[str]) -> None:
    assert cypher_cues(cypher) == cues


def _ex(i: int, question: str, cypher: str, source: str = "schema") -> Example:
    return Example(id=i, question=question, cypher=cypher, source=source)  # type: ignore[arg-type]


ONE_HOP = _ex(1, "Which books has author Ann Ames written?", "MATCH (a:Author {name: 'Ann Ames'})-[:WROTE]->(b:Book) RETURN b.title AS title")  # fmt: skip
TOP = _ex(2, "Which author wrote the most books?", "MATCH (a:Author)-[:WROTE]->(b:Book) RETURN a.name AS name, count(b) AS count ORDER BY count DESC, name LIMIT 5")  # fmt: skip
NEGATION = _ex(3, "Which authors are without any book they wrote?", "MATCH (a:Author) WHERE NOT (a)-[:WROTE]->(:Book) RETURN a.name AS name")  # fmt: skip
CHAIN = _ex(4, "Which publishers publish the books that author Ann Ames wrote?", "MATCH (a:Author {name: 'Ann Ames'})-[:WROTE]->(b:Book)-[:PUBLISHED_BY]->(p:Publisher) RETURN DISTINCT p.name AS name")  # fmt: skip
COUNT = _ex(5, "How many publishers are there?", "MATCH (p:Publisher) RETURN count(p) AS count")


def test_ranking_prefers_the_questions_shape() -> None:
    pool = [ONE_HOP, TOP, NEGATION, CHAIN, COUNT]
    for question, best in (
        ("Which authors wrote the largest number of books, most first?", TOP),
        ("Which authors never wrote anything?", NEGATION),
        ("Which publishers published the books written by Cy Cole?", CHAIN),
    ):
        focus = question_focus(question, LIBRARY, ["Author"] if "Cy" in question else [])
        assert rank_examples(pool, question, focus, 1) == [best], question


def test_a_taught_example_outranks_a_schema_one_of_equal_merit() -> None:
    taught = _ex(9, ONE_HOP.question, ONE_HOP.cypher, source="thumbs_up")
    ranked = rank_examples([ONE_HOP, taught], ONE_HOP.question, Focus(), 2)
    assert ranked == [taught, ONE_HOP]


def test_focus_and_query_name_labels_relationships_and_shape_words() -> None:
    focus = question_focus("Which publishers have no books?", LIBRARY, ["Author"])
    assert focus.labels == {"Publisher", "Book", "Author"}
    assert "negation" in focus.cues
    query = retrieval_query("Which publishers have no books?", focus)
    assert "without" in query and "author authors" in query
    assert question_focus("who wrote Beta", LIBRARY).rel_types == {"WROTE"}


def _context(store: InMemoryExampleStore, policy: CypherPolicy | None) -> Context:
    return Context(
        db=FakeGraph(),  # type: ignore[arg-type]
        llms=None,
        examples=store,
        config=AgentConfig(few_shot_k=3, value_hints=0),
        schema=LIBRARY,
        schema_fingerprint="fp",
        description="books",
        suggestions=[],
        policy=policy,
    )


def test_schema_examples_pass_the_channel_restriction_filter() -> None:
    store = InMemoryExampleStore()
    store.add(CHAIN.question, CHAIN.cypher, source="schema")
    store.add(ONE_HOP.question, ONE_HOP.cypher, source="schema")
    question = "Which publishers published the books Ann Ames wrote?"
    open_ctx = _context(store, None)
    hidden = _context(store, CypherPolicy(hidden_labels=frozenset({"Publisher"})))
    seen = asyncio.run(nodes.prompt_parts(open_ctx, question))[0]["examples"]
    assert "Publisher" in seen
    restricted = asyncio.run(nodes.prompt_parts(hidden, question))[0]["examples"]
    assert "Publisher" not in restricted and "Ann Ames" in restricted
