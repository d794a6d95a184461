"""Socket Mode's websocket side of the emulator: one-time `ws://` URLs for
`apps.connections.open`, the `hello`, envelopes out, acks in, and `disconnect` requests.

The protocol (handshake, framing, masking, ping/pong, close) is the `websockets` library's
Sans-I/O `ServerProtocol`; the sockets are read here, by one thread per connection, so that
`drain()` can handle whatever the app has already sent at a given moment. The emulator drains
before it records a Web API call: an ack the app sent before making the call is then always
recorded first, whichever thread the scheduler happened to wake first.

The envelopes' contents and the ack bookkeeping live with the rest of event delivery
(emulator_events.py); this module only knows connections and JSON messages.
"""

from __future__ import annotations

import contextlib
import http
import json
import logging
import select
import socket
import threading
import time
import urllib.parse
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from websockets.frames import Frame, Opcode
from websockets.http11 import Request
from websockets.protocol import SEND_EOF, State
from websockets.server import ServerProtocol

logger = logging.getLogger(__name__)

AckListener = Callable[[str, dict[str, Any] | None, float], None]
"""Called with (envelope_id, the ack's payload or None, monotonic time it was read)."""

LINK_PATH = "/link/"
"""Where Slack's URLs point (`wss://wss-primary.slack.com/link/?ticket=…&app_id=…`)."""
HANDSHAKE_TIMEOUT_S = 10.0
MAX_MESSAGE = 2**20


@dataclass(eq=False)
class SocketConnection:
    """One websocket the app opened with a ticket from `apps.connections.open`."""

    number: int
    ticket: str
    opened_at: float
    sock: socket.socket = field(repr=False)
    protocol: ServerProtocol = field(repr=False)
    ready: bool = False
    """The hello was sent: envelopes may follow."""
    draining: bool = False
    """A `disconnect` was sent: no new envelopes go here."""
    closed: bool = False
    read_lock: threading.Lock = field(default_factory=threading.Lock, repr=False)
    """Held while bytes are read and handled, so a drain sees all or nothing of them."""
    write_lock: threading.Lock = field(default_factory=threading.Lock, repr=False)
    """Held around every use of `protocol` and every write (the protocol is not thread-safe)."""
    fragments: list[bytes] = field(default_factory=list, repr=False)

    @property
    def live(self) -> bool:
        return self.ready and not self.draining and not self.closed


