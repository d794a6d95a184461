"""The emulator's Web API: the methods the app calls (chat.*, conversations.*, reactions.*,
files.*, assistant.threads.*, views.publish, and apps.connections.open with the app-level
token), answered in Slack's wire format with its errors, scopes and rate limits, and the HTTP
handler that serves them."""

from __future__ import annotations

import json
import logging
import re
import time
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler
from typing import Any

from bot.playground.emulator_ai import SurfaceError
from bot.playground.emulator_events import EventDelivery
from bot.playground.emulator_limits import (
    MAX_STREAM_CALL_CHARS,
    MAX_STREAM_CHARS,
    block_problem,
    loading_messages_problem,
    missing_scope,
)
from bot.playground.emulator_state import (
    MAX_BLOCKS,
    MAX_SECTION_CHARS,
    MAX_TEXT_CHARS,
    ApiCall,
    Channel,
)

logger = logging.getLogger(__name__)


class WebApi(EventDelivery):
    """The Web API methods, on top of the workspace and its event delivery."""

    def handle_api(self, method: str, params: dict[str, Any], token: str | None) -> _ApiAnswer:
        """Answer one Web API call: (HTTP status, JSON body, extra headers)."""
        self._observe_acks()
        seq = self._next_seq()
        with self._lock:
            failure = self._take_failure(method)
        if failure is not None:
            headers = {}
            if failure.retry_after is not None:
                headers["Retry-After"] = str(failure.retry_after)
            answer = _ApiAnswer(failure.status, {"ok": False, "error": failure.error}, headers)
        elif token is None:
            answer = _ApiAnswer(200, {"ok": False, "error": "not_authed"})
        elif method == "apps.connections.open":
            answer = _ApiAnswer(200, self._api_connections_open(token))
        elif token != self.bot_token:
            answer = _ApiAnswer(200, {"ok": False, "error": "invalid_auth"})
        elif (needed := missing_scope(method, self.scopes)) is not None:
            answer = _ApiAnswer(200, {"ok": False, "error": "missing_scope", "needed": needed})
        elif (wait := self.rate_limits.check(method, params)) is not None:
            answer = _ApiAnswer(
                429, {"ok": False, "error": "ratelimited"}, {"Retry-After": str(wait)}
            )
        else:
            self._expire_statuses()
            handler = _METHODS.get(method)
            if handler is None:
                answer = _ApiAnswer(200, {"ok": False, "error": "unknown_method"})
            else:
                try:
                    answer = _ApiAnswer(200, handler(self, params))
                except _ApiError as exc:
                    answer = _ApiAnswer(200, {"ok": False, "error": exc.error})
        call = ApiCall(method, params, answer.status, answer.body, time.time(), seq)
        with self._lock:
            self.calls.append(call)
        self._emit(
            "api_call",
            params.get("channel") or params.get("channel_id"),
            {
                "method": method,
                "ok": answer.body.get("ok"),
                "error": answer.body.get("error"),
            },
        )
        return answer

    def _room_for_post(self, channel_id: str) -> Channel:
        room = self.channels.get(channel_id)
        if room is None:
            raise _ApiError("channel_not_found")
        if room.archived:
            raise _ApiError("is_archived")
        if self.bot_user_id not in room.members:
            raise _ApiError("not_in_channel")
        return room

    def _api_auth_test(self, params: dict[str, Any]) -> dict[str, Any]:
        return {
            "ok": True,
            "url": "https://emulated.slack.com/",
            "team": "Emulated workspace",
            "user": self.users[self.bot_user_id].name,
            "team_id": self.team_id,
            "user_id": self.bot_user_id,
            "bot_id": self.bot_id,
            "is_enterprise_install": False,
        }

    def _api_connections_open(self, token: str) -> dict[str, Any]:
        """Socket Mode's one-time websocket URL; only the app-level (xapp-) token may ask."""
        if token == self.bot_token:
            return {"ok": False, "error": "not_allowed_token_type"}
        if token != self.app_token:
            return {"ok": False, "error": "invalid_auth"}
        return {"ok": True, "url": self.connections_url()}

    def _api_post_message(self, params: dict[str, Any]) -> dict[str, Any]:
        with self._lock:
            room = self._room_for_post(str(params.get("channel", "")))
            fields = _message_fields(params)
            message = self._store_message(
                room.id,
                {
                    "user": self.bot_user_id,
                    "bot_id": self.bot_id,
                    "app_id": self.api_app_id,
                    **fields,
                },
                params.get("thread_ts") or None,
            )
            echo = self.events_for_message(room.id, message)
        self._emit("message_posted", room.id, message)
        for payload in echo:
            self._deliver_later(payload)
        return {"ok": True, "channel": room.id, "ts": message["ts"], "message": message}

    def _bot_message(self, params: dict[str, Any], not_ours: str) -> tuple[str, dict[str, Any]]:
        """The bot's own message named by `channel` + `ts` (call with the lock held), or the
        error Slack gives: channel_not_found, message_not_found, or `not_ours`."""
        channel = str(params.get("channel", ""))
        if channel not in self.channels:
            raise _ApiError("channel_not_found")
        message = self._find(channel, str(params.get("ts", "")))
        if message is None:
            raise _ApiError("message_not_found")
        if message.get("user") != self.bot_user_id:
            raise _ApiError(not_ours)
        return channel, message

    def _api_update(self, params: dict[str, Any]) -> dict[str, Any]:
        with self._lock:
            channel, message = self._bot_message(params, "cant_update_message")
            previous = dict(message)
            fields = _message_fields(params)
            if "blocks" in params:
                # Slack keeps the previous blocks unless the update sends some ([] clears).
                message.pop("blocks", None)
            message.update(fields)
            message["edited"] = {"user": self.bot_user_id, "ts": self._next_ts()}
            echo = self._changed_event(channel, message, previous)
        self._emit("message_updated", channel, message)
        self._deliver_later(echo)
        return {
            "ok": True,
            "channel": channel,
            "ts": message["ts"],
            "text": message.get("text", ""),
        }

    def _api_start_stream(self, params: dict[str, Any]) -> dict[str, Any]:
        """A streamed reply: a bot message in the thread that grows until stopped. Outside
        DMs Slack needs the recipient user and team."""
        if not self.streaming_supported:
            raise _ApiError("unknown_method")
        with self._lock:
            room = self._room_for_post(str(params.get("channel", "")))
            thread_ts = str(params.get("thread_ts") or "")
            if not thread_ts or self._find(room.id, thread_ts) is None:
                raise _ApiError("invalid_thread_ts")
            if room.kind != "im" and not (
                params.get("recipient_user_id") and params.get("recipient_team_id")
            ):
                raise _ApiError("missing_recipient_user_id")
            message = self._store_message(
                room.id,
                {
                    "user": self.bot_user_id,
                    "bot_id": self.bot_id,
                    "app_id": self.api_app_id,
                    "text": _streamed_text(params, ""),
                    "streaming": True,
                },
                thread_ts,
            )
        self._emit("message_posted", room.id, message)
        return {"ok": True, "channel": room.id, "ts": message["ts"]}

    def _streaming_message(self, params: dict[str, Any]) -> tuple[str, dict[str, Any]]:
        channel, message = self._bot_message(params, "cant_update_message")
        if not message.get("streaming"):
            raise _ApiError("message_not_in_streaming_state")
        return channel, message

    def _api_append_stream(self, params: dict[str, Any]) -> dict[str, Any]:
        with self._lock:
            channel, message = self._streaming_message(params)
            message["text"] = _streamed_text(params, message.get("text", ""))
        self._emit("message_updated", channel, message)
        return {"ok": True, "channel": channel, "ts": message["ts"]}

    def _api_stop_stream(self, params: dict[str, Any]) -> dict[str, Any]:
        with self._lock:
            channel, message = self._streaming_message(params)
            text = _streamed_text(params, message.get("text", ""))
            # The streamed text has its own limits (_streamed_text); the closing blocks are
            # checked as any message's blocks.
            closing = _checked_blocks(params.get("blocks"))
            blocks = [{"type": "markdown", "text": text}, *closing]
            message.pop("streaming", None)
            message["text"] = text
            message["blocks"] = blocks
            echo = self.events_for_message(channel, message)
        self._emit("message_updated", channel, message)
        for payload in echo:
            self._deliver_later(payload)
        return {"ok": True, "channel": channel, "ts": message["ts"], "message": message}

    def _api_delete(self, params: dict[str, Any]) -> dict[str, Any]:
        with self._lock:
            channel, message = self._bot_message(params, "cant_delete_message")
            self.channels[channel].messages.remove(message)
            echo = self._deleted_event(channel, message)
        self._emit("message_deleted", channel, {"ts": message["ts"]})
        self._deliver_later(echo)
        return {"ok": True, "channel": channel, "ts": message["ts"]}

    def _api_post_ephemeral(self, params: dict[str, Any]) -> dict[str, Any]:
        with self._lock:
            room = self._room_for_post(str(params.get("channel", "")))
            user = str(params.get("user", ""))
            if user not in self.users:
                raise _ApiError("user_not_found")
            if user not in room.members:
                raise _ApiError("user_not_in_channel")
            fields = _message_fields(params)
            ephemeral = {"channel": room.id, "user": user, "ts": self._next_ts(), **fields}
            if params.get("thread_ts"):
                ephemeral["thread_ts"] = params["thread_ts"]
            self.ephemerals.append(ephemeral)
        self._emit("ephemeral_posted", room.id, ephemeral)
        return {"ok": True, "message_ts": ephemeral["ts"]}

    def _api_replies(self, params: dict[str, Any]) -> dict[str, Any]:
        with self._lock:
            channel = str(params.get("channel", ""))
            if channel not in self.channels:
                raise _ApiError("channel_not_found")
            ts = str(params.get("ts", ""))
            if self._find(channel, ts) is None:
                raise _ApiError("thread_not_found")
        return {"ok": True, "messages": self.messages(channel, ts), "has_more": False}

    def _api_conversations_info(self, params: dict[str, Any]) -> dict[str, Any]:
        with self._lock:
            room = self.channels.get(str(params.get("channel", "")))
            if room is None:
                raise _ApiError("channel_not_found")
            return {"ok": True, "channel": room.to_api(self.bot_user_id)}

    def _api_reactions_add(self, params: dict[str, Any]) -> dict[str, Any]:
        channel, ts, name = (
            str(params.get("channel", "")),
            str(params.get("timestamp", "")),
            str(params.get("name", "")),
        )
        with self._lock:
            if channel not in self.channels:
                raise _ApiError("channel_not_found")
            message = self._find(channel, ts)
            if message is None:
                raise _ApiError("message_not_found")
            if not self._react(message, self.bot_user_id, name, add=True):
                raise _ApiError("already_reacted")
            echo = self._reaction_event("reaction_added", self.bot_user_id, channel, message, name)
        self._emit(
            "reaction_added", channel, {"ts": ts, "user": self.bot_user_id, "reaction": name}
        )
        self._deliver_later(echo)
        return {"ok": True}

    def _api_set_status(self, params: dict[str, Any]) -> dict[str, Any]:
        channel, thread_ts = str(params.get("channel_id", "")), str(params.get("thread_ts", ""))
        status = str(params.get("status", ""))
        if problem := loading_messages_problem(params.get("loading_messages")):
            raise _ApiError(problem)
        loading = _json_list(params.get("loading_messages"))
        key = (channel, thread_ts)
        with self._lock:
            if not self.status_supported:
                raise _ApiError("missing_scope")
            if channel not in self.channels:
                raise _ApiError("channel_not_found")
            if self._find(channel, thread_ts) is None:
                raise _ApiError("invalid_thread_ts")
            if status:
                # The thread shows the loading messages (rotating) when there are any.
                self.statuses[key] = loading[0] if loading else status
                self.loading_messages[key] = loading
                self._status_since[key] = self.clock()
            else:
                self._clear_status(key)
        self._emit(
            "status_set",
            channel,
            {"thread_ts": thread_ts, "status": status, "loading_messages": loading},
        )
        return {"ok": True}

    def _api_upload_url(self, params: dict[str, Any]) -> dict[str, Any]:
        filename = str(params.get("filename", ""))
        try:
            length = int(params.get("length", ""))
        except ValueError:
            raise _ApiError("invalid_arguments") from None
        if not filename:
            raise _ApiError("invalid_arguments")
        with self._lock:
            file_id = f"F{next(self._ids):010d}"
            self.files[file_id] = {
                "id": file_id,
                "name": filename,
                "title": filename,
                "size": length,
                "alt_txt": str(params.get("alt_txt") or ""),
            }
        return {"ok": True, "upload_url": f"{self.base_url}/upload/{file_id}", "file_id": file_id}

    def respond(self, response_id: str, raw: bytes) -> None:
        """A POST to a slash command's response_url: recorded (an ephemeral reply by default),
        in `responses` and, as method `response_url`, in `calls`."""
        self._observe_acks()
        seq = self._next_seq()
        try:
            body = json.loads(raw or b"{}")
        except ValueError:
            body = {"text": raw.decode(errors="replace")}
        with self._lock:
            self.responses.append({"response_id": response_id, **body})
            self.calls.append(
                ApiCall(
                    "response_url",
                    {"response_id": response_id, **body},
                    200,
                    {"ok": True},
                    time.time(),
                    seq,
                )
            )
            channel, user = self._response_urls.get(response_id, ("", ""))
            ephemeral = {
                "channel": channel,
                "user": user,
                "ts": self._next_ts(),
                "text": str(body.get("text", "")),
                **({"blocks": body["blocks"]} if body.get("blocks") else {}),
            }
            self.ephemerals.append(ephemeral)
        self._emit("ephemeral_posted", channel or None, ephemeral)

    def receive_upload(self, file_id: str, data: bytes) -> bool:
        with self._lock:
            if file_id not in self.files:
                return False
            self._uploads[file_id] = data
            return True

    def file_content(self, file_id: str) -> bytes:
        with self._lock:
            return self._uploads[file_id]

    def _api_complete_upload(self, params: dict[str, Any]) -> dict[str, Any]:
        raw = params.get("files", "[]")
        items = json.loads(raw) if isinstance(raw, str) else raw
        channel = params.get("channel_id")
        shared = []
        with self._lock:
            for item in items:
                info = self.files.get(str(item.get("id")))
                if info is None or info["id"] not in self._uploads:
                    raise _ApiError("file_not_found")
                info["title"] = item.get("title") or info["name"]
                shared.append(dict(info))
            message = None
            if channel:
                room = self._room_for_post(str(channel))
                message = self._store_message(
                    room.id,
                    {
                        "user": self.bot_user_id,
                        "bot_id": self.bot_id,
                        "text": params.get("initial_comment") or "",
                        "files": shared,
                        "upload": True,
                    },
                    params.get("thread_ts") or None,
                )
        if message is not None:
            self._emit("file_shared", str(channel), message)
        return {"ok": True, "files": shared}

    def _api_files_info(self, params: dict[str, Any]) -> dict[str, Any]:
        with self._lock:
            info = self.files.get(str(params.get("file", "")))
            if info is None:
                raise _ApiError("file_not_found")
            return {"ok": True, "file": dict(info)}

    def _api_users_info(self, params: dict[str, Any]) -> dict[str, Any]:
        with self._lock:
            user = self.users.get(str(params.get("user", "")))
            if user is None:
                raise _ApiError("user_not_found")
            return {"ok": True, "user": user.to_api()}


