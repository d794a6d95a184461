"""HTTP mode: a threaded stdlib server for Bolt's `/slack/events` plus a `/healthz` route.

Why not `App.start()`: Bolt's development server is single-threaded and has no room for a
health route; a WSGI server would add a dependency for two routes. `ThreadingHTTPServer`
hands each request to `App.dispatch` on its own thread (our listeners only claim and
enqueue, so each returns in milliseconds); TLS and scale-out belong to the reverse proxy
or load balancer in front.
"""

from __future__ import annotations

import json
import logging
import threading
import urllib.parse
from collections.abc import Callable, Mapping, Sequence
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from slack_bolt import App
from slack_bolt.request import BoltRequest

logger = logging.getLogger(__name__)


class _Server(ThreadingHTTPServer):
    """ThreadingHTTPServer with a listen backlog fit for bursts (the default of 5 resets
    connections when Slack delivers a few dozen events at once)."""

    request_queue_size = 128
    daemon_threads = True


HealthCheck = Callable[[], object]
"""Raises when the thing it checks is down; its return value (e.g. a version) is reported."""

EVENTS_PATH = "/slack/events"
MAX_BODY = 1_000_000


class SlackHTTPServer:
    """Serves a Bolt app over HTTP on (host, port); port 0 picks a free port."""

    def __init__(
        self,
        app: App,
        *,
        host: str = "127.0.0.1",
        port: int = 3000,
        health: Mapping[str, HealthCheck] | None = None,
    ) -> None:
        self.app = app
        self.health = dict(health or {})
        self._server = _Server((host, port), _handler_for(self))
        self._server.daemon_threads = True
        self._thread: threading.Thread | None = None

    @property
    def url(self) -> str:
        host, port = self._server.server_address[:2]
        return f"http://{host!s}:{port}"

    @property
    def events_url(self) -> str:
        return self.url + EVENTS_PATH

    def start(self) -> SlackHTTPServer:
        """Serve in a background thread."""
        self._thread = threading.Thread(
            target=self._server.serve_forever, name="slack-http", daemon=True
        )
        self._thread.start()
        return self

    def serve_forever(self) -> None:
        self._server.serve_forever()

    def stop(self) -> None:
        self._server.shutdown()
        self._server.server_close()

    def check_health(self) -> tuple[bool, dict[str, Any]]:
        """Run every health check: (all ok, details without secrets)."""
        report: dict[str, Any] = {}
        healthy = True
        for name, check in self.health.items():
            try:
                value = check()
                report[name] = {"ok": True, **({"detail": str(value)} if value else {})}
            except Exception as exc:
                healthy = False
                report[name] = {"ok": False, "error": type(exc).__name__}
                logger.warning("health check %s failed: %s", name, exc)
        return healthy, report


def _handler_for(server: SlackHTTPServer) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, format: str, *args: Any) -> None:
            logger.debug("http: " + format, *args)

        def do_GET(self) -> None:
            path = urllib.parse.urlsplit(self.path).path
            if path != "/healthz":
                self._reply(404, b"Not Found", "text/plain")
                return
            healthy, report = server.check_health()
            body = json.dumps({"ok": healthy, **report}).encode()
            self._reply(200 if healthy else 503, body, "application/json")

        def do_POST(self) -> None:
            url = urllib.parse.urlsplit(self.path)
            length = int(self.headers.get("Content-Length") or 0)
            if url.path != EVENTS_PATH or length > MAX_BODY:
                self.rfile.read(min(length, MAX_BODY))
                self._reply(404 if url.path != EVENTS_PATH else 413, b"", "text/plain")
                return
            body = self.rfile.read(length).decode("utf-8")
            headers: dict[str, str | Sequence[str]] = {
                k.lower(): v for k, v in self.headers.items()
            }
            response = server.app.dispatch(BoltRequest(body=body, query=url.query, headers=headers))
            content_type = (response.headers.get("content-type") or ["text/plain"])[0]
            self._reply(response.status, response.body.encode("utf-8"), content_type)

        def _reply(self, status: int, body: bytes, content_type: str) -> None:
            self.send_response(status)
            self.send_header("Content-Type", content_type)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

    return Handler
