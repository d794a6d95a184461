"""The eval measures production: examples come from the real SqliteExampleStore on a temporary
copy of the memory database, and `--timeout` is the question's deadline."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

from bot.cli.eval import eval_memory, prepare_examples
from bot.settings import Settings
from graph_agent.agent import Agent
from graph_agent.config import AgentConfig
from graph_agent.evaluation import EvalItem, RunOptions, evaluate
from graph_agent.evaluation.runner import with_deadline
from graph_agent.examples import InMemoryExampleStore
from graph_agent.graphdb import GraphDB
from graph_agent.llm import LLMs
from memory import SqliteExampleStore, open_memory
from rig.scripted_llm import ScriptedChatModel, cypher_reply, evaluation_reply, guard_reply

TAUGHT = [
    ("Which services use PostgreSQL?", "MATCH (s:Service) RETURN s.name AS service"),
    ("Which services use Redis?", "MATCH (s:Service) RETURN s.name AS name"),
    ("Who is on the Payments team?", "MATCH (p:Person) RETURN p.name AS person"),
    ("How many incidents were SEV1?", "MATCH (i:Incident) RETURN count(i) AS n"),
]


def _settings(tmp_path: Path) -> Settings:
    return Settings(data_dir=tmp_path / "data")


def _model(cypher: str, answer: str) -> ScriptedChatModel:
    """A model that answers each step by its prompt: the guard in scope, `cypher`, `answer`."""

    def respond(messages: list[Any]) -> str:
        system = str(messages[0].content)
        if system.startswith("You are the front desk"):
            return guard_reply()
        if system.startswith("You write one read-only Cypher"):
            return cypher_reply(cypher)
        return evaluation_reply(answer=answer)

    return ScriptedChatModel(responder=respond)


def _teach(settings: Settings) -> None:
    with open_memory(settings.memory_path) as mem:
        mem.examples.add_many(TAUGHT, source="admin")


def test_the_copy_retrieves_exactly_as_production(tmp_path: Path, demo_db: GraphDB) -> None:
    settings = _settings(tmp_path)
    _teach(settings)
    question = "which services use postgres"
    with open_memory(settings.memory_path) as production:
        expected = [(e.question, e.cypher) for e in production.examples.similar(question, 3)]
    with eval_memory(settings, use=True) as memory:
        assert isinstance(memory.examples, SqliteExampleStore)
        assert memory.db_path != settings.memory_path
        found = [(e.question, e.cypher) for e in memory.examples.similar(question, 3)]
        assert found == expected and found
        assert prepare_examples(settings, memory, demo_db, "fp", use=True).startswith(
            "4 active examples from a copy of"
        )
        # What the run writes (self-healed candidates, use counts) stays in the copy.
        memory.examples.add_candidate("A new question?", "MATCH (n) RETURN n", None)
        copy_path = memory.db_path
    assert not copy_path.exists()
    with open_memory(settings.memory_path) as production:
        assert len(production.examples.list(limit=100)) == len(TAUGHT)


def test_an_empty_memory_on_the_demo_graph_gets_the_demo_seeds(
    tmp_path: Path, demo_db: GraphDB
) -> None:
    settings = _settings(tmp_path)
    with eval_memory(settings, use=True) as memory:
        source = prepare_examples(settings, memory, demo_db, "fp", use=True)
        seeds = memory.examples.list(status="active", limit=1000)
        assert source == f"{len(seeds)} demo seed examples" and seeds
        assert {e.source for e in seeds} == {"seed"}
        assert memory.examples.exact("Which services use PostgreSQL?") is not None
    assert not settings.memory_path.exists()  # the real memory was never created


def test_examples_off_is_an_empty_store_even_with_a_taught_memory(
    tmp_path: Path, demo_db: GraphDB
) -> None:
    settings = _settings(tmp_path)
    _teach(settings)
    with eval_memory(settings, use=False) as memory:
        assert prepare_examples(settings, memory, demo_db, "fp", use=False) == (
            "none (--examples off)"
        )
        assert memory.examples.similar("Which services use PostgreSQL?", 3) == []
        assert memory.examples.exact("Which services use PostgreSQL?") is None


def test_timeout_is_the_question_deadline_longer_or_shorter(demo_db: GraphDB) -> None:
    agent = Agent(demo_db, None, InMemoryExampleStore(), AgentConfig(question_deadline_s=180.0))
    assert with_deadline(agent, 600.0).config.question_deadline_s == 600.0
    assert with_deadline(agent, 5.0).config.question_deadline_s == 5.0


def test_a_question_may_run_past_question_deadline_s(tmp_path: Path, demo_db: GraphDB) -> None:
    """QUESTION_DEADLINE_S is tiny here; --timeout is what counts, so the run answers."""
    model = _model("MATCH (t:Team) RETURN count(t) AS teams", "There are 11 teams.")
    settings = _settings(tmp_path)
    with eval_memory(settings, use=False) as memory:
        agent = Agent(
            demo_db,
            LLMs(cypher=model, fast=model),
            memory.examples,
            AgentConfig(question_deadline_s=0.0),
        )
        item = EvalItem(
            id="teams", question="How many teams are there?", gold_cypher=None, expected="answer"
        )
        options = RunOptions(mode="full", examples=False, timeout_s=30)
        [record] = asyncio.run(evaluate(agent, [item], options))
    assert record["outcome"] == "answered" and not record["timed_out"]


def test_the_record_names_the_examples_the_model_was_shown(
    tmp_path: Path, demo_db: GraphDB
) -> None:
    """`example_ids` in each record: what retrieval offered, so a run can be scored on it."""
    model = _model("MATCH (s:Service) RETURN s.name AS service", "Many services.")
    settings = _settings(tmp_path)
    _teach(settings)
    with eval_memory(settings, use=True) as memory:
        agent = Agent(demo_db, LLMs(cypher=model, fast=model), memory.examples, AgentConfig())
        item = EvalItem(
            id="pg", question="Which of our services run on postgres?", gold_cypher=None,
            expected="answer",
        )  # fmt: skip
        options = RunOptions(mode="full", examples=True, timeout_s=30)
        [record] = asyncio.run(evaluate(agent, [item], options))
        shown = {e.id: e.question for e in memory.examples.list(limit=100)}
    assert record["example_ids"] and set(record["example_ids"]) <= set(shown)
    assert "Which services use PostgreSQL?" in {shown[i] for i in record["example_ids"]}
