"""Questions in Slack end to end: mentions, threads, follow-ups, DMs, progress, rendering limits."""

from __future__ import annotations

import itertools

from rig.scripted_llm import (
    ScriptedChatModel,
    cypher_reply,
    evaluation_reply,
    guard_reply,
)
from rig.slack import ALICE, CHANNEL, answer_text
from tests.e2e.conftest import HeldStep, RigFactory

TEAM_SIZES = (
    "MATCH (p:Person)-[:MEMBER_OF]->(t:Team) "
    "RETURN t.name AS team, count(p) AS people ORDER BY people DESC, team LIMIT 3"
)
PAYMENTS_PEOPLE = (
    "MATCH (p:Person)-[:MEMBER_OF]->(:Team {name: 'Payments'}) "
    "RETURN p.name AS person ORDER BY person"
)
PAYMENTS_SERVICES = "MATCH (:Team {name: 'Payments'})-[:OWNS]->(s:Service) RETURN s.name AS service ORDER BY service"


def happy(answer: str, cypher: str = TEAM_SIZES, standalone: str = "") -> list[str]:
    return [
        guard_reply(standalone=standalone),
        cypher_reply(cypher),
        evaluation_reply(answer=answer),
    ]


def test_mention_answers_in_its_thread_with_the_query_run_on_the_graph(
    make_rig: RigFactory,
) -> None:
    model = ScriptedChatModel(replies=happy("Three teams lead on head count."))
    rig = make_rig(model)
    mention = rig.mention("Which teams have the most people?")
    [answer] = rig.wait_answers(CHANNEL, mention["ts"])
    text = answer_text(answer)
    assert answer["thread_ts"] == mention["ts"]
    assert "Three teams lead on head count." in text
    assert "MATCH (p:Person)-[:MEMBER_OF]-&gt;(t:Team)" in text  # the Cypher, escaped
    assert "team" in text and "people" in text  # the table preview of rows from the graph
    assert "React :+1: if this is right" in text
    turn = rig.memory.conversations.by_message(CHANNEL, answer["ts"])
    assert turn is not None and turn.cypher == TEAM_SIZES
    assert rig.emulator.calls_to("assistant.threads.setStatus")
    assert all(d.status == 200 for d in rig.emulator.deliveries), "nothing 404s or fails"
    # How fast the ack is: bench/slack.py ("Slack ack latency"), not a wall-clock test.


def test_mention_inside_a_thread_answers_in_that_thread(make_rig: RigFactory) -> None:
    rig = make_rig(ScriptedChatModel(replies=happy("Answer in the thread.")))
    parent = rig.say("We were discussing head counts")
    mention = rig.mention("which teams have the most people?", thread_ts=parent["ts"])
    [answer] = rig.wait_answers(CHANNEL, parent["ts"])
    assert answer["thread_ts"] == parent["ts"]
    assert rig.emulator.bot_replies(CHANNEL, mention["ts"]) == [] or mention["ts"] == parent["ts"]
    assert rig.memory.conversations.has_conversation(
        f"{rig.emulator.team_id}:{CHANNEL}:{parent['ts']}"
    )


def test_thread_follow_up_without_mention_is_rewritten_with_memory(make_rig: RigFactory) -> None:
    model = ScriptedChatModel(
        replies=[
            *happy("Payments has 9 people.", PAYMENTS_PEOPLE),
            *happy(
                "Payments owns 4 services.",
                PAYMENTS_SERVICES,
                standalone="Which services does the Payments team own?",
            ),
        ]
    )
    rig = make_rig(model)
    mention = rig.mention("Who is on the Payments team?")
    rig.wait_answers(CHANNEL, mention["ts"])
    rig.say("and what do they own?", thread_ts=mention["ts"])
    answers = rig.wait_answers(CHANNEL, mention["ts"], 2)
    assert "Payments owns 4 services." in answer_text(answers[1])
    follow_up_guard = model.prompts[3]
    assert "Previous turns" in follow_up_guard and "Who is on the Payments team?" in follow_up_guard
    assert "Question: Which services does the Payments team own?" in model.prompts[4]
    history = rig.memory.conversations.history(f"{rig.emulator.team_id}:{CHANNEL}:{mention['ts']}")
    assert [t.question for t in history] == [
        "Who is on the Payments team?",
        "and what do they own?",
    ]


def test_channel_messages_outside_the_bots_threads_are_left_alone(make_rig: RigFactory) -> None:
    rig = make_rig(ScriptedChatModel())
    top = rig.say("lunch anyone?")
    rig.say("yes please", thread_ts=top["ts"])
    rig.settle()
    assert not rig.emulator.calls_to("chat.postMessage")
    assert all(d.status == 200 for d in rig.emulator.deliveries)


def test_dm_top_level_and_thread_follow_up(make_rig: RigFactory) -> None:
    model = ScriptedChatModel(
        replies=[
            *happy("Payments has 9 people.", PAYMENTS_PEOPLE),
            *happy("They own 4 services.", PAYMENTS_SERVICES, standalone="What does Payments own?"),
        ]
    )
    rig = make_rig(model)
    dm = rig.emulator.open_dm(ALICE).id
    first = rig.dm("Who is on the Payments team?")
    [answer] = rig.wait_answers(dm, first["ts"])
    assert answer["thread_ts"] == first["ts"]  # a top-level DM starts its own thread
    rig.dm("and what do they own?", thread_ts=first["ts"])
    answers = rig.wait_answers(dm, first["ts"], 2)
    assert "They own 4 services." in answer_text(answers[1])
    assert "Who is on the Payments team?" in model.prompts[3]


