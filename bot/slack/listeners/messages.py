"""`message.*` events: DMs, and follow-ups in channel and group-DM threads once the bot answered there; the rest ignored."""

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

ANSWERED_CHANNEL_TYPES = frozenset({"im", "channel", "group", "mpim"})
"""The `channel_type`s whose messages are answered: in a DM (`im`) every message; in public
and private channels and group DMs (`mpim`) a mention, or a follow-up in a thread the bot
answered in. manifest.yml subscribes to each one's `message.*` event with its `*:history`
scope (tests/unit/test_manifest.py checks it)."""


def on_message(
    deps: BotDeps, client: WebClient, event: dict[str, Any], body: dict[str, Any]
) -> None:
    if not is_from_person(deps, event):
        return
    team = str(body.get("team_id") or deps.team_id)
    channel = str(event["channel"])
    question = incoming(
        event, team=team, bot_user_id=deps.bot_user_id, event_id=str(body.get("event_id", ""))
    )
    keys = message_keys(body, event)
    if event.get("channel_type") == "im" or mentions(
        str(event.get("text") or ""), deps.bot_user_id
    ):
        questions.submit(deps, client, question, keys)
        return
    thread_ts = event.get("thread_ts")
    if not thread_ts:
        return  # channel chatter outside any thread
    # Whether the bot answered in this thread is a read of the memory store: the worker makes
    # it after the ack (Delivery's `wanted`), so no database call is ever made inside one.
    conversation = conversation_key(team, channel, str(thread_ts))
    deps.delivery.submit(
        keys,
        lambda: questions.answer(deps, client, question),
        on_busy=questions.busy(client, question),
        wanted=lambda: deps.memory.conversations.has_conversation(conversation),
    )


def is_from_person(deps: BotDeps, event: dict[str, Any]) -> bool:
    """A new message by a person (not the bot, not another app, not an edit/delete/join)."""
    if event.get("subtype") not in ANSWERED_SUBTYPES:
        logger.debug("ignoring message subtype %s", event.get("subtype"))
        return False
    user = event.get("user")
    return bool(user) and user != deps.bot_user_id and not event.get("bot_id")
