"""Slack's delivery contract end to end: signatures, acks, retries, twins, bots and ignored events."""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable
from typing import Any

from pydantic import SecretStr
from slack_bolt import BoltRequest, BoltResponse
from slack_bolt.adapter.socket_mode.internals import run_bolt_app
from slack_sdk.socket_mode.request import SocketModeRequest

from bot.slack.app import create_bot
from rig.scripted_llm import ScriptedChatModel
from rig.slack import (
    ALICE,
    CHANNEL,
    OTHER_BOT_ID,
    OTHER_BOT_USER,
    answer_text,
    graph_responder,
    prompt_kind,
)
from tests.e2e.conftest import RigFactory

TEAM_COUNT = "MATCH (t:Team) RETURN count(t) AS teams"


def slow_model(seconds: float) -> ScriptedChatModel:
    return ScriptedChatModel(
        responder=graph_responder(lambda q: TEAM_COUNT, delay_s=lambda kind: seconds)
    )


def test_bad_or_stale_signatures_get_401_and_no_api_call(make_rig: RigFactory) -> None:
    rig = make_rig(ScriptedChatModel())
    message, _ = rig.emulator.post_message(ALICE, CHANNEL, f"<@{rig.bot_user}> hi", deliver=False)
    payload = rig.emulator.events_for_message(CHANNEL, message)[0]
    body = json.dumps(payload).encode()
    calls_before = len(rig.emulator.calls)
    now = int(time.time())
    bad = rig.emulator.send_raw(
        body,
        {
            "Content-Type": "application/json",
            "X-Slack-Request-Timestamp": str(now),
            "X-Slack-Signature": rig.emulator.sign(body, now, "not-the-secret"),
        },
    )
    stale = rig.emulator.deliver(payload, timestamp=now - 6 * 60)
    unsigned = rig.emulator.send_raw(body, {"Content-Type": "application/json"})
    rig.settle()
    assert (bad.status, stale.status, unsigned.status) == (401, 401, 401)
    assert len(rig.emulator.calls) == calls_before


def test_url_verification_echoes_the_challenge(make_rig: RigFactory) -> None:
    rig = make_rig(ScriptedChatModel())
    delivery = rig.emulator.url_verification("abc123")
    assert delivery.status == 200 and json.loads(delivery.body) == {"challenge": "abc123"}


def test_ack_is_fast_while_the_llm_takes_10_seconds(make_rig: RigFactory) -> None:
    rig = make_rig(
        ScriptedChatModel(
            responder=graph_responder(
                lambda q: TEAM_COUNT, delay_s=lambda kind: 10.0 if kind == "guard" else 0.0
            )
        )
    )
    mention = rig.mention("How many teams are there?")
    acks = [d.elapsed_s for d in rig.emulator.deliveries]
    assert len(acks) == 2 and max(acks) < 3.0, acks  # the platform's hard limit
    [answer] = rig.wait_answers(CHANNEL, mention["ts"], timeout=30)
    assert "Found:" in answer_text(answer)


def test_retry_storm_while_the_first_attempt_runs_gives_one_answer(make_rig: RigFactory) -> None:
    model = slow_model(0.3)
    rig = make_rig(model)
    message, _ = rig.emulator.post_message(
        ALICE, CHANNEL, f"<@{rig.bot_user}> how many teams?", deliver=False
    )
    mention_event = rig.emulator.events_for_message(CHANNEL, message)[0]
    rig.emulator.deliver(mention_event, retries=3, concurrent=True)  # 4 copies at once
    rig.wait_answers(CHANNEL, message["ts"])
    rig.emulator.deliver(mention_event, retries=2, concurrent=False)  # late retries
    rig.settle()
    assert len(rig.answers(CHANNEL, message["ts"])) == 1
    assert len(model.calls) == 3
    retried = [d for d in rig.emulator.deliveries if d.retry_num]
    assert len(retried) == 5 and all(d.status == 200 for d in retried)


def test_an_event_acked_late_over_http_is_retried_and_answered_once(make_rig: RigFactory) -> None:
    model = slow_model(0.0)
    rig = make_rig(model)
    held: list[str] = []

    def slow_first_ack(req: BoltRequest, resp: BoltResponse, next: Callable[[], Any]) -> Any:
        # The first attempt's dispatch waits until the emulator has given up on it (its
        # ack deadline): late by construction, on any machine, with no clock in the test.
        event = req.body.get("event") or {}
        if event.get("type") == "app_mention" and not req.headers.get("x-slack-retry-num"):
            held.append(str(req.body.get("event_id")))
            rig.emulator.wait_for(
                lambda: any(not d.acked for d in rig.emulator.deliveries), 30, "never timed out"
            )
        return next()

    rig.bot.app.use(slow_first_ack)
    mention = rig.mention("How many teams are there?")
    rig.wait_answers(CHANNEL, mention["ts"])
    rig.settle()
    assert len(rig.answers(CHANNEL, mention["ts"])) == 1
    assert [prompt_kind(m) for m in model.calls].count("guard") == 1, "asked once"
    [event_id] = held
    tries = sorted(
        (d for d in rig.emulator.deliveries if d.payload.get("event_id") == event_id),
        key=lambda d: d.sent_seq,
    )
    assert [(d.retry_num, d.retry_reason, d.acked) for d in tries] == [
        (0, "", False),
        (1, "http_timeout", True),
    ]
    problems = rig.emulator.ack_problems()
    assert problems and all(event_id in p for p in problems), problems


