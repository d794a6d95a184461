"""The feedback buttons under an answer (`render.feedback_buttons`, action_id
`render.FEEDBACK_ACTION`): the same teach / vote-down path as 👍 and 👎."""

from __future__ import annotations

import logging
from typing import Any, Literal

from slack_sdk import WebClient

from bot.slack.answering import BotDeps
from bot.slack.listeners import reactions

logger = logging.getLogger(__name__)

VALUES: dict[str, Literal["up", "down"]] = {"good": "up", "bad": "down"}


def on_feedback(deps: BotDeps, client: WebClient, body: dict[str, Any]) -> None:
    """One click: recorded like a reaction added by that person to that answer."""
    actions = body.get("actions") or []
    container = body.get("container") or {}
    user = str((body.get("user") or {}).get("id") or "")
    channel, ts = container.get("channel_id"), container.get("message_ts")
    kind = VALUES.get(str(actions[0].get("value"))) if actions else None
    if kind is None or not user or not channel or not ts or user == deps.bot_user_id:
        logger.debug("ignoring a feedback click without what it needs")
        return
    event = {
        "item": {"type": "message", "channel": str(channel), "ts": str(ts)},
        "user": user,
        "reaction": "+1" if kind == "up" else "-1",
    }
    key = f"action:{channel}:{ts}:{user}:{actions[0].get('action_ts', '')}"
    deps.delivery.submit([key], lambda: reactions.apply(deps, client, event, key, kind, added=True))
