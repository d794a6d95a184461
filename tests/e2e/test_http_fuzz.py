"""HTTP mode under malformed, hostile and stalled requests: the real server on a loopback port."""

from __future__ import annotations

import http.client
import json
import logging
import random
import socket
import time
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from typing import Any

import pytest

from bot.slack.http_server import HTTPLimits, SlackHTTPServer
from rig.scripted_llm import ScriptedChatModel
from rig.slack import ALICE, CHANNEL, SlackRig
from tests.e2e.conftest import RigFactory

IO_TIMEOUT_S = 30.0
"""Only bounds a failing test: a socket read that waits this long means the server hung."""


@pytest.fixture
def rig(make_rig: RigFactory, caplog: pytest.LogCaptureFixture) -> Iterator[SlackRig]:
    """A started rig; afterwards, no record anywhere carried a traceback or an error."""
    caplog.set_level(logging.INFO)
    yield make_rig(ScriptedChatModel())
    bad = [r for r in caplog.records if r.exc_info or r.levelno >= logging.ERROR]
    assert not bad, [f"{r.name}: {r.getMessage()}" for r in bad]


@contextmanager
def server_with(rig: SlackRig, **limits: Any) -> Iterator[SlackHTTPServer]:
    """A second server for the rig's app, with tighter limits."""
    server = SlackHTTPServer(
        rig.bot.app, port=0, health={"memory": rig.memory.ping}, limits=HTTPLimits(**limits)
    ).start()
    try:
        yield server
    finally:
        server.stop()


def connect(server: SlackHTTPServer) -> socket.socket:
    parts = urllib.parse.urlsplit(server.url)
    sock = socket.create_connection((parts.hostname or "127.0.0.1", parts.port or 80))
    sock.settimeout(IO_TIMEOUT_S)
    return sock


def request_bytes(
    headers: list[tuple[str, str | bytes]],
    body: bytes = b"",
    *,
    method: str = "POST",
    path: str = "/slack/events",
) -> bytes:
    head = [f"{method} {path} HTTP/1.1".encode(), b"Host: 127.0.0.1"]
    for name, value in headers:
        head.append(name.encode() + b": " + (value if isinstance(value, bytes) else value.encode()))
    return b"\r\n".join(head) + b"\r\n\r\n" + body


def read_status(sock: socket.socket) -> int | None:
    """The status of the next whole response on `sock`, or None when the server closed the
    connection without one."""
    response = http.client.HTTPResponse(sock)
    try:
        response.begin()
        response.read()
    except (http.client.HTTPException, ConnectionResetError):
        return None
    return response.status


def exchange(server: SlackHTTPServer, raw: bytes, *, then_eof: bool = False) -> int | None:
    """Send `raw` on a fresh connection and read the response status (None: no response).
    `then_eof` ends the stream after `raw`, for bytes that may not even finish a request head
    (the server would otherwise wait for the rest until its head deadline)."""
    with connect(server) as sock:
        try:
            sock.sendall(raw)
            if then_eof:
                sock.shutdown(socket.SHUT_WR)
        except OSError:
            pass  # the server may refuse and close before reading everything
        return read_status(sock)


def signed(
    rig: SlackRig,
    body: bytes,
    *,
    content_type: str = "application/json",
    timestamp: int | None = None,
    secret: str | None = None,
    extra: list[tuple[str, str | bytes]] | None = None,
) -> bytes:
    ts = int(time.time()) if timestamp is None else timestamp
    return request_bytes(
        [
            ("Content-Type", content_type),
            ("Content-Length", str(len(body))),
            ("X-Slack-Request-Timestamp", str(ts)),
            ("X-Slack-Signature", rig.emulator.sign(body, ts, secret)),
            *(extra or []),
        ],
        body,
    )


def health_status(server: SlackHTTPServer) -> int:
    try:
        with urllib.request.urlopen(server.url + "/healthz", timeout=IO_TIMEOUT_S) as response:
            return int(response.status)
    except urllib.error.HTTPError as failed:
        return int(failed.code)


