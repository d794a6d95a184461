"""Failures end to end: LLM/graph errors as kind messages, Slack API errors, guardrails, slash command, health."""

from __future__ import annotations

import json
import logging
import re
import urllib.error
import urllib.request
from typing import Any

import pytest

from graph_agent.graphdb import GraphConnectionError, GraphDB, QueryTimeoutError
from rig.scripted_llm import ScriptedChatModel, cypher_reply, guard_reply
from rig.slack import ALICE, BOB, CHANNEL, answer_text, graph_responder
from tests.e2e.conftest import RigFactory

TEAM_COUNT = "MATCH (t:Team) RETURN count(t) AS teams"
REFERENCE = re.compile(r"Reference: `([0-9a-f]{6})`")


class BrokenDB:
    """The demo graph, with schema reads and/or query runs failing."""

    def __init__(
        self, db: GraphDB, *, schema: Exception | None = None, run: Exception | None = None
    ) -> None:
        self._db, self._schema, self._run = db, schema, run

    def __getattr__(self, name: str) -> Any:
        return getattr(self._db, name)

    def schema(self, **kw: Any) -> Any:
        if self._schema is not None:
            raise self._schema
        return self._db.schema(**kw)

    def run_read(self, cypher: str, params: Any = None, **kw: Any) -> Any:
        if self._run is not None:
            raise self._run
        return self._db.run_read(cypher, params, **kw)


def error_reply(rig: Any, caplog: pytest.LogCaptureFixture) -> str:
    mention = rig.mention("How many teams are there?")
    [reply] = rig.wait_answers(CHANNEL, mention["ts"])
    text = answer_text(reply)
    found = REFERENCE.search(text)
    assert found, text
    assert found.group(1) in caplog.text, "the reference id is in the logs"
    assert "Traceback" not in text and "xoxb" not in text and "redis" not in text.lower()
    return text


@pytest.mark.parametrize(
    ("case", "expected"),
    [
        ("llm_not_configured", "No LLM is configured"),
        ("llm_error", "couldn't reach the language model"),
        ("llm_timeout", "took too long to answer"),
        ("graph_down", "couldn't reach the graph database"),
        ("query_timeout", "took too long each time"),
    ],
)
def test_failures_replace_the_status_with_a_kind_message(
    make_rig: RigFactory,
    demo_db: GraphDB,
    caplog: pytest.LogCaptureFixture,
    case: str,
    expected: str,
) -> None:
    caplog.set_level(logging.WARNING)
    model: ScriptedChatModel | None = ScriptedChatModel(
        responder=graph_responder(lambda q: TEAM_COUNT)
    )
    db: Any = None
    if case == "llm_not_configured":
        model = None
    elif case == "llm_error":
        model = ScriptedChatModel(replies=[RuntimeError("upstream 500 at http://secret-host")])
    elif case == "llm_timeout":
        model = ScriptedChatModel(replies=[TimeoutError("slow")])
    elif case == "graph_down":
        db = BrokenDB(demo_db, schema=GraphConnectionError("redis://secret@host down"))
    elif case == "query_timeout":
        model = ScriptedChatModel(replies=[guard_reply()] + [cypher_reply(TEAM_COUNT)] * 5)
        db = BrokenDB(demo_db, run=QueryTimeoutError("timed out"))
    rig = make_rig(model, db=db, status_supported=False)
    text = error_reply(rig, caplog)
    assert expected in text
    assert "secret" not in text
    assert (
        len(
            rig.emulator.bot_replies(
                CHANNEL, rig.emulator.calls_to("chat.postMessage")[0].params["thread_ts"]
            )
        )
        == 1
    )


@pytest.mark.parametrize(
    "error", ["not_in_channel", "channel_not_found", "is_archived", "invalid_auth"]
)
def test_slack_api_errors_are_logged_and_never_fatal(make_rig: RigFactory, error: str) -> None:
    rig = make_rig(ScriptedChatModel(responder=graph_responder(lambda q: TEAM_COUNT)))
    rig.emulator.fail_next("assistant.threads.setStatus", error)
    rig.emulator.fail_next("chat.postMessage", error, times=2)
    first = rig.mention("How many teams are there?")
    rig.settle()
    assert rig.answers(CHANNEL, first["ts"]) == []
    second = rig.mention("How many teams are there now?")
    [answer] = rig.wait_answers(CHANNEL, second["ts"])
    assert "Found:" in answer_text(answer)


def test_rate_limit_and_channel_policy_are_answered_kindly(make_rig: RigFactory) -> None:
    rig = make_rig(
        ScriptedChatModel(responder=graph_responder(lambda q: TEAM_COUNT)),
        rate_per_minute=1,
        denied_channels=["C0RANDOM"],
    )
    rig.emulator.add_channel("C0RANDOM", "random", members=[ALICE])
    first = rig.mention("How many teams?")
    rig.wait_answers(CHANNEL, first["ts"])
    second = rig.mention("And now?")
    rig.emulator.wait_for(lambda: rig.emulator.ephemerals, 30)
    [slow_down] = rig.emulator.ephemerals  # only the asker sees it
    assert slow_down["user"] == ALICE and "in the last minute" in answer_text(slow_down)
    assert rig.emulator.bot_replies(CHANNEL, second["ts"]) == []
    denied = rig.mention("How many teams?", user=BOB, channel="C0RANDOM")
    [policy] = rig.wait_answers("C0RANDOM", denied["ts"])
    assert "not enabled in this channel" in answer_text(policy)


def test_dms_can_be_disabled(make_rig: RigFactory) -> None:
    rig = make_rig(ScriptedChatModel(), allow_dms=False)
    dm = rig.emulator.open_dm(ALICE).id
    message = rig.dm("How many teams?")
    [reply] = rig.wait_answers(dm, message["ts"])
    assert "don't answer direct messages" in answer_text(reply)


def test_healthz_reports_memory_and_failures(make_rig: RigFactory) -> None:
    rig = make_rig(ScriptedChatModel())
    with urllib.request.urlopen(rig.server.url + "/healthz", timeout=5) as response:
        assert response.status == 200 and json.loads(response.read())["memory"]["ok"] is True

    def down() -> None:
        raise ConnectionError("graph down")

    rig.server.health["graph"] = down
    with pytest.raises(urllib.error.HTTPError) as failed:
        urllib.request.urlopen(rig.server.url + "/healthz", timeout=5)
    assert failed.value.code == 503
    assert json.loads(failed.value.read())["graph"] == {"ok": False, "error": "ConnectionError"}
