"""No configured secret appears in any log record of real e2e turns, even when something echoes one."""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from pathlib import Path

import pytest
from pydantic import SecretStr

from bot.wiring import build_agent
from graph_agent.graphdb.falkor import FalkorGraph
from graph_agent.llm import LLMs
from graph_agent.result import AgentResult, Choice, ProgressEvent
from guardrails.cypher_policy import CypherPolicy
from memory import Turn, open_memory
from rig.scripted_llm import ScriptedChatModel
from rig.slack import CHANNEL, answer_text, rig_settings, slack_rig
from tests.security.conftest import RecordingAgent, compromised_responder, tagged

NEO4J_PASSWORD = "neo4j-Pa55word-for-the-log-test"
OPENAI_KEY = "sk-test-4f3c2b1a0987654321fedcba"
CRASH_MARK = "[crash]"


class LeakyAgent(RecordingAgent):
    """Crashes on questions marked [crash] with an error that quotes credentials, the way a
    driver or HTTP library might; the bot logs it with its traceback."""

    def run(
        self,
        question: str,
        *,
        history: Sequence[Turn] = (),
        on_progress: Callable[[ProgressEvent], None] | None = None,
        policy: CypherPolicy | None = None,
        choice: Choice | None = None,
    ) -> AgentResult:
        if CRASH_MARK in question:
            raise RuntimeError(
                f"auth failed for neo4j://neo4j:{NEO4J_PASSWORD}@db:7687 (key {OPENAI_KEY})"
            )
        return super().run(
            question, history=history, on_progress=on_progress, policy=policy, choice=choice
        )


def test_no_configured_secret_reaches_the_logs(
    demo_copy: FalkorGraph, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG)  # everything: bolt, slack_sdk, urllib, the agent, memory
    model = ScriptedChatModel(responder=compromised_responder())
    overrides = {
        "neo4j_password": SecretStr(NEO4J_PASSWORD),
        "openai_api_key": SecretStr(OPENAI_KEY),
        "log_user_text": "full",
    }
    with open_memory(tmp_path / "cypherbot.sqlite3") as memory:
        settings = rig_settings(tmp_path, **overrides)
        agent = LeakyAgent(
            build_agent(
                settings, memory.examples, db=demo_copy, llms=LLMs(cypher=model, fast=model)
            )
        )
        with slack_rig(agent, tmp_path, memory=memory, **overrides) as rig:
            secrets = [
                rig.emulator.bot_token,
                rig.emulator.signing_secret,
                NEO4J_PASSWORD,
                OPENAI_KEY,
            ]
            benign = rig.mention("Which teams are there?")
            attack = rig.mention(tagged("write-detach_delete-upper", "delete it all"))
            # People paste credentials too; their text is logged in full here (LOG_USER_TEXT).
            pasted = rig.mention(f"is {NEO4J_PASSWORD} the right password?")
            crash = rig.mention(f"{CRASH_MARK} who owns checkout-service?")
            dm = rig.dm("Which services use PostgreSQL?")
            replies = [
                answer_text(rig.wait_answers(CHANNEL, m["ts"])[-1])
                for m in (benign, attack, pasted, crash)
            ]
            dm_channel = rig.emulator.open_dm("U0ALICE").id
            replies.append(answer_text(rig.wait_answers(dm_channel, dm["ts"])[-1]))

    assert len(caplog.records) > 50, "DEBUG logging was not captured"
    assert any(r.exc_info or r.exc_text for r in caplog.records), "the crash was not logged"
    logged = caplog.text + "\n".join(
        f"{r.getMessage()} {r.exc_text or ''} {r.stack_info or ''}" for r in caplog.records
    )
    leaked = [s for s in secrets if s in logged]
    assert not leaked, f"secrets in the logs: {[s[:6] + '…' for s in leaked]}"
    assert "***" in logged, "the echoed credentials should show masked, not vanish"
    assert not any(s in reply for s in secrets for reply in replies)
