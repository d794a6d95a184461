"""The checks a Slack HTTP request passes before Bolt sees it: size, Content-Length, signature, body shape.

`SlackGate` is a small ASGI middleware in front of Bolt's ASGI handler. Bolt builds its
request (and parses the body) before its own signature check runs, and a malformed body then
raises inside Bolt with a traceback and a 500. Here the order is: size and framing, then the
signature over the raw bytes, then a parse that mirrors Bolt's own, then the types of the
fields Bolt reads, then the fields our listeners need. Anything malformed is a 4xx with one log line; an event Slack sent without a
field we need is acknowledged (200, so Slack does not retry) and ignored.
"""

from __future__ import annotations

import asyncio
import json
import logging
from collections.abc import Awaitable, Callable, Iterable, Mapping, MutableMapping
from dataclasses import dataclass
from typing import Any, Final
from urllib.parse import parse_qsl

from slack_sdk.signature import SignatureVerifier

logger = logging.getLogger(__name__)

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
ASGIApp = Callable[[Scope, Receive, Send], Awaitable[None]]

MAX_FORM_FIELDS: Final = 100
"""Slash commands and interactivity send about 15 form fields."""

REQUIRED_EVENT_FIELDS: Final[Mapping[str, tuple[str, ...]]] = {
    "app_mention": ("channel", "ts"),
    "message": ("channel", "ts"),
    "reaction_added": ("user", "reaction"),
    "reaction_removed": ("user", "reaction"),
}
"""The string fields our listeners read from each event they handle (see bot/slack/listeners)."""


_OBJECT_OR_TEXT: Final = (str, dict)
PAYLOAD_FIELD_TYPES: Final[Mapping[str, tuple[type, ...]]] = {
    "type": (str,),
    "event": (dict,),
    "authorizations": (list,),
    "event_id": (str,),
    "team_id": (str,),
    "api_app_id": (str,),
    "enterprise_id": (str,),
    "command": (str,),
    "team": _OBJECT_OR_TEXT,
    "user": _OBJECT_OR_TEXT,
    "channel": _OBJECT_OR_TEXT,
    "enterprise": _OBJECT_OR_TEXT,
    "is_enterprise_install": (bool, str),
}
"""Top-level fields that Bolt's request parsing and middleware read, with the types Slack
sends (null aside); another type makes Bolt raise, so such a payload is refused."""

EVENT_FIELD_TYPES: Final[Mapping[str, tuple[type, ...]]] = {
    "type": (str,),
    "subtype": (str,),
    "bot_id": (str,),
    "user": _OBJECT_OR_TEXT,
    "channel": _OBJECT_OR_TEXT,
    "team": _OBJECT_OR_TEXT,
    "ts": (str,),
    "thread_ts": (str,),
    "channel_type": (str,),
    "text": (str,),
    "reaction": (str,),
    "item_user": (str,),
    "item": (dict,),
    "message": (dict,),
}
"""The same for the fields of `event` that Bolt and our listeners read."""


class Rejected(Exception):
    """A request refused before Bolt: `status` and a short `reason` (sent as the body)."""

    def __init__(self, status: int, reason: str) -> None:
        super().__init__(reason)
        self.status = status
        self.reason = reason


class ClientGone(Exception):
    """The client disconnected before its body arrived: nobody is left to answer."""


@dataclass(frozen=True)
class GateLimits:
    """What one request may cost before it is refused."""

    max_body: int = 1_000_000
    """Bytes; Slack's event payloads are a few kB."""
    body_timeout_s: float = 10.0
    """From the end of the headers to the last body byte; Slack sends the body at once."""


def decode_headers(raw: Iterable[tuple[bytes, bytes]]) -> dict[str, str]:
    """Header names and values as text, the last of repeated names winning (as in Bolt's
    adapter, which would raise on undecodable bytes: HTTP allows any byte above 0x7f)."""
    try:
        return {name.decode("latin-1").lower(): value.decode("utf-8") for name, value in raw}
    except UnicodeDecodeError:
        raise Rejected(400, "header value is not UTF-8") from None


