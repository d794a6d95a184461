"""👍/👎 on the bot's answers: teach, un-teach, vote down; everything else ignored."""

from __future__ import annotations

import logging
from typing import Any, Literal

from slack_sdk import WebClient

from bot.slack import render
from bot.slack.answering import BotDeps
from bot.slack.progress import post
from bot.slack.threads import parse_conversation_key

logger = logging.getLogger(__name__)

THANKS = "Thanks <@{user}> — I'll use this query for similar questions."


def reaction_kind(deps: BotDeps, reaction: str) -> Literal["up", "down"] | None:
    """`+1::skin-tone-3` counts as `+1`; the settings name the teaching/negative reactions."""
    base = reaction.split("::", 1)[0]
    if base == "+1" or base in deps.settings.teach_reactions:
        return "up"
    if base == "-1" or base in deps.settings.negative_reactions:
        return "down"
    return None


def on_reaction(
    deps: BotDeps, client: WebClient, event: dict[str, Any], body: dict[str, Any], *, added: bool
) -> None:
    item = event.get("item") or {}
    user = str(event.get("user") or "")
    kind = reaction_kind(deps, str(event.get("reaction", "")))
    if (
        kind is None
        or item.get("type") != "message"
        or not user
        or user == deps.bot_user_id
        or ("item_user" in event and event["item_user"] != deps.bot_user_id)
    ):
        return
    event_id = str(body.get("event_id", ""))
    deps.delivery.submit(
        [f"event:{event_id}"],
        lambda: apply(deps, client, event, event_id, kind, added=added),
    )


def apply(
    deps: BotDeps,
    client: WebClient,
    event: dict[str, Any],
    event_id: str,
    kind: Literal["up", "down"],
    *,
    added: bool,
) -> None:
    item = event["item"]
    channel, ts, user = str(item["channel"]), str(item["ts"]), str(event["user"])
    turn = deps.memory.conversations.by_message(channel, ts)
    if turn is None:
        return
    fresh = deps.memory.feedback.record_reaction(
        event_id,
        user=user,
        reaction=str(event["reaction"]),
        kind=kind,
        added=added,
        turn_id=turn.id,
        channel=channel,
        ts=ts,
    )
    if not fresh:
        return
    examples = deps.memory.examples
    if kind == "up" and added:
        taught = examples.teach(turn, user)
        logger.info("👍 on turn %s: %s (example %s)", turn.id, taught.status, taught.example_id)
        if taught.first_time_for_user:
            key = parse_conversation_key(turn.conversation)
            thread_ts = key[2] if key else ts
            post(client, channel, thread_ts, render.notice(THANKS.format(user=user)))
    elif kind == "up":
        untaught = examples.untaught(turn, user)
        logger.info("👍 removed on turn %s: %s", turn.id, untaught.status)
    elif added:
        voted = examples.vote_down(turn, user)
        logger.info("👎 on turn %s: counted %s, retired %s", turn.id, voted.counted, voted.retired)
    else:
        examples.undo_vote_down(turn, user)
