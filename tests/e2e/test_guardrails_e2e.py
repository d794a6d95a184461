"""Guardrails through the whole bot: channel restrictions, the token budget, channels told
once, and no configured secret in any log line (DEBUG included)."""

from __future__ import annotations

import io
import json
import logging
import threading
from collections.abc import Iterator
from typing import Any

import pytest
from pydantic import SecretStr

from bot.slack.answering import BUDGET_MESSAGE
from graph_agent.graphdb import GraphDB
from graph_agent.result import AgentResult
from rig.scripted_llm import ScriptedChatModel
from rig.slack import ALICE, BOB, CHANNEL, answer_text, graph_responder, prompt_kind
from tests.e2e.conftest import RigFactory

SECRET_CHANNEL = "C0SECRET"
INCIDENTS = "MATCH (i:Incident) RETURN count(i) AS incidents"
EMAILS = "MATCH (p:Person) RETURN p.email AS email ORDER BY email LIMIT 3"
TEAM_COUNT = "MATCH (t:Team) RETURN count(t) AS teams"


class RecordingDB:
    """The demo graph, remembering every statement that reached the engine."""

    def __init__(self, db: GraphDB) -> None:
        self._db = db
        self._lock = threading.Lock()
        self.statements: list[str] = []

    def validate(self, cypher: str) -> Any:
        with self._lock:
            self.statements.append(cypher)
        return self._db.validate(cypher)

    def run_read(self, cypher: str, *args: Any, **kw: Any) -> Any:
        with self._lock:
            self.statements.append(cypher)
        return self._db.run_read(cypher, *args, **kw)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._db, name)


class ResultsAgent:
    """The rig's agent, keeping each result (and passing the channel's policy on)."""

    def __init__(self, agent: Any) -> None:
        self._agent = agent
        self.results: list[AgentResult] = []

    def run(self, question: str, **kw: Any) -> AgentResult:
        result: AgentResult = self._agent.run(question, **kw)
        self.results.append(result)
        return result

    def __getattr__(self, name: str) -> Any:
        return getattr(self._agent, name)


def generate_prompts(model: ScriptedChatModel) -> list[str]:
    return [
        "\n".join(str(m.content) for m in call)
        for call in model.calls
        if prompt_kind(call) == "generate"
    ]


@pytest.mark.parametrize("statement", [INCIDENTS, EMAILS])
def test_a_restricted_channel_neither_sees_nor_reaches_hidden_names(
    make_rig: RigFactory, demo_db: GraphDB, statement: str
) -> None:
    model = ScriptedChatModel(responder=graph_responder(lambda q: statement))
    db = RecordingDB(demo_db)
    rig = make_rig(
        model,
        db=db,
        channel_restrictions=f"{SECRET_CHANNEL}:Incident,Person.email",
        max_attempts=2,
    )
    rig.emulator.add_channel(SECRET_CHANNEL, "secret", members=[ALICE, BOB])
    agent = rig.bot.deps.agent = ResultsAgent(rig.bot.deps.agent)

    restricted = rig.mention("What can you tell me?", channel=SECRET_CHANNEL)
    [refused] = rig.wait_answers(SECRET_CHANNEL, restricted["ts"])
    [prompt, *_] = generate_prompts(model)
    assert "Incident" not in prompt and "email" not in prompt
    assert "Person" in prompt and "Team" in prompt, "the rest of the schema is there"
    assert db.statements == [], "the policy refused it before the engine"
    [result] = agent.results
    assert len(result.attempts) == 2
    assert all(
        (a.error or "").startswith("Refused by the read-only policy") for a in result.attempts
    )
    assert "Found:" not in answer_text(refused)
    turn = rig.memory.conversations.by_message(SECRET_CHANNEL, refused["ts"])
    assert turn is not None and turn.outcome == "failed"

    model.calls.clear()
    open_question = rig.mention("What can you tell me?", user=BOB)
    [answered] = rig.wait_answers(CHANNEL, open_question["ts"])
    [prompt] = generate_prompts(model)
    assert "Incident" in prompt and "email" in prompt
    assert db.statements and all(s == statement for s in db.statements)
    assert "Found:" in answer_text(answered)


def test_help_and_slash_commands_in_a_restricted_channel_do_not_name_hidden_labels(
    make_rig: RigFactory,
) -> None:
    rig = make_rig(ScriptedChatModel(), channel_restrictions=f"{SECRET_CHANNEL}:Incident")
    rig.emulator.add_channel(SECRET_CHANNEL, "secret", members=[ALICE])
    empty = rig.mention("", channel=SECRET_CHANNEL)
    [help_reply] = rig.wait_answers(SECRET_CHANNEL, empty["ts"])
    assert "incident" not in answer_text(help_reply).lower()
    rig.emulator.slash_command(ALICE, SECRET_CHANNEL, "schema")
    rig.emulator.slash_command(ALICE, CHANNEL, "schema")
    rig.emulator.wait_for(lambda: len(rig.emulator.responses) == 2, 30)
    shown = {e["channel"]: json.dumps(e).lower() for e in rig.emulator.ephemerals}
    assert "incident" not in shown[SECRET_CHANNEL] and "incident" in shown[CHANNEL]


