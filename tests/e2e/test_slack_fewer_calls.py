"""The product's defaults in Slack: the calls with nothing to decide are skipped (issue 29).

The other e2e tests script every call (rig_settings turns the guard and the evaluator on for
every question); these run with Settings' own defaults, read from the Settings class so that a
change of default shows here.
"""

from __future__ import annotations

from typing import Any

from bot.settings import Settings
from graph_agent.graphdb import GraphDB
from rig.scripted_llm import ScriptedChatModel, cypher_reply, guard_reply
from rig.slack import CHANNEL, answer_text
from tests.e2e.conftest import RigFactory

PAYMENTS_PEOPLE = (
    "MATCH (p:Person)-[:MEMBER_OF]->(:Team {name: 'Payments'}) "
    "RETURN p.name AS person ORDER BY person"
)
PAYMENTS_SERVICES = "MATCH (:Team {name: 'Payments'})-[:OWNS]->(s:Service) RETURN s.name AS service ORDER BY service"


def _defaults() -> dict[str, Any]:
    fields = Settings.model_fields
    return {name: fields[name].default for name in ("guard_first_questions", "evaluate_plain_rows")}


def test_a_question_in_the_graphs_words_is_answered_with_one_call(
    make_rig: RigFactory, demo_db: GraphDB
) -> None:
    model = ScriptedChatModel(replies=[cypher_reply(PAYMENTS_PEOPLE)])
    rig = make_rig(model, **_defaults())
    mention = rig.mention("Who is on the Payments team?")
    [answer] = rig.wait_answers(CHANNEL, mention["ts"])
    text = answer_text(answer)
    turn = rig.memory.conversations.by_message(CHANNEL, answer["ts"])
    assert turn is not None and turn.cypher.startswith(PAYMENTS_PEOPLE)
    # One call, the statement's; the answer is written from the graph's rows.
    assert len(model.calls) == 1
    people = demo_db.run_read(PAYMENTS_PEOPLE, None, timeout_s=10, max_rows=50).rows
    assert people and all(str(name) in text for [name] in people)


def test_a_follow_up_still_has_its_rewrite(make_rig: RigFactory) -> None:
    model = ScriptedChatModel(
        replies=[
            cypher_reply(PAYMENTS_PEOPLE),
            guard_reply(standalone="Which services does the Payments team own?"),
            cypher_reply(PAYMENTS_SERVICES),
        ]
    )
    rig = make_rig(model, **_defaults())
    mention = rig.mention("Who is on the Payments team?")
    rig.wait_answers(CHANNEL, mention["ts"])
    rig.say("and which services do they own?", thread_ts=mention["ts"])
    answers = rig.wait_answers(CHANNEL, mention["ts"], 2)
    turn = rig.memory.conversations.by_message(CHANNEL, answers[-1]["ts"])
    assert turn is not None
    assert turn.standalone_question == "Which services does the Payments team own?"
    assert turn.cypher.startswith(PAYMENTS_SERVICES)
    # The follow-up went to the guard for its rewrite: 1 call for the first question, then
    # guard and generate (the services list is plain, so no evaluator either).
    assert len(model.calls) == 3
