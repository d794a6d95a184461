"""The playground's web page: static files, JSON endpoints over the local Slack, and live server-sent events.

Served by the playground's local HTTP server (`local_server.py`, shared with the emulator) on
127.0.0.1: a handful of routes need no framework, and each open event stream holds one thread. People act through the emulator (as they would through
Slack's client), so the real Bolt app sees real signed events; the graph is reached only
through the agent.
"""

from __future__ import annotations

import contextlib
import json
import logging
import queue
import re
import threading
import time
import urllib.parse
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler
from pathlib import Path
from typing import Any

from bot.playground.emulator import SlackEmulator, StateChange
from bot.playground.emulator_ai import AISurface
from bot.playground.local_server import LocalServer
from bot.playground.trace import TracingAgent
from memory import Memory
from memory.types import Example

logger = logging.getLogger(__name__)

STATIC_DIR = Path(__file__).parent / "static"
STATIC_FILES = {
    "/": ("index.html", "text/html; charset=utf-8"),
    "/static/style.css": ("style.css", "text/css; charset=utf-8"),
    "/static/app.js": ("app.js", "text/javascript; charset=utf-8"),
    "/static/mrkdwn.js": ("mrkdwn.js", "text/javascript; charset=utf-8"),
}
LIVE_KINDS = {
    "message_posted",
    "message_updated",
    "message_deleted",
    "ephemeral_posted",
    "reaction_added",
    "reaction_removed",
    "status_set",
    "file_shared",
}
"""Emulator changes the page shows; API calls and deliveries are noise to a person."""
HEARTBEAT_S = 15.0
TRACE_WAIT_S = 10.0
"""How long to wait for memory to link a freshly posted answer to its turn."""
MAX_BODY = 64_000
MAX_TEXT = 40_000
HOME_WAIT_S = 10.0
"""How long the Home tab waits for the app's views.publish."""
_REACTION = re.compile(r"^[a-z0-9_+\-]{1,64}(::skin-tone-[2-6])?$")
_MENTION_TYPED = re.compile(r"@([A-Za-z0-9_.\-]+)")
_FILE_PATH = re.compile(r"^/files/(F\d+)$")


@dataclass(frozen=True)
class Person:
    """Someone the page can act as."""

    id: str
    name: str


@dataclass(frozen=True)
class LLMInfo:
    """Whether a language model is configured, for the banner."""

    configured: bool
    model: str | None


class PageError(Exception):
    """A request the page cannot honour; `status` is the HTTP status to answer."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status


class PlaygroundStartError(Exception):
    """The playground could not start; the message says what to change."""


class Broadcaster:
    """Fans live changes out to every open event stream (one queue per browser tab)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._listeners: set[queue.Queue[dict[str, Any]]] = set()

    def listen(self) -> queue.Queue[dict[str, Any]]:
        listener: queue.Queue[dict[str, Any]] = queue.Queue()
        with self._lock:
            self._listeners.add(listener)
        return listener

    def drop(self, listener: queue.Queue[dict[str, Any]]) -> None:
        with self._lock:
            self._listeners.discard(listener)

    def publish(self, event: dict[str, Any]) -> None:
        with self._lock:
            listeners = list(self._listeners)
        for listener in listeners:
            listener.put(event)

    @property
    def listeners(self) -> int:
        with self._lock:
            return len(self._listeners)


def slack_text(text: str, names: dict[str, str]) -> str:
    """What the Slack client sends for typed text: `& < >` escaped, `@name` as a mention."""
    escaped = text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
    by_name = {name.lower(): user_id for user_id, name in names.items()}

    def mention(match: re.Match[str]) -> str:
        user_id = by_name.get(match.group(1).lower())
        return f"<@{user_id}>" if user_id else match.group(0)

    return _MENTION_TYPED.sub(mention, escaped)


def example_json(example: Example) -> dict[str, Any]:
    return {
        "id": example.id,
        "question": example.question,
        "cypher": example.cypher,
        "source": example.source,
        "status": example.status,
        "up_votes": example.up_votes,
        "down_votes": example.down_votes,
        "taught_by": example.taught_by,
        "times_used": example.times_used,
        "retired_reason": example.retired_reason,
    }


