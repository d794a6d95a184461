"""The emulator's workspace: users, channels, messages, reactions, files and statuses in
memory, every API call recorded, failures to inject, and waiting on changes."""

from __future__ import annotations

import itertools
import json
import logging
import re
import socket
import threading
import time
import uuid
from collections.abc import Callable, Iterable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal

from bot.playground.emulator_ai import AISurface
from bot.playground.emulator_limits import (
    STATUS_EXPIRY_S,
    RateLimits,
)

if TYPE_CHECKING:
    from bot.playground.emulator_socket import SocketModeServer

logger = logging.getLogger(__name__)


ChannelKind = Literal["public", "private", "im", "mpim"]
"""A public or private channel, a DM with the bot (`im`), or a group DM (`mpim`)."""
Subscriber = Callable[["StateChange"], None]
Transport = Literal["http", "socket"]
"""How events reach the app: signed HTTP requests to its Request URL, or Socket Mode
envelopes over the websocket it opened with `apps.connections.open`."""
DeliveryKind = Literal["events_api", "slash_commands", "interactive"]
"""What a delivery carries; the Socket Mode envelope `type` of the same name."""

MAX_TEXT_CHARS = 4000
"""Slack answers `msg_too_long` a little above 4k characters of `text` in practice."""
MAX_BLOCKS = 50
MAX_SECTION_CHARS = 3000


@dataclass
class User:
    """A workspace member (a person or a bot user)."""

    id: str
    name: str
    is_bot: bool = False
    bot_id: str | None = None

    def to_api(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "name": self.name,
            "real_name": self.name,
            "is_bot": self.is_bot,
            "profile": {"display_name": self.name, "real_name": self.name},
            "tz": "UTC",
        }


@dataclass
class Channel:
    """A public or private channel, a DM (`im`) between the bot and one person, or a group
    DM (`mpim`) between several people and the bot."""

    id: str
    name: str
    kind: ChannelKind = "public"
    members: set[str] = field(default_factory=set)
    archived: bool = False
    messages: list[dict[str, Any]] = field(default_factory=list)
    """Slack-shaped message dicts, top-level and replies, in ts order."""

    @property
    def channel_type(self) -> str:
        return {"public": "channel", "private": "group", "im": "im", "mpim": "mpim"}[self.kind]

    @property
    def message_event(self) -> str:
        """The bot event a message here arrives as (`message.channels`, …, `message.mpim`)."""
        return {"public": "channels", "private": "groups", "im": "im", "mpim": "mpim"}[self.kind]

    def to_api(self, viewer: str) -> dict[str, Any]:
        return {
            "id": self.id,
            "name": self.name,
            "is_channel": self.kind == "public",
            "is_group": self.kind == "private",
            "is_im": self.kind == "im",
            "is_mpim": self.kind == "mpim",
            "is_private": self.kind != "public",
            "is_archived": self.archived,
            "is_member": viewer in self.members,
        }


@dataclass(frozen=True)
class ApiCall:
    """One Web API request the app made, and what the emulator answered; also each POST to a
    slash command's response_url (method `response_url`, its body as params)."""

    method: str
    params: dict[str, Any]
    status: int
    response: dict[str, Any]
    at: float
    seq: int = 0
    """When the request arrived, in the emulator's one order of events (see `Delivery`)."""

    @property
    def ok(self) -> bool:
        return bool(self.response.get("ok"))


@dataclass(frozen=True)
class Delivery:
    """One attempt at delivering an event to the app (a signed HTTP request, or a Socket Mode
    envelope) and its acknowledgement, timed from this side.

    `sent_seq` and `acked_seq` place the attempt in the same order as `ApiCall.seq`, so a test
    can tell whether the app acknowledged before it called the Web API, without a clock."""

    payload: dict[str, Any]
    status: int
    """The HTTP status (0: no response within `ack_timeout_s`); over Socket Mode 200 once
    acked, 0 when no ack came in time."""
    body: str
    """The response body; over Socket Mode the ack's `payload` as JSON ("" without one)."""
    elapsed_s: float
    retry_num: int = 0
    """X-Slack-Retry-Num, or the envelope's `retry_attempt`."""
    kind: DeliveryKind = "events_api"
    transport: Transport = "http"
    envelope_id: str = ""
    retry_reason: str = ""
    sent_seq: int = 0
    acked_seq: int | None = None
    """None: not acknowledged (an HTTP error status, no response, or no envelope ack in time)."""

    @property
    def acked(self) -> bool:
        return self.acked_seq is not None


