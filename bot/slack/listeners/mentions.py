"""`app_mention` in a channel: answer in the thread (`thread_ts or ts`)."""

from __future__ import annotations

from typing import Any

from slack_sdk import WebClient

from bot.slack import answering as questions
from bot.slack.answering import BotDeps
from bot.slack.threads import incoming


def on_mention(
    deps: BotDeps, client: WebClient, event: dict[str, Any], body: dict[str, Any]
) -> None:
    if event.get("bot_id") or not event.get("user") or event.get("user") == deps.bot_user_id:
        return
    question = incoming(
        event,
        team=str(body.get("team_id") or deps.team_id),
        bot_user_id=deps.bot_user_id,
        event_id=str(body.get("event_id", "")),
    )
    questions.submit(deps, client, question, message_keys(body, event))


def message_keys(body: dict[str, Any], event: dict[str, Any]) -> list[str]:
    """Dedupe keys: the delivery (Slack's retries) and the message (mention + message twins)."""
    return [f"event:{body.get('event_id', '')}", f"msg:{event['channel']}:{event['ts']}"]