def test_retry_of_an_attempt_that_died_is_answered(make_rig: RigFactory) -> None:
    rig = make_rig(slow_model(0.0))
    message, _ = rig.emulator.post_message(
        ALICE, CHANNEL, f"<@{rig.bot_user}> how many teams?", deliver=False
    )
    mention_event = rig.emulator.events_for_message(CHANNEL, message)[0]
    # A previous process claimed this delivery and died before answering: its lease ran out.
    for key in (f"event:{mention_event['event_id']}", f"msg:{CHANNEL}:{message['ts']}"):
        assert rig.memory.events.claim(key, lease_s=0.01, ttl_s=3600)
    time.sleep(0.05)
    rig.emulator.deliver(mention_event, retries=1, concurrent=False)
    [answer] = rig.wait_answers(CHANNEL, message["ts"])
    assert "Found:" in answer_text(answer)


def test_dedupe_survives_a_restart(make_rig: RigFactory) -> None:
    rig = make_rig(slow_model(0.0))
    mention = rig.mention("how many teams?")
    rig.wait_answers(CHANNEL, mention["ts"])
    event = next(
        d.payload for d in rig.emulator.deliveries if d.payload["event"]["type"] == "app_mention"
    )
    # A new app process on the same memory database gets Slack's retry.
    bot2 = create_bot(rig.settings, rig.bot.deps.agent, rig.memory, socket_mode=False)
    try:
        from bot.slack.http_server import SlackHTTPServer

        server2 = SlackHTTPServer(bot2.app, port=0).start()
        rig.emulator.app_url = server2.events_url
        assert rig.emulator.deliver(event, retries=1, concurrent=False).status == 200
        bot2.deps.delivery.wait_idle()
        server2.stop()
    finally:
        bot2.close()
    assert len(rig.answers(CHANNEL, mention["ts"])) == 1


def test_message_delivered_as_mention_and_message_is_answered_once(make_rig: RigFactory) -> None:
    model = slow_model(0.1)
    rig = make_rig(model)
    message, _ = rig.emulator.post_message(
        ALICE, CHANNEL, f"<@{rig.bot_user}> how many teams?", deliver=False
    )
    payloads = rig.emulator.events_for_message(CHANNEL, message)
    assert [p["event"]["type"] for p in payloads] == ["app_mention", "message"]
    rig.emulator.deliver_all(list(reversed(payloads)), concurrent=True)
    rig.wait_answers(CHANNEL, message["ts"])
    rig.settle()
    assert len(rig.answers(CHANNEL, message["ts"])) == 1 and len(model.calls) == 3


def test_own_and_other_bots_messages_get_nothing(make_rig: RigFactory) -> None:
    rig = make_rig(ScriptedChatModel())
    rig.emulator.post_bot_message(OTHER_BOT_USER, OTHER_BOT_ID, CHANNEL, f"<@{rig.bot_user}> ping")
    own = rig.emulator.envelope(
        {
            "type": "message",
            "user": rig.bot_user,
            "bot_id": rig.emulator.bot_id,
            "text": f"<@{rig.bot_user}> talking to myself",
            "ts": "1700000000.000100",
            "channel": CHANNEL,
            "channel_type": "channel",
        }
    )
    legacy = rig.emulator.envelope(
        {
            "type": "message",
            "subtype": "bot_message",
            "bot_id": "B0LEGACY",
            "text": f"<@{rig.bot_user}> legacy bot",
            "ts": "1700000000.000200",
            "channel": CHANNEL,
            "channel_type": "channel",
        }
    )
    assert rig.emulator.deliver(own).status == 200
    assert rig.emulator.deliver(legacy).status == 200
    rig.settle()
    assert not rig.emulator.calls_to("chat.postMessage")
    assert all(d.status == 200 for d in rig.emulator.deliveries)