def declared_length(value: str | None, max_body: int) -> int | None:
    """Content-Length as a number (None when absent, e.g. chunked); 400 when it is not a
    plain non-negative decimal, 413 when it is over `max_body`."""
    if value is None:
        return None
    text = value.strip()
    if not (text.isascii() and text.isdigit()):
        raise Rejected(400, "bad Content-Length")
    length = int(text)
    if length > max_body:
        raise Rejected(413, "body too large")
    return length


async def read_body(receive: Receive, max_body: int, timeout_s: float) -> bytes:
    """The whole body, refusing more than `max_body` bytes (413) or a stall (408)."""
    chunks = bytearray()
    try:
        async with asyncio.timeout(timeout_s):
            while True:
                message = await receive()
                if message["type"] == "http.disconnect":
                    raise ClientGone
                chunks += message.get("body", b"")
                if len(chunks) > max_body:
                    raise Rejected(413, "body too large")
                if not message.get("more_body", False):
                    return bytes(chunks)
    except TimeoutError:
        raise Rejected(408, "body not received in time") from None


def verify_signature(verifier: SignatureVerifier, body: str, headers: Mapping[str, str]) -> None:
    """401 unless Slack's signature matches and its timestamp is within five minutes."""
    timestamp = headers.get("x-slack-request-timestamp", "")
    signature = headers.get("x-slack-signature", "")
    # SignatureVerifier calls int() on the timestamp, which raises on anything but digits.
    if not (timestamp.isascii() and timestamp.isdigit()) or not signature:
        raise Rejected(401, "invalid request signature")
    if not verifier.is_valid(body=body, timestamp=timestamp, signature=signature):
        raise Rejected(401, "invalid request signature")


def parse_slack_body(text: str, content_type: str | None) -> dict[str, Any]:
    """The payload exactly as Bolt will read it (same JSON-or-form choice), strictly: 400
    for JSON that does not parse, nests past the interpreter's limit or is not an object,
    and for form bodies that are not plain `key=value` pairs."""
    if not text:
        return {}
    if content_type == "application/json" or text.startswith("{"):
        return _json_object(text)
    try:
        fields = parse_qsl(
            text,
            keep_blank_values=True,
            strict_parsing=True,
            errors="strict",
            max_num_fields=MAX_FORM_FIELDS,
        )
    except ValueError:
        raise Rejected(400, "malformed form body") from None
    if "payload" in text:  # Bolt's own test for an interactivity payload
        payload = dict(fields).get("payload")
        return _json_object(payload) if payload is not None else {}
    return dict(fields)


def _json_object(text: str) -> dict[str, Any]:
    try:
        value = json.loads(text)
    except (ValueError, RecursionError):
        raise Rejected(400, "malformed JSON") from None
    if not isinstance(value, dict):
        raise Rejected(400, "JSON body is not an object")
    return value


def shape_problem(payload: Mapping[str, Any]) -> str | None:
    """A field that Bolt or our listeners read, present with a type Slack never sends."""
    if "event" in payload and not isinstance(payload["event"], dict):
        return "event is not an object"
    wrong = _wrong_types(payload, PAYLOAD_FIELD_TYPES)
    authorizations = payload.get("authorizations")
    if isinstance(authorizations, list) and not all(isinstance(a, dict) for a in authorizations):
        wrong.append("authorizations")
    event = payload.get("event")
    if isinstance(event, dict):
        wrong += [f"event.{name}" for name in _wrong_types(event, EVENT_FIELD_TYPES)]
    return f"wrong type for {', '.join(wrong)}" if wrong else None


def _wrong_types(values: Mapping[str, Any], types: Mapping[str, tuple[type, ...]]) -> list[str]:
    return [
        name
        for name, allowed in types.items()
        if values.get(name) is not None and not isinstance(values[name], allowed)
    ]


