"""The "did you mean…?" buttons under a clarifying answer (`render.choice_buttons`, action_ids
`render.CHOICE_ACTION:<n>`): a click continues the question with the chosen entity, in the
same thread, through the same checks as a typed question."""

from __future__ import annotations

import json
import logging
from typing import Any

from slack_sdk import WebClient

from bot.slack import answering
from bot.slack.answering import BotDeps
from bot.slack.threads import Incoming
from graph_agent.result import Choice

logger = logging.getLogger(__name__)


def clicked(body: dict[str, Any], team: str = "") -> Incoming | None:
    """The question a click continues, or None when the payload lacks what it needs (or its
    value is not a choice: a forged value asks nothing)."""
    actions = body.get("actions") or []
    container = body.get("container") or {}
    message = body.get("message") or {}
    user = str((body.get("user") or {}).get("id") or "")
    channel = str(container.get("channel_id") or (body.get("channel") or {}).get("id") or "")
    message_ts = str(container.get("message_ts") or message.get("ts") or "")
    if not actions or not user or not channel or not message_ts:
        return None
    try:
        choice = Choice.from_dict(json.loads(str(actions[0].get("value") or "")))
    except (ValueError, TypeError, AttributeError):
        return None
    thread_ts = str(container.get("thread_ts") or message.get("thread_ts") or message_ts)
    return Incoming(
        team=str((body.get("team") or {}).get("id") or team),
        channel=channel,
        user=user,
        text=choice.question,
        ts=str(actions[0].get("action_ts") or message_ts),
        thread_ts=thread_ts,
        is_dm=channel.startswith("D"),
        choice=choice,
    )


def on_choice(deps: BotDeps, client: WebClient, body: dict[str, Any]) -> None:
    """One click: answered once per person and clarifying message (a double click or a
    retried payload asks nothing more)."""
    incoming = clicked(body, deps.team_id)
    if incoming is None or incoming.user == deps.bot_user_id:
        logger.debug("ignoring a choice click without what it needs")
        return
    container = body.get("container") or {}
    key = f"choice:{incoming.channel}:{container.get('message_ts', '')}:{incoming.user}"
    deps.delivery.submit([key], lambda: answering.answer(deps, client, incoming))
