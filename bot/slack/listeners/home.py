"""The App Home tab: what the graph holds, the questions people taught, your recent questions."""

from __future__ import annotations

import logging
from typing import Any

from slack_sdk import WebClient
from slack_sdk.errors import SlackApiError

from bot.slack import render
from bot.slack.answering import BotDeps
from bot.slack.listeners.assistant import best_questions

logger = logging.getLogger(__name__)

SHOWN = 8
ADMIN_DAYS = 7


def on_home_opened(
    deps: BotDeps, client: WebClient, event: dict[str, Any], body: dict[str, Any]
) -> None:
    user = event.get("user")
    if event.get("tab") != "home" or not user:
        return
    channel = event.get("channel")
    deps.delivery.submit(
        [f"event:{body.get('event_id', '')}"],
        lambda: publish(deps, client, str(user), str(channel) if channel else None),
    )


def publish(deps: BotDeps, client: WebClient, user: str, channel: str | None) -> None:
    try:
        client.views_publish(user_id=user, view=home_view(deps, user, channel))
    except SlackApiError as exc:
        logger.warning("could not publish the Home tab: %s", exc.response.get("error"))


def home_view(deps: BotDeps, user: str, channel: str | None) -> dict[str, Any]:
    """The Home tab for `user`; `channel` is their DM with the bot (its restrictions apply)."""
    restricted = channel is not None and deps.guards.policy_for(channel) is not None
    blocks: list[render.Block] = [
        {"type": "header", "text": {"type": "plain_text", "text": "Ask the graph"}},
        render.section(
            "Mention me in a channel, send me a direct message, or open me in the side panel "
            "and ask in plain words. Follow up in the thread; react :+1: (or press *Good "
            "answer*) on a right answer and I reuse its query for similar questions."
        ),
    ]
    if not restricted:
        try:
            description = deps.agent.describe()
            blocks.append(render.section(f"*The graph holds* {render.neutralise(description)}"))
        except Exception:
            logger.warning("schema unavailable for the Home tab", exc_info=True)
    questions = best_questions(deps, channel, SHOWN)
    if questions:
        bullets = "\n".join(f"• {render.shown(render.truncate(q, 200))}" for q in questions)
        blocks.append(render.section(f"*Questions to try*\n{bullets}"))
    try:
        mine = deps.memory.conversations.recent_questions(user, SHOWN)
    except Exception:
        logger.warning("recent questions unavailable for the Home tab", exc_info=True)
        mine = []
    if mine:
        bullets = "\n".join(f"• {render.shown(render.truncate(q, 200))}" for q in mine)
        blocks.append(render.section(f"*Your recent questions*\n{bullets}"))
    if user in deps.settings.admin_users:
        blocks.extend(admin_blocks(deps))
    return {"type": "home", "blocks": blocks}


def admin_blocks(deps: BotDeps, days: int = ADMIN_DAYS) -> list[render.Block]:
    """For ADMIN_USERS: the last days' usage and the self-healed examples waiting for review
    (the same figures as `cypherbot stats`, the same ids as `cypherbot examples promote`)."""
    blocks: list[render.Block] = [
        {"type": "divider"},
        {"type": "header", "text": {"type": "plain_text", "text": "For admins"}},
    ]
    try:
        stats = deps.memory.feedback.stats(days)
        waiting = deps.memory.examples.list(status="candidate", limit=SHOWN)
    except Exception:
        logger.warning("usage unavailable for the Home tab", exc_info=True)
        return [*blocks, render.section("Usage is unavailable right now (see the bot's log).")]
    questions = sum(n for _, n in stats.questions_per_day)
    outcomes = ", ".join(f"{name} {n}" for name, n in stats.outcomes.items()) or "none"
    usage = (
        f"*Last {days} days*: {questions} questions ({outcomes}); "
        f":+1: {stats.reactions.get('up', 0)} · :-1: {stats.reactions.get('down', 0)}; "
        f"{stats.llm_calls} LLM calls, {stats.prompt_tokens + stats.completion_tokens:,} tokens."
    )
    blocks.append(render.section(usage))
    if waiting:
        lines = "\n".join(
            f"• #{e.id} {render.neutralise(render.truncate(e.question, 150))}" for e in waiting
        )
        blocks.append(
            render.section(
                f"*Examples waiting for review* (`cypherbot examples promote ID`):\n{lines}"
            )
        )
    else:
        blocks.append(render.section("*Examples waiting for review*: none."))
    return blocks
