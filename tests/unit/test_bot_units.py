"""bot/ pieces without Slack: threads, reaction kinds, the worker pool, token checks, progress throttling."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from pydantic import SecretStr

from bot.slack import render
from bot.slack.answering import BotDeps, SettingsGuards
from bot.slack.app import SlackSetupError, check_tokens
from bot.slack.delivery import Delivery
from bot.slack.listeners.reactions import reaction_kind
from bot.slack.progress import CHANNEL_PAUSE_S, Progress, StatusSupport
from bot.slack.threads import (
    conversation_key,
    incoming,
    is_blank,
    parse_conversation_key,
    question_text,
)
from bot.slack.throttle import SlackThrottle
from graph_agent.result import ProgressEvent
from rig.slack import rig_settings


def test_conversation_keys_round_trip() -> None:
    key = conversation_key("T1", "C1", "1700000000.000100")
    assert key == "T1:C1:1700000000.000100"
    assert parse_conversation_key(key) == ("T1", "C1", "1700000000.000100")
    assert parse_conversation_key("cli:default") is None


def test_question_text_strips_the_bot_mention_and_unescapes() -> None:
    text = "<@UBOT> which services use  &lt;Postgres&gt; &amp; <@UALICE>?"
    assert question_text(text, "UBOT") == "which services use <Postgres> & <@UALICE>?"


@pytest.mark.parametrize(
    ("text", "blank"), [("", True), (" :wave: :+1: ", True), ("hi :wave:", False)]
)
def test_is_blank(text: str, blank: bool) -> None:
    assert is_blank(text) is blank


def test_top_level_dm_starts_its_own_thread_and_replies_stay_in_theirs() -> None:
    top = incoming(
        {"channel": "D1", "channel_type": "im", "user": "U1", "text": "hi", "ts": "1.1"},
        team="T",
        bot_user_id="UB",
        event_id="E",
    )
    assert top.is_dm and top.thread_ts == "1.1" and top.conversation == "T:D1:1.1"
    reply = incoming(
        {"channel": "C1", "user": "U1", "text": "hi", "ts": "2.2", "thread_ts": "1.1"},
        team="T",
        bot_user_id="UB",
        event_id="E",
    )
    assert not reply.is_dm and reply.thread_ts == "1.1"


def deps(tmp_path: Path, **overrides: Any) -> BotDeps:
    settings = rig_settings(tmp_path, **overrides)
    return BotDeps(
        settings=settings, agent=None, memory=None, delivery=None, guards=SettingsGuards(settings)
    )  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("reaction", "kind"),
    [
        ("+1", "up"),
        ("+1::skin-tone-2", "up"),
        ("thumbsup", "up"),
        ("white_check_mark", None),
        ("-1", "down"),
        ("-1::skin-tone-6", "down"),
        ("thumbsdown", "down"),
        ("tada", None),
    ],
)
def test_reaction_kinds(tmp_path: Path, reaction: str, kind: str | None) -> None:
    assert reaction_kind(deps(tmp_path), reaction) == kind


def test_teach_reactions_setting_adds_reactions(tmp_path: Path) -> None:
    assert (
        reaction_kind(deps(tmp_path, teach_reactions=["white_check_mark"]), "white_check_mark")
        == "up"
    )


class Claims:
    def __init__(self) -> None:
        self.state: dict[str, str] = {}
        self.lock = threading.Lock()

    def claim(self, key: str, *, lease_s: float = 120, ttl_s: float = 3600) -> bool:
        with self.lock:
            if key in self.state:
                return False
            self.state[key] = "claimed"
            return True

    def done(self, key: str) -> None:
        self.state[key] = "done"

    def release(self, key: str) -> None:
        self.state.pop(key, None)


def test_delivery_runs_each_key_once_and_marks_done() -> None:
    claims = Claims()
    pool = Delivery(claims, workers=2)
    ran: list[int] = []
    assert pool.submit(["event:1", "msg:C:1"], lambda: ran.append(1))
    assert not pool.submit(["event:2", "msg:C:1"], lambda: ran.append(2))  # the twin
    assert "event:2" not in claims.state  # released: a later retry may still take it
    assert pool.wait_idle(5) and ran == [1]
    assert claims.state == {"event:1": "done", "msg:C:1": "done"}
    pool.shutdown()


def test_delivery_is_bounded_and_says_busy() -> None:
    claims = Claims()
    pool = Delivery(claims, workers=1, queue_limit=1)
    gate = threading.Event()
    busy = threading.Event()
    assert pool.submit(["a"], gate.wait)
    assert pool.submit(["b"], lambda: None)
    assert not pool.submit(["c"], lambda: None, on_busy=busy.set)
    assert busy.wait(5)
    gate.set()
    assert pool.wait_idle(5)
    pool.shutdown()


def test_a_failing_job_still_marks_its_key_done() -> None:
    claims = Claims()
    pool = Delivery(claims, workers=1)

    def boom() -> None:
        raise RuntimeError("boom")

    assert pool.submit(["k"], boom)
    assert pool.wait_idle(5) and claims.state["k"] == "done"
    pool.shutdown()


@pytest.mark.parametrize(
    ("values", "socket_mode", "names"),
    [
        ({}, False, "SLACK_BOT_TOKEN"),
        ({"slack_bot_token": "xoxp-user"}, False, "SLACK_BOT_TOKEN"),
        ({"slack_bot_token": "xoxb-1"}, False, "SLACK_SIGNING_SECRET"),
        ({"slack_bot_token": "xoxb-1", "slack_app_token": "xoxb-2"}, True, "SLACK_APP_TOKEN"),
    ],
)
def test_token_errors_name_the_setting(
    tmp_path: Path, values: dict[str, str], socket_mode: bool, names: str
) -> None:
    settings = rig_settings(tmp_path, **{k: SecretStr(v) for k, v in values.items()})
    with pytest.raises(SlackSetupError, match=names):
        check_tokens(settings, socket_mode=socket_mode)


def test_valid_tokens_pass(tmp_path: Path) -> None:
    check_tokens(
        rig_settings(
            tmp_path, slack_bot_token=SecretStr("xoxb-1"), slack_signing_secret=SecretStr("s")
        ),
        socket_mode=False,
    )
    check_tokens(
        rig_settings(
            tmp_path, slack_bot_token=SecretStr("xoxb-1"), slack_app_token=SecretStr("xapp-1")
        ),
        socket_mode=True,
    )


class FakeClient:
    def __init__(self) -> None:
        self.calls: list[tuple[str, float, dict[str, Any]]] = []

    def __getattr__(self, method: str) -> Any:
        def call(**kwargs: Any) -> Any:
            self.calls.append((method, time.monotonic(), kwargs))
            return type("R", (), {"data": {"ok": True, "ts": "9.9"}})()

        return call


class GatedClient(FakeClient):
    """A Slack call held up (as by a rate-limit retry) until the test opens the gate."""

    def __init__(self) -> None:
        super().__init__()
        self.gate = threading.Event()
        self.entered = threading.Event()

    def __getattr__(self, method: str) -> Any:
        call = super().__getattr__(method)

        def held(**kwargs: Any) -> Any:
            self.entered.set()
            assert self.gate.wait(timeout=30)
            return call(**kwargs)

        return held


def _statuses(client: FakeClient) -> list[str]:
    """The step texts shown, in order (each sent as the one loading message)."""
    sent = [c[2] for c in client.calls if c[0] == "assistant_threads_setStatus"]
    return [" | ".join(kwargs.get("loading_messages") or [kwargs["status"]]) for kwargs in sent]


def _wait_until(condition: Callable[[], bool]) -> None:
    deadline = time.monotonic() + 30  # a hang detector, not a speed bound
    while not condition():
        assert time.monotonic() < deadline, "never happened"
        time.sleep(0.01)


def test_progress_updates_never_wait_for_a_slack_call_in_flight() -> None:
    # The agent reports progress from the event loop every question shares: an update must
    # return while the previous step's Slack call is still held up.
    client = GatedClient()
    client.gate.set()
    progress = Progress(client, "C", "1.1", status=StatusSupport(), min_interval_s=0.0)  # type: ignore[arg-type]
    progress.start()  # from the worker thread, before the agent runs
    client.gate.clear()
    client.entered.clear()
    progress.update(ProgressEvent("generate", "Writing a query…"))
    assert client.entered.wait(timeout=30), "the step's Slack call started"
    second = threading.Thread(
        target=progress.update, args=(ProgressEvent("validate", "Checking the query…"),)
    )
    second.start()
    second.join(timeout=10)
    assert not second.is_alive(), "update() waited for the Slack call in flight"
    client.gate.set()
    _wait_until(lambda: len(_statuses(client)) == 3)
    assert _statuses(client) == ["Working on it…", "Writing a query…", "Checking the query…"]


def test_progress_is_throttled_and_the_latest_step_wins() -> None:
    client = FakeClient()
    progress = Progress(client, "C", "1.1", status=StatusSupport(), min_interval_s=0.2)  # type: ignore[arg-type]
    progress.start()
    for i in range(10):
        progress.update(ProgressEvent("generate", f"step {i}"))
    _wait_until(lambda: _statuses(client)[-1:] == ["step 9"])
    statuses = _statuses(client)
    # On a busy machine a timer may fire between two updates: at most one step in between.
    assert statuses[0] == "Working on it…" and len(statuses) <= 3


def test_a_step_over_the_shared_budget_is_skipped_and_the_answer_still_goes() -> None:
    client = FakeClient()
    throttle = SlackThrottle(tier3_per_minute=1, tier3_burst=1, clock=lambda: 0.0)
    progress = Progress(
        client, "C", "1.1", status=StatusSupport(), throttle=throttle, min_interval_s=0.0
    )  # type: ignore[arg-type]
    progress.start()
    assert throttle.may_send("assistant.threads.setStatus", team="", channel="C")  # spends it
    progress.update(ProgressEvent("generate", "Writing a query…"))
    _wait_until(lambda: progress.skipped == 1)
    assert _statuses(client) == ["Working on it…"]
    progress.finish(render.notice("the answer"))
    assert [c[0] for c in client.calls][-1] == "chat_postMessage"


def test_the_answer_waits_for_a_step_in_flight_so_the_step_cannot_overwrite_it() -> None:
    client = GatedClient()
    client.gate.set()
    progress = Progress(client, "C", "1.1", status=StatusSupport(False), min_interval_s=0.0)  # type: ignore[arg-type]
    progress.start()  # a placeholder message
    client.gate.clear()
    client.entered.clear()
    progress.update(ProgressEvent("generate", "Writing a query…"))
    assert client.entered.wait(timeout=30)
    finishing = threading.Thread(target=progress.finish, args=(render.notice("the answer"),))
    finishing.start()
    client.gate.set()
    finishing.join(timeout=30)
    updates = [c[2].get("text") for c in client.calls if c[0] == "chat_update"]
    assert updates == ["Writing a query…", "the answer"]


def test_status_refused_in_one_channel_stays_on_in_others_and_comes_back() -> None:
    now = [0.0]
    support = StatusSupport(clock=lambda: now[0])
    assert support.refused("C1", "access_denied")
    assert not support.available("C1") and support.available("C2")
    assert not support.refused("C2", "ratelimited"), "a transient error turns nothing off"
    now[0] += CHANNEL_PAUSE_S + 1
    assert support.available("C1")
    assert support.refused("C2", "missing_scope")
    assert not support.available("C1") and not support.available("C3")


def test_the_shared_throttle_budgets_per_workspace_and_per_channel() -> None:
    now = [0.0]
    throttle = SlackThrottle(
        tier3_per_minute=2, tier3_burst=2, posts_per_second=1, post_burst=1, clock=lambda: now[0]
    )
    team_a = [throttle.may_send("chat.update", team="A", channel=f"C{i}") for i in range(3)]
    assert team_a == [True, True, False], "one budget for every channel of a workspace"
    assert throttle.may_send("chat.update", team="B", channel="C0"), "another workspace"
    assert throttle.may_send("chat.postMessage", team="A", channel="C0")
    assert not throttle.may_send("chat.postMessage", team="A", channel="C0")
    assert throttle.may_send("chat.postMessage", team="A", channel="C1"), "per channel"
    throttle.spend("chat.update", team="B", channel="C0")  # an answer goes regardless
    assert not throttle.may_send("chat.update", team="B", channel="C0")
    now[0] += 30
    assert throttle.may_send("chat.update", team="A", channel="C0"), "refilled (2 a minute)"
    assert throttle.may_send("chat.postMessage", team="A", channel="C0")
