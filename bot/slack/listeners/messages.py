"""`message.*` events: DMs, channel-thread follow-ups once the bot answered there; the rest ignored."""

from __future__ import annotations

import logging
from typing import Any

from slack_sdk import WebClient

from bot.slack import answering as questions
from bot.slack.answering import BotDeps
from bot.slack.listeners.mentions import message_keys
from bot.slack.threads import conversation_key, incoming, mentions

logger = logging.getLogger(__name__)

ANSWERED_SUBTYPES = {None, "thread_broadcast", "file_share"}
"""A person's new message (with files too: its text is answered); every other subtype (edits,
deletions, joins, bots…) is ignored."""


def on_message(
    deps: BotDeps, client: WebClient, event: dict[str, Any], body: dict[str, Any]
) -> None:
    if not is_from_person(deps, event):
        return
    team = str(body.get("team_id") or deps.team_id)
    channel = str(event["channel"])
    is_dm = event.get("channel_type") == "im"
    if not is_dm:
        thread_ts = event.get("thread_ts")
        followup = bool(thread_ts) and deps.memory.conversations.has_conversation(
            conversation_key(team, channel, str(thread_ts))
        )
        if not followup and not mentions(str(event.get("text") or ""), deps.bot_user_id):
            return
    question = incoming(
        event, team=team, bot_user_id=deps.bot_user_id, event_id=str(body.get("event_id", ""))
    )
    questions.submit(deps, client, question, message_keys(body, event))


def is_from_person(deps: BotDeps, event: dict[str, Any]) -> bool:
    """A new message by a person (not the bot, not another app, not an edit/delete/join)."""
    if event.get("subtype") not in ANSWERED_SUBTYPES:
        logger.debug("ignoring message subtype %s", event.get("subtype"))
        return False
    user = event.get("user")
    return bool(user) and user != deps.bot_user_id and not event.get("bot_id")
