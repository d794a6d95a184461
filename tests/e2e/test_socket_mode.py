"""Socket Mode end to end, beside HTTP: the same conversations over both transports, the ack
contract read from the emulator's record (acked, and acked before any call the event causes),
Slack's retries answered once, a `disconnect` survived; and the emulator's side of the wire."""

from __future__ import annotations

import json
import re
import threading
import urllib.request
from typing import Any

import pytest
from websockets.sync.client import connect

from bot.playground.emulator import SlackEmulator, Transport
from bot.slack import render
from rig.scripted_llm import ScriptedChatModel
from rig.slack import ALICE, BOB, CHANNEL, SlackRig, answer_text, graph_responder, prompt_kind
from tests.e2e.conftest import RigFactory

TEAM_SIZES = (
    "MATCH (p:Person)-[:MEMBER_OF]->(t:Team) "
    "RETURN t.name AS team, count(p) AS people ORDER BY people DESC, team LIMIT 3"
)
POSTGRES = (
    "MATCH (s:Service)-[:USES]->(:Technology {name: 'PostgreSQL'}) "
    "RETURN s.name AS service ORDER BY service"
)


def graph_rig(make_rig: RigFactory, transport: Transport, **options: Any) -> SlackRig:
    """A rig whose scripted LLM writes one query for any question (and keeps follow-ups)."""
    model = ScriptedChatModel(
        responder=graph_responder(
            lambda q: POSTGRES if "Postgres" in q else TEAM_SIZES,
            standalone_for=lambda q, prompt: (
                "Which teams have the fewest people?" if "Previous turns" in prompt else ""
            ),
        )
    )
    return make_rig(model, transport=transport, **options)


def asked(rig: SlackRig, question: str, **where: Any) -> tuple[dict[str, Any], dict[str, Any]]:
    """(the mention, its answer) once answered."""
    mention = rig.mention(question, **where)
    [answer] = rig.wait_answers(CHANNEL, mention["ts"])
    return mention, answer


def assert_acks_kept(rig: SlackRig) -> None:
    """Every delivery acknowledged, over the rig's transport, before any call it caused."""
    rig.settle()
    deliveries = list(rig.emulator.deliveries)
    assert deliveries, "nothing was delivered"
    assert {d.transport for d in deliveries} == {rig.transport}
    problems = rig.emulator.ack_problems()
    assert problems == [], "\n".join(problems)


def test_a_mention_is_answered_in_its_thread(make_rig: RigFactory, transport: Transport) -> None:
    rig = graph_rig(make_rig, transport)
    mention, answer = asked(rig, "Which teams have the most people?")
    assert answer["thread_ts"] == mention["ts"]
    assert "people" in answer_text(answer)
    turn = rig.memory.conversations.by_message(CHANNEL, answer["ts"])
    assert turn is not None and turn.cypher == TEAM_SIZES
    # Alice's message came as an app_mention and its message twin, once each.
    alices = [d for d in rig.emulator.deliveries if d.payload["event"].get("user") == ALICE]
    kinds = [d.payload["event"]["type"] for d in sorted(alices, key=lambda d: d.sent_seq)]
    assert kinds == ["app_mention", "message"]
    if transport == "socket":
        assert all(d.envelope_id for d in rig.emulator.deliveries)
        assert len(rig.emulator.calls_to("apps.connections.open")) == 1
    assert_acks_kept(rig)


def test_a_dm_and_its_follow_up_in_the_thread(make_rig: RigFactory, transport: Transport) -> None:
    rig = graph_rig(make_rig, transport)
    dm = rig.emulator.open_dm(ALICE).id
    first = rig.dm("Which teams have the most people?")
    [answer] = rig.wait_answers(dm, first["ts"])
    assert answer["thread_ts"] == first["ts"]
    rig.dm("and the fewest?", thread_ts=first["ts"])
    answers = rig.wait_answers(dm, first["ts"], 2)
    assert len(answers) == 2
    history = rig.memory.conversations.history(f"{rig.emulator.team_id}:{dm}:{first['ts']}")
    assert [t.question for t in history] == ["Which teams have the most people?", "and the fewest?"]
    assert_acks_kept(rig)


def test_a_thumbs_up_is_stored_once(make_rig: RigFactory, transport: Transport) -> None:
    rig = graph_rig(make_rig, transport)
    _, answer = asked(rig, "Which of our services are on Postgres?")
    rig.emulator.add_reaction(BOB, CHANNEL, answer["ts"], "+1::skin-tone-2")
    rig.settle()
    [example] = rig.memory.examples.list(source="thumbs_up")
    assert example.question == "Which of our services are on Postgres?"
    assert example.taught_by == BOB
    assert_acks_kept(rig)


