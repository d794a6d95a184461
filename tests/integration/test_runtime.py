"""One runtime for every command: graph, memory and agent built once; the agent looks examples
up for the schema it answers on."""

from __future__ import annotations

from pathlib import Path

import pytest

from bot.wiring import agent_config, open_runtime
from graph_agent.agent import Agent
from graph_agent.examples import InMemoryExampleStore
from graph_agent.graphdb import GraphDB
from graph_agent.llm import LLMs
from memory import Example, MemoryStoreError, open_memory
from rig.scripted_llm import ScriptedChatModel
from rig.slack import graph_responder, rig_settings


class _RecordingExamples(InMemoryExampleStore):
    """Examples that remember the schema fingerprint each lookup was made for."""

    def __init__(self) -> None:
        super().__init__()
        self.fingerprints: list[str | None] = []

    def similar(
        self, question: str, k: int = 3, *, schema_fingerprint: str | None = None
    ) -> list[Example]:
        self.fingerprints.append(schema_fingerprint)
        return super().similar(question, k, schema_fingerprint=schema_fingerprint)

    def exact(self, question: str, *, schema_fingerprint: str | None = None) -> Example | None:
        self.fingerprints.append(schema_fingerprint)
        return super().exact(question, schema_fingerprint=schema_fingerprint)


def test_the_agent_looks_up_examples_for_the_schema_it_answers_on(
    demo_db: GraphDB, tmp_path: Path
) -> None:
    examples = _RecordingExamples()
    examples.add("Which teams are biggest?", "MATCH (t:Team) RETURN t.name", source="admin",
                 schema_fingerprint="an-older-schema")  # fmt: skip
    model = ScriptedChatModel(responder=graph_responder(lambda q: "MATCH (t:Team) RETURN t.name"))
    agent = Agent(
        demo_db, LLMs(cypher=model, fast=model), examples, agent_config(rig_settings(tmp_path))
    )
    result = agent.run("Which teams are biggest?")
    assert examples.fingerprints and set(examples.fingerprints) == {agent.schema_fingerprint}
    assert result.outcome == "answered"
    # Taught on another schema: flagged, so the agent re-validates it before reusing it.
    found = examples.exact("Which teams are biggest?", schema_fingerprint=agent.schema_fingerprint)
    assert found is not None and found.verified_on_current is False


def test_the_runtime_closes_the_memory_it_opened(demo_db: GraphDB, tmp_path: Path) -> None:
    settings = rig_settings(tmp_path)
    with open_runtime(settings, db=demo_db, llms=None) as runtime:
        assert runtime.memory is not None
        memory = runtime.memory
    assert demo_db.counts()[0] > 0, "the caller's graph is still open"
    with pytest.raises(MemoryStoreError, match="does not answer"):
        memory.ping()  # the memory the runtime opened is closed


def test_without_memory_the_agent_has_no_examples(demo_db: GraphDB, tmp_path: Path) -> None:
    with open_runtime(rig_settings(tmp_path), db=demo_db, llms=None, memory=None) as runtime:
        assert runtime.memory is None
        assert isinstance(runtime.agent.examples, InMemoryExampleStore)


def test_a_memory_passed_in_stays_the_callers(demo_db: GraphDB, tmp_path: Path) -> None:
    with open_memory(tmp_path / "m.sqlite3") as memory:
        with open_runtime(rig_settings(tmp_path), db=demo_db, llms=None, memory=memory) as rt:
            assert rt.memory is memory
        memory.ping()  # still open
