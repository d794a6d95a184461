"""Live status of one question in its thread: assistant status or a placeholder, then the final answer."""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Sequence
from typing import Any

from slack_sdk import WebClient
from slack_sdk.errors import SlackApiError

from bot.slack.render import Rendered, Streamed, shown, split_text, truncate
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
STREAM_MAX_CHARS = 10_000
"""Longest answer text streamed: Slack refuses a streamed message past about 12,000
characters (msg_too_long on chat.appendStream), so a longer answer is posted in messages."""
STATUS = "is working on your question…"
"""The assistant status, the same for a whole question. The changing step texts go as
`loading_messages`, which Slack shows as written (it may reword `status`), as Slack's
assistant template does."""
SETTLE_S = 0.15
"""A step waits this long for a later one (steps come in bursts): what shows after a model
call is the last of its burst, usually the rows found, not "Checking the query…"."""
PREVIEW_CHARS = 1_500
"""Rows shown in a placeholder while the answer is written (the rest comes with the answer)."""
STATUS_PREVIEW_CHARS = 150
"""Rows shown in the status line's loading message: one short line."""
PIECE_CHARS = 3_000
"""Text per message when a refused message is posted in pieces: well under the ~4,000
characters of `text` where Slack answers msg_too_long."""
CONTENT_REFUSALS = frozenset(
    {"msg_too_long", "msg_blocks_too_long", "invalid_blocks", "invalid_blocks_format", "no_text"}
)
"""What Slack answers for a message it will not take as it is (its size or its blocks): the
whole text then goes out in pieces, never cut to the fallback text."""


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
            text = preview_text(event.preview, self._mode) if event.preview else event.text
            if self._closed or text == self._last_text:
                return
            # Latest wins: the rows found replace a step still waiting to go out.
            self._pending = text
            self._schedule()

    @property
    def pending(self) -> str | None:
        """The text that goes out next (None: nothing waiting)."""
        with self._lock:
            return self._pending

    def _schedule(self) -> None:
        """Start the timer for the pending step (lock held)."""
        if self._timer is None and not self._sending and self._pending is not None:
            # At most one update per interval, and never before the steps that come in a burst
            # (validate, execute, the rows found: a few ms apart) have settled on the last one.
            wait = self._interval - (time.monotonic() - self._last_sent)
            self._timer = threading.Timer(max(wait, SETTLE_S), self._flush)
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
        stream = message.stream
        if (
            mode == "status"
            and stream is not None
            and len(stream.markdown) <= STREAM_MAX_CHARS
            and self._may_stream()
        ):
            streamed = self._stream(stream)
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
        """Show `text` as the thread's loading message under the fixed `STATUS` ("": clear)."""
        try:
            client.assistant_threads_setStatus(
                channel_id=self._channel,
                thread_ts=self._thread_ts,
                status=STATUS if text else "",
                loading_messages=[text] if text else None,
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


def preview_text(preview: str, mode: str) -> str:
    """The rows found, shown while the model writes the answer: a short line for the status
    line's loading message, else a few lines for the placeholder message. Database values,
    so shown through `shown` like every stored value."""
    if mode == "status":
        # Plain text (not parsed by Slack); "@" kept from ever reading as a broadcast anyway.
        line = shown(" ".join(preview.split()), "plain").replace("@", "@\u200b")
        return truncate(f"Found: {line}", STATUS_PREVIEW_CHARS) + " · writing the answer…"
    return f"_Found (writing the answer…):_\n{truncate(shown(preview), PREVIEW_CHARS)}"


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
    return _attempt(client, method, **kwargs)[0]


def _attempt(client: WebClient, method: str, **kwargs: Any) -> tuple[dict[str, Any] | None, str]:
    """One Web API call: (its response, "") or (None, Slack's error), the error logged."""
    try:
        response = getattr(client, method)(**kwargs)
        return (dict(response.data) if isinstance(response.data, dict) else {}), ""
    except SlackApiError as exc:
        error = str(exc.response.get("error") or "")
        logger.warning(
            "Slack %s failed: %s (channel %s)",
            method,
            error,
            kwargs.get("channel") or kwargs.get("channel_id"),
        )
        return None, error
    except Exception as exc:
        logger.warning("Slack %s failed: %s", method, type(exc).__name__)
        return None, type(exc).__name__


def post(client: WebClient, channel: str, thread_ts: str | None, message: Rendered) -> str | None:
    """Post `message` in the thread and return its ts. When Slack refuses it for its size or
    its blocks (`CONTENT_REFUSALS`), its whole text goes out in plain messages instead
    (`post_in_pieces`): the answer is never cut to its fallback text."""
    response, error = _attempt(
        client,
        "chat_postMessage",
        channel=channel,
        thread_ts=thread_ts,
        text=message.text,
        blocks=message.blocks or None,
    )
    if response is not None:
        return str(response["ts"])
    if error not in CONTENT_REFUSALS:
        return None
    logger.info("Slack refused a message (%s): posting its text in pieces", error)
    return post_in_pieces(client, channel, thread_ts, message_texts(message))


def post_in_pieces(
    client: WebClient, channel: str, thread_ts: str | None, texts: Sequence[str]
) -> str | None:
    """`texts` (mrkdwn, in order) as plain messages of at most `PIECE_CHARS`, each text whole
    where it fits; the ts of the first. Should Slack refuse one of them too, the rest goes as
    a text file in the thread."""
    first: str | None = None
    pieces = _pieces(texts)
    for n, piece in enumerate(pieces):
        response = call(
            client, "chat_postMessage", channel=channel, thread_ts=thread_ts, text=piece
        )
        if response is None:
            _upload_rest(client, channel, thread_ts, "\n\n".join(pieces[n:]))
            break
        first = first or str(response["ts"])
    return first


def message_texts(message: Rendered) -> list[str]:
    """Everything a reader sees in `message`, as mrkdwn: the text of each of its blocks in
    order (a row of buttons as the list of their labels), or its `text` without blocks."""
    texts: list[str] = []
    for block in message.blocks:
        text = block.get("text")
        if isinstance(text, str):  # a markdown block
            texts.append(text)
        elif isinstance(text, dict):
            texts.append(str(text.get("text") or ""))
        texts += [str(f.get("text") or "") for f in block.get("fields") or []]
        for element in block.get("elements") or []:
            if not isinstance(element, dict):
                continue
            label = element.get("text")
            if isinstance(label, str):  # context text
                texts.append(label)
            elif isinstance(label, dict) and element.get("type") == "button":
                texts.append(f"• {label.get('text', '')}")
    found = [t for t in texts if t.strip()]
    return found or [message.text]


def _pieces(texts: Sequence[str]) -> list[str]:
    """`texts` packed into pieces of at most `PIECE_CHARS`; a text is cut only when it is
    longer than that on its own (a block's text is at most 3,000 characters: never)."""
    pieces: list[str] = []
    for text in texts:
        for part in split_text(text, PIECE_CHARS) if len(text) > PIECE_CHARS else [text]:
            if not part.strip():
                continue
            if pieces and len(pieces[-1]) + 2 + len(part) <= PIECE_CHARS:
                pieces[-1] += "\n\n" + part
            else:
                pieces.append(part)
    return pieces


def _upload_rest(client: WebClient, channel: str, thread_ts: str | None, text: str) -> None:
    """The rest of an answer Slack would not take as messages, as a text file in the thread
    (plain text: the mrkdwn escapes undone, nothing in a file pings or links)."""
    plain = text.replace("&lt;", "<").replace("&gt;", ">").replace("&amp;", "&")
    uploaded = call(
        client,
        "files_upload_v2",
        channel=channel,
        thread_ts=thread_ts,
        content=plain,
        filename="answer.txt",
        title="The rest of the answer",
    )
    if uploaded is None:
        logger.error("Slack refused the answer as messages and as a file (channel %s)", channel)
