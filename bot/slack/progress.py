"""Live status of one question in its thread: assistant status or a placeholder, then the final answer."""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from typing import Any

from slack_sdk import WebClient
from slack_sdk.errors import SlackApiError

from bot.slack.render import Rendered, Streamed
from bot.slack.throttle import SlackThrottle
from graph_agent.result import ProgressEvent

logger = logging.getLogger(__name__)

# setStatus errors that hold for the whole app (scope, token type, method gone): status is
# off everywhere for APP_PAUSE_S. Any other refusal (access_denied in one channel, a team not
# allowed, a feature off for one workspace) turns it off in that channel for CHANNEL_PAUSE_S.
_APP_WIDE = {"missing_scope", "not_allowed_token_type", "unknown_method", "method_deprecated"}
_CHANNEL_WIDE = {"access_denied", "team_not_allowed", "feature_not_enabled", "not_in_channel"}
APP_PAUSE_S = 3600.0
CHANNEL_PAUSE_S = 600.0
STREAM_PIECE_CHARS = 400
"""Answer text per chat.appendStream call: a few calls for a usual answer, within Tier 3."""


class StatusSupport:
    """Where a Slack feature works (the assistant status; chat streaming), learned from its
    refusals: off in one channel (or, for app-wide errors, everywhere) for a while, then tried
    again."""

    def __init__(self, enabled: bool = True, *, clock: Callable[[], float] = time.monotonic):
        self._clock = clock
        self._off_until: dict[str, float] = {}
        if not enabled:
            self._off_until["*"] = float("inf")

    def available(self, channel: str) -> bool:
        now = self._clock()
        return all(self._off_until.get(key, 0.0) <= now for key in ("*", channel))

    def refused(self, channel: str, error: str) -> bool:
        """Record a refusal; True when it turned status off (the error is not transient)."""
        if error in _APP_WIDE:
            self._off_until["*"] = self._clock() + APP_PAUSE_S
        elif error in _CHANNEL_WIDE:
            self._off_until[channel] = self._clock() + CHANNEL_PAUSE_S
        else:
            return False
        return True


