"""The acknowledgement contract, read from the emulator's record: every delivery acknowledged,
and no call about an event's conversation between its delivery and its ack.

Slack wants the ack within 3 s and retries otherwise. An app that does its I/O before it acks
(a listener that answers inline under Bolt's `process_before_response`) passes a quiet test
and is retried under load. The check is about order, not time: `Delivery.sent_seq` /
`acked_seq` and `ApiCall.seq` are positions in one sequence, so it needs no clock and no bound.

Which calls an event may cause is read from what they name: the event's channel and message
or thread (`Subject`). Events that should cause nothing (the bot's own messages, edits,
deletions, the `message` twin of an `app_mention`) are not checked for order. A call from
earlier work still running in the same thread would be blamed on the new event, so check
sequences where each event's work is finished before the next event is sent.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any, Protocol

from bot.playground.emulator_state import ApiCall, Delivery

QUIET_SUBTYPES = frozenset({"message_changed", "message_deleted", "bot_message"})
"""Message subtypes an app acknowledges and does nothing about."""


class Workspace(Protocol):
    """What the check reads from the emulator besides its record."""

    bot_user_id: str

    def message(self, channel: str, ts: str) -> dict[str, Any] | None: ...


@dataclass(frozen=True)
class Subject:
    """What an event is about: the calls that name it are the ones it may cause."""

    channel: str
    ts: frozenset[str] = frozenset()
    """The message and its thread; empty: every call in the channel."""
    response_id: str = ""
    """The event's response_url, for a slash command or a click."""

    def touches(self, call: ApiCall) -> bool:
        params = call.params
        if call.method == "response_url":
            return bool(self.response_id) and params.get("response_id") == self.response_id
        if (params.get("channel") or params.get("channel_id")) != self.channel:
            return False
        if not self.ts:
            return True
        named = {str(params[k]) for k in ("thread_ts", "ts", "timestamp") if params.get(k)}
        return bool(named & self.ts)


def ack_problems(
    deliveries: Iterable[Delivery], calls: Iterable[ApiCall], workspace: Workspace
) -> list[str]:
    """Every delivery not acknowledged, and every event (all attempts together) with a call
    about its subject after its first attempt was sent and before its first ack."""
    ordered = sorted(deliveries, key=lambda d: d.sent_seq)
    calls = list(calls)
    problems = [f"{describe(d)} was not acknowledged" for d in ordered if not d.acked]
    attempts: dict[str, list[Delivery]] = {}
    for n, delivery in enumerate(ordered):
        attempts.setdefault(cause_key(delivery) or f"#{n}", []).append(delivery)
    seen: set[tuple[str, str]] = set()
    for tries in attempts.values():
        first = tries[0]
        subject = subject_of(first, workspace, seen)
        acks = [d.acked_seq for d in tries if d.acked_seq is not None]
        if subject is None or not acks:
            continue
        ack = min(acks)
        early = [c for c in calls if first.sent_seq < c.seq < ack and subject.touches(c)]
        if early:
            problems.append(f"{describe(first)}: {early[0].method} was called before the ack")
    return problems


def cause_key(delivery: Delivery) -> str:
    """One key for every attempt at the same event: its event_id, or a command's or click's
    trigger_id ("" when it has neither)."""
    payload = delivery.payload
    return str(payload.get("event_id") or payload.get("trigger_id") or "")


def describe(delivery: Delivery) -> str:
    payload = delivery.payload
    what = (payload.get("event") or {}).get("type") or payload.get("command") or payload.get("type")
    key = cause_key(delivery)
    return (
        f"{delivery.kind} {what} {key} ({delivery.transport}, attempt {delivery.retry_num})".strip()
    )


def subject_of(
    delivery: Delivery, workspace: Workspace, seen: set[tuple[str, str]]
) -> Subject | None:
    """What the event is about, or None when it should cause nothing (checked in order:
    `seen` holds the messages already delivered, so a mention's `message` twin is None)."""
    payload = delivery.payload
    if delivery.kind == "slash_commands":
        return Subject(str(payload.get("channel_id", "")), response_id=_response_id(payload))
    if delivery.kind == "interactive":
        container = payload.get("container") or {}
        channel, ts = str(container.get("channel_id", "")), str(container.get("message_ts", ""))
        return Subject(
            channel,
            frozenset({ts, _thread_of(workspace, channel, ts)}),
            response_id=_response_id(payload),
        )
    event = payload.get("event")
    if not isinstance(event, dict):
        return None
    kind = event.get("type")
    if kind in ("app_mention", "message"):
        if (
            event.get("bot_id")
            or event.get("user") in (None, workspace.bot_user_id)
            or event.get("subtype") in QUIET_SUBTYPES
        ):
            return None
        channel, ts = str(event.get("channel", "")), str(event.get("ts", ""))
        if (channel, ts) in seen:
            return None
        seen.add((channel, ts))
        return Subject(channel, frozenset({ts, str(event.get("thread_ts") or ts)}))
    if kind in ("reaction_added", "reaction_removed"):
        if event.get("user") == workspace.bot_user_id:
            return None
        item = event.get("item") or {}
        channel, ts = str(item.get("channel", "")), str(item.get("ts", ""))
        return Subject(channel, frozenset({ts, _thread_of(workspace, channel, ts)}))
    if kind == "assistant_thread_started":
        thread = event.get("assistant_thread") or {}
        return Subject(
            str(thread.get("channel_id", "")), frozenset({str(thread.get("thread_ts", ""))})
        )
    return None


def _thread_of(workspace: Workspace, channel: str, ts: str) -> str:
    message = workspace.message(channel, ts) if channel and ts else None
    return str((message or {}).get("thread_ts") or ts)


def _response_id(payload: dict[str, Any]) -> str:
    url = str(payload.get("response_url") or "")
    return url.rstrip("/").rsplit("/", 1)[-1] if url else ""
