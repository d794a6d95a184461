"""A tiny OpenAI-compatible HTTP server for tests: /v1/chat/completions from a table or a function."""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from rig.scripted_llm import common_start

Messages = list[dict[str, Any]]


@dataclass
class Failure:
    """A scripted failure for the next request: an HTTP status, or a delay before answering."""

    status: int = 500
    delay_s: float = 0.0


@dataclass
class FakeOpenAI:
    """Answers chat completions with `respond(messages)` (or the first matching entry of
    `table`: substring of the last user message → reply). `failures` are consumed first, one
    per request. `requests` records every chat request body; `/v1/embeddings` answers with
    deterministic vectors and records its requests in `embedding_requests`."""

    respond: Callable[[Messages], str] | None = None
    table: dict[str, str] = field(default_factory=dict)
    failures: list[Failure] = field(default_factory=list)
    requests: list[dict[str, Any]] = field(default_factory=list)
    embedding_requests: list[dict[str, Any]] = field(default_factory=list)
    model: str = "fake"
    _lock: threading.Lock = field(default_factory=threading.Lock)
    _server: ThreadingHTTPServer | None = None
    _answered: list[str] = field(default_factory=list)

    @property
    def base_url(self) -> str:
        assert self._server is not None, "server not started"
        host, port = self._server.server_address[:2]
        return f"http://{host!s}:{port}/v1"

    def reply_for(self, messages: Messages) -> str:
        if self.respond is not None:
            return self.respond(messages)
        last = str(messages[-1].get("content", "")) if messages else ""
        for needle, reply in self.table.items():
            if needle in last:
                return reply
        return "I don't know."

    def _embeddings(self, handler: BaseHTTPRequestHandler, body: dict[str, Any]) -> None:
        """Deterministic bag-of-words vectors: texts sharing words point the same way."""
        texts = body.get("input", [])
        texts = [texts] if isinstance(texts, str) else texts
        data = []
        for n, text in enumerate(texts):
            vector = [0.0] * 64
            for word in str(text).lower().split():
                vector[sum(word.encode()) % 64] += 1.0
            data.append({"object": "embedding", "index": n, "embedding": vector})
        _send(
            handler,
            200,
            {"object": "list", "data": data, "model": body.get("model", self.model),
             "usage": {"prompt_tokens": 0, "total_tokens": 0}},
        )  # fmt: skip

    def _handle(self, handler: BaseHTTPRequestHandler) -> None:
        if handler.path.rstrip("/") in ("/v1/embeddings", "/embeddings"):
            length = int(handler.headers.get("Content-Length", "0"))
            body = json.loads(handler.rfile.read(length) or b"{}")
            with self._lock:
                self.embedding_requests.append(body)
            self._embeddings(handler, body)
            return
        if handler.path.rstrip("/") not in ("/v1/chat/completions", "/chat/completions"):
            _send(handler, 404, {"error": {"message": f"no route {handler.path}"}})
            return
        length = int(handler.headers.get("Content-Length", "0"))
        body = json.loads(handler.rfile.read(length) or b"{}")
        with self._lock:
            self.requests.append(body)
            failure = self.failures.pop(0) if self.failures else None
        if failure is not None:
            if failure.delay_s:
                time.sleep(failure.delay_s)
            if failure.status != 200:
                _send(handler, failure.status, {"error": {"message": "scripted failure"}})
                return
        text = self.reply_for(body.get("messages", []))
        prompt = "\n".join(str(m.get("content", "")) for m in body["messages"])
        prompt_tokens = len(prompt) // 4
        # Like llama-server's prompt cache: the start shared with an earlier answered prompt.
        with self._lock:
            cached = max((common_start(prompt, seen) for seen in self._answered), default=0)
            self._answered.append(prompt)
        # Like a real server: stop at the cap (4 characters a token here) and say so.
        cap = body.get("max_completion_tokens") or body.get("max_tokens")
        finish_reason = "stop"
        if cap is not None and len(text) > 4 * int(cap):
            text, finish_reason = text[: 4 * int(cap)], "length"
        _send(
            handler,
            200,
            {
                "id": f"chatcmpl-{len(self.requests)}",
                "object": "chat.completion",
                "created": int(time.time()),
                "model": body.get("model", self.model),
                "choices": [
                    {
                        "index": 0,
                        "message": {"role": "assistant", "content": text},
                        "finish_reason": finish_reason,
                    }
                ],
                "usage": {
                    "prompt_tokens": prompt_tokens,
                    "completion_tokens": len(text) // 4,
                    "total_tokens": prompt_tokens + len(text) // 4,
                    "prompt_tokens_details": {"cached_tokens": cached // 4},
                },
            },
        )

    @contextmanager
    def running(self) -> Iterator[FakeOpenAI]:
        """Serve on 127.0.0.1, a free port, in a background thread, for the `with` block."""
        fake = self

        class Handler(BaseHTTPRequestHandler):
            # Keep-alive, like real servers: clients pool connections between calls.
            protocol_version = "HTTP/1.1"

            def do_POST(self) -> None:
                fake._handle(self)

            def log_message(self, format: str, *args: Any) -> None:
                pass

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        thread = threading.Thread(target=self._server.serve_forever, daemon=True)
        thread.start()
        try:
            yield self
        finally:
            self._server.shutdown()
            self._server.server_close()
            thread.join(timeout=5)


def _send(handler: BaseHTTPRequestHandler, status: int, payload: dict[str, Any]) -> None:
    data = json.dumps(payload).encode()
    handler.send_response(status)
    handler.send_header("Content-Type", "application/json")
    handler.send_header("Content-Length", str(len(data)))
    handler.end_headers()
    handler.wfile.write(data)