@dataclass
class _ApiAnswer:
    status: int
    body: dict[str, Any]
    headers: dict[str, str] = field(default_factory=dict)


class _ApiError(Exception):
    def __init__(self, error: str) -> None:
        super().__init__(error)
        self.error = error


def _message_fields(params: dict[str, Any]) -> dict[str, Any]:
    """text/blocks of a chat.* call, validated the way Slack does."""
    text = params.get("text")
    blocks = params.get("blocks")
    if isinstance(blocks, str):
        try:
            blocks = json.loads(blocks)
        except ValueError:
            raise _ApiError("invalid_blocks") from None
    if not text and not blocks:
        raise _ApiError("no_text")
    if text and len(str(text)) > MAX_TEXT_CHARS:
        raise _ApiError("msg_too_long")
    fields: dict[str, Any] = {"text": str(text or "")}
    if blocks:
        fields["blocks"] = _checked_blocks(blocks)
    return fields


def _checked_blocks(blocks: Any) -> list[dict[str, Any]]:
    """A message's blocks (JSON text in form-encoded calls), refused the way Slack does."""
    if isinstance(blocks, str):
        try:
            blocks = json.loads(blocks)
        except ValueError:
            raise _ApiError("invalid_blocks") from None
    if not blocks:
        return []
    if not isinstance(blocks, list) or len(blocks) > MAX_BLOCKS:
        raise _ApiError("invalid_blocks")
    if not all(isinstance(block, dict) for block in blocks):
        raise _ApiError("invalid_blocks")
    for block in blocks:
        text = block.get("text")
        section_text = text.get("text", "") if isinstance(text, dict) else ""
        if len(section_text) > MAX_SECTION_CHARS:
            raise _ApiError("invalid_blocks")
    problem = block_problem(blocks)
    if problem:
        raise _ApiError(problem)
    return blocks


