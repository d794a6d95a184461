"""A local Slack: Web API server, workspace state and signed event delivery, for tests and the playground."""

from __future__ import annotations

import hashlib
import hmac
import itertools
import json
import logging
import re
import threading
import time
import urllib.error
import urllib.parse
import urllib.request
import uuid
from collections.abc import Callable, Iterable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Literal

from bot.emulator_ai import AISurface, SurfaceError
from bot.emulator_limits import (
    STATUS_EXPIRY_S,
    RateLimits,
    block_problem,
    missing_scope,
)

logger = logging.getLogger(__name__)


class _Server(ThreadingHTTPServer):
    """ThreadingHTTPServer with a listen backlog fit for bursts (the default of 5 resets
    connections when Slack delivers a few dozen events at once)."""

    request_queue_size = 128
    daemon_threads = True


ChannelKind = Literal["public", "private", "im"]
Subscriber = Callable[["StateChange"], None]

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
    """A public or private channel, or a DM (`im`) between the bot and one person."""

    id: str
    name: str
    kind: ChannelKind = "public"
    members: set[str] = field(default_factory=set)
    archived: bool = False
    messages: list[dict[str, Any]] = field(default_factory=list)
    """Slack-shaped message dicts, top-level and replies, in ts order."""

    @property
    def channel_type(self) -> str:
        return {"public": "channel", "private": "group", "im": "im"}[self.kind]

    def to_api(self, viewer: str) -> dict[str, Any]:
        return {
            "id": self.id,
            "name": self.name,
            "is_channel": self.kind == "public",
            "is_group": self.kind == "private",
            "is_im": self.kind == "im",
            "is_private": self.kind != "public",
            "is_archived": self.archived,
            "is_member": viewer in self.members,
        }


@dataclass(frozen=True)
class ApiCall:
    """One Web API request the app made, and what the emulator answered."""

    method: str
    params: dict[str, Any]
    status: int
    response: dict[str, Any]
    at: float

    @property
    def ok(self) -> bool:
        return bool(self.response.get("ok"))


@dataclass(frozen=True)
class Delivery:
    """One HTTP event request sent to the app and its response, timed from this side."""

    payload: dict[str, Any]
    status: int
    body: str
    elapsed_s: float
    retry_num: int = 0


@dataclass(frozen=True)
class StateChange:
    """Something changed in the workspace (for live views such as the playground)."""

    kind: str
    """message_posted, message_updated, message_deleted, ephemeral_posted, reaction_added,
    reaction_removed, status_set, file_shared, api_call, event_delivered."""
    channel: str | None
    data: dict[str, Any]


@dataclass
class _Failure:
    error: str
    status: int
    retry_after: int | None
    times: int


