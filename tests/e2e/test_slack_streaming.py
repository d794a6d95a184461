"""Streamed answers (chat.startStream / appendStream / stopStream through the SDK's chat_stream):
where the assistant status works, the answer's text is streamed and the table, query and
feedback buttons close the message; where streaming is refused, the answer is posted. Answers
longer than a posted message (4,000 characters) stream whole; longer than a stream holds, they
are posted in messages. The status stays fixed while the steps show as loading messages."""

from __future__ import annotations

from bot.slack.progress import STATUS, STREAM_MAX_CHARS
from rig.scripted_llm import ScriptedChatModel, cypher_reply, evaluation_reply, guard_reply
from rig.slack import ALICE, CHANNEL, answer_text, graph_responder
from tests.e2e.conftest import HeldStep, RigFactory

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


MANY_ROWS = "UNWIND range(1, 30) AS n RETURN n, 'row ' + toString(n) AS label"
"""More rows than the agent words without its model, so the model's long answer is given."""
PARTS = ["alpha", "bravo", "charlie", "delta", "echo", "foxtrot", "golf", "hotel"]


def _long_answer(parts: list[str], words: int) -> str:
    return "\n\n".join(
        f"the part called {p} has " + "details of the answer " * words for p in parts
    )


def test_an_answer_longer_than_a_posted_message_is_streamed_whole(make_rig: RigFactory) -> None:
    answer = _long_answer(PARTS, 35)
    assert 4_000 < len(answer) < STREAM_MAX_CHARS
    rig = make_rig(
        ScriptedChatModel(
            replies=[guard_reply(), cypher_reply(MANY_ROWS), evaluation_reply(answer=answer)]
        )
    )
    dm = rig.emulator.open_dm(ALICE).id
    question = rig.dm("Tell me everything about the teams")
    [streamed] = rig.wait_answers(dm, question["ts"])
    assert rig.emulator.calls_to("chat.startStream")
    appended = rig.emulator.calls_to("chat.appendStream")
    assert len(appended) > 1 and all(c.ok for c in appended)
    [stopped] = rig.emulator.calls_to("chat.stopStream")
    assert stopped.ok and stopped.response["ts"] == streamed["ts"]
    assert not rig.emulator.calls_to("chat.delete"), "streamed, not posted over a deleted stream"
    text = answer_text(streamed)
    assert all(f"the part called {p} has" in text for p in PARTS), "the whole answer is there"
    assert " ".join(answer.split()) in " ".join(text.split())


def test_an_answer_too_long_for_one_stream_is_posted_whole(make_rig: RigFactory) -> None:
    parts = [f"{p}{n}" for n in range(3) for p in PARTS]
    answer = _long_answer(parts, 30)
    assert len(answer) > STREAM_MAX_CHARS
    rig = make_rig(
        ScriptedChatModel(
            replies=[guard_reply(), cypher_reply(MANY_ROWS), evaluation_reply(answer=answer)]
        )
    )
    dm = rig.emulator.open_dm(ALICE).id
    question = rig.dm("Tell me everything about the teams")
    messages = rig.wait_answers(dm, question["ts"], n=2)
    assert rig.emulator.calls_to("chat.startStream") == []
    said = [
        block["text"]["text"]
        for message in messages
        for block in message["blocks"]
        if block["type"] == "section" and "```" not in block["text"]["text"]
    ]
    assert " ".join(answer.split()) == " ".join(" ".join(said).split()), "the whole answer"


def test_the_status_stays_put_and_the_steps_show_as_loading_messages(
    make_rig: RigFactory,
) -> None:
    # The query is written only once a step after "Working on it…" has shown.
    held = HeldStep(
        "generate",
        lambda emulator: len(emulator.calls_to("assistant.threads.setStatus")) >= 2,
        graph_responder(lambda q: TEAM_COUNT),
    )
    rig = make_rig(ScriptedChatModel(responder=held), progress_interval_s=0.0)
    held.emulator = rig.emulator
    mention = rig.mention("How many teams are there?")
    rig.wait_answers(CHANNEL, mention["ts"])
    calls = rig.emulator.calls_to("assistant.threads.setStatus")
    assert calls and all(c.ok for c in calls), [c.response for c in calls]
    shown = [c.params for c in calls if c.params.get("status")]
    assert {p["status"] for p in shown} == {STATUS}, "one fixed status for the whole question"
    steps = [p["loading_messages"] for p in shown]
    assert steps[0] == ["Working on it…"] and len(steps) > 1, steps
    assert all(len(s) == 1 for s in steps)
