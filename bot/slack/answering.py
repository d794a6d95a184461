"""Answering one question in its Slack thread: guardrails, progress, the agent, the answer, memory."""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from typing import Protocol

from slack_sdk import WebClient
from slack_sdk.errors import SlackApiError

from bot import charts, path_image
from bot.settings import Settings
from bot.slack import render
from bot.slack.delivery import Delivery
from bot.slack.progress import Progress, StatusSupport, call, post
from bot.slack.threads import Incoming
from bot.slack.throttle import SlackThrottle
from bot.wiring import record_result
from graph_agent.result import AgentResult, Choice, ProgressEvent
from guardrails.channels import ChannelPolicy, NoticeOnce
from guardrails.cypher_policy import CypherPolicy
from guardrails.limits import QuestionCheck, RateLimiter, TokenBudget, check_question
from guardrails.redact import redact_text
from memory import Memory, Turn

logger = logging.getLogger(__name__)


class AgentPort(Protocol):
    """What the bot needs of `graph_agent.agent.Agent`.

    `policy` is the channel's restrictions: every implementation (the playground's tracing
    wrapper too) must pass it on, and mypy checks that it takes it."""

    def run(
        self,
        question: str,
        *,
        history: Sequence[Turn] = (),
        on_progress: Callable[[ProgressEvent], None] | None = None,
        policy: CypherPolicy | None = None,
        choice: Choice | None = None,
    ) -> AgentResult: ...

    def suggestions(self, n: int = 3) -> list[str]: ...

    def describe(self) -> str: ...


@dataclass(frozen=True)
class Declined:
    """A question the bot will not answer, and what to tell the person (None: nothing)."""

    reason: str
    message: str | None


class Guards(Protocol):
    """Input guardrails and the per-workspace budget, checked before the agent runs."""

    def channel_problem(self, channel: str, is_dm: bool) -> Declined | None: ...

    def question_check(self, text: str) -> QuestionCheck: ...

    def rate_problem(self, user: str) -> str | None: ...

    def budget_problem(self, workspace: str) -> str | None: ...

    def spend(self, workspace: str, tokens: int) -> None: ...

    def policy_for(self, channel: str) -> CypherPolicy | None: ...


BUDGET_MESSAGE = (
    "Today's LLM budget for this workspace is used up, so I can't work out new questions "
    "until it resets at midnight UTC. Questions I've been taught (`/cypherbot examples`) "
    "will work again then too. Sorry for the wait!"
)


class SettingsGuards:
    """The guardrails package configured from Settings: question checks, per-user rate limit,
    channel policy (told once per channel), channel restrictions and the token budget."""

    def __init__(self, settings: Settings) -> None:
        self._max_chars = settings.max_question_chars
        self._channels = ChannelPolicy.from_settings(
            settings.allowed_channels,
            settings.denied_channels,
            settings.allow_dms,
            settings.channel_restrictions,
        )
        self._told = NoticeOnce()
        self._rate = RateLimiter(settings.rate_per_minute, settings.rate_per_day)
        self._budget = TokenBudget(settings.daily_token_budget)

    @property
    def has_restrictions(self) -> bool:
        return any(self._channels.restrictions.values())

    def channel_problem(self, channel: str, is_dm: bool) -> Declined | None:
        decision = self._channels.decide(channel, is_dm)
        if decision.answer:
            return None
        # Told once per channel; after that the bot stays quiet there.
        told = decision.message if self._told.first(f"{decision.reason}:{channel}") else None
        return Declined(decision.reason, told)

    def question_check(self, text: str) -> QuestionCheck:
        return check_question(text, self._max_chars)

    def rate_problem(self, user: str) -> str | None:
        return self._rate.allow(user).message

    def budget_problem(self, workspace: str) -> str | None:
        return BUDGET_MESSAGE if self._budget.state(workspace).over_budget else None

    def spend(self, workspace: str, tokens: int) -> None:
        self._budget.spend(workspace, tokens)

    def policy_for(self, channel: str) -> CypherPolicy | None:
        return self._channels.cypher_policy_for(channel)