class Progress:
    """Shows "Working on it…" at once, then the agent's steps at most every `min_interval_s`,
    through `assistant.threads.setStatus` where it works, else a placeholder message updated
    in place. `finish` replaces the status with the answer (new message + placeholder removed
    when the update fails). Slack errors are logged, never raised.

    No lock is held across a Slack call. Progress steps go through a client without the
    rate-limit retry (a 429 drops the step: the next one supersedes it) and through the
    process-wide `SlackThrottle`, which skips steps when the workspace's budget is spent; the
    final answer always goes."""

    def __init__(
        self,
        client: WebClient,
        channel: str,
        thread_ts: str,
        *,
        status: StatusSupport,
        throttle: SlackThrottle | None = None,
        team: str = "",
        user: str = "",
        streaming: StatusSupport | None = None,
        min_interval_s: float = 1.0,
    ) -> None:
        self._client = client
        self._steps = _without_retries(client)
        self._channel = channel
        self._thread_ts = thread_ts
        self._status = status
        self._throttle = throttle or SlackThrottle()
        self._team = team
        self._user = user
        self._streaming = streaming
        """Where chat streaming works (None: never stream)."""
        self._interval = min_interval_s
        self._lock = threading.Condition()
        self._mode: str = "none"
        """status (setStatus works), placeholder (a message we update) or none."""
        self.placeholder_ts: str | None = None
        self._last_sent = 0.0
        self._last_text = ""
        self._pending: str | None = None
        self._timer: threading.Timer | None = None
        self._sending = False
        self._closed = False
        self.skipped = 0
        """Progress steps not sent (over the shared budget, or refused by Slack)."""

    def start(self, text: str = "Working on it…") -> None:
        mode, placeholder = "placeholder", None
        if self._status.available(self._channel) and self._set_status(text, self._client):
            mode = "status"
        else:
            placeholder = self._post_placeholder(text)
        with self._lock:
            self._mode, self.placeholder_ts = mode, placeholder
            self._last_sent = time.monotonic()
            self._last_text = text

    def update(self, event: ProgressEvent) -> None:
        """A progress event from the agent; throttled, latest wins, and never blocking.

        The agent calls this from its event loop, which every question in the process shares,
        so the Slack call happens on a timer thread, not here."""
        with self._lock:
            if self._closed or event.text == self._last_text:
                return
            self._pending = event.text
            self._schedule()

    def _schedule(self) -> None:
        """Start the timer for the pending step (lock held)."""
        if self._timer is None and not self._sending and self._pending is not None:
            wait = self._interval - (time.monotonic() - self._last_sent)
            self._timer = threading.Timer(max(wait, 0.0), self._flush)
            self._timer.daemon = True
            self._timer.start()

    def _flush(self) -> None:
        with self._lock:
            self._timer = None
            if self._closed or self._pending is None:
                return
            text, self._pending = self._pending, None
            self._sending = True
            self._last_sent = time.monotonic()
            self._last_text = text
        try:
            self._send_step(text)
        finally:
            with self._lock:
                self._sending = False
                self._lock.notify_all()
                if not self._closed:
                    self._schedule()

    def _send_step(self, text: str) -> None:
        method = "assistant.threads.setStatus" if self._mode == "status" else "chat.update"
        if self._mode == "placeholder" and not self.placeholder_ts:
            return
        if not self._throttle.may_send(method, team=self._team, channel=self._channel):
            self.skipped += 1
            return
        if self._mode == "status":
            sent = self._set_status(text, self._steps)
        else:
            sent = (
                call(
                    self._steps,
                    "chat_update",
                    channel=self._channel,
                    ts=self.placeholder_ts,
                    text=text,
                )
                is not None
            )
        if not sent:
            self.skipped += 1

    def finish(self, message: Rendered, *, wait_s: float = 30.0) -> str | None:
        """Post the final message; return its ts (None if Slack refused everything).

        Waits for a progress step already on its way (bounded by the client's timeout), so
        that it cannot land after the answer and overwrite it."""
        with self._lock:
            self._closed = True
            if self._timer is not None:
                self._timer.cancel()
                self._timer = None
            self._lock.wait_for(lambda: not self._sending, timeout=wait_s)
            placeholder, mode = self.placeholder_ts, self._mode
        if mode == "status" and message.stream is not None and self._may_stream():
            streamed = self._stream(message.stream)
            if streamed is not None:
                return streamed
        if placeholder:
            self._throttle.spend("chat.update", team=self._team, channel=self._channel)
            updated = self._call(
                "chat_update",
                channel=self._channel,
                ts=placeholder,
                text=message.text,
                blocks=message.blocks or None,
            )
            if updated is not None:
                return placeholder
        self._throttle.spend("chat.postMessage", team=self._team, channel=self._channel)
        ts = post(self._client, self._channel, self._thread_ts, message)
        if placeholder:
            self._call("chat_delete", channel=self._channel, ts=placeholder)
        elif ts is None and mode == "status":
            self._set_status("", self._client)
        return ts

    def _may_stream(self) -> bool:
        return self._streaming is not None and self._streaming.available(self._channel)

    def _stream(self, answer: Streamed) -> str | None:
        """Stream the answer's text into the thread (chat.startStream, appendStream in pieces,
        stopStream with the closing blocks); its ts, or None to post it instead. A stream that
        fails half way is deleted first, so the answer is never there twice."""
        assert self._streaming is not None
        stream = None
        try:
            stream = self._client.chat_stream(
                channel=self._channel,
                thread_ts=self._thread_ts,
                recipient_team_id=self._team or None,
                recipient_user_id=self._user or None,
                buffer_size=STREAM_PIECE_CHARS,
            )
            for start in range(0, len(answer.markdown), STREAM_PIECE_CHARS):
                self._throttle.spend("chat.appendStream", team=self._team, channel=self._channel)
                stream.append(markdown_text=answer.markdown[start : start + STREAM_PIECE_CHARS])
            stopped = stream.stop(blocks=answer.blocks or None)
            return str(stopped["ts"])
        except SlackApiError as exc:
            error = str(exc.response.get("error", ""))
            if self._streaming.refused(self._channel, error):
                logger.info("chat streaming unavailable in %s (%s): posting", self._channel, error)
            else:
                logger.warning("chat streaming failed (%s): posting instead", error)
        except Exception as exc:
            logger.warning("chat streaming failed (%s): posting instead", type(exc).__name__)
        if stream is not None and stream.ts:
            self._call("chat_delete", channel=self._channel, ts=stream.ts)
        return None

    def _set_status(self, text: str, client: WebClient) -> bool:
        try:
            client.assistant_threads_setStatus(
                channel_id=self._channel, thread_ts=self._thread_ts, status=text
            )
            return True
        except SlackApiError as exc:
            error = str(exc.response.get("error", ""))
            if self._status.refused(self._channel, error):
                logger.info(
                    "assistant.threads.setStatus unavailable in %s (%s): using placeholders "
                    "for a while",
                    self._channel,
                    error,
                )
            else:
                logger.warning("assistant.threads.setStatus failed: %s", error)
            return False
        except Exception as exc:
            logger.warning("assistant.threads.setStatus failed: %s", type(exc).__name__)
            return False

    def _post_placeholder(self, text: str) -> str | None:
        self._throttle.spend("chat.postMessage", team=self._team, channel=self._channel)
        response = self._call(
            "chat_postMessage", channel=self._channel, thread_ts=self._thread_ts, text=text
        )
        return str(response["ts"]) if response is not None else None

    def _call(self, method: str, **kwargs: Any) -> dict[str, Any] | None:
        return call(self._client, method, **kwargs)


def _without_retries(client: WebClient) -> WebClient:
    """The same client without retry handlers: a rate-limited progress step is dropped, not
    slept on (the SDK's RateLimitErrorRetryHandler sleeps for Retry-After)."""
    if not isinstance(client, WebClient) or not client.retry_handlers:
        return client
    return WebClient(
        token=client.token,
        base_url=client.base_url,
        timeout=client.timeout,
        ssl=client.ssl,
        proxy=client.proxy,
        headers=client.headers,
        retry_handlers=[],
    )


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