def _streamed_text(params: dict[str, Any], so_far: str) -> str:
    """The streamed message's text after a chat.*Stream call: `so_far` plus the call's
    `markdown_text` and `markdown_text` chunks. One call may carry 12,000 characters, the whole
    message about as many (msg_too_long past either); the 4,000 characters of a posted
    message's `text` do not apply."""
    chunks = params.get("chunks") or []
    if isinstance(chunks, str):
        try:
            chunks = json.loads(chunks)
        except ValueError:
            raise _ApiError("invalid_chunks") from None
    if not isinstance(chunks, list) or not all(isinstance(c, dict) for c in chunks):
        raise _ApiError("invalid_chunks")
    pieces = [str(params.get("markdown_text") or "")]
    pieces += [str(c.get("text", "")) for c in chunks if c.get("type") == "markdown_text"]
    added = "".join(pieces)
    if len(added) > MAX_STREAM_CALL_CHARS or len(so_far) + len(added) > MAX_STREAM_CHARS:
        raise _ApiError("msg_too_long")
    return so_far + added


def _json_list(value: Any) -> list[str]:
    """A list parameter (JSON text in form-encoded calls) as a list of strings."""
    if isinstance(value, str):
        value = json.loads(value)
    return [str(item) for item in value or []]


def _on_surface(
    name: str,
) -> Callable[[WebApi, dict[str, Any]], dict[str, Any]]:
    """A Web API method answered by the emulator's AISurface."""

    def method(emulator: WebApi, params: dict[str, Any]) -> dict[str, Any]:
        try:
            answer: dict[str, Any] = getattr(emulator.surface, name)(params)
        except SurfaceError as exc:
            raise _ApiError(exc.error) from None
        return answer

    return method


