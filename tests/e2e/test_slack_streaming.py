"""Streamed answers (chat.startStream / appendStream / stopStream through the SDK's chat_stream):
where the assistant status works, the answer's text is streamed and the table, query and
feedback buttons close the message; where streaming is refused, the answer is posted."""

from __future__ import annotations

from rig.scripted_llm import ScriptedChatModel
from rig.slack import ALICE, CHANNEL, answer_text, graph_responder
from tests.e2e.conftest import RigFactory

TEAM_COUNT = "MATCH (t:Team) RETURN count(t) AS teams"


def _model() -> ScriptedChatModel:
    return ScriptedChatModel(responder=graph_responder(lambda q: TEAM_COUNT))


def test_a_dm_answer_is_streamed_and_closed_with_the_query_and_feedback(
    make_rig: RigFactory,
) -> None:
    rig = make_rig(_model())
    dm = rig.emulator.open_dm(ALICE).id
    question = rig.dm("How many teams are there?")
    [answer] = rig.wait_answers(dm, question["ts"])
    [started] = rig.emulator.calls_to("chat.startStream")
    [stopped] = rig.emulator.calls_to("chat.stopStream")
    assert started.params["thread_ts"] == question["ts"]
    assert stopped.params["ts"] == answer["ts"] == started.response["ts"]
    kinds = [b["type"] for b in answer["blocks"]]
    assert kinds[0] == "markdown" and kinds[-1] == "context_actions"
    assert "Found:" in answer_text(answer) and "MATCH (t:Team)" in answer_text(answer)
    assert not [c for c in rig.emulator.calls_to("chat.postMessage") if c.params.get("blocks")]
    # 👍 on the streamed message teaches, as on any answer.
    rig.emulator.add_reaction(ALICE, dm, answer["ts"], "+1")
    rig.settle()
    assert [e.question for e in rig.memory.examples.list(source="thumbs_up")] == [
        "How many teams are there?"
    ]


def test_a_channel_thread_stream_names_its_recipient(make_rig: RigFactory) -> None:
    rig = make_rig(_model())
    mention = rig.mention("How many teams are there?")
    rig.wait_answers(CHANNEL, mention["ts"])
    [started] = rig.emulator.calls_to("chat.startStream")
    assert started.ok
    assert started.params["recipient_user_id"] == ALICE
    assert started.params["recipient_team_id"] == rig.emulator.team_id


def test_where_streaming_is_refused_the_answer_is_posted_and_not_tried_again(
    make_rig: RigFactory,
) -> None:
    rig = make_rig(_model())
    rig.emulator.streaming_supported = False
    first = rig.mention("How many teams are there?")
    [answer] = rig.wait_answers(CHANNEL, first["ts"])
    assert "Found:" in answer_text(answer)
    assert [c.response.get("error") for c in rig.emulator.calls_to("chat.startStream")] == [
        "unknown_method"
    ]
    second = rig.mention("How many teams are there now?")
    rig.wait_answers(CHANNEL, second["ts"])
    assert len(rig.emulator.calls_to("chat.startStream")) == 1, "learned: not tried again"
    assert len(rig.emulator.bot_replies(CHANNEL, first["ts"])) == 1, "no half-streamed copy"


def test_streaming_can_be_turned_off(make_rig: RigFactory) -> None:
    rig = make_rig(_model(), stream_answers="off")
    mention = rig.mention("How many teams are there?")
    [answer] = rig.wait_answers(CHANNEL, mention["ts"])
    assert "Found:" in answer_text(answer)
    assert rig.emulator.calls_to("chat.startStream") == []


def test_without_the_assistant_status_the_placeholder_path_is_kept(make_rig: RigFactory) -> None:
    rig = make_rig(_model(), status_supported=False)
    mention = rig.mention("How many teams are there?")
    [answer] = rig.wait_answers(CHANNEL, mention["ts"])
    assert rig.emulator.calls_to("chat.startStream") == []
    assert answer["ts"] == rig.emulator.calls_to("chat.postMessage")[0].response["ts"]
