"""The split view (Slack's "Agents & AI Apps"): suggested prompts when a person opens a thread
with the bot. Questions typed there arrive as DM thread messages and take the usual path."""

from __future__ import annotations

import logging
from typing import Any

from slack_sdk import WebClient
from slack_sdk.errors import SlackApiError

from bot.slack import render
from bot.slack.answering import BotDeps
from guardrails.cypher_policy import check_cypher

logger = logging.getLogger(__name__)

PROMPTS = 4
"""Slack shows at most four suggested prompts."""
PROMPT_TITLE_CHARS = 75


def best_questions(deps: BotDeps, channel: str | None, n: int) -> list[str]:
    """Questions worth offering: the most up-voted and most used taught examples this channel
    may see, then the agent's own suggestions (questions derived from the schema)."""
    try:
        examples = deps.memory.examples.list(status="active", limit=200)
    except Exception:
        logger.warning("example store unavailable for suggested prompts", exc_info=True)
        examples = []
    policy = deps.guards.policy_for(channel) if channel is not None else None
    if policy is not None:
        examples = [e for e in examples if check_cypher(e.cypher, policy).allowed]
    # Taught by people first (votes, then use), then seeds and schema examples by use.
    examples.sort(key=lambda e: (e.up_votes, e.source != "schema", e.times_used), reverse=True)
    picked = list(dict.fromkeys(e.question for e in examples))[:n]
    if len(picked) < n and policy is None:
        try:
            picked += [q for q in deps.agent.suggestions(n) if q not in picked]
        except Exception:
            logger.warning("schema suggestions unavailable", exc_info=True)
    return picked[:n]


def on_thread_started(
    deps: BotDeps, client: WebClient, event: dict[str, Any], body: dict[str, Any]
) -> None:
    thread = event.get("assistant_thread") or {}
    channel, thread_ts = thread.get("channel_id"), thread.get("thread_ts")
    if not channel or not thread_ts:
        return
    deps.delivery.submit(
        [f"event:{body.get('event_id', '')}"],
        lambda: suggest(deps, client, str(channel), str(thread_ts)),
    )


def suggest(deps: BotDeps, client: WebClient, channel: str, thread_ts: str) -> None:
    """Set the thread's suggested prompts (best effort: the thread works without them)."""
    questions = best_questions(deps, channel, PROMPTS)
    if not questions:
        return
    prompts = [{"title": render.truncate(q, PROMPT_TITLE_CHARS), "message": q} for q in questions]
    try:
        client.assistant_threads_setSuggestedPrompts(
            channel_id=channel, thread_ts=thread_ts, title="Try asking", prompts=prompts
        )
    except SlackApiError as exc:
        logger.warning("could not set suggested prompts: %s", exc.response.get("error"))