@dataclass
class BotDeps:
    """What the listeners need; built once by `create_bot`."""

    settings: Settings
    agent: AgentPort
    memory: Memory
    delivery: Delivery
    guards: Guards
    status: StatusSupport = field(default_factory=StatusSupport)
    throttle: SlackThrottle = field(default_factory=SlackThrottle)
    streaming: StatusSupport | None = field(default_factory=StatusSupport)
    """Where chat streaming works (None: STREAM_ANSWERS=off)."""
    bot_user_id: str = ""
    bot_id: str = ""
    team_id: str = ""
    progress_interval_s: float = 1.0


def _declined(incoming: Incoming, reason: str) -> None:
    logger.info(
        "declined a question (%s) in %s from %s", reason, incoming.conversation, incoming.user
    )


def answer(deps: BotDeps, client: WebClient, incoming: Incoming) -> None:
    """Answer `incoming` in its thread; every failure ends in a kind message, never a raise."""
    settings = deps.settings
    guards = deps.guards
    logger.info(
        "question from %s in %s: %s",
        incoming.user,
        incoming.conversation,
        redact_text(incoming.text, settings.log_user_text),
    )
    declined = guards.channel_problem(incoming.channel, incoming.is_dm)
    if declined is not None:
        _declined(incoming, declined.reason)
        if declined.message:
            post(client, incoming.channel, incoming.thread_ts, render.notice(declined.message))
        return
    checked = guards.question_check(incoming.text)
    if checked.problem == "empty":
        if incoming.has_files:
            tell(client, incoming, render.notice(ATTACHMENTS_ONLY))
        else:
            post(client, incoming.channel, incoming.thread_ts, help_message(deps, incoming.channel))
        return
    # In order, and lazily: a declined question must not count against the user's rate.
    checks: tuple[tuple[str, Callable[[], str | None]], ...] = (
        (checked.problem or "question", lambda: checked.message),
        ("rate", lambda: guards.rate_problem(incoming.user)),
        ("budget", lambda: guards.budget_problem(incoming.team)),
    )
    for reason, check in checks:
        problem = check()
        if problem:
            _declined(incoming, reason)
            if reason in ("rate", "budget"):  # about this person: only they see it
                tell(client, incoming, render.notice(problem))
            else:
                post(client, incoming.channel, incoming.thread_ts, render.notice(problem))
            return
    question = replace(incoming, text=checked.text)
    progress = Progress(
        client,
        question.channel,
        question.thread_ts,
        status=deps.status,
        throttle=deps.throttle,
        team=question.team,
        user=question.user,
        streaming=deps.streaming,
        min_interval_s=deps.progress_interval_s,
    )
    progress.start("Working on it…")
    result: AgentResult | None = None
    try:
        history = deps.memory.conversations.history(
            question.conversation, settings.history_turns, max_chars=settings.history_chars
        )
        if question.is_dm and question.thread_ts != question.ts and not history:
            _title_thread(client, question)
        result = _run_agent(deps, question, history, progress.update)
    except Exception:
        reference = render.reference_id()
        logger.exception(
            "answering failed (ref %s, conversation %s)", reference, question.conversation
        )
        progress.finish(render.error_message("internal", reference))
        return
    guards.spend(question.team, result.prompt_tokens + result.completion_tokens)
    if result.outcome == "failed":
        reference = render.reference_id()
        logger.warning(
            "question failed: %s (ref %s, conversation %s, attempts %d)",
            result.error_kind,
            reference,
            question.conversation,
            len(result.attempts),
        )
        message = render.error_message(result.error_kind or "failed", reference, result.answer)
    else:
        message = render.answer_message(
            result, rows_shown=settings.rows_shown, csv_upload=settings.csv_upload
        )
    if question.has_files:
        message = render.with_note(message, ATTACHMENTS_NOTE)
    # Recorded before posting, so a follow-up typed right after the answer finds the thread.
    turn_id = _record(deps, question, result)
    ts = progress.finish(message)
    for continued in message.more:
        post(client, question.channel, question.thread_ts, continued)
    if ts and turn_id is not None:
        try:
            deps.memory.conversations.attach_message(turn_id, question.channel, ts)
        except Exception:
            logger.exception("could not link turn %s to its message", turn_id)
    if message.csv is not None:
        _upload_csv(client, question, message)
    if settings.charts == "auto" and result.outcome == "answered" and result.rows:
        if result.tool == "connection":
            _upload_route_image(client, question, result)
        else:
            _upload_chart(client, question, result)


