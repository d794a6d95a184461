"""Slack's AI-app surface through the real Bolt app: suggested prompts in the split view, a
title for a thread's first question, feedback buttons on answers, the App Home tab."""

from __future__ import annotations

from typing import Any

from bot.playground.emulator_ai import AISurface
from bot.slack import render
from rig.scripted_llm import ScriptedChatModel
from rig.slack import ALICE, BOB, CHANNEL, SlackRig, answer_text, graph_responder
from tests.e2e.conftest import RigFactory

POSTGRES = (
    "MATCH (s:Service)-[:USES]->(:Technology {name: 'PostgreSQL'}) "
    "RETURN s.name AS service ORDER BY service"
)
TAUGHT = "Which of our services run on Postgres?"


def _rig(make_rig: RigFactory) -> SlackRig:
    return make_rig(ScriptedChatModel(responder=graph_responder(lambda q: POSTGRES)))


def _asked(rig: SlackRig, question: str, *, user: str = ALICE) -> str:
    """The ts of the answer to a mention in the channel."""
    mention = rig.mention(question, user=user)
    [answer] = rig.wait_answers(CHANNEL, mention["ts"])
    return str(answer["ts"])


def _event(rig: SlackRig, event: dict[str, Any]) -> None:
    delivery = rig.emulator.deliver(rig.emulator.envelope(event))
    assert delivery.status == 200
    rig.settle()


def test_a_new_split_view_thread_suggests_the_best_taught_questions(
    make_rig: RigFactory,
) -> None:
    rig = _rig(make_rig)
    rig.emulator.add_reaction(BOB, CHANNEL, _asked(rig, TAUGHT), "+1")
    rig.settle()
    dm = rig.emulator.open_dm(ALICE).id
    _event(rig, AISurface.thread_started(ALICE, dm, "1700000000.000100", rig.emulator.team_id))
    prompts = rig.emulator.surface.suggested_prompts[(dm, "1700000000.000100")]
    assert 1 <= len(prompts) <= 4
    assert prompts[0] == {"title": TAUGHT, "message": TAUGHT}  # the only up-voted one first
    assert len({p["message"] for p in prompts}) == len(prompts)


def test_without_taught_questions_the_prompts_come_from_the_graph(make_rig: RigFactory) -> None:
    rig = _rig(make_rig)
    dm = rig.emulator.open_dm(ALICE).id
    _event(rig, AISurface.thread_started(ALICE, dm, "1700000000.000200", rig.emulator.team_id))
    prompts = rig.emulator.surface.suggested_prompts[(dm, "1700000000.000200")]
    # The demo's seed examples (and questions derived from the schema) are offered.
    assert prompts and all(p["message"].endswith("?") for p in prompts)
    assert all(len(p["title"]) <= 75 for p in prompts)


def test_the_first_question_of_a_dm_thread_titles_it_and_follow_ups_do_not(
    make_rig: RigFactory,
) -> None:
    rig = _rig(make_rig)
    dm = rig.emulator.open_dm(ALICE).id
    root, _ = rig.emulator.post_bot_message(
        rig.emulator.bot_user_id, rig.emulator.bot_id, dm, "How can I help?"
    )
    rig.dm("Which services use PostgreSQL?", thread_ts=root["ts"])
    rig.wait_answers(dm, root["ts"])
    assert rig.emulator.surface.titles[(dm, root["ts"])] == "Which services use PostgreSQL?"
    rig.dm("And which of those are tier 1?", thread_ts=root["ts"])
    rig.wait_answers(dm, root["ts"], n=2)
    assert rig.emulator.surface.titles[(dm, root["ts"])] == "Which services use PostgreSQL?"
    assert len(rig.emulator.calls_to("assistant.threads.setTitle")) == 1


def test_feedback_buttons_teach_and_count_like_reactions(make_rig: RigFactory) -> None:
    rig = _rig(make_rig)
    answer_ts = _asked(rig, TAUGHT)
    answer = rig.emulator.message(CHANNEL, answer_ts)
    assert answer is not None
    actions = [b for b in answer["blocks"] if b["type"] == "context_actions"]
    assert actions and actions[0]["elements"][0]["action_id"] == render.FEEDBACK_ACTION

    clicked = rig.emulator.click(BOB, CHANNEL, answer_ts, render.FEEDBACK_ACTION, "good")
    assert clicked.status == 200
    rig.settle()
    [example] = rig.memory.examples.list(source="thumbs_up")
    assert example.question == TAUGHT and example.taught_by == BOB
    thanks = [
        m
        for m in rig.emulator.bot_replies(CHANNEL, answer["thread_ts"])
        if "Thanks" in answer_text(m)
    ]
    assert len(thanks) == 1

    second_ts = _asked(rig, "Which services use PostgreSQL?")
    turn = rig.memory.conversations.by_message(CHANNEL, second_ts)
    assert turn is not None and example.id in turn.example_ids
    rig.emulator.click(ALICE, CHANNEL, second_ts, render.FEEDBACK_ACTION, "bad")
    rig.settle()
    assert rig.memory.examples.get(example.id).down_votes == 1  # type: ignore[union-attr]


def test_failed_answers_carry_no_feedback_buttons(make_rig: RigFactory) -> None:
    rig = make_rig(None)  # no LLM: a question nobody taught fails kindly
    mention = rig.mention("Which services use PostgreSQL?")
    [answer] = rig.wait_answers(CHANNEL, mention["ts"])
    assert all(b["type"] != "context_actions" for b in answer["blocks"])


def test_the_home_tab_shows_the_graph_questions_to_try_and_my_questions(
    make_rig: RigFactory,
) -> None:
    rig = _rig(make_rig)
    _asked(rig, TAUGHT)
    _asked(rig, "Who owns checkout-api?", user=BOB)
    dm = rig.emulator.open_dm(ALICE).id
    _event(rig, AISurface.home_opened(ALICE, dm))
    view = rig.emulator.surface.home_views[ALICE]
    text = "\n".join(str(b.get("text", {}).get("text", "")) for b in view["blocks"])
    assert "*The graph holds*" in text and "people" in text
    assert "*Questions to try*" in text
    mine = text.split("*Your recent questions*", 1)[1]
    assert TAUGHT in mine and "checkout-api" not in mine  # only Alice's own


def test_an_admins_home_tab_shows_usage_and_the_examples_waiting_for_review(
    make_rig: RigFactory,
) -> None:
    rig = make_rig(
        ScriptedChatModel(responder=graph_responder(lambda q: POSTGRES)), admin_users=[ALICE]
    )
    _asked(rig, TAUGHT)
    waiting = rig.memory.examples.add(
        "Which services run on PostgreSQL 15?", POSTGRES, source="self_healed", status="candidate"
    )
    for person in (ALICE, BOB):
        _event(rig, AISurface.home_opened(person, rig.emulator.open_dm(person).id))
    admin = "\n".join(
        str(b.get("text", {}).get("text", ""))
        for b in rig.emulator.surface.home_views[ALICE]["blocks"]
    )
    assert "*Last 7 days*: 1 questions (answered 1)" in admin
    assert f"#{waiting} Which services run on PostgreSQL 15?" in admin
    other = str(rig.emulator.surface.home_views[BOB])
    assert "For admins" not in other and "waiting for review" not in other
