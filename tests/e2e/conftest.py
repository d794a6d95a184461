"""E2E fixtures: the real Bolt app over HTTP, the real agent (scripted LLM) on the demo graph, SQLite memory, the emulator."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import ExitStack
from pathlib import Path
from typing import Any

import pytest

from bot.wiring import build_agent
from graph_agent.graphdb import GraphDB
from graph_agent.llm import LLMs
from memory import open_memory
from rig.scripted_llm import ScriptedChatModel
from rig.slack import SlackRig, rig_settings, slack_rig

RigFactory = Callable[..., SlackRig]


@pytest.fixture
def make_rig(demo_db: GraphDB, tmp_path: Path) -> Iterator[RigFactory]:
    """`make_rig(model, db=None, **settings)`: a started rig whose agent uses `model` (None: no
    LLM configured) on the demo graph (or `db`)."""
    with ExitStack() as stack:
        counter = iter(range(1000))

        def make(
            model: ScriptedChatModel | None,
            *,
            db: GraphDB | None = None,
            status_supported: bool = True,
            progress_interval_s: float = 1.0,
            **overrides: Any,
        ) -> SlackRig:
            data_dir = tmp_path / f"rig{next(counter)}"
            memory = stack.enter_context(open_memory(data_dir / "cypherbot.sqlite3"))
            settings = rig_settings(data_dir, **overrides)
            llms = LLMs(cypher=model, fast=model) if model is not None else None
            agent = build_agent(settings, memory.examples, db=db or demo_db, llms=llms)
            return stack.enter_context(
                slack_rig(
                    agent,
                    data_dir,
                    memory=memory,
                    status_supported=status_supported,
                    progress_interval_s=progress_interval_s,
                    **overrides,
                )
            )

        yield make
