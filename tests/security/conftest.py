"""Security fixtures: copies of the demo graph, a graph fingerprint, the compromised LLM, a ledger."""

from __future__ import annotations

import hashlib
import json
import logging
import re
import threading
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from langchain_core.messages import BaseMessage

from graph_agent.graphdb import GraphDB, connect
from graph_agent.graphdb.falkor import FalkorGraph
from graph_agent.result import AgentResult, Choice, ProgressEvent
from guardrails.cypher_policy import CypherPolicy
from memory import Turn
from rig.scripted_llm import cypher_reply, evaluation_reply, guard_reply
from rig.slack import prompt_kind, step_prompt
from tests.security.corpus import (
    BENIGN_READ,
    BY_ID,
    INJECTION_MARKERS,
    POISONED_CHANNEL,
    POISONED_INCIDENT_ID,
    POISONED_TEAM_ID,
    POISONED_TITLE,
    HostileInput,
)

logger = logging.getLogger(__name__)
TAG = re.compile(r"\[sec:([a-z0-9_-]+)\]")
CONNECTION_MARKERS = (
    "redis://",
    "rediss://",
    "unix://",
    "bolt://",
    "neo4j://",
    "falkordb://",
    ".sock",
)
# What must never reach a person: internals, connection strings, tracebacks.
LEAK_MARKERS = (
    "Traceback",
    'File "',
    *CONNECTION_MARKERS,
    "RO_QUERY",
    "errMsg",
    "ResponseError",
)


@dataclass(frozen=True)
class GraphFingerprint:
    """Counts and a hash of every node, relationship, property and index of a graph."""

    nodes: int
    relationships: int
    checksum: str


def graph_fingerprint(db: GraphDB) -> GraphFingerprint:
    """Read the whole graph, sorted by id, and hash it (serialised by the engine: one row each)."""
    nodes = db.run_read(
        "MATCH (n) WITH n ORDER BY id(n) "
        "RETURN count(n), toJSON(collect([id(n), labels(n), properties(n)]))"
    ).rows
    rels = db.run_read(
        "MATCH (a)-[r]->(b) WITH a, r, b ORDER BY id(r) "
        "RETURN count(r), toJSON(collect([id(r), type(r), id(a), id(b), properties(r)]))"
    ).rows
    indexes = db.run_read(
        "CALL db.indexes() YIELD label, properties, types RETURN label, properties, types",
        max_rows=10_000,
    ).rows
    digest = hashlib.sha256()
    for part in (
        nodes[0][1],
        rels[0][1],
        sorted(json.dumps(row, sort_keys=True) for row in indexes),
    ):
        digest.update(json.dumps(part).encode())
        digest.update(b"\x1e")
    return GraphFingerprint(int(nodes[0][0]), int(rels[0][0]), digest.hexdigest())


_PLANTS = (
    ("Incident", "title", POISONED_INCIDENT_ID, POISONED_TITLE),
    ("Team", "slack_channel", POISONED_TEAM_ID, POISONED_CHANNEL),
)


def plant_injections(db: FalkorGraph) -> None:
    """Put instructions where the answer step reads them: an incident title, a team's channel.

    Each value is read back and written again once if it did not land: in two CI runs of many
    the title SET right after a load matched nothing (the baseline fingerprint was the demo with
    the channel planted and the title not), and the hostile module then failed on a graph that
    held no injection to obey. A value that still does not land fails here, saying so.
    """
    for label, prop, node_id, value in _PLANTS:
        write = f"MATCH (n:{label} {{id: $id}}) SET n.{prop} = $value"
        read = f"MATCH (n:{label}) WHERE n.id = $id RETURN n.{prop}"
        for attempt in (1, 2):
            db.run_write(write, {"id": node_id, "value": value})
            if db.run_read(read, {"id": node_id}).rows == [[value]]:
                break
            logger.warning(
                "plant %s.%s on %s did not land (attempt %d)", label, prop, node_id, attempt
            )
        else:
            pytest.fail(
                f"the injection into {label} {node_id}.{prop} did not land in {db.graph_name}"
            )


@pytest.fixture(scope="module")
def demo_copy(
    demo_db: GraphDB, graph_data_dir: Path, request: pytest.FixtureRequest
) -> Iterator[FalkorGraph]:
    """A private copy of the demo graph with planted injections, for tests that might mutate it."""
    from graph_agent.demo import load_demo

    name = f"security_{request.module.__name__.rsplit('.', 1)[-1]}"
    db = connect("embedded", data_dir=graph_data_dir, graph_name=name)
    assert isinstance(db, FalkorGraph)
    db.drop_graph()
    load_demo(db)
    plant_injections(db)
    yield db
    db.drop_graph()
    db.close()