def mention_payload(rig: SlackRig) -> dict[str, Any]:
    message, _ = rig.emulator.post_message(ALICE, CHANNEL, f"<@{rig.bot_user}> hi", deliver=False)
    return rig.emulator.events_for_message(CHANNEL, message)[0]


STALLED_HEAD = b"POST /slack/events HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: applic"


def test_two_hundred_stalled_heads_do_not_stop_health_or_events(rig: SlackRig) -> None:
    with ExitStack() as stack:
        for _ in range(200):
            sock = stack.enter_context(connect(rig.server))
            sock.sendall(STALLED_HEAD)
        assert health_status(rig.server) == 200
        assert rig.emulator.url_verification("still-here").status == 200


def test_stalled_heads_are_closed_at_the_head_deadline(rig: SlackRig) -> None:
    with server_with(rig, head_timeout_s=0.2, max_connections=20) as server, ExitStack() as stack:
        stalled = [stack.enter_context(connect(server)) for _ in range(30)]
        for sock in stalled:
            sock.sendall(STALLED_HEAD)
        # Each read returns end-of-stream once the server drops the connection; without a
        # head deadline it would wait IO_TIMEOUT_S and raise.
        assert all(sock.recv(1) == b"" for sock in stalled)
        assert health_status(server) == 200


def test_a_stalled_keep_alive_connection_is_closed_too(rig: SlackRig) -> None:
    with server_with(rig, head_timeout_s=0.2, keep_alive_s=60) as server, connect(server) as sock:
        sock.sendall(request_bytes([], method="GET", path="/healthz"))
        assert read_status(sock) == 200
        sock.sendall(STALLED_HEAD)  # a second request on the same connection, never finished
        assert sock.recv(4096) == b""


@pytest.mark.parametrize(
    ("length", "status"),
    [("-1", 400), ("abc", 400), ("1e3", 400), ("", 400), ("99999999999", 413)],
)
def test_bad_content_length(rig: SlackRig, length: str, status: int) -> None:
    body = b'{"type": "url_verification", "challenge": "x"}'
    raw = request_bytes([("Content-Type", "application/json"), ("Content-Length", length)], body)
    assert exchange(rig.server, raw) == status


def test_conflicting_content_lengths_get_400(rig: SlackRig) -> None:
    raw = request_bytes([("Content-Length", "2"), ("Content-Length", "3")], b"{}")
    assert exchange(rig.server, raw) == 400


def test_a_body_shorter_than_its_content_length_times_out_with_408(rig: SlackRig) -> None:
    with server_with(rig, body_timeout_s=0.2) as server:
        raw = request_bytes([("Content-Length", "100")], b'{"type": "ur')
        assert exchange(server, raw) == 408
        assert health_status(server) == 200


def test_a_body_longer_than_its_content_length_fails_the_signature(rig: SlackRig) -> None:
    body = json.dumps(mention_payload(rig)).encode()
    raw = signed(rig, body).replace(
        f"Content-Length: {len(body)}".encode(), f"Content-Length: {len(body) - 5}".encode()
    )
    assert exchange(rig.server, raw) == 401


def test_oversized_bodies_get_413_declared_or_chunked(rig: SlackRig) -> None:
    with server_with(rig, max_body=1000) as server:
        declared = request_bytes([("Content-Length", "5000")], b"{" * 5000)
        chunk = b"{" * 600
        chunked = request_bytes(
            [("Transfer-Encoding", "chunked")],
            b"".join(b"%x\r\n%s\r\n" % (len(chunk), chunk) for _ in range(3)) + b"0\r\n\r\n",
        )
        assert (exchange(server, declared), exchange(server, chunked)) == (413, 413)


def test_invalid_utf8_in_body_or_headers_gets_400(rig: SlackRig) -> None:
    assert exchange(rig.server, signed(rig, b'{"type": "\xff\xfe"}')) == 400
    body = json.dumps(mention_payload(rig)).encode()
    assert exchange(rig.server, signed(rig, body, extra=[("X-Note", b"caf\xe9")])) == 400
    assert rig.emulator.calls_to("chat.postMessage") == []


