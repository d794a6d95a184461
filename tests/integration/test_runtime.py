"""One runtime for every command: graph, memory and agent built once, the fingerprint set once."""

from __future__ import annotations

from pathlib import Path

import pytest

from bot.wiring import open_runtime
from graph_agent.examples import InMemoryExampleStore
from graph_agent.graphdb import GraphDB
from memory import MemoryStoreError, open_memory
from tests.support.slack import rig_settings


def test_the_memory_learns_the_agents_schema_fingerprint(demo_db: GraphDB, tmp_path: Path) -> None:
    settings = rig_settings(tmp_path)
    with open_runtime(settings, db=demo_db, llms=None) as runtime:
        assert runtime.memory is not None
        assert runtime.agent.schema_fingerprint
        assert runtime.memory.examples.schema_fingerprint == runtime.agent.schema_fingerprint
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
