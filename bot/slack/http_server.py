"""HTTP mode: Bolt's ASGI adapter behind `SlackGate` on uvicorn, serving `/slack/events` and `/healthz`.

uvicorn (with the strict h11 parser) brings keep-alive timeouts, a header size limit, a
connection limit and one event loop instead of a thread per connection; `SlackGate` checks
every request before Bolt parses it. uvicorn has no deadline for a request head (a client
that sends half its headers and stalls keeps its slot), so the protocol here adds one.
Bolt's synchronous `App` dispatches on the event loop, as Bolt's adapter does: our listeners
only claim a delivery (one SQLite write) and enqueue, and handing each dispatch to a thread
pool doubled the ack latency under a burst (every hand-off waits for the GIL). The health
checks, which may wait on a sick engine for ever, run on threads of their own and are waited
for at most `HTTPLimits.health_wait_s` (`bot/slack/health.py`). TLS and scale-out belong to
the reverse proxy or load balancer in front.
"""

from __future__ import annotations

import asyncio
import json
import logging
import socket
import threading
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, cast

import h11
import uvicorn
from slack_bolt import App, BoltResponse
from slack_bolt.adapter.asgi import SlackRequestHandler
from slack_bolt.adapter.asgi.http_request import AsgiHttpRequest
from slack_bolt.request import BoltRequest
from uvicorn.protocols.http.h11_impl import H11Protocol

from bot.slack.delivery import after_response
from bot.slack.health import HealthCheck, HealthChecks
from bot.slack.http_gate import ASGIApp, GateLimits, Receive, Scope, Send, SlackGate, respond

logger = logging.getLogger(__name__)

EVENTS_PATH = "/slack/events"
HEALTH_PATH = "/healthz"
MAX_BODY = GateLimits.max_body


@dataclass(frozen=True)
class HTTPLimits:
    """What clients may cost the server; README's HTTP mode section gives the reasons."""

    max_body: int = MAX_BODY
    """Bytes of one request body (413 above)."""
    head_timeout_s: float = 10.0
    """From connecting (or the previous response) to a complete request head."""
    body_timeout_s: float = 10.0
    """From the request head to the last body byte (408 after)."""
    keep_alive_s: int = 5
    """An idle keep-alive connection is closed after this."""
    max_head_bytes: int = 16 * 1024
    """Request line plus headers (h11 answers 400 above); Slack sends about 1 kB."""
    max_connections: int = 500
    """Open connections plus running requests; uvicorn answers 503 above it. Well under the
    usual 1,024 open files, which SQLite, the graph engine and the Slack client share."""
    backlog: int = 128
    """Pending connections the kernel queues (Slack may deliver a few dozen events at once)."""
    health_wait_s: float = 0.5
    """How long `/healthz` waits for its checks: one still running then is reported `slow`
    (and not ok) while it goes on, so the route answers within a second whatever a
    dependency does (a paused engine holds a read for ever)."""
    shutdown_timeout_s: int = 5
    """Requests still running at stop get this long to finish."""


class _HeadDeadlineH11(H11Protocol):
    """uvicorn's h11 protocol plus a deadline for each request head (slowloris)."""

    head_timeout_s = HTTPLimits.head_timeout_s
    _head_deadline: asyncio.TimerHandle | None = None

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        super().connection_made(transport)
        self._arm_head_deadline()

    def on_response_complete(self) -> None:
        super().on_response_complete()
        self._arm_head_deadline()

    def connection_lost(self, exc: Exception | None) -> None:
        if self._head_deadline is not None:
            self._head_deadline.cancel()
        super().connection_lost(exc)

    def _arm_head_deadline(self) -> None:
        if self._head_deadline is not None:
            self._head_deadline.cancel()
        self._head_deadline = self.loop.call_later(self.head_timeout_s, self._head_timed_out)

    def _head_timed_out(self) -> None:
        # h11 leaves IDLE only once a whole request head has arrived.
        if self.conn.their_state is h11.IDLE and not self.transport.is_closing():
            logger.debug("closing a connection whose request head did not arrive in time")
            self.transport.close()


def _protocol_with(head_timeout_s: float) -> type[H11Protocol]:
    return type("HeadDeadlineH11", (_HeadDeadlineH11,), {"head_timeout_s": head_timeout_s})