class SlackEmulator:
    """Plays Slack for a Bolt app: serves the Web API on 127.0.0.1 (port 0), keeps channels,
    users, messages, reactions and files in memory, records every call, injects errors, and
    delivers events to the app as signed HTTP requests (or Socket Mode envelopes)."""

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
        self._status_since: dict[tuple[str, str], float] = {}
        self.surface = AISurface()
        """Suggested prompts, thread titles and Home tabs the app set (bot/emulator_ai.py)."""
        self._uploads: dict[str, bytes] = {}
        self._failures: dict[str, list[_Failure]] = {}
        self._subscribers: list[Subscriber] = []
        self._lock = threading.RLock()
        self._changed = threading.Condition(self._lock)
        self._ts_last = 0.0
        self._ids = itertools.count(1)
        self._pending = 0
        self._sender = ThreadPoolExecutor(max_workers=16, thread_name_prefix="emulator-send")
        self._server: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None
        self.add_user(bot_user_id, bot_name, is_bot=True, bot_id=bot_id)

    # ---- lifecycle -------------------------------------------------------------------

    def start(self) -> SlackEmulator:
        """Bind 127.0.0.1 on a free port and serve in a background thread."""
        handler = _handler_for(self)
        self._server = _Server(("127.0.0.1", 0), handler)
        self._server.daemon_threads = True
        self._thread = threading.Thread(
            target=self._server.serve_forever, name="slack-emulator", daemon=True
        )
        self._thread.start()
        return self

    def stop(self) -> None:
        self._sender.shutdown(wait=False, cancel_futures=True)
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
            self._server = None

    def __enter__(self) -> SlackEmulator:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    @property
    def base_url(self) -> str:
        if self._server is None:
            raise RuntimeError("the emulator is not started")
        host, port = self._server.server_address[:2]
        return f"http://{host!s}:{port}"

    @property
    def api_url(self) -> str:
        """The `base_url` for `WebClient` (ends with a slash)."""
        return f"{self.base_url}/api/"

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

    # ---- what people do (and the events Slack sends for it) --------------------------

    def post_message(
        self,
        user: str,
        channel: str,
        text: str,
        thread_ts: str | None = None,
        *,
        deliver: bool = True,
        concurrent: bool = False,
        files: Sequence[str] = (),
    ) -> tuple[dict[str, Any], list[Delivery]]:
        """A person posts; the message is stored and its events delivered (`app_mention` when
        the bot is mentioned outside DMs, then `message`). Returns (message, deliveries).

        As Slack does, the message carries its text as `rich_text` blocks too; with `files`
        (file names) it is a `file_share` message with those files attached."""
        fields: dict[str, Any] = {"user": user, "text": text, "blocks": _rich_text(text)}
        with self._lock:
            if files:
                fields["subtype"] = "file_share"
                fields["upload"] = True
                fields["files"] = [self._user_file(user, name) for name in files]
            message = self._store_message(channel, fields, thread_ts)
        self._emit("message_posted", channel, message)
        payloads = self.events_for_message(channel, message)
        deliveries = self.deliver_all(payloads, concurrent=concurrent) if deliver else []
        return message, deliveries

    def post_bot_message(
        self, bot_user: str, bot_id: str, channel: str, text: str, thread_ts: str | None = None
    ) -> tuple[dict[str, Any], list[Delivery]]:
        """Another app posts (a `bot_id` on the message)."""
        with self._lock:
            message = self._store_message(
                channel, {"user": bot_user, "bot_id": bot_id, "text": text}, thread_ts
            )
        self._emit("message_posted", channel, message)
        return message, self.deliver_all(self.events_for_message(channel, message))

    def edit_message(self, channel: str, ts: str, text: str) -> list[Delivery]:
        """A person edits a message: `message_changed` is delivered."""
        with self._lock:
            message = self._require(channel, ts)
            previous = dict(message)
            message["text"] = text
            message["edited"] = {"user": message.get("user"), "ts": self._next_ts()}
            payload = self._changed_event(channel, message, previous)
        self._emit("message_updated", channel, message)
        return [self.deliver(payload)]

    def delete_message(self, channel: str, ts: str) -> list[Delivery]:
        """A person deletes a message: `message_deleted` is delivered."""
        with self._lock:
            message = self._require(channel, ts)
            self.channels[channel].messages.remove(message)
            payload = self._deleted_event(channel, message)
        self._emit("message_deleted", channel, {"ts": ts})
        return [self.deliver(payload)]

    def add_reaction(self, user: str, channel: str, ts: str, name: str) -> Delivery | None:
        """`user` reacts; `reaction_added` is delivered (None when already reacted)."""
        with self._lock:
            message = self._require(channel, ts)
            if not self._react(message, user, name, add=True):
                return None
            payload = self._reaction_event("reaction_added", user, channel, message, name)
        self._emit("reaction_added", channel, {"ts": ts, "user": user, "reaction": name})
        return self.deliver(payload)

    def remove_reaction(self, user: str, channel: str, ts: str, name: str) -> Delivery | None:
        with self._lock:
            message = self._require(channel, ts)
            if not self._react(message, user, name, add=False):
                return None
            payload = self._reaction_event("reaction_removed", user, channel, message, name)
        self._emit("reaction_removed", channel, {"ts": ts, "user": user, "reaction": name})
        return self.deliver(payload)

    # ---- event delivery --------------------------------------------------------------

    def events_for_message(self, channel: str, message: dict[str, Any]) -> list[dict[str, Any]]:
        """The Events API payloads Slack sends for a new message, in Slack's usual order."""
        with self._lock:
            room = self.channels[channel]
            if self.bot_user_id not in room.members:
                return []
            base = {
                k: v
                for k, v in message.items()
                if k not in {"reactions", "reply_count", "reply_users", "latest_reply"}
            }
            payloads = []
            mention = f"<@{self.bot_user_id}>"
            if room.kind != "im" and mention in message.get("text", "") and "bot_id" not in message:
                event = {
                    **base,
                    "type": "app_mention",
                    "channel": channel,
                    "event_ts": message["ts"],
                }
                event.pop("channel_type", None)
                payloads.append(self.envelope(event))
            event = {
                **base,
                "type": "message",
                "channel": channel,
                "event_ts": message["ts"],
                "channel_type": room.channel_type,
            }
            payloads.append(self.envelope(event))
            return payloads

    def envelope(self, event: dict[str, Any]) -> dict[str, Any]:
        """Wrap an event as an Events API `event_callback` with a fresh event_id."""
        return {
            "token": "emulator-verification-token",
            "team_id": self.team_id,
            "api_app_id": self.api_app_id,
            "event": event,
            "type": "event_callback",
            "event_id": f"Ev{next(self._ids):08d}{uuid.uuid4().hex[:6].upper()}",
            "event_time": int(time.time()),
            "authorizations": [
                {
                    "enterprise_id": None,
                    "team_id": self.team_id,
                    "user_id": self.bot_user_id,
                    "is_bot": True,
                    "is_enterprise_install": False,
                }
            ],
            "is_ext_shared_channel": False,
            "event_context": uuid.uuid4().hex,
        }

    def deliver_all(
        self, payloads: list[dict[str, Any]], *, concurrent: bool = False
    ) -> list[Delivery]:
        if not concurrent:
            return [self.deliver(p) for p in payloads]
        with ThreadPoolExecutor(max_workers=max(1, len(payloads))) as pool:
            return list(pool.map(self.deliver, payloads))

    def deliver(
        self,
        payload: dict[str, Any],
        *,
        retries: int = 0,
        concurrent: bool = True,
        retry_reason: str = "http_timeout",
        timestamp: int | None = None,
        signing_secret: str | None = None,
        url: str | None = None,
        first_retry: int = 0,
    ) -> Delivery:
        """POST `payload` to the app (or to `url`: another instance of it), signed. With
        `retries`, also send Slack's retries (`X-Slack-Retry-Num` 1..retries) — all at once
        when `concurrent`; `first_retry` numbers a lone later retry. Returns the first
        attempt's delivery; every attempt is in `deliveries`."""
        if not retries:
            return self._send(payload, first_retry, retry_reason, timestamp, signing_secret, url)
        attempts = range(retries + 1)
        if concurrent:
            with ThreadPoolExecutor(max_workers=retries + 1) as pool:
                results = list(
                    pool.map(
                        lambda n: self._send(
                            payload, n, retry_reason, timestamp, signing_secret, url
                        ),
                        attempts,
                    )
                )
        else:
            results = [
                self._send(payload, n, retry_reason, timestamp, signing_secret, url)
                for n in attempts
            ]
        return results[0]

    def url_verification(self, challenge: str = "emulator-challenge") -> Delivery:
        return self._send(
            {
                "token": "emulator-verification-token",
                "challenge": challenge,
                "type": "url_verification",
            },
            0,
            "",
            None,
            None,
        )

    def slash_command(
        self, user: str, channel: str, text: str, command: str = "/cypherbot"
    ) -> Delivery:
        """A person runs a slash command: a signed form POST, as Slack sends it. What the app
        later POSTs to its response_url shows as an ephemeral message to `user`."""
        response_id = uuid.uuid4().hex
        with self._lock:
            self._response_urls[response_id] = (channel, user)
        fields = {
            "token": "emulator-verification-token",
            "team_id": self.team_id,
            "channel_id": channel,
            "user_id": user,
            "user_name": self.users[user].name if user in self.users else user,
            "command": command,
            "text": text,
            "api_app_id": self.api_app_id,
            "response_url": f"{self.base_url}/response/{response_id}",
            "trigger_id": uuid.uuid4().hex,
        }
        body = urllib.parse.urlencode(fields).encode()
        ts = int(time.time())
        headers = {
            "Content-Type": "application/x-www-form-urlencoded",
            "X-Slack-Request-Timestamp": str(ts),
            "X-Slack-Signature": self.sign(body, ts),
        }
        return self._post(body, headers, fields, 0)

    def click(self, user: str, channel: str, ts: str, action_id: str, value: str) -> Delivery:
        """A person clicks a button (`action_id`) of the message `ts`: Slack's signed form POST
        with the `block_actions` payload."""
        with self._lock:
            message = dict(self._require(channel, ts))
        payload = AISurface.block_action(
            user=user,
            team_id=self.team_id,
            api_app_id=self.api_app_id,
            channel=channel,
            message=message,
            action_id=action_id,
            value=value,
        )
        body = urllib.parse.urlencode({"payload": json.dumps(payload)}).encode()
        ts_now = int(time.time())
        headers = {
            "Content-Type": "application/x-www-form-urlencoded",
            "X-Slack-Request-Timestamp": str(ts_now),
            "X-Slack-Signature": self.sign(body, ts_now),
        }
        return self._post(body, headers, payload, 0)

    def send_raw(self, body: bytes, headers: Mapping[str, str]) -> Delivery:
        """POST arbitrary bytes and headers to the app (bad signatures, stale timestamps)."""
        return self._post(body, dict(headers), {}, 0)

    def sign(self, body: bytes, timestamp: int, secret: str | None = None) -> str:
        basestring = b"v0:" + str(timestamp).encode() + b":" + body
        key = (secret or self.signing_secret).encode()
        return "v0=" + hmac.new(key, basestring, hashlib.sha256).hexdigest()

    def socket_envelope(
        self, payload: dict[str, Any], *, retry_attempt: int = 0, retry_reason: str = ""
    ) -> dict[str, Any]:
        """The Socket Mode message Slack would send for an Events API payload."""
        return {
            "envelope_id": str(uuid.uuid4()),
            "payload": payload,
            "type": "events_api",
            "accepts_response_payload": False,
            "retry_attempt": retry_attempt,
            "retry_reason": retry_reason,
        }

    def _send(
        self,
        payload: dict[str, Any],
        retry_num: int,
        retry_reason: str,
        timestamp: int | None,
        secret: str | None,
        url: str | None = None,
    ) -> Delivery:
        body = json.dumps(payload).encode()
        ts = int(time.time()) if timestamp is None else timestamp
        headers = {
            "Content-Type": "application/json",
            "X-Slack-Request-Timestamp": str(ts),
            "X-Slack-Signature": self.sign(body, ts, secret),
        }
        if retry_num:
            headers["X-Slack-Retry-Num"] = str(retry_num)
            headers["X-Slack-Retry-Reason"] = retry_reason
        return self._post(body, headers, payload, retry_num, url)

    def _post(
        self,
        body: bytes,
        headers: dict[str, str],
        payload: dict[str, Any],
        retry_num: int,
        url: str | None = None,
    ) -> Delivery:
        target = url or self.app_url
        if not target or not target.startswith(("http://", "https://")):
            raise RuntimeError("set emulator.app_url to the app's http(s) /slack/events URL")
        request = urllib.request.Request(target, data=body, headers=headers, method="POST")  # noqa: S310 - http(s) checked above
        with self._lock:
            self._pending += 1
        started = time.perf_counter()
        try:
            try:
                with urllib.request.urlopen(request, timeout=30) as response:  # noqa: S310
                    status, text = response.status, response.read().decode()
            except urllib.error.HTTPError as exc:
                status, text = exc.code, exc.read().decode()
            elapsed = time.perf_counter() - started
            delivery = Delivery(payload, status, text, elapsed, retry_num)
            with self._lock:
                self.deliveries.append(delivery)
        finally:
            with self._lock:
                self._pending -= 1
        self._emit(
            "event_delivered",
            None,
            {"event_id": payload.get("event_id"), "status": status, "elapsed_s": elapsed},
        )
        return delivery

    def _deliver_later(self, payload: dict[str, Any]) -> None:
        """Send an echo event without blocking the API request that caused it."""
        if not self.app_url or not self.echo_bot_events:
            return
        with self._lock:
            self._pending += 1

        def send() -> None:
            try:
                self.deliver(payload)
            except Exception as exc:
                logger.debug("emulator echo delivery failed: %s", exc)
            finally:
                with self._changed:
                    self._pending -= 1
                    self._changed.notify_all()

        try:
            self._sender.submit(send)
        except RuntimeError:
            with self._lock:
                self._pending -= 1

    # ---- state helpers (call with the lock held) ---------------------------------------

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
                self.statuses.pop((channel, thread_ts), None)
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

    def _reaction_event(
        self, kind: str, user: str, channel: str, message: dict[str, Any], name: str
    ) -> dict[str, Any]:
        event = {
            "type": kind,
            "user": user,
            "reaction": name,
            "item": {"type": "message", "channel": channel, "ts": message["ts"]},
            "event_ts": self._next_ts(),
        }
        if message.get("user"):
            event["item_user"] = message["user"]
        return self.envelope(event)

    def _changed_event(
        self, channel: str, message: dict[str, Any], previous: dict[str, Any]
    ) -> dict[str, Any]:
        return self.envelope(
            {
                "type": "message",
                "subtype": "message_changed",
                "hidden": True,
                "message": {k: v for k, v in message.items() if k != "reactions"},
                "previous_message": {k: v for k, v in previous.items() if k != "reactions"},
                "channel": channel,
                "channel_type": self.channels[channel].channel_type,
                "ts": self._next_ts(),
                "event_ts": self._next_ts(),
            }
        )

    def _deleted_event(self, channel: str, message: dict[str, Any]) -> dict[str, Any]:
        ts = self._next_ts()
        return self.envelope(
            {
                "type": "message",
                "subtype": "message_deleted",
                "hidden": True,
                "deleted_ts": message["ts"],
                "previous_message": {k: v for k, v in message.items() if k != "reactions"},
                "channel": channel,
                "channel_type": self.channels[channel].channel_type,
                "ts": ts,
                "event_ts": ts,
            }
        )

    # ---- the Web API -----------------------------------------------------------------

    def handle_api(self, method: str, params: dict[str, Any], token: str | None) -> _ApiAnswer:
        """Answer one Web API call: (HTTP status, JSON body, extra headers)."""
        with self._lock:
            failure = self._take_failure(method)
        if failure is not None:
            headers = {}
            if failure.retry_after is not None:
                headers["Retry-After"] = str(failure.retry_after)
            answer = _ApiAnswer(failure.status, {"ok": False, "error": failure.error}, headers)
        elif token is None:
            answer = _ApiAnswer(200, {"ok": False, "error": "not_authed"})
        elif token != self.bot_token:
            answer = _ApiAnswer(200, {"ok": False, "error": "invalid_auth"})
        elif (needed := missing_scope(method, self.scopes)) is not None:
            answer = _ApiAnswer(200, {"ok": False, "error": "missing_scope", "needed": needed})
        elif (wait := self.rate_limits.check(method, params)) is not None:
            answer = _ApiAnswer(
                429, {"ok": False, "error": "ratelimited"}, {"Retry-After": str(wait)}
            )
        else:
            self._expire_statuses()
            handler = _METHODS.get(method)
            if handler is None:
                answer = _ApiAnswer(200, {"ok": False, "error": "unknown_method"})
            else:
                try:
                    answer = _ApiAnswer(200, handler(self, params))
                except _ApiError as exc:
                    answer = _ApiAnswer(200, {"ok": False, "error": exc.error})
        call = ApiCall(method, params, answer.status, answer.body, time.time())
        with self._lock:
            self.calls.append(call)
        self._emit(
            "api_call",
            params.get("channel") or params.get("channel_id"),
            {
                "method": method,
                "ok": answer.body.get("ok"),
                "error": answer.body.get("error"),
            },
        )
        return answer

    def _expire_statuses(self) -> None:
        """Statuses clear themselves after two minutes without a reply, as in Slack."""
        cutoff = self.clock() - STATUS_EXPIRY_S
        with self._lock:
            for key, since in list(self._status_since.items()):
                if since <= cutoff:
                    del self._status_since[key]
                    self.statuses.pop(key, None)

    def _take_failure(self, method: str) -> _Failure | None:
        pending = self._failures.get(method)
        if not pending:
            return None
        failure = pending[0]
        failure.times -= 1
        if failure.times <= 0:
            pending.pop(0)
        return failure

    def _room_for_post(self, channel_id: str) -> Channel:
        room = self.channels.get(channel_id)
        if room is None:
            raise _ApiError("channel_not_found")
        if room.archived:
            raise _ApiError("is_archived")
        if self.bot_user_id not in room.members:
            raise _ApiError("not_in_channel")
        return room

    def _api_auth_test(self, params: dict[str, Any]) -> dict[str, Any]:
        return {
            "ok": True,
            "url": "https://emulated.slack.com/",
            "team": "Emulated workspace",
            "user": self.users[self.bot_user_id].name,
            "team_id": self.team_id,
            "user_id": self.bot_user_id,
            "bot_id": self.bot_id,
            "is_enterprise_install": False,
        }

    def _api_post_message(self, params: dict[str, Any]) -> dict[str, Any]:
        with self._lock:
            room = self._room_for_post(str(params.get("channel", "")))
            fields = _message_fields(params)
            message = self._store_message(
                room.id,
                {
                    "user": self.bot_user_id,
                    "bot_id": self.bot_id,
                    "app_id": self.api_app_id,
                    **fields,
                },
                params.get("thread_ts") or None,
            )
            echo = self.events_for_message(room.id, message)
        self._emit("message_posted", room.id, message)
        for payload in echo:
            self._deliver_later(payload)
        return {"ok": True, "channel": room.id, "ts": message["ts"], "message": message}

    def _bot_message(self, params: dict[str, Any], not_ours: str) -> tuple[str, dict[str, Any]]:
        """The bot's own message named by `channel` + `ts` (call with the lock held), or the
        error Slack gives: channel_not_found, message_not_found, or `not_ours`."""
        channel = str(params.get("channel", ""))
        if channel not in self.channels:
            raise _ApiError("channel_not_found")
        message = self._find(channel, str(params.get("ts", "")))
        if message is None:
            raise _ApiError("message_not_found")
        if message.get("user") != self.bot_user_id:
            raise _ApiError(not_ours)
        return channel, message

    def _api_update(self, params: dict[str, Any]) -> dict[str, Any]:
        with self._lock:
            channel, message = self._bot_message(params, "cant_update_message")
            previous = dict(message)
            fields = _message_fields(params)
            if "blocks" in params:
                # Slack keeps the previous blocks unless the update sends some ([] clears).
                message.pop("blocks", None)
            message.update(fields)
            message["edited"] = {"user": self.bot_user_id, "ts": self._next_ts()}
            echo = self._changed_event(channel, message, previous)
        self._emit("message_updated", channel, message)
        self._deliver_later(echo)
        return {
            "ok": True,
            "channel": channel,
            "ts": message["ts"],
            "text": message.get("text", ""),
        }

    def _api_start_stream(self, params: dict[str, Any]) -> dict[str, Any]:
        """A streamed reply: a bot message in the thread that grows until stopped. Outside
        DMs Slack needs the recipient user and team."""
        if not self.streaming_supported:
            raise _ApiError("unknown_method")
        with self._lock:
            room = self._room_for_post(str(params.get("channel", "")))
            thread_ts = str(params.get("thread_ts") or "")
            if not thread_ts or self._find(room.id, thread_ts) is None:
                raise _ApiError("invalid_thread_ts")
            if room.kind != "im" and not (
                params.get("recipient_user_id") and params.get("recipient_team_id")
            ):
                raise _ApiError("missing_recipient_user_id")
            message = self._store_message(
                room.id,
                {
                    "user": self.bot_user_id,
                    "bot_id": self.bot_id,
                    "app_id": self.api_app_id,
                    "text": _streamed_text(params),
                    "streaming": True,
                },
                thread_ts,
            )
        self._emit("message_posted", room.id, message)
        return {"ok": True, "channel": room.id, "ts": message["ts"]}

    def _streaming_message(self, params: dict[str, Any]) -> tuple[str, dict[str, Any]]:
        channel, message = self._bot_message(params, "cant_update_message")
        if not message.get("streaming"):
            raise _ApiError("message_not_in_streaming_state")
        return channel, message

    def _api_append_stream(self, params: dict[str, Any]) -> dict[str, Any]:
        with self._lock:
            channel, message = self._streaming_message(params)
            message["text"] = message.get("text", "") + _streamed_text(params)
        self._emit("message_updated", channel, message)
        return {"ok": True, "channel": channel, "ts": message["ts"]}

    def _api_stop_stream(self, params: dict[str, Any]) -> dict[str, Any]:
        with self._lock:
            channel, message = self._streaming_message(params)
            text = message.get("text", "") + _streamed_text(params)
            closing = _message_fields({"text": text, "blocks": params.get("blocks") or []})
            blocks = [{"type": "markdown", "text": text}, *closing.get("blocks", [])]
            if problem := block_problem(blocks):
                raise _ApiError(problem)
            message.pop("streaming", None)
            message["text"] = text
            message["blocks"] = blocks
            echo = self.events_for_message(channel, message)
        self._emit("message_updated", channel, message)
        for payload in echo:
            self._deliver_later(payload)
        return {"ok": True, "channel": channel, "ts": message["ts"], "message": message}

    def _api_delete(self, params: dict[str, Any]) -> dict[str, Any]:
        with self._lock:
            channel, message = self._bot_message(params, "cant_delete_message")
            self.channels[channel].messages.remove(message)
            echo = self._deleted_event(channel, message)
        self._emit("message_deleted", channel, {"ts": message["ts"]})
        self._deliver_later(echo)
        return {"ok": True, "channel": channel, "ts": message["ts"]}

    def _api_post_ephemeral(self, params: dict[str, Any]) -> dict[str, Any]:
        with self._lock:
            room = self._room_for_post(str(params.get("channel", "")))
            user = str(params.get("user", ""))
            if user not in self.users:
                raise _ApiError("user_not_found")
            fields = _message_fields(params)
            ephemeral = {"channel": room.id, "user": user, "ts": self._next_ts(), **fields}
            if params.get("thread_ts"):
                ephemeral["thread_ts"] = params["thread_ts"]
            self.ephemerals.append(ephemeral)
        self._emit("ephemeral_posted", room.id, ephemeral)
        return {"ok": True, "message_ts": ephemeral["ts"]}

    def _api_replies(self, params: dict[str, Any]) -> dict[str, Any]:
        with self._lock:
            channel = str(params.get("channel", ""))
            if channel not in self.channels:
                raise _ApiError("channel_not_found")
            ts = str(params.get("ts", ""))
            if self._find(channel, ts) is None:
                raise _ApiError("thread_not_found")
        return {"ok": True, "messages": self.messages(channel, ts), "has_more": False}

    def _api_conversations_info(self, params: dict[str, Any]) -> dict[str, Any]:
        with self._lock:
            room = self.channels.get(str(params.get("channel", "")))
            if room is None:
                raise _ApiError("channel_not_found")
            return {"ok": True, "channel": room.to_api(self.bot_user_id)}

    def _api_reactions_add(self, params: dict[str, Any]) -> dict[str, Any]:
        channel, ts, name = (
            str(params.get("channel", "")),
            str(params.get("timestamp", "")),
            str(params.get("name", "")),
        )
        with self._lock:
            if channel not in self.channels:
                raise _ApiError("channel_not_found")
            message = self._find(channel, ts)
            if message is None:
                raise _ApiError("message_not_found")
            if not self._react(message, self.bot_user_id, name, add=True):
                raise _ApiError("already_reacted")
            echo = self._reaction_event("reaction_added", self.bot_user_id, channel, message, name)
        self._emit(
            "reaction_added", channel, {"ts": ts, "user": self.bot_user_id, "reaction": name}
        )
        self._deliver_later(echo)
        return {"ok": True}

    def _api_set_status(self, params: dict[str, Any]) -> dict[str, Any]:
        channel, thread_ts = str(params.get("channel_id", "")), str(params.get("thread_ts", ""))
        status = str(params.get("status", ""))
        with self._lock:
            if not self.status_supported:
                raise _ApiError("missing_scope")
            if channel not in self.channels:
                raise _ApiError("channel_not_found")
            if self._find(channel, thread_ts) is None:
                raise _ApiError("invalid_thread_ts")
            if status:
                self.statuses[(channel, thread_ts)] = status
                self._status_since[(channel, thread_ts)] = self.clock()
            else:
                self.statuses.pop((channel, thread_ts), None)
        self._emit("status_set", channel, {"thread_ts": thread_ts, "status": status})
        return {"ok": True}

    def _api_upload_url(self, params: dict[str, Any]) -> dict[str, Any]:
        filename = str(params.get("filename", ""))
        try:
            length = int(params.get("length", ""))
        except ValueError:
            raise _ApiError("invalid_arguments") from None
        if not filename:
            raise _ApiError("invalid_arguments")
        with self._lock:
            file_id = f"F{next(self._ids):010d}"
            self.files[file_id] = {
                "id": file_id,
                "name": filename,
                "title": filename,
                "size": length,
                "alt_txt": str(params.get("alt_txt") or ""),
            }
        return {"ok": True, "upload_url": f"{self.base_url}/upload/{file_id}", "file_id": file_id}

    def respond(self, response_id: str, raw: bytes) -> None:
        """A POST to a slash command's response_url: recorded (an ephemeral reply by default)."""
        try:
            body = json.loads(raw or b"{}")
        except ValueError:
            body = {"text": raw.decode(errors="replace")}
        with self._lock:
            self.responses.append({"response_id": response_id, **body})
            channel, user = self._response_urls.get(response_id, ("", ""))
            ephemeral = {
                "channel": channel,
                "user": user,
                "ts": self._next_ts(),
                "text": str(body.get("text", "")),
                **({"blocks": body["blocks"]} if body.get("blocks") else {}),
            }
            self.ephemerals.append(ephemeral)
        self._emit("ephemeral_posted", channel or None, ephemeral)

    def receive_upload(self, file_id: str, data: bytes) -> bool:
        with self._lock:
            if file_id not in self.files:
                return False
            self._uploads[file_id] = data
            return True

    def file_content(self, file_id: str) -> bytes:
        with self._lock:
            return self._uploads[file_id]

    def _api_complete_upload(self, params: dict[str, Any]) -> dict[str, Any]:
        raw = params.get("files", "[]")
        items = json.loads(raw) if isinstance(raw, str) else raw
        channel = params.get("channel_id")
        shared = []
        with self._lock:
            for item in items:
                info = self.files.get(str(item.get("id")))
                if info is None or info["id"] not in self._uploads:
                    raise _ApiError("file_not_found")
                info["title"] = item.get("title") or info["name"]
                shared.append(dict(info))
            message = None
            if channel:
                room = self._room_for_post(str(channel))
                message = self._store_message(
                    room.id,
                    {
                        "user": self.bot_user_id,
                        "bot_id": self.bot_id,
                        "text": params.get("initial_comment") or "",
                        "files": shared,
                        "upload": True,
                    },
                    params.get("thread_ts") or None,
                )
        if message is not None:
            self._emit("file_shared", str(channel), message)
        return {"ok": True, "files": shared}

    def _api_files_info(self, params: dict[str, Any]) -> dict[str, Any]:
        with self._lock:
            info = self.files.get(str(params.get("file", "")))
            if info is None:
                raise _ApiError("file_not_found")
            return {"ok": True, "file": dict(info)}

    def _api_users_info(self, params: dict[str, Any]) -> dict[str, Any]:
        with self._lock:
            user = self.users.get(str(params.get("user", "")))
            if user is None:
                raise _ApiError("user_not_found")
            return {"ok": True, "user": user.to_api()}