class PageServer:
    """Serves the page and its API on 127.0.0.1:`port` (0 picks a free port)."""

    def __init__(
        self,
        emulator: SlackEmulator,
        memory: Memory,
        agent: TracingAgent,
        *,
        people: Sequence[Person],
        llm: LLMInfo,
        suggestions: Sequence[str] = (),
        port: int = 0,
    ) -> None:
        self.emulator = emulator
        self.memory = memory
        self.agent = agent
        self.people = list(people)
        self.llm = llm
        self.suggestions = list(suggestions)
        self.broadcaster = Broadcaster()
        self._closing = threading.Event()
        self._closed = threading.Event()
        self._waiters = ThreadPoolExecutor(max_workers=2, thread_name_prefix="playground-trace")
        self._unsubscribe: Callable[[], None] | None = None
        self._description: str | None = None
        try:
            self._http = LocalServer(port, _handler_for(self), name="playground-page")
        except OSError as exc:
            raise PlaygroundStartError(
                f"Cannot serve the playground on 127.0.0.1:{port} ({exc.strerror}). "
                "Pass --port with another port (0 picks a free one).",
            ) from None

    # ---- lifecycle -------------------------------------------------------------------

    @property
    def port(self) -> int:
        return self._http.port

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}/"

    def start(self) -> PageServer:
        self._unsubscribe = self.emulator.subscribe(self._on_change)
        self._http.start()
        return self

    def stop(self) -> None:
        self._closing.set()
        if self._unsubscribe is not None:
            self._unsubscribe()
        self._http.stop()
        self._waiters.shutdown(wait=False, cancel_futures=True)
        self._closed.set()

    def wait_closed(self) -> None:
        while not self._closed.wait(0.5):
            pass

    # ---- live changes ----------------------------------------------------------------

    def _on_change(self, change: StateChange) -> None:
        if change.kind not in LIVE_KINDS:
            return
        data = change.data
        event = {
            "kind": change.kind,
            "channel": change.channel,
            "ts": data.get("ts"),
            "thread_ts": data.get("thread_ts"),
        }
        if change.kind == "status_set":
            event["status"] = data.get("status", "")
        self.broadcaster.publish(event)
        is_answer = data.get("user") == self.emulator.bot_user_id and data.get("blocks")
        if change.kind in ("message_posted", "message_updated") and is_answer:
            with contextlib.suppress(RuntimeError):  # raised only while shutting down
                self._waiters.submit(self._announce_trace, str(change.channel), str(data["ts"]))

    def _announce_trace(self, channel: str, ts: str) -> None:
        """Tell the page once memory has linked an answer to its turn (just after posting)."""
        deadline = time.monotonic() + TRACE_WAIT_S
        while not self._closing.is_set() and time.monotonic() < deadline:
            if self.memory.conversations.by_message(channel, ts) is not None:
                self.broadcaster.publish({"kind": "trace_ready", "channel": channel, "ts": ts})
                return
            self._closing.wait(0.1)

    # ---- what the page asks --------------------------------------------------------------

    def person(self, user: object) -> Person:
        found = next((p for p in self.people if p.id == user), None)
        if found is None:
            raise PageError(400, "unknown user")
        return found

    def description(self) -> str:
        if self._description is None:
            try:
                self._description = self.agent.describe()
            except Exception:
                logger.warning("no description of the graph", exc_info=True)
                return ""
        return self._description

    def state(self) -> dict[str, Any]:
        emulator = self.emulator
        channels = []
        with_dm = {}
        for channel in list(emulator.channels.values()):
            if channel.kind == "im":
                owner = next((m for m in channel.members if m != emulator.bot_user_id), "")
                with_dm[owner] = channel.id
            else:
                channels.append({"id": channel.id, "name": channel.name, "kind": channel.kind})
        return {
            "bot": {"id": emulator.bot_user_id, "name": emulator.users[emulator.bot_user_id].name},
            "people": [
                {"id": p.id, "name": p.name, "dm": with_dm.get(p.id) or emulator.open_dm(p.id).id}
                for p in self.people
            ],
            "users": {u.id: u.name for u in list(emulator.users.values())},
            "channels": channels,
            "llm": {"configured": self.llm.configured, "model": self.llm.model},
            "suggestions": self.suggestions,
            "graph": self.description(),
        }

    def messages(self, channel: str, user: str) -> dict[str, Any]:
        emulator = self.emulator
        if channel not in emulator.channels:
            raise PageError(404, "no such channel")
        found = emulator.messages(channel)
        # Copying a dict or list is one step under the GIL: a consistent snapshot, no lock.
        statuses = {ts: text for (ch, ts), text in dict(emulator.statuses).items() if ch == channel}
        ephemerals = [
            dict(e)
            for e in list(emulator.ephemerals)
            if e["channel"] == channel and e["user"] == user
        ]
        for message in found:
            if message.get("user") == emulator.bot_user_id and message.get("blocks"):
                turn = self.memory.conversations.by_message(channel, message["ts"])
                message["turn_id"] = turn.id if turn is not None else None
            for shared in message.get("files", []):
                shared["url"] = f"/files/{shared['id']}"
        return {
            "channel": channel,
            "messages": found,
            "statuses": statuses,
            "ephemerals": ephemerals,
        }

    def post(self, body: dict[str, Any]) -> dict[str, Any]:
        person = self.person(body.get("user"))
        channel = str(body.get("channel", ""))
        text = str(body.get("text", "")).strip()
        thread_ts = body.get("thread_ts") or None
        if channel not in self.emulator.channels:
            raise PageError(404, "no such channel")
        if not text:
            raise PageError(400, "empty message")
        if len(text) > MAX_TEXT:
            raise PageError(400, "message too long")
        if thread_ts is not None and self.emulator.message(channel, str(thread_ts)) is None:
            raise PageError(404, "no such thread")
        names = {u.id: u.name for u in list(self.emulator.users.values())}
        message, deliveries = self.emulator.post_message(
            person.id, channel, slack_text(text, names), str(thread_ts) if thread_ts else None
        )
        failed = [d.status for d in deliveries if d.status >= 300]
        if failed:
            logger.warning("the app answered events with %s", failed)
        return {"ts": message["ts"], "thread_ts": message.get("thread_ts")}

    def react(self, body: dict[str, Any]) -> dict[str, Any]:
        person = self.person(body.get("user"))
        channel, ts, name = (
            str(body.get("channel", "")),
            str(body.get("ts", "")),
            str(body.get("name", "")),
        )
        if not _REACTION.match(name):
            raise PageError(400, "bad reaction name")
        if self.emulator.message(channel, ts) is None:
            raise PageError(404, "no such message")
        if body.get("add", True):
            delivery = self.emulator.add_reaction(person.id, channel, ts, name)
        else:
            delivery = self.emulator.remove_reaction(person.id, channel, ts, name)
        return {"changed": delivery is not None}

    def assistant(self, body: dict[str, Any]) -> dict[str, Any]:
        """Open the split view as `user`: a new assistant thread in their DM
        (`assistant_thread_started`), then the prompts the app suggested for it."""
        person = self.person(body.get("user"))
        dm = self.emulator.open_dm(person.id).id
        thread_ts = f"{time.time():.6f}"
        event = AISurface.thread_started(person.id, dm, thread_ts, self.emulator.team_id)
        delivery = self.emulator.deliver(self.emulator.envelope(event))
        if delivery.status >= 300:
            raise PageError(
                502, f"the app answered assistant_thread_started with {delivery.status}"
            )
        prompts = self.emulator.surface.suggested_prompts
        try:
            self.emulator.wait_for(lambda: (dm, thread_ts) in prompts, HOME_WAIT_S)
        except TimeoutError:
            raise PageError(504, "the app suggested no prompts") from None
        return {"thread_ts": thread_ts, "prompts": prompts[(dm, thread_ts)]}

    def home(self, body: dict[str, Any]) -> dict[str, Any]:
        """Open the App Home tab as `user`: `app_home_opened` to the app, then the view it
        published (views.publish)."""
        person = self.person(body.get("user"))
        surface = self.emulator.surface
        surface.home_views.pop(person.id, None)  # wait for this opening's view
        dm = self.emulator.open_dm(person.id).id
        delivery = self.emulator.deliver(
            self.emulator.envelope(AISurface.home_opened(person.id, dm))
        )
        if delivery.status >= 300:
            raise PageError(502, f"the app answered app_home_opened with {delivery.status}")
        try:
            self.emulator.wait_for(lambda: person.id in surface.home_views, HOME_WAIT_S)
        except TimeoutError:
            raise PageError(504, "the app published no Home view") from None
        return {"view": surface.home_views[person.id]}

    def click(self, body: dict[str, Any]) -> dict[str, Any]:
        """A click on a message's button: Slack's signed `block_actions` to the app."""
        person = self.person(body.get("user"))
        channel, ts = str(body.get("channel", "")), str(body.get("ts", ""))
        action_id, value = str(body.get("action_id", "")), str(body.get("value", ""))
        if not action_id or len(action_id) > 255 or len(value) > 2000:
            raise PageError(400, "bad action")
        if self.emulator.message(channel, ts) is None:
            raise PageError(404, "no such message")
        delivery = self.emulator.click(person.id, channel, ts, action_id, value)
        return {"status": delivery.status}

    def trace(self, channel: str, ts: str) -> dict[str, Any]:
        turn = self.memory.conversations.by_message(channel, ts)
        if turn is None:
            raise PageError(404, "nothing recorded behind this message")
        trace = self.agent.trace_for(turn)
        examples = self.memory.examples
        used = [examples.get(i) for i in turn.example_ids]
        taught = [
            e
            for e in examples.list(limit=500)
            if turn.cypher
            and e.cypher == turn.cypher
            and e.question == (turn.standalone_question or turn.question)
        ]
        return {
            "turn": {
                "id": turn.id,
                "question": turn.question,
                "standalone_question": turn.standalone_question,
                "cypher": turn.cypher,
                "answer": turn.answer,
                "outcome": turn.outcome,
                "attempts": turn.attempts,
                "user": turn.user,
            },
            "run": trace.to_json() if trace is not None else None,
            "examples_used": [example_json(e) for e in used if e is not None],
            "taught_as": [example_json(e) for e in taught],
        }

    def examples(self) -> dict[str, Any]:
        return {"examples": [example_json(e) for e in self.memory.examples.list(limit=200)]}

    def file(self, file_id: str) -> tuple[str, bytes]:
        info = self.emulator.files.get(file_id)
        if info is None:
            raise PageError(404, "no such file")
        try:
            return str(info["name"]), self.emulator.file_content(file_id)
        except KeyError:
            raise PageError(404, "the file was never uploaded") from None