def test_edits_deletes_joins_and_broadcasts_do_not_crash_or_404(make_rig: RigFactory) -> None:
    rig = make_rig(slow_model(0.0))
    mention = rig.mention("how many teams?")
    rig.wait_answers(CHANNEL, mention["ts"])
    rig.emulator.edit_message(CHANNEL, mention["ts"], f"<@{rig.bot_user}> how many teams now?")
    other = rig.say("typo")
    rig.emulator.delete_message(CHANNEL, other["ts"])
    for extra in (
        {
            "type": "message",
            "subtype": "channel_join",
            "user": ALICE,
            "text": "joined",
            "ts": "1700000001.000001",
        },
        {
            "type": "message",
            "subtype": "message_replied",
            "hidden": True,
            "ts": "1700000001.000002",
            "message": {},
        },
        {
            "type": "member_joined_channel",
            "user": ALICE,
            "channel": CHANNEL,
            "event_ts": "1700000001.000003",
        },
        {
            "type": "app_home_opened",
            "user": ALICE,
            "channel": "D0ALICE",
            "tab": "messages",
            "event_ts": "1700000001.000004",
        },
    ):
        event = {"channel": CHANNEL, "channel_type": "channel", **extra}
        assert rig.emulator.deliver(rig.emulator.envelope(event)).status == 200
    broadcast = rig.emulator.envelope(
        {
            "type": "message",
            "subtype": "thread_broadcast",
            "user": ALICE,
            "text": "and how many people?",
            "ts": "1800000000.000001",
            "thread_ts": mention["ts"],
            "channel": CHANNEL,
            "channel_type": "channel",
        }
    )
    assert rig.emulator.deliver(broadcast).status == 200
    rig.wait_answers(CHANNEL, mention["ts"], 2)  # a broadcast reply is a follow-up
    rig.settle()
    assert all(d.status == 200 for d in rig.emulator.deliveries), [
        (d.payload.get("event", {}).get("subtype"), d.status) for d in rig.emulator.deliveries
    ]
    assert len(rig.answers(CHANNEL, mention["ts"])) == 2  # the edit was not answered


def test_socket_mode_envelopes_run_the_same_listeners(make_rig: RigFactory) -> None:
    rig = make_rig(slow_model(0.0))
    settings = rig.settings.model_copy(update={"slack_app_token": SecretStr("xapp-1-emulated")})
    socket_bot = create_bot(settings, rig.bot.deps.agent, rig.memory, socket_mode=True)
    try:
        message, _ = rig.emulator.post_message(
            ALICE, CHANNEL, f"<@{rig.bot_user}> how many teams?", deliver=False
        )
        payload = rig.emulator.events_for_message(CHANNEL, message)[0]
        envelope = rig.emulator.socket_envelope(payload)
        retry = rig.emulator.socket_envelope(payload, retry_attempt=1, retry_reason="timeout")
        responses = []
        threads = [
            threading.Thread(
                target=lambda e=e: responses.append(
                    run_bolt_app(socket_bot.app, SocketModeRequest.from_dict(e))
                )
            )
            for e in (envelope, retry)
        ]
        for t in threads:
            t.start()
        for t in threads:
            t.join(timeout=60)  # a hang detector; ack latency is measured in bench/slack.py
        assert [r.status for r in responses] == [200, 200]
        rig.wait_answers(CHANNEL, message["ts"])
        socket_bot.deps.delivery.wait_idle()
        assert len(rig.answers(CHANNEL, message["ts"])) == 1
    finally:
        socket_bot.close()


def test_twenty_concurrent_threads_never_mix(make_rig: RigFactory) -> None:
    from graph_agent.demo.generator import TEAM_NAMES

    def cypher_for(question: str) -> str:
        team = next(t for t in TEAM_NAMES if t in question)
        if "services" in question:
            return f"MATCH (:Team {{name: '{team}'}})-[:OWNS]->(s:Service) RETURN '{team}' AS team, count(s) AS services"
        return f"MATCH (p:Person)-[:MEMBER_OF]->(:Team {{name: '{team}'}}) RETURN '{team}' AS team, count(p) AS people"

    def standalone_for(question: str, prompt: str) -> str:
        if "Previous turns" not in prompt:
            return ""
        team = next(t for t in TEAM_NAMES if f"team {t}" in prompt)
        return f"How many services does team {team} own?"

    model = ScriptedChatModel(
        responder=graph_responder(cypher_for, standalone_for=standalone_for, delay_s=lambda k: 0.05)
    )
    rig = make_rig(model, workers=8)
    teams = TEAM_NAMES[:20]
    results: dict[str, dict[str, str]] = {}

    def ask(team: str) -> None:
        first = rig.mention(f"How many people are in team {team}?")
        rig.wait_answers(CHANNEL, first["ts"], timeout=120)
        rig.say("and how many services do they own?", thread_ts=first["ts"])
        rig.emulator.wait_for(lambda: len(rig.answers(CHANNEL, first["ts"])) >= 2, 120)
        results[team] = {"ts": first["ts"]}

    threads = [threading.Thread(target=ask, args=(team,)) for team in teams]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=180)
    rig.settle()
    assert sorted(results) == sorted(teams)
    for team, info in results.items():
        answers = rig.answers(CHANNEL, info["ts"])
        assert len(answers) == 2
        for answer in answers:
            text = answer_text(answer)
            assert team in text
            others = [t for t in teams if t != team and f"'{t}'" in text]
            assert not others, (team, others)
        assert "services" in answer_text(answers[1])