def test_placeholder_is_replaced_when_set_status_is_unavailable(make_rig: RigFactory) -> None:
    script = list(happy("Done."))
    # The query is written only once a progress step has edited the placeholder.
    held = HeldStep(
        "generate",
        lambda emulator: bool(emulator.calls_to("chat.update")),
        lambda _messages: script.pop(0),
    )
    model = ScriptedChatModel(responder=held, delay_s=0.7)
    rig = make_rig(model, status_supported=False)
    held.emulator = rig.emulator
    mention = rig.mention("Which teams have the most people?")
    [answer] = rig.wait_answers(CHANNEL, mention["ts"])
    posts = rig.emulator.calls_to("chat.postMessage")
    assert posts[0].params["text"] == "Working on it…"
    assert answer["ts"] == posts[0].response["ts"]  # the placeholder became the answer
    updates = rig.emulator.calls_to("chat.update")
    assert len(updates) >= 2  # at least one progress step, then the answer
    times = [u.at for u in updates[:-1]]
    assert all(b - a >= 0.9 for a, b in itertools.pairwise(times)), "≤ 1 update/s"
    texts = [m for m in rig.emulator.bot_replies(CHANNEL, mention["ts"]) if not m.get("files")]
    assert len(texts) == 1, "one answer (its chart aside)"


def test_failed_update_falls_back_to_a_new_message(make_rig: RigFactory) -> None:
    rig = make_rig(ScriptedChatModel(replies=happy("Fallback works.")), status_supported=False)
    rig.emulator.fail_next("chat.update", "cant_update_message", times=10)
    mention = rig.mention("Which teams have the most people?")
    [answer] = rig.wait_answers(CHANNEL, mention["ts"])
    assert "Fallback works." in answer_text(answer)
    assert rig.emulator.calls_to("chat.delete"), "the placeholder is removed"
    texts = [m for m in rig.emulator.bot_replies(CHANNEL, mention["ts"]) if not m.get("files")]
    assert len(texts) == 1, "one answer (its chart aside)"
    turn = rig.memory.conversations.by_message(CHANNEL, answer["ts"])
    assert turn is not None, "reactions on the new message still find the turn"


def test_rate_limited_post_is_retried_after_retry_after(make_rig: RigFactory) -> None:
    # The answer posted as a message (streamed answers: tests/e2e/test_slack_streaming.py).
    rig = make_rig(ScriptedChatModel(replies=happy("After a rate limit.")), stream_answers="off")
    rig.emulator.fail_next("chat.postMessage", "ratelimited", status=429, retry_after=0)
    mention = rig.mention("Which teams have the most people?")
    [answer] = rig.wait_answers(CHANNEL, mention["ts"])
    assert "After a rate limit." in answer_text(answer)
    statuses = [c.status for c in rig.emulator.calls_to("chat.postMessage")]
    assert statuses[:2] == [429, 200]


def test_model_output_and_data_are_escaped(make_rig: RigFactory) -> None:
    evil = "Ping <!channel> and <!here> & <@U0BOB> — 3 > 2 @everyone"
    rig = make_rig(
        # Every number and name of the answer is in the rows, so grounding keeps it as written.
        ScriptedChatModel(
            replies=happy(evil, "RETURN '<!channel> & <b>x</b> U0BOB' AS value, 3 AS n, 2 AS m")
        )
    )
    mention = rig.mention("say something nasty")
    [answer] = rig.wait_answers(CHANNEL, mention["ts"])
    text = answer_text(answer) + answer["text"]
    assert "<!channel>" not in text and "<!here>" not in text and "<@U0BOB>" not in text
    assert "&lt;!channel&gt;" in text and "&amp;" in text and "3 &gt; 2" in text
    assert "@everyone" not in text


def test_empty_emoji_only_and_huge_inputs_get_sensible_replies(make_rig: RigFactory) -> None:
    rig = make_rig(ScriptedChatModel())  # no LLM call may happen
    empty = rig.mention("")
    emoji = rig.mention(":wave: :smile:")
    huge = rig.mention("why " * 25_000)
    [help_reply] = rig.wait_answers(CHANNEL, empty["ts"])
    assert "Ask me a question about the graph" in answer_text(help_reply)
    assert "For example" in answer_text(help_reply)
    [emoji_reply] = rig.wait_answers(CHANNEL, emoji["ts"])
    assert "Ask me a question" in answer_text(emoji_reply)
    [too_long] = rig.wait_answers(CHANNEL, huge["ts"])
    assert "2,000 characters" in answer_text(too_long)


def test_a_question_typed_with_markup_reaches_the_agent_as_typed(make_rig: RigFactory) -> None:
    # Slack sends `&amp; &lt; &gt;` and wraps links, e-mail addresses and channels as <…>
    # (the emulator too, since it encodes what people type): the agent gets the typed words.
    model = ScriptedChatModel(replies=happy("Payments has 9 people.", PAYMENTS_PEOPLE))
    rig = make_rig(model)
    typed = "Who on Payments & Core <sre> reads https://x.io/?a=1&b=2 or bob@x.io in #general?"
    mention = rig.mention(typed)
    assert "&amp; Core &lt;sre&gt;" in mention["text"] and "<mailto:bob@x.io|" in mention["text"]
    rig.wait_answers(CHANNEL, mention["ts"])
    [turn] = rig.memory.conversations.history(f"{rig.emulator.team_id}:{CHANNEL}:{mention['ts']}")
    assert turn.question == typed