_METHODS: dict[str, Callable[[WebApi, dict[str, Any]], dict[str, Any]]] = {
    "auth.test": WebApi._api_auth_test,
    "chat.postMessage": WebApi._api_post_message,
    "chat.update": WebApi._api_update,
    "chat.delete": WebApi._api_delete,
    "chat.startStream": WebApi._api_start_stream,
    "chat.appendStream": WebApi._api_append_stream,
    "chat.stopStream": WebApi._api_stop_stream,
    "chat.postEphemeral": WebApi._api_post_ephemeral,
    "conversations.replies": WebApi._api_replies,
    "conversations.info": WebApi._api_conversations_info,
    "reactions.add": WebApi._api_reactions_add,
    "assistant.threads.setStatus": WebApi._api_set_status,
    "files.getUploadURLExternal": WebApi._api_upload_url,
    "files.completeUploadExternal": WebApi._api_complete_upload,
    "files.info": WebApi._api_files_info,
    "users.info": WebApi._api_users_info,
    "assistant.threads.setSuggestedPrompts": _on_surface("set_suggested_prompts"),
    "assistant.threads.setTitle": _on_surface("set_title"),
    "views.publish": _on_surface("views_publish"),
}

_API_PATH = re.compile(r"^/api/([A-Za-z.]+)$")
_UPLOAD_PATH = re.compile(r"^/upload/(F\d+)$")
_RESPONSE_PATH = re.compile(r"^/response/([0-9a-f]+)$")


