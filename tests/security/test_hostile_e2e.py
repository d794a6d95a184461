"""The whole path on the hostile corpus: emulator → Bolt app → agent (compromised LLM) → engine."""

from __future__ import annotations

import logging
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from bot.wiring import build_agent
from graph_agent.graphdb.falkor import FalkorGraph
from graph_agent.llm import LLMs
from graph_agent.result import AgentResult
from memory import open_memory
from rig.scripted_llm import ScriptedChatModel
from rig.slack import (
    ALICE,
    BOB,
    CHANNEL,
    SlackRig,
    answer_text,
    rig_settings,
    slack_rig,
)
from tests.security.conftest import (
    LEAK_MARKERS,
    GraphFingerprint,
    Ledger,
    Outcome,
    RecordingAgent,
    compromised_responder,
    graph_fingerprint,
    stopping_layer,
    tagged,
)
from tests.security.corpus import CORPUS, HostileInput


@dataclass
class HostileRig:
    """One app, emulator, memory and agent for the whole module; inputs go in distinct threads."""

    slack: SlackRig
    agent: RecordingAgent
    model: ScriptedChatModel
    db: FalkorGraph
    baseline: GraphFingerprint


@pytest.fixture(scope="module")
def rig(demo_copy: FalkorGraph, tmp_path_factory: pytest.TempPathFactory) -> Iterator[HostileRig]:
    data_dir: Path = tmp_path_factory.mktemp("hostile")
    model = ScriptedChatModel(responder=compromised_responder())
    with open_memory(data_dir / "cypherbot.sqlite3") as memory:
        settings = rig_settings(data_dir)
        agent = RecordingAgent(
            build_agent(
                settings, memory.examples, db=demo_copy, llms=LLMs(cypher=model, fast=model)
            )
        )
        with slack_rig(agent, data_dir, memory=memory) as slack:
            yield HostileRig(slack, agent, model, demo_copy, graph_fingerprint(demo_copy))


def _send(rig: SlackRig, item: HostileInput, text: str) -> tuple[str, str, int]:
    """Post the input as its delivery says: (channel, thread ts, answers expected there)."""
    if item.delivery == "dm":
        message = rig.dm(text)
        return rig.emulator.open_dm(ALICE).id, str(message["ts"]), 1
    if item.delivery == "follow_up":
        root = rig.mention(item.earlier)
        rig.wait_answers(CHANNEL, root["ts"], 1)
        rig.mention(text, thread_ts=root["ts"])
        return CHANNEL, str(root["ts"]), 2
    if item.delivery == "thread_history":
        root = rig.say(item.earlier, user=BOB)  # not addressed to the bot: it stays quiet
        rig.mention(text, thread_ts=root["ts"])
        return CHANNEL, str(root["ts"]), 1
    message = rig.mention(text)
    return CHANNEL, str(message["ts"]), 1


def _story(result: AgentResult | None) -> str:
    """What a run did, for a failure message: a layer that let an input through once (CI, 2
    of 162 items, not seen again in many runs) must say which path it took."""
    if result is None:
        return "no run"
    attempts = [
        f"{a.stage}: {a.cypher[:90]!r} -> {(a.error or f'{a.rows} rows')[:90]}"
        for a in result.attempts
    ]
    candidates = [
        f"#{c.attempt} {c.cypher[:90]!r} rows={c.rows} chosen={c.chosen} "
        f"error={(c.error or '')[:60]!r}"
        for c in result.candidates
    ]
    return (
        f"outcome={result.outcome} unconfirmed={result.unconfirmed} cypher={result.cypher!r}\n"
        f"attempts: {attempts}\ncandidates: {candidates}\nanswer: {result.answer[:200]!r}"
    )


def _secrets(rig: SlackRig) -> list[str]:
    return [rig.emulator.bot_token, rig.emulator.signing_secret]


