"""Answering one question in its Slack thread: guardrails, progress, the agent, the answer, memory."""

from __future__ import annotations

import logging
import threading
import time
from collections import deque
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

from slack_sdk import WebClient

from bot import render
from bot.delivery import Delivery
from bot.progress import Progress, StatusSupport, call, post
from bot.settings import Settings
from bot.threads import Incoming, is_blank
from graph_agent.result import AgentResult, ProgressEvent
from memory import Memory, Turn

logger = logging.getLogger(__name__)


class AgentPort(Protocol):
    """What the bot needs of `graph_agent.agent.Agent`."""

    def run(
        self,
        question: str,
        *,
        history: Sequence[Turn] = (),
        on_progress: Callable[[ProgressEvent], None] | None = None,
    ) -> AgentResult: ...

    def suggestions(self, n: int = 3) -> list[str]: ...

    def describe(self) -> str: ...


class Guards(Protocol):
    """Input guardrails: each answers None (fine) or a kind message for the person."""

    def question_problem(self, text: str) -> str | None: ...

    def rate_problem(self, user: str) -> str | None: ...

    def channel_problem(self, channel: str, is_dm: bool) -> str | None: ...


class SettingsGuards:
    """Question length, per-user rate and channel policy from Settings."""

    def __init__(self, settings: Settings) -> None:
        self._settings = settings
        self._lock = threading.Lock()
        self._seen: dict[str, deque[float]] = {}

    def question_problem(self, text: str) -> str | None:
        limit = self._settings.max_question_chars
        if len(text) > limit:
            return (
                f"That message is {len(text):,} characters long; I take questions of up to "
                f"{limit:,} characters. Could you ask it more briefly?"
            )
        return None

    def rate_problem(self, user: str) -> str | None:
        now = time.monotonic()
        per_minute, per_day = self._settings.rate_per_minute, self._settings.rate_per_day
        with self._lock:
            seen = self._seen.setdefault(user, deque())
            while seen and now - seen[0] > 86_400:
                seen.popleft()
            last_minute = sum(1 for t in seen if now - t < 60)
            if per_minute and last_minute >= per_minute:
                return f"You've asked {per_minute} questions in the last minute — please give me a moment and ask again."
            if per_day and len(seen) >= per_day:
                return f"You've reached today's limit of {per_day} questions. I'll be glad to help again tomorrow."
            seen.append(now)
        return None

    def channel_problem(self, channel: str, is_dm: bool) -> str | None:
        settings = self._settings
        if is_dm:
            if not settings.allow_dms:
                return "I don't answer direct messages here. Mention me in a channel instead."
            return None
        if channel in settings.denied_channels or (
            settings.allowed_channels and channel not in settings.allowed_channels
        ):
            return "I don't answer questions in this channel. Ask me where I'm enabled, or in a DM."
        return None


@dataclass
class BotDeps:
    """What the listeners need; built once by `create_app`."""

    settings: Settings
    agent: AgentPort
    memory: Memory
    delivery: Delivery
    guards: Guards
    status: StatusSupport = field(default_factory=StatusSupport)
    bot_user_id: str = ""
    bot_id: str = ""
    team_id: str = ""
    progress_interval_s: float = 1.0


def answer(deps: BotDeps, client: WebClient, incoming: Incoming) -> None:
    """Answer `incoming` in its thread; every failure ends in a kind message, never a raise."""
    problem = (
        deps.guards.channel_problem(incoming.channel, incoming.is_dm)
        or deps.guards.question_problem(incoming.text)
        or (None if is_blank(incoming.text) else deps.guards.rate_problem(incoming.user))
    )
    if problem:
        logger.info("declined a question in %s: %s", incoming.channel, problem[:60])
        post(client, incoming.channel, incoming.thread_ts, render.notice(problem))
        return
    if is_blank(incoming.text):
        post(client, incoming.channel, incoming.thread_ts, help_message(deps))
        return
    progress = Progress(
        client,
        incoming.channel,
        incoming.thread_ts,
        status=deps.status,
        min_interval_s=deps.progress_interval_s,
    )
    progress.start("Working on it…")
    settings = deps.settings
    result: AgentResult | None = None
    try:
        history = deps.memory.conversations.history(
            incoming.conversation, settings.history_turns, max_chars=settings.history_chars
        )
        result = deps.agent.run(incoming.text, history=history, on_progress=progress.update)
    except Exception:
        reference = render.reference_id()
        logger.exception(
            "answering failed (ref %s, conversation %s)", reference, incoming.conversation
        )
        progress.finish(render.error_message("internal", reference))
        return
    if result.outcome == "failed":
        reference = render.reference_id()
        logger.warning(
            "question failed: %s (ref %s, conversation %s, attempts %d)",
            result.error_kind,
            reference,
            incoming.conversation,
            len(result.attempts),
        )
        message = render.error_message(result.error_kind or "failed", reference)
    else:
        message = render.answer_message(
            result, rows_shown=settings.rows_shown, csv_upload=settings.csv_upload
        )
    # Recorded before posting, so a follow-up typed right after the answer finds the thread.
    turn_id = _record(deps, incoming, result)
    ts = progress.finish(message)
    if ts and turn_id is not None:
        try:
            deps.memory.conversations.attach_message(turn_id, incoming.channel, ts)
        except Exception:
            logger.exception("could not link turn %s to its message", turn_id)
    if message.csv is not None:
        _upload_csv(client, incoming, message)


def _record(deps: BotDeps, incoming: Incoming, result: AgentResult) -> int | None:
    try:
        return deps.memory.conversations.record(
            incoming.conversation,
            user=incoming.user,
            question=incoming.text,
            standalone_question=result.standalone_question or incoming.text,
            cypher=result.cypher,
            answer=result.answer,
            outcome=result.outcome,
            timings_ms=result.timings_ms,
            llm_calls=result.llm_calls,
            prompt_tokens=result.prompt_tokens,
            completion_tokens=result.completion_tokens,
            example_ids=result.example_ids,
            attempts=len(result.attempts),
        )
    except Exception:
        logger.exception("could not record the turn (conversation %s)", incoming.conversation)
        return None


def _upload_csv(client: WebClient, incoming: Incoming, message: render.Rendered) -> None:
    assert message.csv is not None
    call(
        client,
        "files_upload_v2",
        channel=incoming.channel,
        thread_ts=incoming.thread_ts,
        content=message.csv,
        filename=message.csv_name,
        title="Full result",
    )


def help_message(deps: BotDeps) -> render.Rendered:
    try:
        suggestions = deps.agent.suggestions(3)
        description: str | None = deps.agent.describe()
    except Exception:
        logger.warning("no suggestions for the help message", exc_info=True)
        suggestions, description = [], None
    if description:
        description = f"The graph holds {description}"
    return render.help_message(suggestions, description=description)


def busy(client: WebClient, incoming: Incoming) -> Callable[[], None]:
    """The kind "busy" reply for when the worker pool is full."""

    def reply() -> None:
        post(
            client,
            incoming.channel,
            incoming.thread_ts,
            render.error_message("busy", render.reference_id()),
        )

    return reply


def submit(deps: BotDeps, client: WebClient, incoming: Incoming, keys: Sequence[str]) -> bool:
    """Queue `incoming` for an answer unless one of `keys` was already handled."""
    return deps.delivery.submit(
        keys, lambda: answer(deps, client, incoming), on_busy=busy(client, incoming)
    )


def log_event(kind: str, body: dict[str, Any]) -> None:
    logger.debug("%s event %s", kind, body.get("event_id"))
