"""Slack threads as conversations: keys, reply targets and the question text of a message."""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from graph_agent.result import Choice

_MENTION = re.compile(r"<@([UW][A-Z0-9]+)(?:\|[^>]*)?>")
_EMOJI_ONLY = re.compile(r"^(?:\s|:[a-z0-9_+\-']+:)*$")
_WRAPPED = re.compile(r"<((?:https?|mailto):[^|>\s]+|#[CG][A-Z0-9]+)(?:\|([^>]*))?>")
"""A link, e-mail address or channel as Slack wraps it (`<https://x.io>`, `<mailto:a@b.io|a@b.io>`,
`<#C123|general>`): the question gets what the person typed."""


@dataclass(frozen=True)
class Incoming:
    """A person's message the bot may answer."""

    team: str
    channel: str
    user: str
    text: str
    """The question: bot mention stripped, Slack's escaping undone."""
    ts: str
    thread_ts: str
    """The thread the answer goes to (a top-level message starts its own)."""
    is_dm: bool
    event_id: str = ""
    has_files: bool = False
    """Files came with the message (`file_share`): the bot answers the text and says it does
    not read them."""
    choice: Choice | None = None
    """A click on a "did you mean…?" button: the question continues with that entity."""

    @property
    def conversation(self) -> str:
        return conversation_key(self.team, self.channel, self.thread_ts)


def conversation_key(team: str, channel: str, thread_ts: str) -> str:
    """`team:channel:thread_ts` — one Slack thread is one conversation."""
    return f"{team}:{channel}:{thread_ts}"


def parse_conversation_key(key: str) -> tuple[str, str, str] | None:
    """(team, channel, thread_ts) of a Slack conversation key; None for other keys."""
    parts = key.split(":")
    if len(parts) != 3 or not all(parts):
        return None
    return parts[0], parts[1], parts[2]


def reply_thread(event: Mapping[str, Any]) -> str:
    """Where an answer to this message goes: its thread, or a new thread under it."""
    return str(event.get("thread_ts") or event["ts"])


def mentions(text: str, user_id: str) -> bool:
    return any(m.group(1) == user_id for m in _MENTION.finditer(text))


def question_text(text: str, bot_user_id: str) -> str:
    """The question in a message: the bot's mention removed, links, e-mail addresses and
    channels unwrapped, Slack's `&amp; &lt; &gt;` undone."""
    without = _MENTION.sub(lambda m: "" if m.group(1) == bot_user_id else m.group(0), text)
    without = _WRAPPED.sub(_typed, without)
    unescaped = without.replace("&lt;", "<").replace("&gt;", ">").replace("&amp;", "&")
    return " ".join(unescaped.split())


def _typed(match: re.Match[str]) -> str:
    target, label = match.group(1), match.group(2)
    if target.startswith("#"):
        return f"#{label}" if label else match.group(0)
    return label or target.removeprefix("mailto:")


def is_blank(question: str) -> bool:
    """Nothing to answer: empty, whitespace or emoji codes only."""
    return bool(_EMOJI_ONLY.match(question))


def incoming(event: Mapping[str, Any], *, team: str, bot_user_id: str, event_id: str) -> Incoming:
    """The `Incoming` for a message or app_mention event."""
    channel = str(event["channel"])
    is_dm = event.get("channel_type") == "im" or channel.startswith("D")
    return Incoming(
        team=team,
        channel=channel,
        user=str(event.get("user", "")),
        text=question_text(str(event.get("text") or ""), bot_user_id),
        ts=str(event["ts"]),
        thread_ts=reply_thread(event),
        is_dm=is_dm,
        event_id=event_id,
        has_files=bool(event.get("files")),
    )