class SocketModeServer:
    """Accepts the app's Socket Mode connections and carries JSON messages both ways."""

    def __init__(self, *, app_id: str, on_ack: AckListener, on_change: Callable[[], None]) -> None:
        self._app_id = app_id
        self._on_ack = on_ack
        self._on_change = on_change
        self._cond = threading.Condition()
        self._tickets: set[str] = set()
        self._connections: list[SocketConnection] = []
        self._timers: list[threading.Timer] = []
        self._listener: socket.socket | None = None
        self._thread: threading.Thread | None = None
        self._stopped = False
        self.unexpected: list[str] = []
        """Messages from the app that were not acks (Slack ignores them)."""

    def start(self) -> SocketModeServer:
        self._listener = socket.create_server(("127.0.0.1", 0), backlog=16)
        self._thread = threading.Thread(
            target=self._accept, name="slack-emulator-socket", daemon=True
        )
        self._thread.start()
        return self

    def stop(self) -> None:
        with self._cond:
            self._stopped = True
            timers, self._timers = self._timers, []
            connections = list(self._connections)
            self._cond.notify_all()
        for timer in timers:
            timer.cancel()
        if self._listener is not None:
            with contextlib.suppress(OSError):
                self._listener.shutdown(socket.SHUT_RDWR)
            self._listener.close()
        for connection in connections:
            self.close(connection, 1001, "going away")
        if self._thread is not None:
            self._thread.join(5)
            self._thread = None

    @property
    def port(self) -> int:
        if self._listener is None:
            raise RuntimeError("the Socket Mode server is not started")
        return int(self._listener.getsockname()[1])

    def new_url(self) -> str:
        """A one-time URL for one connection, as `apps.connections.open` answers."""
        ticket = uuid.uuid4().hex
        with self._cond:
            self._tickets.add(ticket)
        query = urllib.parse.urlencode({"ticket": ticket, "app_id": self._app_id})
        return f"ws://127.0.0.1:{self.port}{LINK_PATH}?{query}"

    @property
    def connections(self) -> list[SocketConnection]:
        """Every connection so far, oldest first (closed ones too)."""
        with self._cond:
            return list(self._connections)

    def wait_live(self, timeout: float) -> SocketConnection | None:
        """The newest connection that takes envelopes, waiting up to `timeout` for one.

        Slack spreads envelopes over an app's connections (up to 10); the newest one is
        enough here, and after a `disconnect` it is the replacement."""
        deadline = time.monotonic() + timeout
        with self._cond:
            while True:
                live = [c for c in self._connections if c.live]
                if live:
                    return live[-1]
                left = deadline - time.monotonic()
                if left <= 0 or self._stopped:
                    return None
                self._cond.wait(left)

    def send(self, connection: SocketConnection, message: dict[str, Any]) -> bool:
        """Send one JSON message as a text frame; False when the connection is gone."""
        with connection.write_lock:
            if connection.protocol.state is not State.OPEN:
                return False
            connection.protocol.send_text(json.dumps(message).encode())
            sent = self._write(connection)
        if not sent:
            self._closed(connection)
        return sent

    def close(self, connection: SocketConnection, code: int = 1000, reason: str = "") -> None:
        """Close the websocket (a close frame, then the TCP connection)."""
        with connection.write_lock:
            if connection.protocol.state is State.OPEN:
                connection.protocol.send_close(code, reason)
                self._write(connection)
            with contextlib.suppress(OSError):
                connection.sock.shutdown(socket.SHUT_RDWR)
        self._closed(connection)

    def disconnect(self, reason: str, close_after_s: float | None) -> int:
        """Ask every live connection to reconnect (`{"type": "disconnect"}`); close each
        after `close_after_s` unless the app closed it first. Returns how many were asked."""
        with self._cond:
            asked = [c for c in self._connections if c.ready and not c.closed]
            for connection in asked:
                connection.draining = True
        for connection in asked:
            notice = {
                "type": "disconnect",
                "reason": reason,
                "debug_info": {"host": "applink-emulator"},
            }
            self.send(connection, notice)
            if close_after_s is not None:
                timer = threading.Timer(close_after_s, self.close, args=(connection,))
                timer.daemon = True
                with self._cond:
                    self._timers.append(timer)
                timer.start()
        self._on_change()
        return len(asked)

    def drain(self) -> None:
        """Handle every byte the app's connections have delivered so far (acks included)."""
        for connection in self.connections:
            if not connection.closed:
                with connection.read_lock:
                    self._read(connection)

    # ---- connections -----------------------------------------------------------------

    def _accept(self) -> None:
        assert self._listener is not None
        while True:
            try:
                sock, _ = self._listener.accept()
            except OSError:
                return  # stopped
            threading.Thread(
                target=self._serve, args=(sock,), name="slack-emulator-socket-conn", daemon=True
            ).start()

    def _serve(self, sock: socket.socket) -> None:
        connection = self._handshake(sock)
        if connection is None:
            sock.close()
            return
        hello = {
            "type": "hello",
            "num_connections": sum(1 for c in self.connections if not c.closed),
            "debug_info": {
                "host": "applink-emulator",
                "build_number": 1,
                "approximate_connection_time": 18060,
            },
            "connection_info": {"app_id": self._app_id},
        }
        if self.send(connection, hello):
            with self._cond:
                connection.ready = True
                self._cond.notify_all()
            self._on_change()
        while not connection.closed:
            try:
                readable, _, _ = select.select([sock], [], [], 0.5)
            except (OSError, ValueError):  # closed under us
                break
            if readable:
                with connection.read_lock:
                    self._read(connection)
        self._closed(connection)
        with connection.read_lock:  # not while a drain reads it
            sock.close()

    def _handshake(self, sock: socket.socket) -> SocketConnection | None:
        """The opening handshake; a connection only for a ticket from `new_url`, used once."""
        protocol = ServerProtocol(max_size=MAX_MESSAGE, logger=logger)
        sock.settimeout(HANDSHAKE_TIMEOUT_S)
        request: Request | None = None
        try:
            while request is None:
                data = sock.recv(65536)
                if not data:
                    return None
                protocol.receive_data(data)
                request = next(
                    (e for e in protocol.events_received() if isinstance(e, Request)), None
                )
                if request is None and protocol.handshake_exc is not None:
                    return None
        except OSError:
            return None
        finally:
            sock.settimeout(None)
        if self._take_ticket(request.path):
            response = protocol.accept(request)
        else:
            response = protocol.reject(http.HTTPStatus.UNAUTHORIZED, "invalid or used ticket\n")
        protocol.send_response(response)
        try:
            sock.sendall(b"".join(protocol.data_to_send()))
        except OSError:
            return None
        if protocol.state is not State.OPEN:
            return None
        with self._cond:
            if self._stopped:
                return None
            url = urllib.parse.urlsplit(request.path)
            ticket = urllib.parse.parse_qs(url.query).get("ticket", [""])[0]
            connection = SocketConnection(
                len(self._connections) + 1, ticket, time.monotonic(), sock, protocol
            )
            self._connections.append(connection)
        return connection

    def _take_ticket(self, path: str) -> bool:
        url = urllib.parse.urlsplit(path)
        ticket = urllib.parse.parse_qs(url.query).get("ticket", [""])[0]
        with self._cond:
            valid = url.path == LINK_PATH and ticket in self._tickets
            self._tickets.discard(ticket)
        return valid

    def _read(self, connection: SocketConnection) -> None:
        """Read what is there without waiting and handle it (call with `read_lock` held)."""
        while not connection.closed:
            try:
                data = connection.sock.recv(65536, socket.MSG_DONTWAIT)
            except (BlockingIOError, InterruptedError):
                return
            except OSError:
                data = b""
            at = time.monotonic()
            with connection.write_lock:
                if data:
                    connection.protocol.receive_data(data)
                else:
                    connection.protocol.receive_eof()
                events = connection.protocol.events_received()
                self._write(connection)
                ended = connection.protocol.state is State.CLOSED or not data
            for event in events:
                if isinstance(event, Frame):
                    self._frame(connection, event, at)
            if ended or connection.protocol.close_expected():
                self._closed(connection)
                return

    def _frame(self, connection: SocketConnection, frame: Frame, at: float) -> None:
        if frame.opcode not in (Opcode.TEXT, Opcode.BINARY, Opcode.CONT):
            return  # ping, pong and close are the protocol's business
        connection.fragments.append(bytes(frame.data))
        if not frame.fin:
            return
        text = b"".join(connection.fragments).decode(errors="replace")
        connection.fragments.clear()
        try:
            data = json.loads(text)
        except ValueError:
            data = None
        if isinstance(data, dict) and isinstance(data.get("envelope_id"), str):
            payload = data.get("payload")
            self._on_ack(data["envelope_id"], payload if isinstance(payload, dict) else None, at)
            return
        with self._cond:
            self.unexpected.append(text[:500])

    def _write(self, connection: SocketConnection) -> bool:
        """Send what the protocol queued (call with `write_lock` held); False when it failed."""
        try:
            for chunk in connection.protocol.data_to_send():
                if chunk is SEND_EOF or not chunk:
                    connection.sock.shutdown(socket.SHUT_WR)
                else:
                    connection.sock.sendall(chunk)
        except OSError:
            return False
        return True

    def _closed(self, connection: SocketConnection) -> None:
        with self._cond:
            if connection.closed:
                return
            connection.closed = True
            self._cond.notify_all()
        self._on_change()