@dataclass(frozen=True)
class _ApiAnswer:
    status: int
    body: dict[str, Any]
    headers: dict[str, str] = field(default_factory=dict)


class _ApiError(Exception):
    def __init__(self, error: str) -> None:
        super().__init__(error)
        self.error = error


def _message_fields(params: dict[str, Any]) -> dict[str, Any]:
    """text/blocks of a chat.* call, validated the way Slack does."""
    text = params.get("text")
    blocks = params.get("blocks")
    if isinstance(blocks, str):
        try:
            blocks = json.loads(blocks)
        except ValueError:
            raise _ApiError("invalid_blocks") from None
    if not text and not blocks:
        raise _ApiError("no_text")
    if text and len(str(text)) > MAX_TEXT_CHARS:
        raise _ApiError("msg_too_long")
    if blocks:
        if not isinstance(blocks, list) or len(blocks) > MAX_BLOCKS:
            raise _ApiError("invalid_blocks")
        for block in blocks:
            section_text = (block.get("text") or {}).get("text", "")
            if len(section_text) > MAX_SECTION_CHARS:
                raise _ApiError("invalid_blocks")
        problem = block_problem(blocks)
        if problem:
            raise _ApiError(problem)
    fields: dict[str, Any] = {"text": str(text or "")}
    if blocks:
        fields["blocks"] = blocks
    return fields