def _handler_for(page: PageServer) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, format: str, *args: Any) -> None:
            logger.debug("page: " + format, *args)

        def _host_ok(self) -> bool:
            # Another site's page could otherwise reach this server through DNS rebinding.
            host = (self.headers.get("Host") or "").split(":")[0]
            return host in ("127.0.0.1", "localhost")

        def do_GET(self) -> None:
            url = urllib.parse.urlsplit(self.path)
            query = dict(urllib.parse.parse_qsl(url.query))
            if not self._host_ok():
                self._json(403, {"error": "bad host"})
                return
            try:
                if url.path in STATIC_FILES:
                    name, content_type = STATIC_FILES[url.path]
                    body = (STATIC_DIR / name).read_bytes()
                    self._send(200, body, content_type, {"Cache-Control": "no-cache"})
                elif url.path == "/api/events":
                    self._stream()
                elif url.path == "/api/state":
                    self._json(200, page.state())
                elif url.path == "/api/messages":
                    self._json(200, page.messages(query.get("channel", ""), query.get("user", "")))
                elif url.path == "/api/trace":
                    self._json(200, page.trace(query.get("channel", ""), query.get("ts", "")))
                elif url.path == "/api/examples":
                    self._json(200, page.examples())
                elif match := _FILE_PATH.match(url.path):
                    name, content = page.file(match.group(1))
                    safe = re.sub(r"[^A-Za-z0-9._-]", "_", name) or "file"
                    if safe.endswith(".png") and content.startswith(b"\x89PNG"):
                        # A chart: shown inline under the answer, as Slack does.
                        self._send(200, content, "image/png", {"Cache-Control": "no-store"})
                    else:
                        self._send(
                            200,
                            content,
                            "application/octet-stream",
                            {"Content-Disposition": f'attachment; filename="{safe}"'},
                        )
                else:
                    self._json(404, {"error": "not found"})
            except PageError as exc:
                self._json(exc.status, {"error": str(exc)})
            except Exception:
                logger.exception("page request failed: %s", url.path)
                self._json(500, {"error": "internal error (see the log)"})

        def do_POST(self) -> None:
            url = urllib.parse.urlsplit(self.path)
            length = int(self.headers.get("Content-Length") or 0)
            raw = self.rfile.read(min(length, MAX_BODY + 1))
            # JSON only: a cross-site form cannot send it without a CORS preflight we refuse.
            json_body = (self.headers.get("Content-Type") or "").startswith("application/json")
            if not self._host_ok() or not json_body:
                self._json(403 if json_body else 415, {"error": "JSON from this page only"})
                return
            if length > MAX_BODY:
                self._json(413, {"error": "request too large"})
                return
            try:
                body = json.loads(raw or b"{}")
                if not isinstance(body, dict):
                    raise PageError(400, "expected a JSON object")
                if url.path == "/api/messages":
                    self._json(200, page.post(body))
                elif url.path == "/api/reactions":
                    self._json(200, page.react(body))
                elif url.path == "/api/assistant":
                    self._json(200, page.assistant(body))
                elif url.path == "/api/home":
                    self._json(200, page.home(body))
                elif url.path == "/api/actions":
                    self._json(200, page.click(body))
                else:
                    self._json(404, {"error": "not found"})
            except ValueError:
                self._json(400, {"error": "invalid JSON"})
            except PageError as exc:
                self._json(exc.status, {"error": str(exc)})
            except Exception:
                logger.exception("page request failed: %s", url.path)
                self._json(500, {"error": "internal error (see the log)"})

        def _stream(self) -> None:
            listener = page.broadcaster.listen()
            try:
                self.send_response(200)
                self.send_header("Content-Type", "text/event-stream; charset=utf-8")
                self.send_header("Cache-Control", "no-cache")
                self.send_header("Connection", "close")
                self.end_headers()
                self.close_connection = True
                self.wfile.write(b"retry: 1000\n: connected\n\n")
                self.wfile.flush()
                last = time.monotonic()
                while not page._closing.is_set():
                    try:
                        event = listener.get(timeout=0.5)
                    except queue.Empty:
                        if time.monotonic() - last >= HEARTBEAT_S:
                            self.wfile.write(b": heartbeat\n\n")
                            self.wfile.flush()
                            last = time.monotonic()
                        continue
                    payload = json.dumps(event, separators=(",", ":"))
                    self.wfile.write(f"data: {payload}\n\n".encode())
                    self.wfile.flush()
                    last = time.monotonic()
            except (BrokenPipeError, ConnectionResetError, OSError):
                logger.debug("an event stream closed")
            finally:
                page.broadcaster.drop(listener)

        def _json(self, status: int, body: dict[str, Any]) -> None:
            self._send(status, json.dumps(body).encode(), "application/json")

        def _send(
            self,
            status: int,
            body: bytes,
            content_type: str,
            headers: dict[str, str] | None = None,
        ) -> None:
            self.send_response(status)
            self.send_header("Content-Type", content_type)
            self.send_header("Content-Length", str(len(body)))
            self.send_header("X-Content-Type-Options", "nosniff")
            self.send_header(
                "Content-Security-Policy",
                "default-src 'self'; img-src 'self' data:; style-src 'self'; script-src 'self'",
            )
            for name, value in (headers or {}).items():
                self.send_header(name, value)
            self.end_headers()
            self.wfile.write(body)

    return Handler
