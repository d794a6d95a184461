"""Hostile values stored in the graph, asked about through the real Bolt app and the emulator:
streamed (DM and channel thread) and posted, no broadcast, mention or link reaches Slack that
the bot's own text did not put there, and each value is still there to read."""

from __future__ import annotations

import pytest
from langchain_core.messages import BaseMessage

from bot.playground.emulator_state import slack_entities
from graph_agent.graphdb import GraphDB
from rig.scripted_llm import ScriptedChatModel, cypher_reply, evaluation_reply, guard_reply
from rig.slack import ALICE, CHANNEL, answer_text, prompt_kind
from tests.e2e.conftest import RigFactory
from tests.unit.test_render import HOSTILE, as_read, readable

TEAMS = "MATCH (t:Team) RETURN t.name AS team ORDER BY team"
ANSWER = "**Found**: " + " ; ".join(HOSTILE) + " ."
"""What a model that copies the stored names into its answer says (grounded in the rows)."""


def _copying_model() -> ScriptedChatModel:
    def reply(messages: list[BaseMessage]) -> str:
        kind = prompt_kind(messages)
        if kind == "guard":
            return guard_reply()
        if kind in ("generate", "correct"):
            return cypher_reply(TEAMS)
        if kind == "evaluate":
            return evaluation_reply(answer=ANSWER)
        raise AssertionError(f"unexpected prompt: {str(messages[0].content)[:80]}")

    return ScriptedChatModel(responder=reply)


@pytest.mark.parametrize("where", ["dm_streamed", "thread_streamed", "thread_posted"])
def test_stored_values_cannot_ping_link_or_hide_a_link(
    make_rig: RigFactory, scratch_db: GraphDB, where: str
) -> None:
    scratch_db.run_write("UNWIND $names AS name CREATE (:Team {name: name})", {"names": HOSTILE})
    overrides = {"stream_answers": "off"} if where == "thread_posted" else {}
    rig = make_rig(_copying_model(), db=scratch_db, **overrides)
    if where == "dm_streamed":
        channel = rig.emulator.open_dm(ALICE).id
        question = rig.dm("Which teams are there?")
    else:
        channel = CHANNEL
        question = rig.mention("Which teams are there?")
    [answer] = rig.wait_answers(channel, question["ts"])

    streamed = answer["blocks"][0]["type"] == "markdown"
    assert streamed == (where != "thread_posted")
    text = answer_text(answer)
    assert "Found" in text and "MATCH (t:Team)" in text, "the graph's rows were answered"
    # What Slack would parse into a broadcast, a mention or a link: none, in any bot message
    # of the thread (answer, table, query, context line, and the fallback text).
    for message in rig.emulator.bot_replies(channel, question["ts"]):
        assert slack_entities(message) == [], message
    # Each value is still there for a person to read, in the answer's own text.
    said = answer["blocks"][0]["text"]
    said = said if streamed else said["text"]
    for value in HOSTILE:
        assert readable(value) in as_read(said, markdown=streamed), value
    assert "\u202e" not in text
    # The bot's own formatting is kept: bold, the query's label and code block.
    assert ("**Found**" if streamed else "*Found*") in said
    assert "*Query*\n```\nMATCH (t:Team)" in text
