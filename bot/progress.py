"""Live status of one question in its thread: assistant status or a placeholder, then the final answer."""

from __future__ import annotations

import logging
import threading
import time
from typing import Any

from slack_sdk import WebClient
from slack_sdk.errors import SlackApiError

from bot.render import Rendered
from graph_agent.result import ProgressEvent

logger = logging.getLogger(__name__)

# Errors meaning `assistant.threads.setStatus` will never work for this app (scope, plan, old
# workspace): stop trying it for the life of the process.
_STATUS_UNAVAILABLE = {
    "missing_scope",
    "not_allowed_token_type",
    "unknown_method",
    "method_deprecated",
    "feature_not_enabled",
    "access_denied",
    "team_not_allowed",
}


class StatusSupport:
    """Whether `assistant.threads.setStatus` works for this app (learned on first failure)."""

    def __init__(self, enabled: bool = True) -> None:
        self.enabled = enabled


class Progress:
    """Shows "Working on it…" at once, then the agent's steps at most every `min_interval_s`,
    through `assistant.threads.setStatus` where it works, else a placeholder message updated
    in place. `finish` replaces the status with the answer (new message + placeholder removed
    when the update fails). Slack errors are logged, never raised."""

    def __init__(
        self,
        client: WebClient,
        channel: str,
        thread_ts: str,
        *,
        status: StatusSupport,
        min_interval_s: float = 1.0,
    ) -> None:
        self._client = client
        self._channel = channel
        self._thread_ts = thread_ts
        self._status = status
        self._interval = min_interval_s
        self._lock = threading.Lock()
        self._mode: str = "none"
        """status (setStatus works), placeholder (a message we update) or none."""
        self.placeholder_ts: str | None = None
        self._last_sent = 0.0
        self._last_text = ""
        self._pending: str | None = None
        self._timer: threading.Timer | None = None
        self._closed = False

    def start(self, text: str = "Working on it…") -> None:
        with self._lock:
            if self._status.enabled and self._set_status(text):
                self._mode = "status"
            else:
                self._mode = "placeholder"
                self.placeholder_ts = self._post_placeholder(text)
            self._last_sent = time.monotonic()
            self._last_text = text

    def update(self, event: ProgressEvent) -> None:
        """A progress event from the agent; throttled, latest wins, and never blocking.

        The agent calls this from its event loop, which every question in the process shares,
        so the Slack call (and any rate-limit retry) happens on a timer thread, not here."""
        with self._lock:
            if self._closed or event.text == self._last_text:
                return
            wait = self._interval - (time.monotonic() - self._last_sent)
            self._pending = event.text
            if self._timer is None:
                self._timer = threading.Timer(max(wait, 0.0), self._flush)
                self._timer.daemon = True
                self._timer.start()

    def _flush(self) -> None:
        with self._lock:
            self._timer = None
            if self._closed or self._pending is None:
                return
            text, self._pending = self._pending, None
            self._send(text)

    def _send(self, text: str) -> None:
        self._last_sent = time.monotonic()
        self._last_text = text
        if self._mode == "status":
            self._set_status(text)
        elif self._mode == "placeholder" and self.placeholder_ts:
            self._call("chat_update", channel=self._channel, ts=self.placeholder_ts, text=text)

    def finish(self, message: Rendered) -> str | None:
        """Post the final message; return its ts (None if Slack refused everything)."""
        with self._lock:
            self._closed = True
            if self._timer is not None:
                self._timer.cancel()
                self._timer = None
            placeholder = self.placeholder_ts
        if placeholder:
            updated = self._call(
                "chat_update",
                channel=self._channel,
                ts=placeholder,
                text=message.text,
                blocks=message.blocks or None,
            )
            if updated is not None:
                return placeholder
        ts = post(self._client, self._channel, self._thread_ts, message)
        if placeholder:
            self._call("chat_delete", channel=self._channel, ts=placeholder)
        elif ts is None and self._mode == "status":
            self._set_status("")
        return ts

    def _set_status(self, text: str) -> bool:
        try:
            self._client.assistant_threads_setStatus(
                channel_id=self._channel, thread_ts=self._thread_ts, status=text
            )
            return True
        except SlackApiError as exc:
            error = str(exc.response.get("error", ""))
            if error in _STATUS_UNAVAILABLE:
                logger.info(
                    "assistant.threads.setStatus unavailable (%s): using placeholders", error
                )
                self._status.enabled = False
            else:
                logger.warning("assistant.threads.setStatus failed: %s", error)
            return False
        except Exception as exc:
            logger.warning("assistant.threads.setStatus failed: %s", type(exc).__name__)
            return False

    def _post_placeholder(self, text: str) -> str | None:
        response = self._call(
            "chat_postMessage", channel=self._channel, thread_ts=self._thread_ts, text=text
        )
        return str(response["ts"]) if response is not None else None

    def _call(self, method: str, **kwargs: Any) -> dict[str, Any] | None:
        return call(self._client, method, **kwargs)


def call(client: WebClient, method: str, **kwargs: Any) -> dict[str, Any] | None:
    """One Web API call; Slack errors are logged and give None (never fatal)."""
    try:
        response = getattr(client, method)(**kwargs)
        return dict(response.data) if isinstance(response.data, dict) else {}
    except SlackApiError as exc:
        logger.warning(
            "Slack %s failed: %s (channel %s)",
            method,
            exc.response.get("error"),
            kwargs.get("channel") or kwargs.get("channel_id"),
        )
    except Exception as exc:
        logger.warning("Slack %s failed: %s", method, type(exc).__name__)
    return None


def post(client: WebClient, channel: str, thread_ts: str | None, message: Rendered) -> str | None:
    """Post `message` in the thread; if Slack rejects the blocks, post the plain text."""
    response = call(
        client,
        "chat_postMessage",
        channel=channel,
        thread_ts=thread_ts,
        text=message.text,
        blocks=message.blocks or None,
    )
    if response is None and message.blocks:
        response = call(
            client, "chat_postMessage", channel=channel, thread_ts=thread_ts, text=message.text
        )
    return str(response["ts"]) if response is not None else None