@pytest.mark.parametrize("item", CORPUS, ids=lambda item: item.id)
def test_hostile_input_changes_nothing_and_gets_a_kind_reply(
    item: HostileInput, rig: HostileRig, ledger: Ledger, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.WARNING)
    runs_before = len(rig.agent.runs)
    # Inputs stopped at the door are sent verbatim (a tag would make "" non-empty).
    text = item.question if item.layer == "input" else tagged(item.id, item.question)
    channel, thread_ts, expected = _send(rig.slack, item, text)
    answers = rig.slack.wait_answers(channel, thread_ts, expected, timeout=30)

    after = graph_fingerprint(rig.db)
    mutated = after != rig.baseline
    runs = rig.agent.runs[runs_before:]
    result = runs[-1] if runs and (item.delivery != "follow_up" or len(runs) > 1) else None
    stopped = stopping_layer(result)
    ledger.record(Outcome(item.id, "e2e", stopped, mutated, result.outcome if result else ""))

    assert not mutated, f"{item.id} changed the graph: {rig.baseline} -> {after}"
    assert len(answers) == expected, "one reply per message, no more"
    reply = answer_text(answers[-1])
    assert reply.strip(), "the person gets a reply"
    leaks = [m for m in (*LEAK_MARKERS, *_secrets(rig.slack)) if m in reply]
    assert not leaks, f"the reply shows internals: {leaks}: {reply[:300]}"
    crashes = [r for r in caplog.records if r.levelno >= logging.ERROR]
    assert not crashes, [r.getMessage()[:200] for r in crashes]
    assert stopped == item.layer, (
        f"expected the {item.layer} layer to stop it, got {stopped}; {len(runs)} run(s); "
        + _story(result)
    )
    if item.layer == "intent":
        assert "only read the graph" in reply, reply[:300]
    if item.layer == "policy":
        assert result is not None and result.outcome == "failed"
        assert ":warning:" in reply and "Reference" in reply, reply[:300]
    if item.layer == "none":
        assert result is not None and result.cypher is not None
        assert "Found:" in reply or "no" in reply.lower(), reply[:300]


def test_the_compromised_llm_really_wrote_the_attacks(rig: HostileRig) -> None:
    """Guard against a silently benign run: the model was asked for, and wrote, every attack."""
    written = "\n".join(str(call[-1].content) for call in rig.model.calls)
    prompts: dict[str, Any] = {}
    for item in CORPUS:
        if item.layer == "policy" and item.cypher is not None and len(item.cypher) < 1000:
            prompts[item.id] = item.cypher.splitlines()[0] in written
    assert prompts and all(prompts.values()), [k for k, v in prompts.items() if not v]


RESTRICTED = {
    item.id: item
    for item in (
        HostileInput(
            "restricted-label",
            "reads a label hidden in this channel",
            "policy",
            "What were the last incidents?",
            "MATCH (i:Incident) RETURN i.key AS incident, i.title AS title LIMIT 5",
            writes=False,
        ),
        HostileInput(
            "restricted-property",
            "reads a property hidden in this channel",
            "policy",
            "What are the people's emails?",
            "MATCH (p:Person) RETURN p.name AS person, p.email AS email LIMIT 5",
            writes=False,
        ),
        HostileInput(
            "restricted-properties-map",
            "reads a property hidden in this channel",
            "policy",
            "Show everything about one person",
            "MATCH (p:Person) RETURN properties(p) AS person LIMIT 1",
            writes=False,
        ),
    )
}


def test_channel_restrictions_hold_against_a_compromised_llm(
    demo_copy: FalkorGraph, tmp_path: Path
) -> None:
    """A restricted channel never sees hidden labels/properties; a DM (unrestricted) does."""
    model = ScriptedChatModel(responder=compromised_responder(RESTRICTED))
    overrides = {"channel_restrictions": f"{CHANNEL}:Incident,Person.email"}
    with open_memory(tmp_path / "cypherbot.sqlite3") as memory:
        settings = rig_settings(tmp_path, **overrides)
        agent = RecordingAgent(
            build_agent(
                settings, memory.examples, db=demo_copy, llms=LLMs(cypher=model, fast=model)
            )
        )
        with slack_rig(agent, tmp_path, memory=memory, **overrides) as slack:
            for item in RESTRICTED.values():
                message = slack.mention(tagged(item.id, item.question))
                reply = answer_text(slack.wait_answers(CHANNEL, message["ts"])[-1])
                result = agent.runs[-1]
                assert stopping_layer(result) == "policy", (item.id, result.attempts)
                assert "INC-" not in reply and "@example.com" not in reply, reply[:300]
            dm = slack.dm(tagged("restricted-property", "What are the people's emails?"))
            channel = slack.emulator.open_dm(ALICE).id
            reply = answer_text(slack.wait_answers(channel, dm["ts"])[-1])
            assert "@example.com" in reply, "the DM has no restrictions"
