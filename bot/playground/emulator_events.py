"""The emulator's event side: what people do (post, edit, react, click, run a slash command)
and the Events API payloads that follows, signed and POSTed to the app or sent as Socket Mode
envelopes (`transport`), with Slack's retries and a record of every acknowledgement."""

from __future__ import annotations

import hashlib
import hmac
import http.client
import json
import logging
import select
import time
import urllib.parse
import uuid
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import TYPE_CHECKING, Any

from bot.playground.emulator_acks import ack_problems
from bot.playground.emulator_ai import AISurface
from bot.playground.emulator_state import (
    Delivery,
    DeliveryKind,
    WorkspaceState,
    _AwaitedAck,
    _HttpProbe,
)
from bot.playground.emulator_text import Encoded, encode_typed

if TYPE_CHECKING:
    from bot.playground.emulator_socket import SocketConnection, SocketModeServer

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

        `text` is what the person typed; it is stored and delivered as Slack sends it
        (emulator_text: `& < >` escaped, links, e-mails, `@user`, `#channel` and `@here` as
        `<…>` entities; wire text such as `<@U…>` passes unchanged), with the same message
        as `rich_text` blocks; with `files` (file names) it is a `file_share` message with
        those files attached."""
        encoded = self.encoded(text)
        fields: dict[str, Any] = {"user": user, "text": encoded.text, "blocks": encoded.blocks()}
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

    def encoded(self, typed: str) -> Encoded:
        """`typed` as Slack sends it, with this workspace's people and channels by name."""
        with self._lock:
            users = {u.name: u.id for u in self.users.values()}
            channels = {c.name: c.id for c in self.channels.values() if c.kind != "im"}
        return encode_typed(typed, users=users, channels=channels)

    def edit_message(self, channel: str, ts: str, text: str) -> list[Delivery]:
        """A person edits a message (`text` as typed): `message_changed` is delivered."""
        encoded = self.encoded(text)
        with self._lock:
            message = self._require(channel, ts)
            previous = dict(message)
            message["text"] = encoded.text
            if "blocks" in message:
                message["blocks"] = encoded.blocks()
            message["edited"] = {"user": message.get("user"), "ts": self._next_ts()}
            payload = self._changed_event(channel, message, previous)
        self._emit("message_updated", channel, message)
        return self._deliver_subscribed([payload])

    def delete_message(self, channel: str, ts: str) -> list[Delivery]:
        """A person deletes a message: `message_deleted` is delivered."""
        with self._lock:
            message = self._require(channel, ts)
            self.channels[channel].messages.remove(message)
            payload = self._deleted_event(channel, message)
        self._emit("message_deleted", channel, {"ts": ts})
        return self._deliver_subscribed([payload])

    def add_reaction(self, user: str, channel: str, ts: str, name: str) -> Delivery | None:
        """`user` reacts; `reaction_added` is delivered (None when already reacted)."""
        with self._lock:
            message = self._require(channel, ts)
            if not self._react(message, user, name, add=True):
                return None
            payload = self._reaction_event("reaction_added", user, channel, message, name)
        self._emit("reaction_added", channel, {"ts": ts, "user": user, "reaction": name})
        return next(iter(self._deliver_subscribed([payload])), None)

    def remove_reaction(self, user: str, channel: str, ts: str, name: str) -> Delivery | None:
        with self._lock:
            message = self._require(channel, ts)
            if not self._react(message, user, name, add=False):
                return None
            payload = self._reaction_event("reaction_removed", user, channel, message, name)
        self._emit("reaction_removed", channel, {"ts": ts, "user": user, "reaction": name})
        return next(iter(self._deliver_subscribed([payload])), None)

    # ---- event delivery --------------------------------------------------------------

    def _deliver_subscribed(self, payloads: list[dict[str, Any]]) -> list[Delivery]:
        """Deliver the payloads whose event the app subscribes to (`events`)."""
        return [self.deliver(p) for p in payloads if self.subscribed(p["event"])]

    def events_for_message(self, channel: str, message: dict[str, Any]) -> list[dict[str, Any]]:
        """The Events API payloads Slack sends for a new message, in Slack's usual order: an
        `app_mention` outside DMs when the bot is mentioned, then the `message` event, each
        only when the app subscribes to it."""
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
            return [p for p in payloads if self.subscribed(p["event"])]

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
        retry_reason: str | None = None,
        timestamp: int | None = None,
        signing_secret: str | None = None,
        url: str | None = None,
        first_retry: int = 0,
    ) -> Delivery:
        """POST `payload` to the app (or to `url`: another instance of it), signed — or, with
        `transport` "socket" and no `url`, send it as an events_api envelope. With `retries`,
        also send Slack's retries (`X-Slack-Retry-Num` or `retry_attempt` 1..retries, reason
        "http_timeout" or "timeout" unless `retry_reason`) — all at once when `concurrent`;
        `first_retry` numbers a lone later retry. Returns the first attempt's delivery; every
        attempt is in `deliveries`."""
        if retry_reason is None:
            retry_reason = "timeout" if self._over_socket(url) else "http_timeout"
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
        """Slack's check of a new Request URL (HTTP only: Socket Mode has none)."""
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
            self.app_url,
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
        if self._over_socket():
            return self._socket_deliver("slash_commands", fields)
        body = urllib.parse.urlencode(fields).encode()
        ts = int(time.time())
        headers = {
            "Content-Type": "application/x-www-form-urlencoded",
            "X-Slack-Request-Timestamp": str(ts),
            "X-Slack-Signature": self.sign(body, ts),
        }
        return self._post(body, headers, fields, 0, kind="slash_commands")

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
        if self._over_socket():
            return self._socket_deliver("interactive", payload)
        body = urllib.parse.urlencode({"payload": json.dumps(payload)}).encode()
        ts_now = int(time.time())
        headers = {
            "Content-Type": "application/x-www-form-urlencoded",
            "X-Slack-Request-Timestamp": str(ts_now),
            "X-Slack-Signature": self.sign(body, ts_now),
        }
        return self._post(body, headers, payload, 0, kind="interactive")

    def send_raw(self, body: bytes, headers: Mapping[str, str]) -> Delivery:
        """POST arbitrary bytes and headers to the app (bad signatures, stale timestamps);
        HTTP whatever the `transport`."""
        return self._post(body, dict(headers), {}, 0)

    def sign(self, body: bytes, timestamp: int, secret: str | None = None) -> str:
        basestring = b"v0:" + str(timestamp).encode() + b":" + body
        key = (secret or self.signing_secret).encode()
        return "v0=" + hmac.new(key, basestring, hashlib.sha256).hexdigest()

    def socket_envelope(
        self,
        payload: dict[str, Any],
        *,
        kind: DeliveryKind = "events_api",
        retry_attempt: int = 0,
        retry_reason: str = "",
    ) -> dict[str, Any]:
        """The Socket Mode message Slack sends for a payload: events_api envelopes carry the
        retry fields; slash commands (and modal submissions) accept a response payload."""
        envelope: dict[str, Any] = {
            "envelope_id": str(uuid.uuid4()),
            "payload": payload,
            "type": kind,
            "accepts_response_payload": kind == "slash_commands"
            or (
                kind == "interactive"
                and payload.get("type") in ("view_submission", "block_suggestion")
            ),
        }
        if kind == "events_api":
            envelope["retry_attempt"] = retry_attempt
            envelope["retry_reason"] = retry_reason
        return envelope

    # ---- Socket Mode -----------------------------------------------------------------

    def connections_url(self) -> str:
        """A fresh one-time websocket URL (what `apps.connections.open` answers)."""
        return self._socket_server().new_url()

    @property
    def socket_connections(self) -> list[SocketConnection]:
        """The app's Socket Mode connections so far, oldest first."""
        with self._lock:
            server = self._socket
        return server.connections if server is not None else []

    def socket_disconnect(
        self, reason: str = "refresh_requested", *, close_after_s: float | None = 10.0
    ) -> int:
        """Send `{"type": "disconnect", "reason": …}` on every live connection, as Slack does
        before it recycles one; no envelope goes there afterwards and it is closed after
        `close_after_s` unless the app closed it. Returns how many connections were asked."""
        with self._lock:
            server = self._socket
        return server.disconnect(reason, close_after_s) if server is not None else 0

    def socket_close_connections(self, code: int = 1001) -> None:
        """Close every Socket Mode connection from Slack's side (1001: going away)."""
        with self._lock:
            server = self._socket
        if server is not None:
            for connection in server.connections:
                server.close(connection, code)

    def lose_next_acks(self, n: int = 1) -> None:
        """Drop the next `n` Socket Mode acks as if the network lost them: the envelopes time
        out and, for events, are sent again with `retry_attempt` + 1."""
        with self._lock:
            self._acks_to_lose += n

    def ack_problems(self, deliveries: list[Delivery] | None = None) -> list[str]:
        """Broken acknowledgement rules in `deliveries` (default: all): see emulator_acks."""
        with self._lock:
            chosen = list(self.deliveries if deliveries is None else deliveries)
            calls = list(self.calls)
        return ack_problems(chosen, calls, self)

    def _observe_acks(self) -> None:
        """Record every ack the app has already sent — an HTTP response whose first bytes are
        in, an envelope ack in a socket's buffer — before the caller records what it saw.
        The Web API calls this before recording a call: an ack sent before the call is then
        recorded first, whatever the order the threads that read them were scheduled in."""
        with self._lock:
            server = self._socket
            probes = list(self._probes)
        if server is not None:
            server.drain()
        for probe in probes:
            self._stamp_if_answered(probe)

    def _stamp_if_answered(self, probe: _HttpProbe, wait_s: float = 0.0) -> None:
        if probe.seq is not None:
            return
        try:
            readable, _, _ = select.select([probe.sock], [], [], wait_s)
        except (OSError, ValueError):  # closed meanwhile: its thread records it
            return
        if readable:
            with self._lock:
                if probe.seq is None:
                    probe.seq = self._next_seq()

    def _over_socket(self, url: str | None = None) -> bool:
        return self.transport == "socket" and url is None

    def _socket_server(self) -> SocketModeServer:
        from bot.playground.emulator_socket import SocketModeServer

        with self._lock:
            if self._socket is None:
                self._socket = SocketModeServer(
                    app_id=self.api_app_id, on_ack=self._on_socket_ack, on_change=self._poke
                ).start()
            return self._socket

    def _stop_socket(self) -> None:
        with self._lock:
            server, self._socket = self._socket, None
        if server is not None:
            server.stop()

    def _poke(self) -> None:
        with self._changed:
            self._changed.notify_all()

    def _socket_deliver(
        self,
        kind: DeliveryKind,
        payload: dict[str, Any],
        retry_num: int = 0,
        retry_reason: str = "",
    ) -> Delivery:
        """Send one envelope on the app's newest live connection and wait `ack_timeout_s` for
        its ack. An events_api envelope left unacked is sent again later (Slack's retry)."""
        server = self._socket_server()
        retry_reason = retry_reason if retry_num else ""
        envelope = self.socket_envelope(
            payload, kind=kind, retry_attempt=retry_num, retry_reason=retry_reason
        )
        envelope_id = envelope["envelope_id"]
        waiter = _AwaitedAck(sent_at=time.monotonic())
        with self._lock:
            self._pending += 1
            self._awaiting[envelope_id] = waiter
        try:
            deadline = time.monotonic() + self.ack_timeout_s
            connection = server.wait_live(self.ack_timeout_s)
            sent_seq = self._next_seq()
            waiter.sent_at = time.monotonic()
            if connection is not None and server.send(connection, envelope):
                waiter.done.wait(max(0.0, deadline - time.monotonic()))
            with self._lock:
                self._awaiting.pop(envelope_id, None)
                acked = waiter.acked_seq is not None
                delivery = Delivery(
                    payload,
                    200 if acked else 0,
                    json.dumps(waiter.payload) if waiter.payload else "",
                    (waiter.acked_at if acked else time.monotonic()) - waiter.sent_at,
                    retry_num,
                    kind=kind,
                    transport="socket",
                    envelope_id=envelope_id,
                    retry_reason=retry_reason,
                    sent_seq=sent_seq,
                    acked_seq=waiter.acked_seq,
                )
                self.deliveries.append(delivery)
        finally:
            with self._changed:
                self._pending -= 1
                self._changed.notify_all()
        self._emit(
            "event_delivered",
            None,
            {
                "event_id": payload.get("event_id"),
                "status": delivery.status,
                "elapsed_s": delivery.elapsed_s,
            },
        )
        if not acked and kind == "events_api":
            self._retry_if_due(payload, retry_num)
        return delivery

    def _on_socket_ack(self, envelope_id: str, payload: dict[str, Any] | None, at: float) -> None:
        seq = self._next_seq()
        with self._lock:
            waiter = self._awaiting.get(envelope_id)
            if waiter is None or waiter.done.is_set():
                self.stray_acks.append(envelope_id)
                return
            if self._acks_to_lose:
                self._acks_to_lose -= 1
                self.lost_acks.append(envelope_id)
                return
            waiter.acked_seq, waiter.acked_at, waiter.payload = seq, at, payload
            waiter.done.set()

    def _retry_if_due(
        self, payload: dict[str, Any], retry_num: int, url: str | None = None
    ) -> None:
        """Slack's retry of an event whose attempt `retry_num` was not acked in time, on the
        same transport (to `url` when given), without blocking the caller: up to
        `event_retries` of them, reason "timeout" over Socket Mode, "http_timeout" over HTTP."""
        if retry_num >= self.event_retries:
            return
        reason = "timeout" if self._over_socket(url) else "http_timeout"
        self._in_background(
            lambda: self._send(payload, retry_num + 1, reason, None, None, url), "retry"
        )

    def _in_background(self, work: Callable[[], object], what: str) -> None:
        """Run `work` on the sender thread, counted as pending until it is done (`wait_idle`)."""
        with self._lock:
            self._pending += 1

        def send() -> None:
            try:
                work()
            except Exception as exc:
                logger.debug("emulator %s failed: %s", what, exc)
            finally:
                with self._changed:
                    self._pending -= 1
                    self._changed.notify_all()

        try:
            self._sender.submit(send)
        except RuntimeError:  # stopped
            with self._changed:
                self._pending -= 1
                self._changed.notify_all()

    def _send(
        self,
        payload: dict[str, Any],
        retry_num: int,
        retry_reason: str,
        timestamp: int | None,
        secret: str | None,
        url: str | None = None,
    ) -> Delivery:
        if self._over_socket(url):
            return self._socket_deliver("events_api", payload, retry_num, retry_reason)
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
        return self._post(body, headers, payload, retry_num, url, retry_reason=retry_reason)

    def _post(
        self,
        body: bytes,
        headers: dict[str, str],
        payload: dict[str, Any],
        retry_num: int,
        url: str | None = None,
        *,
        kind: DeliveryKind = "events_api",
        retry_reason: str = "",
    ) -> Delivery:
        target = url or self.app_url
        if not target or not target.startswith(("http://", "https://")):
            raise RuntimeError("set emulator.app_url to the app's http(s) /slack/events URL")
        parts = urllib.parse.urlsplit(target)
        connection_class = (
            http.client.HTTPSConnection if parts.scheme == "https" else http.client.HTTPConnection
        )
        connection = connection_class(parts.hostname or "127.0.0.1", parts.port, timeout=30)
        path = parts.path + (f"?{parts.query}" if parts.query else "")
        with self._lock:
            self._pending += 1
        probe: _HttpProbe | None = None
        try:
            connection.connect()
            # Watched before the request leaves, so no answer can slip past _observe_acks.
            probe = _HttpProbe(connection.sock)
            with self._lock:
                self._probes.add(probe)
            sent_seq = self._next_seq()
            started = time.perf_counter()
            connection.request("POST", path, body=body, headers=headers)
            self._stamp_if_answered(probe, wait_s=self.ack_timeout_s)
            if probe.seq is None:
                # Past the deadline Slack stops waiting: the attempt failed, whatever the app
                # sends later (the connection is closed under it).
                status, text = 0, ""
            else:
                response = connection.getresponse()
                status, text = response.status, response.read().decode()
            elapsed = time.perf_counter() - started
            delivery = Delivery(
                payload,
                status,
                text,
                elapsed,
                retry_num,
                kind=kind,
                retry_reason=retry_reason if retry_num else "",
                sent_seq=sent_seq,
                acked_seq=probe.seq if 200 <= status < 300 else None,
            )
            with self._lock:
                self.deliveries.append(delivery)
        finally:
            connection.close()
            with self._lock:
                if probe is not None:
                    self._probes.discard(probe)
                self._pending -= 1
        self._emit(
            "event_delivered",
            None,
            {"event_id": payload.get("event_id"), "status": status, "elapsed_s": elapsed},
        )
        if status == 0 and kind == "events_api" and payload.get("type") == "event_callback":
            self._retry_if_due(payload, retry_num, url)
        return delivery

    def _deliver_later(self, payload: dict[str, Any]) -> None:
        """Send an echo event without blocking the API request that caused it."""
        if not self.echo_bot_events or (not self.app_url and not self._over_socket()):
            return
        if not self.subscribed(payload["event"]):
            return
        self._in_background(lambda: self.deliver(payload), "echo delivery")

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