class _BoltHandler(SlackRequestHandler):
    """Bolt's ASGI adapter, refusing (400) a payload that Bolt's request parsing raises on."""

    async def dispatch(self, request: AsgiHttpRequest) -> BoltResponse:
        body = await request.get_raw_body()
        try:
            bolt_request = BoltRequest(
                body=body, query=request.query_string, headers=request.get_headers()
            )
        except Exception as exc:
            # A signed payload whose shape Bolt cannot read (e.g. `authorizations` not a list).
            logger.info("slack request refused: 400 unreadable payload (%s)", type(exc).__name__)
            return BoltResponse(status=400, body="unreadable payload")
        return self.app.dispatch(bolt_request)


class _Routes:
    """The ASGI app uvicorn serves: `/healthz`, the gated Slack request URL, 404 elsewhere."""

    def __init__(self, server: SlackHTTPServer, events: SlackGate) -> None:
        self.server = server
        self.events = events

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            return  # lifespan is off; nothing else is served
        path = scope["path"]
        if path == EVENTS_PATH:
            with after_response():  # the ack is sent before the work it queued starts
                await self.events(scope, receive, send)
        elif path == HEALTH_PATH and scope["method"] in ("GET", "HEAD"):
            healthy, report = await self.server.check_health_async()
            body = json.dumps({"ok": healthy, **report}).encode()
            await respond(send, 200 if healthy else 503, body, content_type="application/json")
        elif path == HEALTH_PATH:
            await respond(send, 405, b"Method Not Allowed", extra=[(b"allow", b"GET")])
        else:
            await respond(send, 404, b"Not Found")


class SlackHTTPServer:
    """Serves a Bolt app over HTTP on (host, port); port 0 picks a free port.

    The socket is bound and listening once constructed (connections wait in the backlog
    until `start()` or `serve_forever()`), so `url` is known at once."""

    def __init__(
        self,
        app: App,
        *,
        host: str = "127.0.0.1",
        port: int = 3000,
        health: Mapping[str, HealthCheck] | None = None,
        signing_secret: str | None = None,
        limits: HTTPLimits | None = None,
    ) -> None:
        self.app = app
        self.health = dict(health or {})
        self.limits = limits or HTTPLimits()
        # Bolt keeps the secret it verifies with but does not expose it; the gate must use
        # the same one, so it is read from the app unless given.
        secret = signing_secret or str(getattr(app, "_signing_secret", "") or "")
        self._health = HealthChecks(self.limits.health_wait_s)
        # Bolt types its ASGI scope as a plain dict; uvicorn's is the same object.
        bolt = cast(ASGIApp, _BoltHandler(app, path=EVENTS_PATH))
        gate = SlackGate(
            bolt,
            signing_secret=secret,
            limits=GateLimits(self.limits.max_body, self.limits.body_timeout_s),
        )
        self._socket = _listening_socket(host, port, self.limits.backlog)
        self._server = uvicorn.Server(self._config(_Routes(self, gate)))
        self._thread: threading.Thread | None = None

    def _config(self, asgi: _Routes) -> uvicorn.Config:
        limits = self.limits
        return uvicorn.Config(
            asgi,
            http=_protocol_with(limits.head_timeout_s),
            interface="asgi3",
            lifespan="off",
            loop="asyncio",
            log_config=None,  # the entry point configures logging once
            access_log=False,
            server_header=False,
            timeout_keep_alive=limits.keep_alive_s,
            h11_max_incomplete_event_size=limits.max_head_bytes,
            limit_concurrency=limits.max_connections,
            backlog=limits.backlog,
            timeout_graceful_shutdown=limits.shutdown_timeout_s,
        )

    @property
    def url(self) -> str:
        host, port = self._socket.getsockname()[:2]
        return f"http://{host!s}:{port}"

    @property
    def events_url(self) -> str:
        return self.url + EVENTS_PATH

    def start(self) -> SlackHTTPServer:
        """Serve in a background thread."""
        self._thread = threading.Thread(target=self.serve_forever, name="slack-http", daemon=True)
        self._thread.start()
        return self

    def serve_forever(self) -> None:
        """Serve until `stop()` (or, on the main thread, SIGINT/SIGTERM, which uvicorn
        re-raises after its graceful shutdown)."""
        self._server.run(sockets=[self._socket])

    def stop(self) -> None:
        self._server.should_exit = True
        if self._thread is not None and self._thread is not threading.current_thread():
            self._thread.join(self.limits.shutdown_timeout_s + 5)
        self._socket.close()

    async def check_health_async(self) -> tuple[bool, dict[str, Any]]:
        """(all ok, details without secrets) within about `limits.health_wait_s`: a check
        still running then is reported `{"ok": false, "status": "slow", ...}`."""
        return await self._health.check(self.health)


def _listening_socket(host: str, port: int, backlog: int) -> socket.socket:
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind((host, port))
        sock.listen(backlog)
    except OSError:
        sock.close()
        raise
    return sock