def test_deep_json_is_refused_after_the_signature(rig: SlackRig) -> None:
    deep_array = b"[" * 100_000 + b"]" * 100_000
    deep_object = b'{"a":' * 100_000 + b"1" + b"}" * 100_000
    assert exchange(rig.server, signed(rig, deep_array)) == 400
    assert exchange(rig.server, signed(rig, deep_object)) == 400
    # Unsigned, the same body is refused for its signature: nothing was parsed.
    unsigned = request_bytes(
        [("Content-Type", "application/json"), ("Content-Length", str(len(deep_object)))],
        deep_object,
    )
    assert exchange(rig.server, unsigned) == 401


@pytest.mark.parametrize(
    ("content_type", "body"),
    [
        ("application/json", b"[1, 2, 3]"),
        ("application/json", b'"text"'),
        ("application/json", b'{"type": "event_callback", '),
        ("application/json", b"NaN-ish garbage"),
        ("application/x-www-form-urlencoded", b"payload=%7Bnot-json"),
        ("application/x-www-form-urlencoded", b"payload=%5B1%5D"),
        ("application/x-www-form-urlencoded", b"command&&text=x"),
        ("application/x-www-form-urlencoded", b"text=%ff%fe"),
        ("application/json", b'{"type": "event_callback", "event": 5}'),
        ("application/json", b'{"type": "event_callback", "event": {"type": 5}}'),
        (
            "application/json",
            b'{"type": "event_callback", "event": {"type": "app_mention", "channel": 42}}',
        ),
        ("application/json", b'{"type": {"channel": {}}}'),
        ("application/json", b'{"type": "event_callback", "authorizations": 5}'),
        ("application/json", b'{"type": "event_callback", "authorizations": [1]}'),
        ("application/json", b'{"user": 5, "channel": [], "team": 3}'),
    ],
)
def test_malformed_signed_bodies_get_400(rig: SlackRig, content_type: str, body: bytes) -> None:
    assert exchange(rig.server, signed(rig, body, content_type=content_type)) == 400


def _without(payload: dict[str, Any], *path: str) -> dict[str, Any]:
    broken: dict[str, Any] = json.loads(json.dumps(payload))
    target: Any = broken
    for key in path[:-1]:
        target = target[key]
    del target[path[-1]]
    return broken


def test_events_missing_fields_are_acknowledged_ignored_and_logged_once(
    rig: SlackRig, caplog: pytest.LogCaptureFixture
) -> None:
    payload = mention_payload(rig)
    reaction = {
        **payload,
        "event_id": "Ev0REACTION",
        "event": {"type": "reaction_added", "user": ALICE, "reaction": "+1"},
    }
    broken = [
        _without(payload, "event", "channel"),
        _without(payload, "event", "ts"),
        {**payload, "event": {**payload["event"], "channel": {"id": CHANNEL}}},
        {**payload, "event": {**payload["event"], "ts": ""}},
        _without(payload, "event", "type"),
        _without(payload, "event"),
        {**payload, "event_id": "Ev0MSG", "event": {"type": "message", "user": ALICE, "ts": "1.0"}},
        reaction,
        {**reaction, "event": {**reaction["event"], "item": {"type": "message", "ts": "1.0"}}},
    ]
    caplog.clear()
    statuses = [rig.emulator.deliver(p).status for p in broken]
    rig.settle()
    assert statuses == [200] * len(broken)
    ignored = [
        r for r in caplog.records if r.name == "bot.slack.http_gate" and "ignored" in r.message
    ]
    assert len(ignored) == len(broken)
    assert rig.emulator.calls_to("chat.postMessage") == []


def test_bad_signatures_and_replayed_timestamps_get_401(rig: SlackRig) -> None:
    body = json.dumps(mention_payload(rig)).encode()
    now = int(time.time())
    attempts = [
        signed(rig, body, secret="not-the-secret"),
        signed(rig, body, timestamp=now - 6 * 60),  # a captured request replayed later
        signed(rig, body, timestamp=now + 6 * 60),
        signed(rig, body).replace(b"X-Slack-Request-Timestamp: ", b"X-Slack-Request-Timestamp: x"),
        signed(rig, body).replace(b"X-Slack-Signature: v0=", b"X-Slack-Signature: v1="),
        request_bytes([("Content-Length", str(len(body)))], body),
    ]
    assert [exchange(rig.server, raw) for raw in attempts] == [401] * len(attempts)
    rig.settle()
    assert rig.emulator.calls_to("chat.postMessage") == []