def handler_for(emulator: WebApi) -> type[BaseHTTPRequestHandler]:
    """The HTTP handler serving `emulator`'s Web API, uploads and response URLs."""

    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, format: str, *args: Any) -> None:
            logger.debug("emulator: " + format, *args)

        def do_POST(self) -> None:
            url = urllib.parse.urlsplit(self.path)
            length = int(self.headers.get("Content-Length") or 0)
            raw = self.rfile.read(length) if length else b""
            upload = _UPLOAD_PATH.match(url.path)
            if upload:
                ok = emulator.receive_upload(upload.group(1), raw)
                self._reply(200 if ok else 404, f"OK - {len(raw)}".encode(), "text/plain")
                return
            response_url = _RESPONSE_PATH.match(url.path)
            if response_url:
                emulator.respond(response_url.group(1), raw)
                self._reply(200, b"ok", "text/plain")
                return
            match = _API_PATH.match(url.path)
            if not match:
                self._reply(404, b"not found", "text/plain")
                return
            params = _parse_params(url.query, raw, self.headers.get("Content-Type", ""))
            token = _bearer(self.headers.get("Authorization")) or params.pop("token", None)
            answer = emulator.handle_api(match.group(1), params, token)
            self._reply(
                answer.status, json.dumps(answer.body).encode(), "application/json", answer.headers
            )

        def _reply(
            self,
            status: int,
            body: bytes,
            content_type: str,
            headers: Mapping[str, str] | None = None,
        ) -> None:
            self.send_response(status)
            self.send_header("Content-Type", content_type)
            self.send_header("Content-Length", str(len(body)))
            for name, value in (headers or {}).items():
                self.send_header(name, value)
            self.end_headers()
            self.wfile.write(body)

    return Handler


def _bearer(header: str | None) -> str | None:
    if header and header.lower().startswith("bearer "):
        return header[7:].strip() or None
    return None


def _parse_params(query: str, raw: bytes, content_type: str) -> dict[str, Any]:
    params: dict[str, Any] = dict(urllib.parse.parse_qsl(query))
    if not raw:
        return params
    if content_type.startswith("application/json"):
        body = json.loads(raw)
        if isinstance(body, dict):
            params.update(body)
    else:
        params.update(urllib.parse.parse_qsl(raw.decode()))
    return params
