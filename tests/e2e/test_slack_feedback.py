"""👍/👎 on answers end to end: teaching once, skin tones, removal, ignored reactions, few-shot reuse."""

from __future__ import annotations

from rig.scripted_llm import ScriptedChatModel
from rig.slack import BOB, CHANNEL, SlackRig, answer_text, graph_responder
from tests.e2e.conftest import RigFactory

POSTGRES = (
    "MATCH (s:Service)-[:USES]->(:Technology {name: 'PostgreSQL'}) "
    "RETURN s.name AS service ORDER BY service"
)


def asked(rig: SlackRig, question: str) -> tuple[str, str]:
    """(thread ts, answer ts) of a mention once answered."""
    mention = rig.mention(question)
    [answer] = rig.wait_answers(CHANNEL, mention["ts"])
    return mention["ts"], answer["ts"]


def taught(rig: SlackRig) -> list[str]:
    return [e.question for e in rig.memory.examples.list(source="thumbs_up")]


def test_thumbs_up_teaches_once_and_a_paraphrase_sees_the_example(make_rig: RigFactory) -> None:
    model = ScriptedChatModel(responder=graph_responder(lambda q: POSTGRES))
    rig = make_rig(model)
    thread, answer = asked(rig, "Which of our services are on Postgres?")
    rig.emulator.add_reaction(BOB, CHANNEL, answer, "+1::skin-tone-3")
    rig.settle()
    assert taught(rig) == ["Which of our services are on Postgres?"]
    thanks = [m for m in rig.answers(CHANNEL, thread) if "Thanks" in answer_text(m)]
    assert len(thanks) == 1 and f"<@{BOB}>" in answer_text(thanks[0])
    # A retry of the same reaction event, and a second 👍 by the same person: no new thanks.
    event = next(
        d.payload for d in rig.emulator.deliveries if d.payload["event"]["type"] == "reaction_added"
    )
    rig.emulator.deliver(event, retries=2)
    rig.emulator.add_reaction(BOB, CHANNEL, answer, "thumbsup")
    rig.settle()
    assert len([m for m in rig.answers(CHANNEL, thread) if "Thanks" in answer_text(m)]) == 1
    assert len(taught(rig)) == 1

    calls_before = len(model.calls)
    asked(rig, "What services use Postgres as their database?")
    generate = next(
        p for p in model.prompts[calls_before:] if "You write one read-only Cypher" in p
    )
    assert "Which of our services are on Postgres?" in generate
    assert POSTGRES in generate


def test_removing_the_thumbs_up_unteaches(make_rig: RigFactory) -> None:
    rig = make_rig(ScriptedChatModel(responder=graph_responder(lambda q: POSTGRES)))
    _, answer = asked(rig, "Which services are on Postgres?")
    rig.emulator.add_reaction(BOB, CHANNEL, answer, "+1")
    rig.settle()
    [example] = rig.memory.examples.list(source="thumbs_up")
    assert example.status == "active"
    rig.emulator.remove_reaction(BOB, CHANNEL, answer, "+1")
    rig.settle()
    assert rig.memory.examples.get(example.id).status != "active"  # type: ignore[union-attr]


def test_thumbs_down_counts_against_the_examples_used(make_rig: RigFactory) -> None:
    rig = make_rig(ScriptedChatModel(responder=graph_responder(lambda q: POSTGRES)))
    _, answer = asked(rig, "Which services are on Postgres?")
    rig.emulator.add_reaction(BOB, CHANNEL, answer, "+1")
    rig.settle()
    _, second = asked(rig, "Which services use PostgreSQL?")
    turn = rig.memory.conversations.by_message(CHANNEL, second)
    assert turn is not None and turn.example_ids
    rig.emulator.add_reaction(BOB, CHANNEL, second, "-1::skin-tone-2")
    rig.settle()
    downs = {e.id: e.down_votes for e in rig.memory.examples.list()}
    assert any(downs[i] >= 1 for i in turn.example_ids)
    stats = rig.memory.feedback.stats()
    assert stats is not None


def test_reactions_on_other_messages_and_by_the_bot_are_ignored(make_rig: RigFactory) -> None:
    rig = make_rig(ScriptedChatModel(responder=graph_responder(lambda q: POSTGRES)))
    thread, answer = asked(rig, "Which services are on Postgres?")
    person = rig.say("I think it's three")
    rig.emulator.add_reaction(BOB, CHANNEL, person["ts"], "+1")  # someone else's message
    rig.emulator.add_reaction(BOB, CHANNEL, answer, "tada")  # not a vote
    rig.emulator.add_reaction(BOB, CHANNEL, thread, "+1")  # the question, not the answer
    rig.emulator.add_reaction(rig.bot_user, CHANNEL, answer, "+1")  # the bot itself
    rig.settle()
    assert taught(rig) == []
    assert all(d.status == 200 for d in rig.emulator.deliveries)