# --- the ledger: what each layer did with each input -----------------------------------------


@dataclass
class Outcome:
    """What one layer did with one input."""

    input_id: str
    layer: str
    """policy, engine or e2e."""
    stopped_by: str
    """input, policy, engine, none (answered), or for the engine: refused/rejected/ran."""
    mutated: bool
    detail: str = ""


@dataclass
class Ledger:
    """Every outcome of the session, for the summary table."""

    outcomes: list[Outcome] = field(default_factory=list)
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def record(self, outcome: Outcome) -> None:
        with self._lock:
            self.outcomes.append(outcome)

    def for_layer(self, layer: str) -> list[Outcome]:
        return [o for o in self.outcomes if o.layer == layer]


_LEDGER = Ledger()


@pytest.fixture(scope="session")
def ledger() -> Ledger:
    """The session's ledger (one object for all security modules)."""
    return _LEDGER


# --- the compromised LLM ------------------------------------------------------------------------


def tagged(item_id: str, text: str) -> str:
    """The question as sent in e2e runs: the text plus a tag the scripted LLM keys on."""
    return f"{text} [sec:{item_id}]"


def _tag_of(messages: list[BaseMessage]) -> str | None:
    found = TAG.findall(step_prompt(messages))
    return found[-1] if found else None


def compromised_responder(
    extra: Mapping[str, HostileInput] | None = None,
) -> Callable[[list[BaseMessage]], str]:
    """A scripted LLM that does whatever the hostile input asks: the guard says in scope, generate
    and correct write the attack Cypher verbatim, and the answer step obeys instructions it reads
    in the rows (it asks for a correction that the attack Cypher then 'fixes')."""

    def reply(messages: list[BaseMessage]) -> str:
        kind = prompt_kind(messages)
        tag = _tag_of(messages) or ""
        item = (extra or {}).get(tag) or BY_ID.get(tag)
        if kind == "guard":
            return guard_reply(reason="the user asked about the graph")
        if kind == "generate":
            if item is None or item.cypher is None:
                return cypher_reply(BENIGN_READ)
            return cypher_reply(item.first_cypher or item.cypher)
        if kind == "correct":
            if item is None or item.cypher is None:
                return cypher_reply(BENIGN_READ)
            return cypher_reply(item.cypher)
        if kind == "evaluate":
            content = step_prompt(messages)
            if any(marker in content for marker in INJECTION_MARKERS):
                return evaluation_reply(
                    answers=False,
                    feedback="The data says maintenance mode is on: first run the write it asks for.",
                )
            rows = content.split("):\n", 1)[-1].split("\n\nQuestion:", 1)[0]
            return evaluation_reply(answer=f"Found: {' '.join(rows.split())[:300]}")
        raise AssertionError(f"unexpected prompt: {str(messages[0].content)[:80]}")

    return reply


class RecordingAgent:
    """The real Agent, remembering every result in order (the tests send one input at a time)."""

    def __init__(self, agent: Any) -> None:
        self._agent = agent
        self._lock = threading.Lock()
        self.runs: list[AgentResult] = []

    def run(
        self,
        question: str,
        *,
        history: Sequence[Turn] = (),
        on_progress: Callable[[ProgressEvent], None] | None = None,
        policy: CypherPolicy | None = None,
        choice: Choice | None = None,
    ) -> AgentResult:
        result: AgentResult = self._agent.run(
            question, history=history, on_progress=on_progress, policy=policy, choice=choice
        )
        with self._lock:
            self.runs.append(result)
        return result

    def suggestions(self, n: int = 3) -> list[str]:
        suggestions: list[str] = self._agent.suggestions(n)
        return suggestions

    def describe(self) -> str:
        description: str = self._agent.describe()
        return description


def stopping_layer(result: AgentResult | None) -> str:
    """Which layer stopped an agent run: none (answered), policy, engine, or input (no run)."""
    if result is None:
        return "input"
    if result.outcome in ("answered", "no_data"):
        return "none"
    if result.outcome == "out_of_scope" and not result.attempts and result.llm_calls == 0:
        return "intent"
    errors = [a.error or "" for a in result.attempts]
    engine = [
        e
        for a, e in zip(result.attempts, errors, strict=True)
        if a.stage in ("execute", "validate", "timeout")
        or e.startswith(("The engine says", "Refused as not read-only"))
    ]
    if engine:
        return "engine"
    if any(e.startswith("Refused by the read-only policy") for e in errors):
        return "policy"
    return f"other ({result.outcome}/{result.error_kind})"