def test_over_the_daily_token_budget_the_agent_is_not_called(make_rig: RigFactory) -> None:
    model = ScriptedChatModel(responder=graph_responder(lambda q: TEAM_COUNT))
    rig = make_rig(model, daily_token_budget=100)
    first = rig.mention("How many teams are there?")
    [answer] = rig.wait_answers(CHANNEL, first["ts"])
    assert "Found:" in answer_text(answer)
    calls = len(model.calls)
    second = rig.mention("And how many teams now?", user=BOB)
    rig.emulator.wait_for(lambda: rig.emulator.ephemerals, 30)
    rig.settle()
    [declined] = rig.emulator.ephemerals  # only Bob sees it
    assert declined["thread_ts"] == second["ts"]
    assert BUDGET_MESSAGE.split(",")[0] in answer_text(declined)
    assert len(model.calls) == calls, "no LLM call once the budget is used up"
    assert rig.memory.conversations.by_message(CHANNEL, second["ts"]) is None


def test_a_channel_that_is_not_enabled_is_told_once(make_rig: RigFactory) -> None:
    rig = make_rig(ScriptedChatModel(), allowed_channels=[CHANNEL])
    rig.emulator.add_channel("C0RANDOM", "random", members=[ALICE])
    first = rig.mention("How many teams?", channel="C0RANDOM")
    [notice] = rig.wait_answers("C0RANDOM", first["ts"])
    assert "not enabled in this channel" in answer_text(notice)
    second = rig.mention("How many teams, please?", channel="C0RANDOM")
    rig.settle()
    assert rig.emulator.bot_replies("C0RANDOM", second["ts"]) == []


@pytest.fixture
def all_logs() -> Iterator[io.StringIO]:
    """Every log record of the test, at DEBUG, as the root handlers would write it."""
    stream = io.StringIO()
    handler = logging.StreamHandler(stream)
    handler.setFormatter(logging.Formatter("%(levelname)s %(name)s: %(message)s"))
    root = logging.getLogger()
    level = root.level
    root.addHandler(handler)
    root.setLevel(logging.DEBUG)
    try:
        yield stream
    finally:
        root.setLevel(level)
        root.removeHandler(handler)


def test_no_configured_secret_appears_in_any_log_line(
    make_rig: RigFactory, all_logs: io.StringIO
) -> None:
    secrets = {
        "neo4j_password": "neo4j-pass-e2e-7f3a",
        "openai_api_key": "sk-e2e-4b9c1d2e",
        "slack_app_token": "xapp-1-e2e-app-token",
    }
    model = ScriptedChatModel(responder=graph_responder(lambda q: TEAM_COUNT))
    rig = make_rig(
        model,
        log_user_text="full",
        **{name: SecretStr(value) for name, value in secrets.items()},
    )
    every_secret = [
        *secrets.values(),
        rig.emulator.bot_token,
        rig.emulator.signing_secret,
    ]
    first = rig.mention(f"How many teams? My key is {secrets['openai_api_key']}")
    rig.wait_answers(CHANNEL, first["ts"])
    rig.say(f"and with {rig.emulator.bot_token} now?", thread_ts=first["ts"])
    rig.wait_answers(CHANNEL, first["ts"], n=2)
    rig.dm(f"password {secrets['neo4j_password']}, signing {rig.emulator.signing_secret}")
    rig.settle()
    logging.getLogger("tests.e2e").error("an error mentioning %s", secrets["slack_app_token"])

    text = all_logs.getvalue()
    assert "question from U0ALICE" in text, "the INFO line per question was captured"
    assert "DEBUG" in text and len(text.splitlines()) > 20
    leaked = [secret for secret in every_secret if secret in text]
    assert leaked == []
    assert "My key is ***" in text


def test_log_user_text_redact_keeps_the_question_out_of_info_lines(
    make_rig: RigFactory, all_logs: io.StringIO
) -> None:
    model = ScriptedChatModel(responder=graph_responder(lambda q: TEAM_COUNT))
    rig = make_rig(model, log_user_text="redact")
    question = "How many teams does the confidential roadmap mention?"
    first = rig.mention(question)
    rig.wait_answers(CHANNEL, first["ts"])
    info = [line for line in all_logs.getvalue().splitlines() if not line.startswith("DEBUG")]
    assert any("question from U0ALICE" in line and "[" in line for line in info)
    assert not any("confidential roadmap" in line for line in info)
