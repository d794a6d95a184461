"""What manifest.yml subscribes to reaches a listener (no 404, so no retry storm), and group DMs
(`message.mpim`) are answered like channels: a mention, then follow-ups in its thread without
one. The rig's emulator delivers only the events manifest.yml subscribes to, as Slack does."""

from __future__ import annotations

from typing import Any

import pytest

from rig.scripted_llm import ScriptedChatModel
from rig.slack import ALICE, BOB, CHANNEL, OTHER_BOT_ID, OTHER_BOT_USER, graph_responder
from tests.e2e.conftest import RigFactory
from tests.unit.test_manifest import load

GROUP_DM = "G0GROUPDM"
TEAM_SIZES = (
    "MATCH (p:Person)-[:MEMBER_OF]->(t:Team) "
    "RETURN t.name AS team, count(p) AS people ORDER BY people DESC, team LIMIT 3"
)


def _model() -> ScriptedChatModel:
    return ScriptedChatModel(
        responder=graph_responder(
            lambda q: TEAM_SIZES,
            standalone_for=lambda q, prompt: (
                "Which teams have the fewest people?" if "Previous turns" in prompt else ""
            ),
        )
    )


def test_a_group_dm_follow_up_is_answered_like_a_channel_thread(make_rig: RigFactory) -> None:
    rig = make_rig(_model())
    rig.emulator.add_channel(
        GROUP_DM, "mpdm-alice--bob--cypherbot-1", kind="mpim", members=[ALICE, BOB]
    )
    mention = rig.mention("Which teams have the most people?", channel=GROUP_DM)
    [answer] = rig.wait_answers(GROUP_DM, mention["ts"])
    assert answer["thread_ts"] == mention["ts"]
    follow_up = rig.say("and the fewest?", user=BOB, channel=GROUP_DM, thread_ts=mention["ts"])
    delivered = [d.payload["event"] for d in rig.emulator.deliveries]
    assert any(
        e.get("ts") == follow_up["ts"] and e.get("channel_type") == "mpim" for e in delivered
    ), "the follow-up arrives as message.mpim"
    rig.wait_answers(GROUP_DM, mention["ts"], 2)
    team = rig.emulator.team_id
    history = rig.memory.conversations.history(f"{team}:{GROUP_DM}:{mention['ts']}")
    assert [t.question for t in history] == ["Which teams have the most people?", "and the fewest?"]
    # Chatter in the group DM outside the bot's threads is left alone.
    chatter = rig.say("lunch at noon?", channel=GROUP_DM)
    rig.say("sure", user=BOB, channel=GROUP_DM, thread_ts=chatter["ts"])
    rig.settle()
    assert rig.emulator.bot_replies(GROUP_DM, chatter["ts"]) == []
    assert len(rig.answers(GROUP_DM, mention["ts"])) == 2


def _from_another_bot(channel: str, channel_type: str) -> dict[str, Any]:
    return {
        "type": "message",
        "user": OTHER_BOT_USER,
        "bot_id": OTHER_BOT_ID,
        "text": "beep",
        "ts": "1700000001.000001",
        "channel": channel,
        "channel_type": channel_type,
    }


SAMPLES: dict[str, dict[str, Any]] = {
    "app_mention": {
        **_from_another_bot(CHANNEL, "channel"),
        "type": "app_mention",
        "text": "<@U0CYPHERBOT> beep",
    },
    "app_home_opened": {
        "type": "app_home_opened",
        "user": ALICE,
        "channel": "D0ALICE",
        "tab": "messages",
    },
    "assistant_thread_context_changed": {
        "type": "assistant_thread_context_changed",
        "assistant_thread": {"user_id": ALICE, "channel_id": "D0ALICE", "thread_ts": "1.2"},
    },
    "assistant_thread_started": {
        "type": "assistant_thread_started",
        "assistant_thread": {"user_id": ALICE, "channel_id": "", "thread_ts": ""},
    },
    "message.channels": _from_another_bot(CHANNEL, "channel"),
    "message.groups": _from_another_bot("G0PRIVATE", "group"),
    "message.im": _from_another_bot("D0ALICE", "im"),
    "message.mpim": _from_another_bot(GROUP_DM, "mpim"),
    "reaction_added": {
        "type": "reaction_added",
        "user": ALICE,
        "reaction": "tada",
        "item": {"type": "message", "channel": CHANNEL, "ts": "1700000001.000001"},
    },
    "reaction_removed": {
        "type": "reaction_removed",
        "user": ALICE,
        "reaction": "tada",
        "item": {"type": "message", "channel": CHANNEL, "ts": "1700000001.000001"},
    },
}
"""One event of each kind the manifest may subscribe to, shaped as Slack sends it and such
that the bot does nothing about it (another bot's message, an emoji it ignores)."""


def _subscribed() -> list[str]:
    return sorted(load()["settings"]["event_subscriptions"]["bot_events"])


@pytest.mark.parametrize("name", _subscribed())
def test_every_subscribed_event_reaches_a_listener(make_rig: RigFactory, name: str) -> None:
    assert name in SAMPLES, f"add a sample of {name}: the manifest subscribes to it"
    rig = make_rig(ScriptedChatModel())  # no LLM call may happen
    delivery = rig.emulator.deliver(rig.emulator.envelope(dict(SAMPLES[name])))
    rig.settle()
    assert delivery.status == 200, (name, delivery.status, delivery.body)
