"""The emulator refuses and encodes what Slack does, and nothing more: the streaming limits,
user text as Slack's clients send it, Block Kit's limits on ids, values and feedback buttons,
ephemerals to non-members, `loading_messages`, group DMs and the subscribed events, and the
3-second ack deadline over HTTP with Slack's retries. Each case was wrong or missing before
(tests here talk to the emulator directly; the bot's side is in the other e2e modules)."""

from __future__ import annotations

import json
import threading
from collections.abc import Callable, Iterator
from http.server import BaseHTTPRequestHandler
from typing import Any

import pytest

from bot.playground.emulator import SlackEmulator
from bot.playground.emulator_limits import MAX_STREAM_CALL_CHARS, MAX_STREAM_CHARS
from bot.playground.local_server import LocalServer
from bot.slack import render
from graph_agent.result import Choice
from rig.slack import ALICE, BOB, CHANNEL

GROUP_DM = "G0GROUPDM"
QUIET = "C0QUIET"


@pytest.fixture
def emulator() -> Iterator[SlackEmulator]:
    with SlackEmulator() as emulator:
        emulator.add_user(ALICE, "alice")
        emulator.add_user(BOB, "bob")
        emulator.add_channel(CHANNEL, "general", members=[ALICE])
        emulator.add_channel(QUIET, "quiet", members=[ALICE, BOB])
        emulator.add_channel(GROUP_DM, "mpdm-alice--bob--cypherbot-1", kind="mpim",
                             members=[ALICE, BOB])  # fmt: skip
        yield emulator


def _api(emulator: SlackEmulator, method: str, **params: Any) -> dict[str, Any]:
    return emulator.handle_api(method, params, emulator.bot_token).body


# ---- streaming ----------------------------------------------------------------------------


def _stream(emulator: SlackEmulator) -> str:
    asked, _ = emulator.post_message(ALICE, CHANNEL, "a question", deliver=False)
    started = _api(
        emulator,
        "chat.startStream",
        channel=CHANNEL,
        thread_ts=asked["ts"],
        recipient_user_id=ALICE,
        recipient_team_id=emulator.team_id,
    )
    assert started["ok"], started
    return str(started["ts"])


def test_a_stream_takes_12000_characters_a_call_not_a_posted_messages_4000(
    emulator: SlackEmulator,
) -> None:
    ts = _stream(emulator)
    whole = "x" * MAX_STREAM_CALL_CHARS
    assert _api(emulator, "chat.appendStream", channel=CHANNEL, ts=ts, markdown_text=whole)["ok"]
    stopped = _api(emulator, "chat.stopStream", channel=CHANNEL, ts=ts)
    assert stopped["ok"], stopped
    assert stopped["message"]["text"] == whole
    posted = _api(emulator, "chat.postMessage", channel=CHANNEL, text="y" * 4001)
    assert posted["error"] == "msg_too_long", "a posted message's text still has its limit"