def test_a_request_replayed_within_the_window_is_answered_once(
    make_rig: RigFactory,
) -> None:
    from rig.slack import answer_text
    from tests.e2e.test_slack_delivery import slow_model

    rig = make_rig(slow_model(0.0))
    payload = mention_payload(rig)
    raw = signed(rig, json.dumps(payload).encode())
    assert [exchange(rig.server, raw) for _ in range(3)] == [200, 200, 200]
    [answer] = rig.wait_answers(CHANNEL, payload["event"]["ts"])
    assert "Found:" in answer_text(answer)


def test_wrong_paths_and_methods(rig: SlackRig) -> None:
    assert exchange(rig.server, request_bytes([], method="GET")) == 405
    assert exchange(rig.server, request_bytes([], method="GET", path="/nope")) == 404
    assert exchange(rig.server, request_bytes([("Content-Length", "0")], path="/healthz")) == 405
    tls_hello = b"\x16\x03\x01\x02\x00\x01\x00\x01\xfc\x03\x03"
    assert exchange(rig.server, tls_hello, then_eof=True) in (400, None)


def _random_value(rng: random.Random, depth: int = 0) -> Any:
    kind = rng.randrange(7 if depth < 3 else 4)
    if kind == 0:
        return rng.randrange(-(10**12), 10**12)
    if kind == 1:
        return "".join(rng.choice("aZ09 <@>\\\"'\x00é☃") for _ in range(rng.randrange(12)))
    if kind == 2:
        return rng.choice([None, True, False, 1.5e308])
    if kind == 3:
        return ""
    if kind in (4, 5):
        keys = ["type", "channel", "ts", "user", "text", "item", "event", "event_id", "team_id"]
        return {rng.choice(keys): _random_value(rng, depth + 1) for _ in range(rng.randrange(5))}
    return [_random_value(rng, depth + 1) for _ in range(rng.randrange(4))]


def _random_event(rng: random.Random) -> dict[str, Any]:
    """An Events API payload with a random event that our listeners cannot act on: an
    unknown type, or a handled type with at least one field missing or of the wrong type."""
    kind = rng.choice(["app_mention", "message", "reaction_added", "team_join", "x" * 300])
    event: dict[str, Any] = {"type": kind, "user": ALICE, "channel": CHANNEL, "ts": "1.0"}
    event |= {k: _random_value(rng) for k in rng.sample(["text", "item", "reaction", "bot_id"], 2)}
    event[rng.choice(["channel", "ts", "user"])] = rng.choice([None, 7, [], {}, ""])
    body: dict[str, Any] = {"type": "event_callback", "event_id": f"Ev{rng.random()}"}
    body |= {"event": event, "team_id": _random_value(rng)}
    return body


def test_random_garbage_is_never_a_500_and_the_server_stays_up(rig: SlackRig) -> None:
    rng = random.Random(1313)
    statuses: list[int | None] = []
    for _ in range(60):
        noise = bytes(rng.randrange(256) for _ in range(rng.randrange(1, 300)))
        statuses.append(exchange(rig.server, noise, then_eof=True))
        statuses.append(exchange(rig.server, request_bytes([("Content-Length", "0")]) + noise))
        statuses.append(exchange(rig.server, signed(rig, noise, content_type=rng.choice(
            ["application/json", "application/x-www-form-urlencoded", "text/plain"]
        ))))  # fmt: skip
        value = json.dumps(_random_value(rng)).encode()
        statuses.append(exchange(rig.server, signed(rig, value)))
        statuses.append(exchange(rig.server, signed(rig, json.dumps(_random_event(rng)).encode())))
    rig.settle()
    assert not [s for s in statuses if s is not None and s >= 500], statuses
    assert set(statuses) <= {None, 200, 400, 401, 404, 405, 413}, set(statuses)
    assert health_status(rig.server) == 200
    assert rig.emulator.calls_to("chat.postMessage") == []