def _streamed_text(params: dict[str, Any]) -> str:
    """The text a chat.*Stream call adds: `markdown_text`, or its `markdown_text` chunks."""
    chunks = params.get("chunks") or []
    if isinstance(chunks, str):
        try:
            chunks = json.loads(chunks)
        except ValueError:
            raise _ApiError("invalid_chunks") from None
    pieces = [str(params.get("markdown_text") or "")]
    pieces += [str(c.get("text", "")) for c in chunks if c.get("type") == "markdown_text"]
    return "".join(pieces)


def _rich_text(text: str) -> list[dict[str, Any]]:
    """The `rich_text` block Slack's clients send with a person's message."""
    if not text:
        return []
    section = {"type": "rich_text_section", "elements": [{"type": "text", "text": text}]}
    return [{"type": "rich_text", "block_id": uuid.uuid4().hex[:5], "elements": [section]}]


def _on_surface(
    name: str,
) -> Callable[[SlackEmulator, dict[str, Any]], dict[str, Any]]:
    """A Web API method answered by the emulator's AISurface."""

    def method(emulator: SlackEmulator, params: dict[str, Any]) -> dict[str, Any]:
        try:
            answer: dict[str, Any] = getattr(emulator.surface, name)(params)
        except SurfaceError as exc:
            raise _ApiError(exc.error) from None
        return answer

    return method


