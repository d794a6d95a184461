"""`/cypherbot help|examples|schema`: quick answers only the asker sees."""

from __future__ import annotations

import logging
from typing import Any

from bot.slack import render
from bot.slack.answering import BotDeps, help_message
from guardrails.cypher_policy import check_cypher

logger = logging.getLogger(__name__)

USAGE = "Try `/cypherbot help`, `/cypherbot examples` or `/cypherbot schema`."


def command_reply(deps: BotDeps, text: str, channel: str | None = None) -> render.Rendered:
    """The ephemeral reply to `/cypherbot <text>` typed in `channel`."""
    word = (text.strip().split() or ["help"])[0].lower()
    restricted = channel is not None and deps.guards.policy_for(channel) is not None
    if word == "help":
        return help_message(deps, channel)
    if word == "examples":
        return examples_message(deps, channel=channel)
    if word == "schema":
        if restricted:
            # The description comes from the full schema; this channel may not see all of it.
            return render.notice("The schema isn't shown in this channel. Just ask me a question!")
        try:
            description = deps.agent.describe()
        except Exception:
            logger.warning("schema unavailable for /cypherbot schema", exc_info=True)
            return render.notice(
                "I can't read the graph's schema right now. Please try again later."
            )
        return render.notice(f"*The graph holds* {render.neutralise(description)}")
    return render.notice(f"I don't know `{render.neutralise(word[:30])}`. {USAGE}")


def examples_message(deps: BotDeps, limit: int = 10, channel: str | None = None) -> render.Rendered:
    taught = deps.memory.examples.list(status="active", limit=limit * 5 if channel else limit)
    policy = deps.guards.policy_for(channel) if channel is not None else None
    if policy is not None:
        # Only what this channel could ask: the rest would name what it may not see.
        taught = [e for e in taught if check_cypher(e.cypher, policy).allowed][:limit]
    if not taught:
        return render.notice("Nobody has taught me anything yet. React :+1: to a right answer!")
    lines = []
    for example in taught:
        votes = f" (+{example.up_votes})" if example.up_votes else ""
        lines.append(f"• {render.shown(render.truncate(example.question, 200))}{votes}")
    return render.notice("*Questions I know a verified query for:*\n" + "\n".join(lines))


def ack_payload(reply: render.Rendered) -> dict[str, Any]:
    return {"response_type": "ephemeral", "text": reply.text, "blocks": reply.blocks}