def test_the_slash_command_is_acked_before_its_reply(
    make_rig: RigFactory, transport: Transport
) -> None:
    rig = graph_rig(make_rig, transport)
    delivery = rig.emulator.slash_command(ALICE, CHANNEL, "help")
    assert delivery.kind == "slash_commands" and delivery.acked
    assert delivery.body == "", "nothing computed in the ack"
    rig.emulator.wait_for(lambda: rig.emulator.responses, 30)
    [reply] = rig.emulator.calls_to("response_url")
    assert reply.params["response_type"] == "ephemeral"
    assert "Ask me a question about the graph" in json.dumps(reply.params["blocks"])
    assert delivery.acked_seq is not None and delivery.acked_seq < reply.seq
    assert_acks_kept(rig)


def test_a_feedback_button_teaches(make_rig: RigFactory, transport: Transport) -> None:
    rig = graph_rig(make_rig, transport)
    _, answer = asked(rig, "Which of our services are on Postgres?")
    clicked = rig.emulator.click(BOB, CHANNEL, answer["ts"], render.FEEDBACK_ACTION, "good")
    assert clicked.kind == "interactive" and clicked.acked
    rig.settle()
    [example] = rig.memory.examples.list(source="thumbs_up")
    assert example.taught_by == BOB
    thanks = [m for m in rig.answers(CHANNEL, answer["thread_ts"]) if "Thanks" in answer_text(m)]
    assert len(thanks) == 1
    assert_acks_kept(rig)


def test_slacks_retries_are_not_answered_twice(make_rig: RigFactory, transport: Transport) -> None:
    model = ScriptedChatModel(
        responder=graph_responder(lambda q: TEAM_SIZES, delay_s=lambda kind: 0.3)
    )
    rig = make_rig(model, transport=transport)
    message, _ = rig.emulator.post_message(
        ALICE, CHANNEL, f"<@{rig.bot_user}> which teams are biggest?", deliver=False
    )
    mention = rig.emulator.events_for_message(CHANNEL, message)[0]
    rig.emulator.deliver(mention, retries=2)  # three copies at once, while the first runs
    rig.wait_answers(CHANNEL, message["ts"])
    rig.emulator.deliver(mention, first_retry=3)  # and the last retry, late
    rig.settle()
    assert len(rig.answers(CHANNEL, message["ts"])) == 1
    assert [prompt_kind(m) for m in model.calls].count("guard") == 1, "one question asked"
    tries = _attempts(rig, mention["event_id"])
    assert sorted(d.retry_num for d in tries) == [0, 1, 2, 3]
    reason = {"http": "http_timeout", "socket": "timeout"}[transport]
    assert {d.retry_reason for d in tries if d.retry_num} == {reason}
    assert_acks_kept(rig)


def test_an_envelope_whose_ack_is_lost_is_retried_and_answered_once(
    make_rig: RigFactory,
) -> None:
    # Slack's own 3 s: only the lost ack should time out, never the bot's, on a busy machine.
    rig = graph_rig(make_rig, "socket", ack_timeout_s=3.0)
    rig.emulator.lose_next_acks(1)
    mention = rig.mention("Which teams have the most people?")
    rig.wait_answers(CHANNEL, mention["ts"])
    rig.settle()
    assert len(rig.answers(CHANNEL, mention["ts"])) == 1
    [event_id] = [
        d.payload["event_id"]
        for d in rig.emulator.deliveries
        if d.payload["event"]["type"] == "app_mention" and d.retry_num == 0
    ]
    tries = _attempts(rig, event_id)
    assert [(d.retry_num, d.retry_reason, d.acked) for d in tries] == [
        (0, "", False),
        (1, "timeout", True),
    ]
    assert rig.emulator.lost_acks == [tries[0].envelope_id]
    # Seen from Slack, the app worked on the event before any ack arrived; nothing else broke.
    problems = rig.emulator.ack_problems()
    assert problems[0].endswith("was not acknowledged")
    assert all(event_id in problem for problem in problems), problems


def test_socket_mode_survives_a_disconnect_request(make_rig: RigFactory) -> None:
    rig = graph_rig(make_rig, "socket")
    asked(rig, "Which teams have the most people?")
    assert rig.emulator.socket_disconnect("refresh_requested", close_after_s=None) == 1
    # The app opens a new connection, then closes the old one. Until then Bolt's built-in
    # client reads only the old one (for up to its 3 s receive timeout), so an envelope sent
    # on the new one in between would be acked late and retried: wait for the switch.
    rig.emulator.wait_for(
        lambda: (
            len(rig.emulator.socket_connections) == 2 and rig.emulator.socket_connections[0].closed
        ),
        30,
        "the app did not move to a new connection",
    )
    old, new = rig.emulator.socket_connections
    assert old.draining and new.live
    _, answer = asked(rig, "Which of our services are on Postgres?")
    turn = rig.memory.conversations.by_message(CHANNEL, answer["ts"])
    assert turn is not None and turn.cypher.startswith(POSTGRES)
    assert len(rig.emulator.calls_to("apps.connections.open")) == 2
    assert_acks_kept(rig)


