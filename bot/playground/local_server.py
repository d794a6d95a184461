"""The playground's one local HTTP server (the page and the Slack emulator both serve on it):
a stdlib `ThreadingHTTPServer` on 127.0.0.1, in a background thread."""

from __future__ import annotations

import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


class _Server(ThreadingHTTPServer):
    # A listen backlog fit for bursts: the default of 5 resets connections when Slack
    # delivers a few dozen events at once.
    request_queue_size = 128
    daemon_threads = True


class LocalServer:
    """Serve `handler` on 127.0.0.1:`port` (0: a free port) once `start()` is called.

    Binding happens in the constructor, so a busy port raises `OSError` before anything runs.
    """

    def __init__(self, port: int, handler: type[BaseHTTPRequestHandler], *, name: str) -> None:
        self._server = _Server(("127.0.0.1", port), handler)
        self._name = name
        self._thread: threading.Thread | None = None

    @property
    def port(self) -> int:
        return int(self._server.server_address[1])

    def start(self) -> LocalServer:
        self._thread = threading.Thread(
            target=self._server.serve_forever, name=self._name, daemon=True
        )
        self._thread.start()
        return self

    def stop(self) -> None:
        """Stop serving and close the socket (safe to call when never started)."""
        if self._thread is not None:
            self._server.shutdown()
            self._thread = None
        self._server.server_close()