_METHODS: dict[str, Callable[[SlackEmulator, dict[str, Any]], dict[str, Any]]] = {
    "auth.test": SlackEmulator._api_auth_test,
    "chat.postMessage": SlackEmulator._api_post_message,
    "chat.update": SlackEmulator._api_update,
    "chat.delete": SlackEmulator._api_delete,
    "chat.startStream": SlackEmulator._api_start_stream,
    "chat.appendStream": SlackEmulator._api_append_stream,
    "chat.stopStream": SlackEmulator._api_stop_stream,
    "chat.postEphemeral": SlackEmulator._api_post_ephemeral,
    "conversations.replies": SlackEmulator._api_replies,
    "conversations.info": SlackEmulator._api_conversations_info,
    "reactions.add": SlackEmulator._api_reactions_add,
    "assistant.threads.setStatus": SlackEmulator._api_set_status,
    "files.getUploadURLExternal": SlackEmulator._api_upload_url,
    "files.completeUploadExternal": SlackEmulator._api_complete_upload,
    "files.info": SlackEmulator._api_files_info,
    "users.info": SlackEmulator._api_users_info,
    "assistant.threads.setSuggestedPrompts": _on_surface("set_suggested_prompts"),
    "assistant.threads.setTitle": _on_surface("set_title"),
    "views.publish": _on_surface("views_publish"),
}

