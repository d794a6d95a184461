"""Nothing slow inside an ack: the `message` listener leaves "did the bot answer in this thread?"
(a read of the memory store) to the worker, after the ack; the worker pool's `wanted` check."""

from __future__ import annotations

import threading
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from bot.slack import answering
from bot.slack.answering import BotDeps, SettingsGuards
from bot.slack.delivery import Delivery
from bot.slack.listeners.messages import on_message
from bot.slack.threads import Incoming
from rig.slack import rig_settings
from tests.unit.test_bot_units import Claims

TEAM, CHANNEL, BOT = "T0", "C0", "UBOT"
ANSWERED_THREAD = "1700000000.000100"


class Conversations:
    """The memory store's conversations: which threads the bot answered in, and who asked."""

    def __init__(self) -> None:
        self.readers: list[str] = []

    def has_conversation(self, key: str) -> bool:
        self.readers.append(threading.current_thread().name)
        return key == f"{TEAM}:{CHANNEL}:{ANSWERED_THREAD}"


@pytest.fixture
def bot(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Any:
    settings = rig_settings(tmp_path)
    conversations = Conversations()
    claims = Claims()
    deps = BotDeps(
        settings=settings,
        agent=None,  # type: ignore[arg-type]
        memory=SimpleNamespace(conversations=conversations),  # type: ignore[arg-type]
        delivery=Delivery(claims, workers=1),
        guards=SettingsGuards(settings),
        bot_user_id=BOT,
        team_id=TEAM,
    )
    answered: list[Incoming] = []
    monkeypatch.setattr(answering, "answer", lambda deps, client, q: answered.append(q))
    yield SimpleNamespace(deps=deps, conversations=conversations, claims=claims, answered=answered)
    deps.delivery.shutdown()


def _message(text: str, ts: str, thread_ts: str | None = None, kind: str = "channel") -> Any:
    channel = "D0" if kind == "im" else CHANNEL
    event = {"type": "message", "user": "U1", "text": text, "ts": ts, "channel": channel}
    event["channel_type"] = kind
    if thread_ts:
        event["thread_ts"] = thread_ts
    return event, {"team_id": TEAM, "event_id": f"Ev{ts}"}


def _receive(bot: Any, event: dict[str, Any], body: dict[str, Any]) -> None:
    on_message(bot.deps, None, event, body)  # type: ignore[arg-type]  # no Slack call here
    assert bot.deps.delivery.wait_idle(10)


def test_a_thread_follow_up_is_checked_by_the_worker_after_the_ack(bot: Any) -> None:
    _receive(bot, *_message("and the fewest?", "1700000000.000200", ANSWERED_THREAD))
    assert [q.text for q in bot.answered] == ["and the fewest?"]
    assert bot.conversations.readers == ["bot-work-0"], "read by the worker, never the listener"
    assert set(bot.claims.state.values()) == {"done"}


@pytest.mark.parametrize("kind", ["channel", "group", "mpim"])
def test_chatter_in_a_thread_the_bot_never_answered_costs_no_claim(bot: Any, kind: str) -> None:
    _receive(bot, *_message("lunch?", "1700000000.000300", "1700000000.000001", kind))
    assert bot.answered == []
    assert bot.conversations.readers == ["bot-work-0"]
    assert bot.claims.state == {}, "nothing written for a message nobody asked the bot"


@pytest.mark.parametrize(
    ("text", "thread_ts", "kind", "answered"),
    [
        ("lunch?", None, "channel", False),  # top-level chatter: dropped in the listener
        ("how many teams?", None, "im", True),  # a DM: always answered
        ("<@UBOT> how many?", "1700000000.000001", "channel", True),  # a mention
    ],
)
def test_no_read_is_needed_for_a_dm_a_mention_or_top_level_chatter(
    bot: Any, text: str, thread_ts: str | None, kind: str, answered: bool
) -> None:
    _receive(bot, *_message(text, "1700000000.000400", thread_ts, kind))
    assert bool(bot.answered) is answered
    assert bot.conversations.readers == []


def test_a_full_pool_says_busy_only_to_a_wanted_delivery() -> None:
    pool = Delivery(Claims(), workers=1, queue_limit=0)
    gate = threading.Event()
    busy: list[str] = []
    replied = threading.Event()

    def held() -> None:
        gate.wait()

    def submitted(key: str) -> bool:
        def reply() -> None:
            busy.append(key)
            replied.set()

        return pool.submit([key], lambda: None, on_busy=reply, wanted=lambda: key == "asked")

    try:
        assert pool.submit(["running"], held)
        refused = [submitted(key) for key in ("chatter", "asked")]
        assert refused == [False, False]
        assert replied.wait(10)
    finally:
        gate.set()
        assert pool.wait_idle(10)
        pool.shutdown()
    assert busy == ["asked"]


def test_a_failing_check_runs_nothing_and_claims_nothing() -> None:
    claims = Claims()
    pool = Delivery(claims, workers=1)
    ran: list[int] = []

    def broken() -> bool:
        raise RuntimeError("store down")

    assert pool.submit(["k"], lambda: ran.append(1), wanted=broken)
    assert pool.wait_idle(10)
    pool.shutdown()
    assert ran == [] and claims.state == {}
