"""Graph tools and "did you mean…?" in Slack: a name that fits several people is asked back
with buttons; a click continues the same question in the same thread; "none of these" goes
on to a written query; a card names the tool instead of showing a query."""

from __future__ import annotations

import json
from typing import Any

from bot.slack import render
from rig.scripted_llm import ScriptedChatModel
from rig.slack import ALICE, BOB, CHANNEL, SlackRig, answer_text, graph_responder
from tests.e2e.conftest import RigFactory

PEOPLE_NAMED_ALICE = "MATCH (p:Person) WHERE p.name STARTS WITH 'Alice' RETURN p.name AS person"


def _buttons(message: dict[str, Any]) -> list[dict[str, Any]]:
    return [
        element
        for block in message.get("blocks", [])
        if block.get("type") == "actions"
        for element in block.get("elements", [])
        if str(element.get("action_id", "")).startswith(render.CHOICE_ACTION)
    ]


def _asked_back(rig: SlackRig) -> tuple[str, dict[str, Any]]:
    mention = rig.mention("Tell me about Alice")
    [asking] = rig.wait_answers(CHANNEL, mention["ts"])
    return mention["ts"], asking


def test_an_ambiguous_name_gets_buttons_and_a_click_answers_in_the_thread(
    make_rig: RigFactory,
) -> None:
    model = ScriptedChatModel(responder=graph_responder(lambda q: PEOPLE_NAMED_ALICE))
    rig = make_rig(model)
    thread, asking = _asked_back(rig)
    buttons = _buttons(asking)
    labels = [b["text"]["text"] for b in buttons]
    assert len(buttons) >= 3 and labels[-1] == "None of these"
    assert all(len(b["value"]) <= 2000 and len(b["text"]["text"]) <= 75 for b in buttons)
    smith = next(b for b in buttons if "Alice Smith" in b["text"]["text"])
    rig.emulator.click(BOB, CHANNEL, asking["ts"], smith["action_id"], smith["value"])
    answers = rig.wait_answers(CHANNEL, thread, n=2)
    card = answer_text(answers[-1])
    assert "Alice Smith" in card
    assert "graph tool" in card and "*Query*" not in card
    # The turn is remembered in the thread: what was asked back and what was chosen.
    turns = rig.memory.conversations.history(f"{rig.emulator.team_id}:{CHANNEL}:{thread}", 5)
    assert [t.question for t in turns][-1] == "Tell me about Alice Smith"
    # The same click again (a double click, a retried payload): no second answer.
    rig.emulator.click(BOB, CHANNEL, asking["ts"], smith["action_id"], smith["value"])
    rig.settle()
    assert len(rig.answers(CHANNEL, thread)) == 2


def test_none_of_these_goes_on_to_a_written_query(make_rig: RigFactory) -> None:
    model = ScriptedChatModel(responder=graph_responder(lambda q: PEOPLE_NAMED_ALICE))
    rig = make_rig(model)
    thread, asking = _asked_back(rig)
    none = _buttons(asking)[-1]
    rig.emulator.click(BOB, CHANNEL, asking["ts"], none["action_id"], none["value"])
    answers = rig.wait_answers(CHANNEL, thread, n=2)
    assert "*Query*" in answer_text(answers[-1])
    assert any("You write one read-only Cypher" in p for p in model.prompts)


def test_a_forged_button_value_asks_nothing(make_rig: RigFactory) -> None:
    rig = make_rig(ScriptedChatModel(responder=graph_responder(lambda q: PEOPLE_NAMED_ALICE)))
    thread, asking = _asked_back(rig)
    button = _buttons(asking)[0]
    for value in ("not json", json.dumps({"question": ""}), json.dumps([1, 2])):
        rig.emulator.click(BOB, CHANNEL, asking["ts"], button["action_id"], value)
    rig.settle()
    assert len(rig.answers(CHANNEL, thread)) == 1


def test_a_tool_in_a_restricted_channel_does_not_show_a_hidden_label_on_its_route(
    make_rig: RigFactory,
) -> None:
    # Wei Nguyen and Hana Smith share the Payments team; in a channel that hides Team the
    # connection must go another way (or find none), never through a Team.
    secret = "C0SECRET"
    rig = make_rig(
        ScriptedChatModel(responder=graph_responder(lambda q: PEOPLE_NAMED_ALICE)),
        channel_restrictions=f"{secret}:Team",
    )
    rig.emulator.add_channel(secret, "secret", members=[ALICE, BOB])
    question = "How is Wei Nguyen connected to Hana Smith?"
    open_mention = rig.mention(question)
    [open_answer] = rig.wait_answers(CHANNEL, open_mention["ts"])
    assert "Payments" in answer_text(open_answer), "elsewhere the route goes through the team"
    hidden_mention = rig.mention(question, channel=secret)
    [hidden_answer] = rig.wait_answers(secret, hidden_mention["ts"])
    text = answer_text(hidden_answer)
    assert "Payments" not in text and "Team" not in text and "MEMBER_OF" not in text


def test_a_follow_up_after_a_card_is_answered_by_a_connection_in_the_thread(
    make_rig: RigFactory,
) -> None:
    def standalone(question: str, prompt: str) -> str:
        if "she" in question:
            return "How is Alice Nguyen connected to Wei Nguyen?"
        return question

    rig = make_rig(
        ScriptedChatModel(
            responder=graph_responder(lambda q: PEOPLE_NAMED_ALICE, standalone_for=standalone)
        )
    )
    mention = rig.mention("Tell me about Alice Nguyen")
    [card] = rig.wait_answers(CHANNEL, mention["ts"])
    assert "Alice Nguyen" in answer_text(card) and "card" in answer_text(card)
    rig.say("How is she connected to Wei Nguyen?", thread_ts=mention["ts"])
    answers = rig.wait_answers(CHANNEL, mention["ts"], n=2)
    route = answer_text(answers[-1])
    assert "connection" in route and "Alice Nguyen" in route and "Wei Nguyen" in route