@dataclass(frozen=True)
class StateChange:
    """Something changed in the workspace (for live views such as the playground)."""

    kind: str
    """message_posted, message_updated, message_deleted, ephemeral_posted, reaction_added,
    reaction_removed, status_set, file_shared, api_call, event_delivered."""
    channel: str | None
    data: dict[str, Any]


@dataclass(eq=False)
class _HttpProbe:
    """An HTTP delivery waiting for its response: `seq` is set once the first bytes are in."""

    sock: socket.socket
    seq: int | None = None


@dataclass
class _AwaitedAck:
    """A Socket Mode envelope in flight: set once its ack arrives."""

    sent_at: float
    done: threading.Event = field(default_factory=threading.Event)
    acked_seq: int | None = None
    acked_at: float = 0.0
    payload: dict[str, Any] | None = None


@dataclass
class _Failure:
    error: str
    status: int
    retry_after: int | None
    times: int


class WorkspaceState:
    """What the emulated workspace holds, and the changes tests and the playground wait on."""

    def __init__(
        self,
        *,
        signing_secret: str = "emulator-signing-secret",  # noqa: S107 - a local fake
        bot_token: str = "xoxb-emulator-token",  # noqa: S107 - a local fake
        team_id: str = "T0EMULATE",
        bot_user_id: str = "U0CYPHERBOT",
        bot_id: str = "B0CYPHERBOT",
        bot_name: str = "cypherbot",
        app_url: str | None = None,
        status_supported: bool = True,
        streaming_supported: bool = True,
        echo_bot_events: bool = True,
        scopes: Iterable[str] | None = None,
        rate_limits: RateLimits | None = None,
        clock: Callable[[], float] = time.monotonic,
        transport: Transport = "http",
        app_token: str = "xapp-1-A0CYPHERBOT-1-emulator",  # noqa: S107 - a local fake
        ack_timeout_s: float = 3.0,
        event_retries: int = 3,
        events: Iterable[str] | None = None,
    ) -> None:
        self.signing_secret = signing_secret
        self.bot_token = bot_token
        self.team_id = team_id
        self.bot_user_id = bot_user_id
        self.bot_id = bot_id
        self.api_app_id = "A0CYPHERBOT"
        self.app_url = app_url
        """Where events are POSTed (the app's `/slack/events`)."""
        self.status_supported = status_supported
        self.streaming_supported = streaming_supported
        """False: chat.startStream answers `unknown_method`, like workspaces without it."""
        """False: `assistant.threads.setStatus` answers an error, like older workspaces."""
        self.echo_bot_events = echo_bot_events
        """Send the app the events its own posts, edits and reactions cause, as Slack does."""
        self.scopes = None if scopes is None else frozenset(scopes)
        """The bot token's scopes (None: every method allowed); a method needing another
        answers `missing_scope`, as Slack does."""
        self.clock = clock
        self.rate_limits = rate_limits if rate_limits is not None else RateLimits(clock=clock)
        """Slack's rate limits (Tier 3 per method, chat.postMessage per channel): 429 with a
        real Retry-After when exceeded."""
        self.transport: Transport = transport
        """How events reach the app (`app_url` for HTTP; the app's Socket Mode connection)."""
        self.app_token = app_token
        """The app-level token `apps.connections.open` accepts."""
        self.ack_timeout_s = ack_timeout_s
        """How long a delivery waits for its ack (Slack: 3 s), on either transport: the first
        bytes of the HTTP response, or the envelope's ack. Later is a failure."""
        self.event_retries = event_retries
        """An event not acked in time is sent again up to this many times, as Slack does: over
        HTTP with `X-Slack-Retry-Num` 1.. and `X-Slack-Retry-Reason: http_timeout`, over
        Socket Mode with `retry_attempt` 1.. and `retry_reason` "timeout"; at once rather
        than after Slack's 1 and 5 minutes."""
        self.events = None if events is None else frozenset(events)
        """The bot events the app subscribes to (manifest `bot_events`; None: all). A message
        is delivered as `message.channels`, `message.groups`, `message.im` or
        `message.mpim` only when subscribed, as Slack does."""
        self.responses: list[dict[str, Any]] = []
        """What the app POSTed to slash commands' response_url."""
        self._response_urls: dict[str, tuple[str, str]] = {}
        self.users: dict[str, User] = {}
        self.channels: dict[str, Channel] = {}
        self.calls: list[ApiCall] = []
        self.deliveries: list[Delivery] = []
        self.ephemerals: list[dict[str, Any]] = []
        self.files: dict[str, dict[str, Any]] = {}
        self.statuses: dict[tuple[str, str], str] = {}
        """(channel, thread_ts) → what the thread's status line shows: the first of the
        `loading_messages` when the app sent some, else its `status`."""
        self.loading_messages: dict[tuple[str, str], list[str]] = {}
        """(channel, thread_ts) → the loading messages last set there."""
        self._status_since: dict[tuple[str, str], float] = {}
        self.surface = AISurface()
        """Suggested prompts, thread titles and Home tabs the app set (bot/playground/emulator_ai.py)."""
        self._uploads: dict[str, bytes] = {}
        self._failures: dict[str, list[_Failure]] = {}
        self._subscribers: list[Subscriber] = []
        self._lock = threading.RLock()
        self._changed = threading.Condition(self._lock)
        self._ts_last = 0.0
        self._ids = itertools.count(1)
        self._order = itertools.count(1)
        self._pending = 0
        self._socket: SocketModeServer | None = None
        self._awaiting: dict[str, _AwaitedAck] = {}
        self._probes: set[_HttpProbe] = set()
        self._acks_to_lose = 0
        self.lost_acks: list[str] = []
        """Envelope ids whose ack the emulator dropped on purpose (`lose_next_acks`)."""
        self.stray_acks: list[str] = []
        """Acks for no envelope awaiting one: unknown ids, or acks that came too late."""
        self._base_url: str | None = None
        self._sender = ThreadPoolExecutor(max_workers=16, thread_name_prefix="emulator-send")
        self.add_user(bot_user_id, bot_name, is_bot=True, bot_id=bot_id)

    @property
    def base_url(self) -> str:
        """Where the Web API is served (`http://127.0.0.1:port`), once started."""
        if self._base_url is None:
            raise RuntimeError("the emulator is not started")
        return self._base_url

    # ---- workspace -------------------------------------------------------------------

    def add_user(
        self, user_id: str, name: str, *, is_bot: bool = False, bot_id: str | None = None
    ) -> User:
        with self._lock:
            user = User(user_id, name, is_bot=is_bot, bot_id=bot_id)
            self.users[user_id] = user
            return user

    def add_channel(
        self,
        channel_id: str,
        name: str,
        *,
        kind: ChannelKind = "public",
        members: Iterable[str] = (),
        bot_member: bool = True,
        archived: bool = False,
    ) -> Channel:
        with self._lock:
            channel = Channel(channel_id, name, kind, set(members), archived)
            if bot_member:
                channel.members.add(self.bot_user_id)
            self.channels[channel_id] = channel
            return channel

    def open_dm(self, user: str) -> Channel:
        """The DM channel between `user` and the bot (created on first use)."""
        with self._lock:
            for channel in self.channels.values():
                if channel.kind == "im" and user in channel.members:
                    return channel
            return self.add_channel(f"D{user[1:]}", user, kind="im", members=[user])

    def messages(self, channel: str, thread_ts: str | None = None) -> list[dict[str, Any]]:
        """Copies of a channel's messages; with `thread_ts`, that thread (parent first)."""
        with self._lock:
            found = self.channels[channel].messages
            if thread_ts is not None:
                found = [
                    m for m in found if m["ts"] == thread_ts or m.get("thread_ts") == thread_ts
                ]
            return [json.loads(json.dumps(m)) for m in found]

    def message(self, channel: str, ts: str) -> dict[str, Any] | None:
        with self._lock:
            found = self._find(channel, ts)
            return json.loads(json.dumps(found)) if found else None

    def bot_replies(self, channel: str, thread_ts: str) -> list[dict[str, Any]]:
        """The bot's messages in one thread, oldest first."""
        return [
            m
            for m in self.messages(channel, thread_ts)
            if m.get("user") == self.bot_user_id and m["ts"] != thread_ts
        ]

    def subscribed(self, event: dict[str, Any]) -> bool:
        """Whether the app subscribes to `event` (a message by its channel's kind)."""
        if self.events is None:
            return True
        kind = str(event.get("type", ""))
        if kind == "message":
            room = self.channels.get(str(event.get("channel", "")))
            return room is not None and f"message.{room.message_event}" in self.events
        return kind in self.events

    def calls_to(self, method: str) -> list[ApiCall]:
        with self._lock:
            return [c for c in self.calls if c.method == method]

    def fail_next(
        self,
        method: str,
        error: str,
        *,
        status: int = 200,
        retry_after: int | None = None,
        times: int = 1,
    ) -> None:
        """Answer the next `times` calls of `method` with `error` (HTTP `status`; 429 sends
        `Retry-After: retry_after`)."""
        with self._lock:
            self._failures.setdefault(method, []).append(
                _Failure(error, status, retry_after, times)
            )

    # ---- subscribers and waiting -----------------------------------------------------

    def subscribe(self, callback: Subscriber) -> Callable[[], None]:
        """Call `callback` on every state change (from server threads); returns unsubscribe."""
        with self._lock:
            self._subscribers.append(callback)

        def unsubscribe() -> None:
            with self._lock:
                if callback in self._subscribers:
                    self._subscribers.remove(callback)

        return unsubscribe

    def wait_for(
        self, predicate: Callable[[], Any], timeout: float = 30.0, message: str = ""
    ) -> Any:
        """Block until `predicate()` is truthy (re-checked on every state change)."""
        deadline = time.monotonic() + timeout
        with self._changed:
            while True:
                value = predicate()
                if value:
                    return value
                left = deadline - time.monotonic()
                if left <= 0:
                    raise TimeoutError(message or "emulator: condition not met in time")
                self._changed.wait(min(left, 0.25))

    def wait_idle(self, timeout: float = 30.0) -> None:
        """Block until no event delivery (including echoes of the bot's posts) is in flight."""
        self.wait_for(lambda: self._pending == 0, timeout, "emulator: deliveries still pending")

    def _emit(self, kind: str, channel: str | None, data: dict[str, Any]) -> None:
        change = StateChange(kind, channel, data)
        with self._changed:
            subscribers = list(self._subscribers)
            self._changed.notify_all()
        for callback in subscribers:
            try:
                callback(change)
            except Exception:
                logger.exception("emulator subscriber failed")

    # ---- state helpers ---------------------------------------------------------------

    def _next_seq(self) -> int:
        """The next position in the one order of deliveries, acks and API calls."""
        with self._lock:
            return next(self._order)

    def _next_ts(self) -> str:
        now = max(time.time(), self._ts_last + 0.000001)
        self._ts_last = now
        return f"{now:.6f}"

    def _find(self, channel: str, ts: str) -> dict[str, Any] | None:
        room = self.channels.get(channel)
        if room is None:
            return None
        return next((m for m in room.messages if m["ts"] == ts), None)

    def _require(self, channel: str, ts: str) -> dict[str, Any]:
        found = self._find(channel, ts)
        if found is None:
            raise KeyError(f"no message {ts} in {channel}")
        return found

    def _store_message(
        self, channel: str, fields: dict[str, Any], thread_ts: str | None
    ) -> dict[str, Any]:
        room = self.channels[channel]
        message: dict[str, Any] = {
            "type": "message",
            "ts": self._next_ts(),
            "team": self.team_id,
            **{k: v for k, v in fields.items() if v is not None},
        }
        if "bot_id" not in message and message.get("user") != self.bot_user_id:
            message["client_msg_id"] = str(uuid.uuid4())
        if thread_ts:
            message["thread_ts"] = thread_ts
            parent = self._find(channel, thread_ts)
            if parent is not None:
                parent["thread_ts"] = thread_ts
                parent["reply_count"] = parent.get("reply_count", 0) + 1
                parent["latest_reply"] = message["ts"]
                message["parent_user_id"] = parent.get("user")
            if message.get("user") == self.bot_user_id:
                self._clear_status((channel, thread_ts))
        room.messages.append(message)
        return message

    def _user_file(self, user: str, name: str) -> dict[str, Any]:
        file_id = f"F{next(self._ids):010d}"
        info = {"id": file_id, "name": name, "title": name, "user": user, "size": 0}
        self.files[file_id] = info
        return dict(info)

    def _react(self, message: dict[str, Any], user: str, name: str, *, add: bool) -> bool:
        reactions: list[dict[str, Any]] = message.setdefault("reactions", [])
        entry = next((r for r in reactions if r["name"] == name), None)
        if add:
            if entry is None:
                entry = {"name": name, "users": [], "count": 0}
                reactions.append(entry)
            if user in entry["users"]:
                return False
            entry["users"].append(user)
        else:
            if entry is None or user not in entry["users"]:
                return False
            entry["users"].remove(user)
            if not entry["users"]:
                reactions.remove(entry)
        if entry in reactions:
            entry["count"] = len(entry["users"])
        return True

    def _expire_statuses(self) -> None:
        """Statuses clear themselves after two minutes without a reply, as in Slack."""
        cutoff = self.clock() - STATUS_EXPIRY_S
        with self._lock:
            for key, since in list(self._status_since.items()):
                if since <= cutoff:
                    self._clear_status(key)

    def _clear_status(self, key: tuple[str, str]) -> None:
        """The thread's status gone (a reply came, it expired, or the app cleared it)."""
        self._status_since.pop(key, None)
        self.statuses.pop(key, None)
        self.loading_messages.pop(key, None)

    def _take_failure(self, method: str) -> _Failure | None:
        pending = self._failures.get(method)
        if not pending:
            return None
        failure = pending[0]
        failure.times -= 1
        if failure.times <= 0:
            pending.pop(0)
        return failure