def test_a_stream_refuses_a_call_or_a_message_past_its_limit(emulator: SlackEmulator) -> None:
    ts = _stream(emulator)
    too_much = "x" * (MAX_STREAM_CALL_CHARS + 1)
    refused = _api(emulator, "chat.appendStream", channel=CHANNEL, ts=ts, markdown_text=too_much)
    assert refused["error"] == "msg_too_long"
    half = "x" * (MAX_STREAM_CHARS // 2)
    for _ in range(2):
        assert _api(emulator, "chat.appendStream", channel=CHANNEL, ts=ts, markdown_text=half)["ok"]
    over = _api(emulator, "chat.appendStream", channel=CHANNEL, ts=ts, markdown_text="x")
    assert over["error"] == "msg_too_long", "one streamed message holds about 12,000 characters"
    assert _api(emulator, "chat.stopStream", channel=CHANNEL, ts=ts)["ok"]


# ---- user text as Slack sends it -----------------------------------------------------------


@pytest.mark.parametrize(
    ("typed", "sent"),
    [
        ("A & B <core> 3 > 2", "A &amp; B &lt;core&gt; 3 &gt; 2"),
        ("see https://x.io/?a=1&b=2.", "see <https://x.io/?a=1&amp;b=2>."),
        ("write to bob@x.io", "write to <mailto:bob@x.io|bob@x.io>"),
        ("@alice in #quiet", f"<@{ALICE}> in <#{QUIET}|quiet>"),
        ("@here, @nobody and #nowhere", "<!here>, @nobody and #nowhere"),
        ("<@U0CYPHERBOT> hi &amp; <https://x.io|x>", "<@U0CYPHERBOT> hi &amp; <https://x.io|x>"),
    ],
)
def test_a_persons_text_arrives_encoded_as_slack_sends_it(
    emulator: SlackEmulator, typed: str, sent: str
) -> None:
    message, _ = emulator.post_message(ALICE, CHANNEL, typed, deliver=False)
    assert message["text"] == sent
    events = [p["event"] for p in emulator.events_for_message(CHANNEL, message)]
    assert events and all(event["text"] == sent for event in events)
    [block] = message["blocks"]
    elements = block["elements"][0]["elements"]
    shown = "".join(e.get("text", "") for e in elements if e["type"] == "text")
    assert "&amp;" not in shown and "&lt;" not in shown, "rich_text carries the text as typed"
    again = emulator.encoded(sent).text
    assert again == sent, "wire text passes unchanged"


def test_an_edit_is_encoded_too() -> None:
    with SlackEmulator(events=()) as emulator:  # subscribed to nothing: no delivery
        emulator.add_user(ALICE, "alice")
        emulator.add_channel(CHANNEL, "general", members=[ALICE])
        message, _ = emulator.post_message(ALICE, CHANNEL, "first")
        assert emulator.edit_message(CHANNEL, message["ts"], "A & B <b>") == []
        edited = emulator.message(CHANNEL, message["ts"])
        assert edited is not None and edited["text"] == "A &amp; B &lt;b&gt;"


# ---- blocks ------------------------------------------------------------------------------


def _button(**overrides: Any) -> dict[str, Any]:
    return {
        "type": "button",
        "action_id": "a",
        "text": {"type": "plain_text", "text": "Go"},
        "value": "v",
        **overrides,
    }


def _feedback(**overrides: Any) -> dict[str, Any]:
    element = render.feedback_buttons()["elements"][0]
    return {"type": "context_actions", "elements": [{**element, **overrides}]}


def _section(text: str = "hi", **extra: Any) -> dict[str, Any]:
    return {"type": "section", "text": {"type": "mrkdwn", "text": text}, **extra}


REFUSED_BLOCKS: dict[str, list[dict[str, Any]]] = {
    "action_id over 255": [{"type": "actions", "elements": [_button(action_id="a" * 256)]}],
    "button value over 2000": [{"type": "actions", "elements": [_button(value="v" * 2001)]}],
    "button text over 75": [
        {"type": "actions", "elements": [_button(text={"type": "plain_text", "text": "x" * 76})]}
    ],
    "block_id repeated": [_section(block_id="same"), _section(block_id="same")],
    "block_id over 255": [_section(block_id="b" * 256)],
    "feedback without a negative button": [_feedback(negative_button=None)],
    "feedback button text not plain_text": [
        _feedback(positive_button={"text": {"type": "mrkdwn", "text": "Good"}, "value": "good"})
    ],
    "feedback button without a value": [
        _feedback(positive_button={"text": {"type": "plain_text", "text": "Good"}})
    ],
    "feedback value over 2000": [
        _feedback(
            positive_button={"text": {"type": "plain_text", "text": "Good"}, "value": "v" * 2001}
        )
    ],
    "feedback accessibility label over 75": [
        _feedback(
            negative_button={
                "text": {"type": "plain_text", "text": "Wrong"},
                "value": "bad",
                "accessibility_label": "x" * 76,
            }
        )
    ],
    "feedback action_id over 255": [_feedback(action_id="f" * 256)],
    "feedback buttons in an actions block": [
        {"type": "actions", "elements": render.feedback_buttons()["elements"]}
    ],
    "six context actions": [
        {"type": "context_actions", "elements": render.feedback_buttons()["elements"] * 6}
    ],
    "a button in context actions": [{"type": "context_actions", "elements": [_button()]}],
}


@pytest.mark.parametrize("case", sorted(REFUSED_BLOCKS))
def test_blocks_slack_refuses_are_refused(emulator: SlackEmulator, case: str) -> None:
    blocks = REFUSED_BLOCKS[case]
    for method, params in (
        ("chat.postMessage", {"channel": CHANNEL}),
        ("chat.postEphemeral", {"channel": CHANNEL, "user": ALICE}),
    ):
        answer = _api(emulator, method, text="t", blocks=json.dumps(blocks), **params)
        assert answer.get("error") == "invalid_blocks", (method, answer)


def test_the_bots_own_buttons_are_accepted(emulator: SlackEmulator) -> None:
    choices = render.choice_buttons(
        [Choice(text=f"Team {n}", question=f"About team {n}?") for n in range(6)]
    )
    assert choices is not None
    blocks = [
        _section(block_id="answer"),
        choices,
        render.feedback_buttons(),
        _feedback(action_id="a" * 255),
        {"type": "actions", "elements": [_button(action_id="b" * 255, value="v" * 2000)]},
    ]
    answer = _api(emulator, "chat.postMessage", channel=CHANNEL, text="t", blocks=blocks)
    assert answer["ok"], answer


# ---- ephemerals --------------------------------------------------------------------------


def test_an_ephemeral_goes_only_to_a_member_of_the_channel(emulator: SlackEmulator) -> None:
    to_bob = _api(emulator, "chat.postEphemeral", channel=CHANNEL, user=BOB, text="psst")
    assert to_bob["error"] == "user_not_in_channel"
    to_alice = _api(emulator, "chat.postEphemeral", channel=CHANNEL, user=ALICE, text="psst")
    assert to_alice["ok"]
    assert [e["user"] for e in emulator.ephemerals] == [ALICE]


# ---- assistant status --------------------------------------------------------------------


def test_loading_messages_are_recorded_and_shown(emulator: SlackEmulator) -> None:
    asked, _ = emulator.post_message(ALICE, CHANNEL, "a question", deliver=False)
    thread = (CHANNEL, asked["ts"])
    set_status = _api(
        emulator,
        "assistant.threads.setStatus",
        channel_id=CHANNEL,
        thread_ts=asked["ts"],
        status="is working…",
        loading_messages=["Writing a query…"],
    )
    assert set_status["ok"]
    assert emulator.loading_messages[thread] == ["Writing a query…"]
    assert emulator.statuses[thread] == "Writing a query…", "Slack shows the loading message"
    form_encoded = _api(
        emulator,
        "assistant.threads.setStatus",
        channel_id=CHANNEL,
        thread_ts=asked["ts"],
        status="is working…",
        loading_messages=json.dumps(["Running it…", "Checking the rows…"]),
    )
    assert form_encoded["ok"]
    assert emulator.loading_messages[thread] == ["Running it…", "Checking the rows…"]
    cleared = _api(
        emulator,
        "assistant.threads.setStatus",
        channel_id=CHANNEL,
        thread_ts=asked["ts"],
        status="",
    )
    assert cleared["ok"] and thread not in emulator.statuses
    assert thread not in emulator.loading_messages


@pytest.mark.parametrize(
    "loading",
    [
        "Writing a query…",  # not a list
        [f"step {n}" for n in range(11)],  # more than ten
        ["Writing a query…", 3],  # not all strings
        [{"text": "Writing a query…"}],
    ],
)
def test_loading_messages_of_a_bad_shape_are_refused(emulator: SlackEmulator, loading: Any) -> None:
    asked, _ = emulator.post_message(ALICE, CHANNEL, "a question", deliver=False)
    answer = _api(
        emulator,
        "assistant.threads.setStatus",
        channel_id=CHANNEL,
        thread_ts=asked["ts"],
        status="is working…",
        loading_messages=loading,
    )
    assert answer["error"] == "invalid_arguments"
    assert emulator.statuses == {}


# ---- group DMs and subscriptions ---------------------------------------------------------


def test_a_group_dm_message_is_delivered_only_when_message_mpim_is_subscribed() -> None:
    with SlackEmulator(events=["app_mention", "message.channels"]) as emulator:
        emulator.add_user(ALICE, "alice")
        emulator.add_channel(GROUP_DM, "mpdm", kind="mpim", members=[ALICE])
        emulator.add_channel(CHANNEL, "general", members=[ALICE])
        plain, _ = emulator.post_message(ALICE, GROUP_DM, "and the fewest?", deliver=False)
        assert emulator.events_for_message(GROUP_DM, plain) == []
        mention, _ = emulator.post_message(ALICE, GROUP_DM, "<@U0CYPHERBOT> hi", deliver=False)
        [only] = emulator.events_for_message(GROUP_DM, mention)
        assert only["event"]["type"] == "app_mention"
        in_channel, _ = emulator.post_message(ALICE, CHANNEL, "hello", deliver=False)
        [event] = emulator.events_for_message(CHANNEL, in_channel)
        assert event["event"]["channel_type"] == "channel"
    with SlackEmulator(events=["message.mpim"]) as emulator:
        emulator.add_user(ALICE, "alice")
        emulator.add_channel(GROUP_DM, "mpdm", kind="mpim", members=[ALICE])
        plain, _ = emulator.post_message(ALICE, GROUP_DM, "and the fewest?", deliver=False)
        [event] = emulator.events_for_message(GROUP_DM, plain)
        assert event["event"]["channel_type"] == "mpim"
        assert emulator.channels[GROUP_DM].to_api(emulator.bot_user_id)["is_mpim"] is True


# ---- the ack deadline over HTTP ----------------------------------------------------------


class _App:
    """A stand-in for the app's Request URL: records each request's retry headers and answers
    when `answer(attempt)` lets it (it may wait on anything, the emulator's record included)."""

    def __init__(self, answer: Callable[[int], bool]) -> None:
        self.seen: list[tuple[str, str]] = []
        self.release = threading.Event()
        app = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, format: str, *args: Any) -> None:
                pass

            def do_POST(self) -> None:
                self.rfile.read(int(self.headers.get("Content-Length") or 0))
                retry = (
                    self.headers.get("X-Slack-Retry-Num", ""),
                    self.headers.get("X-Slack-Retry-Reason", ""),
                )
                app.seen.append(retry)
                if not answer(int(retry[0] or 0)):
                    app.release.wait(30)
                try:
                    self.send_response(200)
                    self.send_header("Content-Length", "0")
                    self.end_headers()
                    self.wfile.flush()
                except OSError:
                    self.close_connection = True  # the emulator gave up and hung up

        self.server = LocalServer(0, Handler, name="late-app").start()
        self.url = f"http://127.0.0.1:{self.server.port}/slack/events"

    def stop(self) -> None:
        self.release.set()
        self.server.stop()