_API_PATH = re.compile(r"^/api/([A-Za-z.]+)$")
_UPLOAD_PATH = re.compile(r"^/upload/(F\d+)$")
_RESPONSE_PATH = re.compile(r"^/response/([0-9a-f]+)$")


def _handler_for(emulator: SlackEmulator) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, format: str, *args: Any) -> None:
            logger.debug("emulator: " + format, *args)

        def do_POST(self) -> None:
            url = urllib.parse.urlsplit(self.path)
            length = int(self.headers.get("Content-Length") or 0)
            raw = self.rfile.read(length) if length else b""
            upload = _UPLOAD_PATH.match(url.path)
            if upload:
                ok = emulator.receive_upload(upload.group(1), raw)
                self._reply(200 if ok else 404, f"OK - {len(raw)}".encode(), "text/plain")
                return
            response_url = _RESPONSE_PATH.match(url.path)
            if response_url:
                emulator.respond(response_url.group(1), raw)
                self._reply(200, b"ok", "text/plain")
                return
            match = _API_PATH.match(url.path)
            if not match:
                self._reply(404, b"not found", "text/plain")
                return
            params = _parse_params(url.query, raw, self.headers.get("Content-Type", ""))
            token = _bearer(self.headers.get("Authorization")) or params.pop("token", None)
            answer = emulator.handle_api(match.group(1), params, token)
            self._reply(
                answer.status, json.dumps(answer.body).encode(), "application/json", answer.headers
            )

        def _reply(
            self,
            status: int,
            body: bytes,
            content_type: str,
            headers: Mapping[str, str] | None = None,
        ) -> None:
            self.send_response(status)
            self.send_header("Content-Type", content_type)
            self.send_header("Content-Length", str(len(body)))
            for name, value in (headers or {}).items():
                self.send_header(name, value)
            self.end_headers()
            self.wfile.write(body)

    return Handler


def _bearer(header: str | None) -> str | None:
    if header and header.lower().startswith("bearer "):
        return header[7:].strip() or None
    return None


def _parse_params(query: str, raw: bytes, content_type: str) -> dict[str, Any]:
    params: dict[str, Any] = dict(urllib.parse.parse_qsl(query))
    if not raw:
        return params
    if content_type.startswith("application/json"):
        body = json.loads(raw)
        if isinstance(body, dict):
            params.update(body)
    else:
        params.update(urllib.parse.parse_qsl(raw.decode()))
    return params
