"""The emulator's event side: what people do (post, edit, react, click, run a slash command)
and the Events API payloads that follows, signed and POSTed to the app (or wrapped for Socket
Mode), with Slack's retries."""

from __future__ import annotations

import hashlib
import hmac
import json
import logging
import time
import urllib.error
import urllib.parse
import urllib.request
import uuid
from collections.abc import Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from bot.playground.emulator_ai import AISurface
from bot.playground.emulator_state import (
    Delivery,
    WorkspaceState,
    _rich_text,
)

logger = logging.getLogger(__name__)


class EventDelivery(WorkspaceState):
    """People's actions in the workspace and the signed event deliveries they cause."""

    # ---- people ----------------------------------------------------------------------

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