def test_http_and_socket_mode_post_the_same_answer(make_rig: RigFactory) -> None:
    answers = {}
    for transport in ("http", "socket"):
        rig = graph_rig(make_rig, transport)
        mention, answer = asked(rig, "Which teams have the most people?")
        answers[transport] = _without_ids(answer, mention["ts"], answer["ts"])
        assert_acks_kept(rig)
    assert answers["http"] == answers["socket"], json.dumps(answers, indent=1)


def _attempts(rig: SlackRig, event_id: str) -> list[Any]:
    """Every delivery attempt of one event, in the order they were sent."""
    tries = [d for d in rig.emulator.deliveries if d.payload.get("event_id") == event_id]
    return sorted(tries, key=lambda d: d.sent_seq)


def _without_ids(message: dict[str, Any], *ts: str) -> dict[str, Any]:
    """The message's text and blocks, with timestamps, block ids and durations blanked."""
    text = json.dumps({"text": message.get("text"), "blocks": message.get("blocks")})
    for value in ts:
        text = text.replace(value, "<ts>")
    text = re.sub(r'"block_id": "[^"]*"', '"block_id": ""', text)
    text = re.sub(r"\b\d+(?:\.\d+)? s\b", "<duration>", text)  # "1 attempt · 0.1 s"
    return dict(json.loads(text))


# ---- the emulator's side of the wire, with a plain websocket client --------------------


def _open(emulator: SlackEmulator, token: str) -> dict[str, Any]:
    request = urllib.request.Request(
        emulator.api_url + "apps.connections.open",
        data=b"",
        headers={"Authorization": f"Bearer {token}"},
        method="POST",
    )
    with urllib.request.urlopen(request, timeout=10) as response:
        return dict(json.loads(response.read()))


def test_the_emulator_speaks_socket_mode() -> None:
    # Long enough for this test's own ack of the slash command on a busy machine; the three
    # unacked envelopes cost three of it.
    with SlackEmulator(transport="socket", ack_timeout_s=2.0, event_retries=2) as emulator:
        emulator.add_user(ALICE, "alice")
        emulator.add_channel(CHANNEL, "general", members=[ALICE])
        assert _open(emulator, emulator.bot_token)["error"] == "not_allowed_token_type"
        assert _open(emulator, "xapp-1-someone-else")["error"] == "invalid_auth"
        opened = _open(emulator, emulator.app_token)
        assert opened["ok"] and opened["url"].startswith("ws://127.0.0.1:")
        with connect(opened["url"]) as ws:
            hello = json.loads(ws.recv(timeout=20))
            assert hello["type"] == "hello" and hello["num_connections"] == 1
            assert hello["connection_info"] == {"app_id": emulator.api_app_id}
            message, _ = emulator.post_message(ALICE, CHANNEL, "<@U0CYPHERBOT> hi", deliver=False)
            payload = emulator.events_for_message(CHANNEL, message)[0]
            sender = threading.Thread(target=emulator.deliver, args=(payload,))
            sender.start()
            # Not acked: Slack sends the event again, as a new envelope, twice.
            envelopes = [json.loads(ws.recv(timeout=20)) for _ in range(3)]
            assert [e["type"] for e in envelopes] == ["events_api"] * 3
            assert [e["payload"] for e in envelopes] == [payload] * 3
            assert [(e["retry_attempt"], e["retry_reason"]) for e in envelopes] == [
                (0, ""),
                (1, "timeout"),
                (2, "timeout"),
            ]
            assert len({e["envelope_id"] for e in envelopes}) == 3
            assert not any(e["accepts_response_payload"] for e in envelopes)
            sender.join(10)
            emulator.wait_idle(10)
            assert [d.status for d in emulator.deliveries] == [0, 0, 0]
            # A slash command accepts a response payload; the ack is recorded with it.
            result: list[Any] = []
            command = threading.Thread(
                target=lambda: result.append(emulator.slash_command(ALICE, CHANNEL, "help"))
            )
            command.start()
            envelope = json.loads(ws.recv(timeout=20))
            assert envelope["type"] == "slash_commands" and envelope["accepts_response_payload"]
            assert "retry_attempt" not in envelope
            assert envelope["payload"]["command"] == "/cypherbot"
            ws.send(json.dumps({"envelope_id": envelope["envelope_id"], "payload": {"text": "ok"}}))
            command.join(10)
            [acked] = result
            assert acked.acked and json.loads(acked.body) == {"text": "ok"}
            assert acked.envelope_id == envelope["envelope_id"]
            # Asked to reconnect, then closed when the client does not.
            assert emulator.socket_disconnect("warning", close_after_s=0.1) == 1
            assert json.loads(ws.recv(timeout=20))["type"] == "disconnect"
            emulator.wait_for(lambda: emulator.socket_connections[0].closed, 5)
        with pytest.raises(Exception, match="401"):
            connect(opened["url"]).close()  # a ticket opens one connection only