def test_an_http_event_answered_after_the_deadline_is_retried_as_slack_does() -> None:
    with SlackEmulator(ack_timeout_s=2.0) as emulator:
        emulator.add_user(ALICE, "alice")
        emulator.add_channel(CHANNEL, "general", members=[ALICE])

        def late_first(attempt: int) -> bool:
            if attempt == 0:  # answered only once the emulator has given up on it
                emulator.wait_for(lambda: emulator.deliveries, 30)
            return True

        app = _App(late_first)
        emulator.app_url = app.url
        try:
            message, _ = emulator.post_message(ALICE, CHANNEL, "hello", deliver=False)
            [payload] = emulator.events_for_message(CHANNEL, message)
            first = emulator.deliver(payload)
            emulator.wait_for(lambda: len(emulator.deliveries) == 2, 30)
            emulator.wait_idle(30)
        finally:
            app.stop()
        assert not first.acked and first.status == 0
        tries = sorted(emulator.deliveries, key=lambda d: d.sent_seq)
        assert [(d.retry_num, d.retry_reason, d.status, d.acked) for d in tries] == [
            (0, "", 0, False),
            (1, "http_timeout", 200, True),
        ]
        assert app.seen == [("", ""), ("1", "http_timeout")]


def test_an_http_event_never_answered_is_retried_three_times_then_dropped() -> None:
    # Every attempt is late by construction (the app answers none), so a short deadline
    # decides nothing about the machine's speed.
    with SlackEmulator(ack_timeout_s=0.2, event_retries=3) as emulator:
        emulator.add_user(ALICE, "alice")
        emulator.add_channel(CHANNEL, "general", members=[ALICE])
        app = _App(lambda attempt: False)
        emulator.app_url = app.url
        try:
            message, _ = emulator.post_message(ALICE, CHANNEL, "hello", deliver=False)
            [payload] = emulator.events_for_message(CHANNEL, message)
            first = emulator.deliver(payload)
            emulator.wait_for(lambda: len(emulator.deliveries) == 4, 30)
            emulator.wait_idle(30)
        finally:
            app.stop()
        assert not first.acked and first.status == 0
        tries = sorted(emulator.deliveries, key=lambda d: d.sent_seq)
        assert [(d.retry_num, d.retry_reason, d.acked) for d in tries] == [
            (0, "", False),
            (1, "http_timeout", False),
            (2, "http_timeout", False),
            (3, "http_timeout", False),
        ]
        assert [n for n, _ in app.seen] == ["", "1", "2", "3"]