def event_problem(payload: Mapping[str, Any]) -> str | None:
    """What an Events API payload lacks that our listeners read, or None when it is usable."""
    if payload.get("type") != "event_callback":
        return None
    event = payload.get("event")
    if not isinstance(event, dict):
        return "event_callback without an event object"
    kind = event.get("type")
    if not isinstance(kind, str) or not kind:
        return "event without a type"
    missing = [name for name in REQUIRED_EVENT_FIELDS.get(kind, ()) if not _text(event.get(name))]
    if kind in ("reaction_added", "reaction_removed"):
        item = event.get("item")
        if not isinstance(item, dict):
            missing.append("item")
        elif item.get("type") == "message":
            missing += [f"item.{name}" for name in ("channel", "ts") if not _text(item.get(name))]
    return f"{kind} event without {', '.join(missing)}" if missing else None


def _text(value: object) -> bool:
    return isinstance(value, str) and bool(value)


async def respond(
    send: Send,
    status: int,
    body: bytes = b"",
    *,
    content_type: str = "text/plain; charset=utf-8",
    close: bool = False,
    extra: Iterable[tuple[bytes, bytes]] = (),
) -> None:
    """Send a whole response; `close` ends the connection (the body may be partly unread)."""
    headers = [
        (b"content-type", content_type.encode()),
        (b"content-length", str(len(body)).encode()),
        *extra,
    ]
    if close:
        headers.append((b"connection", b"close"))
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": body, "more_body": False})


def _replay(body: bytes, receive: Receive) -> Receive:
    """A `receive` that hands the already-read body to the next app, then the client's own."""
    sent = False

    async def replayed() -> Message:
        nonlocal sent
        if sent:
            return await receive()
        sent = True
        return {"type": "http.request", "body": body, "more_body": False}

    return replayed


class SlackGate:
    """ASGI middleware for Slack's request URL: checks a POST, then passes it to `inner`."""

    def __init__(
        self, inner: ASGIApp, *, signing_secret: str, limits: GateLimits | None = None
    ) -> None:
        if not signing_secret:
            raise ValueError("the Slack signing secret is empty")
        self.inner = inner
        self.limits = limits or GateLimits()
        self._verifier = SignatureVerifier(signing_secret)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.inner(scope, receive, send)
            return
        if scope["method"] != "POST":
            await respond(send, 405, b"Method Not Allowed", extra=[(b"allow", b"POST")])
            return
        try:
            body, payload = await self._checked(scope, receive)
        except ClientGone:
            logger.info("slack request: the client left before sending its body")
            return
        except Rejected as rejected:
            logger.info("slack request refused: %d %s", rejected.status, rejected.reason)
            await respond(send, rejected.status, rejected.reason.encode(), close=True)
            return
        problem = event_problem(payload)
        if problem is not None:
            logger.warning("ignored %s (event %s)", problem, str(payload.get("event_id", "?"))[:40])
            await respond(send, 200)
            return
        await self.inner(scope, _replay(body, receive), send)

    async def _checked(self, scope: Scope, receive: Receive) -> tuple[bytes, dict[str, Any]]:
        headers = decode_headers(scope["headers"])
        try:
            bytes(scope.get("query_string", b"")).decode("utf-8")
        except UnicodeDecodeError:
            raise Rejected(400, "query string is not UTF-8") from None
        length = declared_length(headers.get("content-length"), self.limits.max_body)
        body = await read_body(receive, self.limits.max_body, self.limits.body_timeout_s)
        if length is not None and len(body) != length:
            raise Rejected(400, "body length does not match Content-Length")
        try:
            text = body.decode("utf-8")
        except UnicodeDecodeError:
            raise Rejected(400, "body is not UTF-8") from None
        verify_signature(self._verifier, text, headers)
        content_type = headers.get("content-type")
        payload = parse_slack_body(text, content_type.split(";")[0] if content_type else None)
        problem = shape_problem(payload)
        if problem is not None:
            raise Rejected(400, f"malformed payload: {problem}")
        return body, payload