_ENTITY = re.compile(r"<([!@#][^>\n]*|[a-z][a-z0-9+.-]*:[^>\n]*)>", re.IGNORECASE)
_BARE_BROADCAST = re.compile(r"(?<![\w\u200b\u2060])@(channel|here|everyone)\b", re.IGNORECASE)
_MARKDOWN_LINK = re.compile(r"!?\[[^\]\n]*\]\([^)\n]*\)")


def slack_entities(message: dict[str, Any]) -> list[str]:
    """What Slack would turn into a notification, a mention or a link in `message`: `<!here>`-
    style broadcasts and `<!subteam^…>`, `<@U…>` and `<#C…>` mentions, `<url>` and
    `<url|label>` links (in `text` and in mrkdwn and markdown block text); bare `@channel`,
    `@here` and `@everyone`, which mrkdwn parses unless verbatim; and, in markdown (a
    streamed answer, a markdown block), `[label](url)` links, which hide their target
    (matched with no regard to backslash escapes, so stricter than Markdown; mrkdwn has no
    such links). Tests compare it with what the bot's own text meant to put there;
    plain_text is not parsed by Slack."""
    texts: list[tuple[str, bool]] = []
    """(text, is markdown): a streamed answer's text is markdown, so is a markdown block."""
    blocks = message.get("blocks") or []
    streamed = bool(message.get("streaming")) or any(b.get("type") == "markdown" for b in blocks)
    texts.append((str(message.get("text") or ""), streamed))
    for block in blocks:
        text = block.get("text")
        if isinstance(text, str):  # a markdown block
            texts.append((text, True))
        elif isinstance(text, dict) and text.get("type") == "mrkdwn":
            texts.append((str(text.get("text", "")), False))
        texts += [
            (str(f.get("text", "")), False)
            for f in block.get("fields") or []
            if f.get("type") == "mrkdwn"
        ]
        texts += [
            (str(e.get("text", "")), False)
            for e in block.get("elements") or []
            if isinstance(e, dict) and e.get("type") == "mrkdwn"
        ]
    found: list[str] = []
    for text, markdown in texts:
        found += [m.group(0) for m in _ENTITY.finditer(text)]
        found += [m.group(0) for m in _BARE_BROADCAST.finditer(text)]
        if markdown:
            found += [m.group(0) for m in _MARKDOWN_LINK.finditer(text)]
    return found