ATTACHMENTS_NOTE = "_I don't read attached files: this answers the text of your message._"
ATTACHMENTS_ONLY = (
    "I can't read attached files. Ask me your question in words, "
    "for example _How many services does each team own?_"
)


def tell(client: WebClient, incoming: Incoming, message: render.Rendered) -> None:
    """A reply meant for the asker alone (their rate limit, the workspace's budget): only they
    see it in a channel (ephemeral, in the thread); in a DM it is an ordinary reply."""
    if incoming.is_dm:
        post(client, incoming.channel, incoming.thread_ts, message)
        return
    call(
        client,
        "chat_postEphemeral",
        channel=incoming.channel,
        user=incoming.user,
        thread_ts=incoming.thread_ts,
        text=message.text,
        blocks=message.blocks or None,
    )


def _title_thread(client: WebClient, question: Incoming) -> None:
    """The first question of a DM thread (the split view's threads) names it in the history
    list; workspaces without the AI-app surface refuse, which changes nothing."""
    try:
        client.assistant_threads_setTitle(
            channel_id=question.channel,
            thread_ts=question.thread_ts,
            title=render.truncate(render.shown(question.text, "plain"), 80),
        )
    except SlackApiError as exc:
        logger.debug("no thread title: %s", exc.response.get("error"))


def _run_agent(
    deps: BotDeps,
    incoming: Incoming,
    history: Sequence[Turn],
    on_progress: Callable[[ProgressEvent], None],
) -> AgentResult:
    policy = deps.guards.policy_for(incoming.channel)
    return deps.agent.run(
        incoming.text,
        history=history,
        on_progress=on_progress,
        policy=policy,
        choice=incoming.choice,
    )


def _record(deps: BotDeps, incoming: Incoming, result: AgentResult) -> int | None:
    try:
        return record_result(
            deps.memory.conversations,
            incoming.conversation,
            user=incoming.user,
            question=incoming.text,
            result=result,
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


def _upload_chart(client: WebClient, incoming: Incoming, result: AgentResult) -> None:
    """The answer's chart, after the text (and its CSV) in the same thread, when the rows read
    better as a picture. Drawn in the chart process with a time bound (`charts.Drawer`); any
    failure is logged and costs only the chart: the answer is already posted."""
    try:
        # Titled with the standalone question: "Which of those are tier 1?" names nothing.
        title = result.standalone_question or incoming.text
        drawn = charts.chart_for(title, result.columns, result.rows)
    except Exception:
        logger.warning("no chart for %s", incoming.conversation, exc_info=True)
        return
    if not isinstance(drawn, charts.Chart):
        logger.debug("no chart: %s", drawn.reason)
        return
    _upload_picture(client, incoming, drawn.png, "chart.png", title, drawn.alt_text)


def _upload_route_image(client: WebClient, incoming: Incoming, result: AgentResult) -> None:
    """A connection answer's routes as a picture, after the text in the same thread, when a
    route is longer than two hops. Drawn from the rows the answer was made from (already
    redacted for the channel), in the chart process with its time bound; any failure is logged
    and costs only the picture."""
    try:
        drawn = path_image.image_for(result.columns, result.rows)
    except Exception:
        logger.warning("no route picture for %s", incoming.conversation, exc_info=True)
        return
    if drawn is None:
        return
    _upload_picture(client, incoming, drawn.png, "routes.png", drawn.title, drawn.alt_text)


def _upload_picture(
    client: WebClient, incoming: Incoming, png: bytes, filename: str, title: str, alt_text: str
) -> None:
    """A PNG in the question's thread, its title and alt text made plain (no formatting to
    defuse in Slack's plain text, but no bidi controls or line breaks either)."""
    call(
        client,
        "files_upload_v2",
        channel=incoming.channel,
        thread_ts=incoming.thread_ts,
        content=png,
        filename=filename,
        title=render.truncate(render.shown(title, "plain"), 80),
        alt_txt=render.shown(alt_text, "plain"),
    )


def help_message(deps: BotDeps, channel: str | None = None) -> render.Rendered:
    """What the bot can answer, with example questions; generic in a restricted channel."""
    if channel is not None and deps.guards.policy_for(channel) is not None:
        # The description and suggestions come from the full schema and would name what
        # this channel may not see.
        return render.help_message([], description=None)
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
