"""Schema examples on the embedded FalkorDB (a library graph and the demo) and in real SQLite."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
from langchain_core.messages import BaseMessage
from typer.testing import CliRunner

from bot.cli import app
from bot.cli.runtime import CliRuntime
from bot.settings import Settings
from bot.wiring import agent_config, refresh_schema_examples
from graph_agent.agent import Agent
from graph_agent.graphdb import GraphDB
from graph_agent.llm import LLMs
from graph_agent.schema_examples import SHAPES, generate_schema_examples
from graph_agent.schema_examples.natural_wording import BATCH_SIZE
from memory import Memory, Turn, open_memory
from rig.scripted_llm import ScriptedChatModel

AUTHORS = ["Ann Ames", "Cy Cole", "Eve Eng", "Gus Gray"]
PUBLISHERS = [("Northwind Press", "UK"), ("Harbor Books", "US"), ("Quiet Page", "UK")]


def load_library(db: GraphDB) -> None:
    """A small library: 4 authors (one wrote nothing), 12 books, 3 publishers."""
    db.run_write(
        "UNWIND $rows AS r CREATE (:Publisher {name: r.name, country: r.country})",
        {"rows": [{"name": n, "country": c} for n, c in PUBLISHERS]},
    )
    db.run_write(
        "UNWIND $rows AS r CREATE (:Author {name: r})",
        {"rows": AUTHORS},
    )
    books = [
        {
            "title": f"Book {i:02d}",
            "year": 1950 + 6 * i,
            "pages": None if i % 5 == 0 else 120 + 37 * i,
            "genre": ("fantasy", "history", "poetry")[i % 3],
            "author": AUTHORS[i % 3],
            "coauthor": AUTHORS[(i + 1) % 3] if i % 4 == 0 else None,
            "publisher": PUBLISHERS[i % 3][0],
            "edition": 1 + i % 2,
        }
        for i in range(12)
    ]
    db.run_write(
        "UNWIND $rows AS r CREATE (b:Book {title: r.title, year: r.year, genre: r.genre}) "
        "SET b.pages = r.pages",
        {"rows": books},
    )
    db.run_write(
        "UNWIND $rows AS r MATCH (a:Author {name: r.author}), (b:Book {title: r.title}) "
        "CREATE (a)-[:WROTE]->(b)",
        {"rows": books},
    )
    db.run_write(
        "UNWIND $rows AS r MATCH (a:Author {name: r.coauthor}), (b:Book {title: r.title}) "
        "CREATE (a)-[:WROTE]->(b)",
        {"rows": [b for b in books if b["coauthor"]]},
    )
    db.run_write(
        "UNWIND $rows AS r MATCH (b:Book {title: r.title}), (p:Publisher {name: r.publisher}) "
        "CREATE (b)-[:PUBLISHED_BY {edition: r.edition}]->(p)",
        {"rows": books},
    )


@pytest.fixture
def library_db(scratch_db: GraphDB) -> GraphDB:
    load_library(scratch_db)
    return scratch_db


@pytest.fixture
def mem(tmp_path: Path) -> Iterator[Memory]:
    memory = open_memory(tmp_path / "memory.sqlite3")
    yield memory
    memory.close()


def _check_all_run(db: GraphDB, schema_db: GraphDB) -> dict[str, int]:
    report = generate_schema_examples(db, schema_db.schema(sample=1000), cap_per_shape=4)
    for example in report.kept:
        result = db.run_read(example.cypher, timeout_s=10, max_rows=50)
        assert result.rows, example
        assert db.validate(example.cypher).ok, example
    return report.per_shape()


def test_library_graph_examples_run_return_rows_and_cover_every_shape(
    library_db: GraphDB,
) -> None:
    per_shape = _check_all_run(library_db, library_db)
    assert all(per_shape[shape] >= 1 for shape in SHAPES), per_shape
    assert all(n <= 4 for n in per_shape.values())


def test_library_questions_name_sampled_entities(library_db: GraphDB) -> None:
    report = generate_schema_examples(library_db, library_db.schema())
    questions = {e.question: e.cypher for e in report.kept}
    assert "Which author wrote the most books?" in questions
    assert any(q.startswith("Which books has author ") for q in questions)
    assert any(q.startswith("Which authors are without any book") for q in questions)
    negation = next(c for q, c in questions.items() if q.startswith("Which authors are without"))
    assert library_db.run_read(negation).rows == [["Gus Gray"]]


def test_demo_graph_examples_run_return_rows_and_cover_every_shape(demo_db: GraphDB) -> None:
    per_shape = _check_all_run(demo_db, demo_db)
    assert all(per_shape[shape] >= 1 for shape in SHAPES), per_shape


# --- storage and trust ----------------------------------------------------------------------


def _store(mem: Memory, fingerprint: str, *triples: tuple[str, str, str], cap: int = 8) -> None:
    mem.examples.replace_schema_examples(triples, fingerprint, cap_per_shape=cap)


Q = "Which books has author Ann Ames written?"
C = "MATCH (a:Author {name: 'Ann Ames'})-[:WROTE]->(b:Book) RETURN b.title AS title"


def test_schema_examples_are_stored_with_their_source_and_shape(mem: Memory) -> None:
    _store(mem, "fp1", (Q, C, "one_hop"))
    (example,) = mem.examples.list(source="schema")
    assert (example.source, example.shape, example.status) == ("schema", "one_hop", "active")
    assert mem.examples.has_schema_examples("fp1")
    assert not mem.examples.has_schema_examples("fp2")


def test_schema_examples_are_never_reused_verbatim(mem: Memory) -> None:
    _store(mem, "fp1", (Q, C, "one_hop"))
    assert mem.examples.similar(Q, 3)[0].question == Q
    assert mem.examples.exact(Q) is None


def test_taught_examples_rank_before_schema_ones_at_equal_similarity(mem: Memory) -> None:
    _store(mem, "fp1", (Q, C, "one_hop"))
    taught = mem.examples.add(Q, C + " ORDER BY title", source="thumbs_up")
    # Same words: the near-duplicate filter keeps one, and it must be the taught one.
    assert [e.id for e in mem.examples.similar(Q, 2)] == [taught]


def test_a_schema_whose_examples_another_retired_gets_them_again(mem: Memory) -> None:
    # One memory, two graphs: the second graph's refresh retires the first's examples; back on
    # the first, they are not "already there" and a refresh makes them active again.
    _store(mem, "fp1", (Q, C, "one_hop"))
    _store(mem, "fp2", ("How many books are there?", "MATCH (b:Book) RETURN count(b)", "count"))
    assert not mem.examples.has_schema_examples("fp1")
    _store(mem, "fp1", (Q, C, "one_hop"))
    assert mem.examples.has_schema_examples("fp1")
    live = mem.examples.list(source="schema", status="active")
    assert [(e.question, e.schema_fingerprint) for e in live] == [(Q, "fp1")]


def test_a_new_fingerprint_retires_the_old_schema_examples(mem: Memory) -> None:
    _store(mem, "fp1", (Q, C, "one_hop"), ("How many books are there?", "MATCH (b:Book) RETURN count(b)", "count"))  # fmt: skip
    _store(mem, "fp2", (Q, C, "one_hop"))
    live = mem.examples.list(source="schema", status="active")
    retired = mem.examples.list(source="schema", status="retired")
    assert [(e.question, e.schema_fingerprint) for e in live] == [(Q, "fp2")]
    assert [(e.question, e.retired_reason) for e in retired] == [
        ("How many books are there?", "schema")
    ]


def test_schema_examples_are_capped_per_shape(mem: Memory) -> None:
    triples = [(f"How many things of kind {i}?", f"MATCH (n:K{i}) RETURN count(n)", "count") for i in range(5)]  # fmt: skip
    _store(mem, "fp1", *triples, ("List the books.", "MATCH (b:Book) RETURN b.title", "list"), cap=2)  # fmt: skip
    shapes = [e.shape or "" for e in mem.examples.list(source="schema")]
    assert sorted(shapes) == ["count", "count", "list"]


def test_a_thumbs_up_makes_a_schema_example_taught(mem: Memory) -> None:
    _store(mem, "fp1", (Q, C, "one_hop"))
    turn_id = mem.conversations.record(
        "T:C:1",
        user="U1",
        question=Q,
        standalone_question=Q,
        cypher=C,
        answer="a",
        outcome="answered",
    )
    turn = mem.conversations.turn(turn_id)
    assert isinstance(turn, Turn)
    mem.examples.teach(turn, "U1")
    (example,) = mem.examples.list()
    assert (example.source, example.up_votes) == ("thumbs_up", 1)
    _store(mem, "fp2")  # regeneration leaves taught examples alone
    assert mem.examples.get(example.id).status == "active"  # type: ignore[union-attr]


def test_refresh_runs_once_per_fingerprint(
    library_db: GraphDB, mem: Memory, tmp_path: Path
) -> None:
    settings = Settings(_env_file=None, data_dir=tmp_path, schema_examples_cap=3)  # type: ignore[call-arg]
    agent = Agent(library_db, None, mem.examples, agent_config(settings))
    report = refresh_schema_examples(settings, mem, agent)
    assert report is not None and report.kept
    stored = mem.examples.list(source="schema", limit=500)
    assert len(stored) == len(report.kept) <= 3 * len(SHAPES)
    assert {e.schema_fingerprint for e in stored} == {agent.schema_fingerprint}
    assert refresh_schema_examples(settings, mem, agent) is None
    off = settings.model_copy(update={"schema_examples": "off"})
    assert refresh_schema_examples(off, open_memory(tmp_path / "other.sqlite3"), agent) is None


def _politely(messages: list[BaseMessage]) -> str:
    numbered = re.findall(r"^(\d+)\. (.+)$", str(messages[-1].content), re.MULTILINE)
    return json.dumps({n: f"Could you tell me: {q}" for n, q in numbered})


def _server_down(messages: list[BaseMessage]) -> str:
    raise RuntimeError("server down")


@pytest.mark.parametrize("works", [True, False])
def test_llm_wording_stores_natural_questions_with_the_verified_cypher(
    library_db: GraphDB, tmp_path: Path, works: bool
) -> None:
    settings = Settings(_env_file=None, data_dir=tmp_path, schema_examples_cap=3)  # type: ignore[call-arg]
    plain_mem = open_memory(tmp_path / "plain.sqlite3")
    plain = refresh_schema_examples(
        settings, plain_mem, Agent(library_db, None, plain_mem.examples, agent_config(settings))
    )
    plain_mem.close()
    assert plain is not None
    model = ScriptedChatModel(responder=_politely if works else _server_down)
    mem = open_memory(tmp_path / "llm.sqlite3")
    llm = settings.model_copy(update={"schema_examples_wording": "llm"})
    agent = Agent(library_db, LLMs(cypher=model, fast=model), mem.examples, agent_config(llm))
    report = refresh_schema_examples(llm, mem, agent)  # never raises for the LLM's sake
    assert report is not None
    stored = {e.cypher: e.question for e in mem.examples.list(source="schema", limit=500)}
    mem.close()
    assert sorted(stored) == sorted(e.cypher for e in plain.kept)  # the Cypher is unchanged
    expected = {e.cypher: e.question for e in plain.kept}
    if works:
        expected = {c: f"Could you tell me: {q}" for c, q in expected.items()}
    assert stored == expected
    assert len(model.calls) == -(-len(plain.kept) // BATCH_SIZE)  # one call per batch


# --- CLI ------------------------------------------------------------------------------------


def test_cli_bootstrap_and_list_schema_examples(
    library_db: GraphDB,
    graph_data_dir: Path,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    request: pytest.FixtureRequest,
) -> None:
    settings = Settings(  # type: ignore[call-arg]
        _env_file=None,
        data_dir=graph_data_dir,
        graph_name=f"scratch_{request.node.name}"[:120],  # the library graph (conftest)
        schema_examples_cap=2,
    )

    @contextmanager
    def tmp_memory(ctx: object) -> Iterator[Memory]:
        memory = open_memory(tmp_path / "cli.sqlite3")
        try:
            yield memory
        finally:
            memory.close()

    monkeypatch.setattr("bot.cli.memory._memory", tmp_memory)
    result = CliRunner().invoke(app, ["examples", "bootstrap"], obj=CliRuntime(settings))
    assert result.exit_code == 0, result.output
    out = " ".join(result.output.split())
    assert "kept" in out and "top_count" in out and "Which author wrote the most books?" in out
    result = CliRunner().invoke(
        app,
        ["examples", "list", "--source", "schema", "--limit", "100"],
        obj=CliRuntime(settings),
    )
    assert result.exit_code == 0, result.output
    assert "schema" in result.output and "one_hop" in result.output
    with tmp_memory(None) as memory:
        assert len(memory.examples.list(source="schema", limit=100)) <= 2 * len(SHAPES)


# --- start-up -------------------------------------------------------------------------------


def test_a_fresh_playground_shows_schema_examples_in_its_examples_tab(
    demo_db: GraphDB, tmp_path: Path
) -> None:
    from tests.support.playground import get_json, running_playground

    with running_playground(tmp_path, demo_db, None) as pg:

        def schema_examples() -> list[dict[str, object]]:
            examples = get_json(pg.url + "api/examples")[1]["examples"]
            return [e for e in examples if e["source"] == "schema"]

        found = pg.emulator.wait_for(schema_examples, 60, "no schema examples after start-up")
        assert {e["status"] for e in found} == {"active"}
        # The seeds were imported first (they go only into an empty store).
        assert pg.memory.examples.list(source="seed", limit=1)


def test_schema_examples_off_generates_nothing_at_start_up(
    demo_db: GraphDB, tmp_path: Path
) -> None:
    from tests.support.playground import running_playground

    with running_playground(tmp_path, demo_db, None, schema_examples="off") as pg:
        assert pg.memory.examples.list(source="seed", limit=1)
    with open_memory(tmp_path / "cypherbot.sqlite3") as memory:
        assert memory.examples.list(source="schema") == []
