"""Several candidates chosen by their rows (CANDIDATES, issue 26), on the real demo graph.

The first generation asks N times at once (the usual call, and the others at a temperature
above 0); every statement that passes validate's checks runs as execute runs it, and the rows
most candidates agree on go on. One candidate is exactly the loop as it always was.
"""

from __future__ import annotations

from typing import Any

import pytest
from langchain_core.messages import AIMessage

from graph_agent.agent import Agent
from graph_agent.candidates import RETRY_STEP, SAMPLE_STEP, SAMPLE_TEMPERATURE
from graph_agent.config import AgentConfig
from graph_agent.examples import InMemoryExampleStore
from graph_agent.graphdb import GraphDB
from graph_agent.llm import LLMs
from rig.scripted_llm import ScriptedChatModel, cypher_reply, evaluation_reply

QUESTION = "How many services are there?"
SERVICES = "MATCH (s:Service) RETURN count(s) AS services"
SERVICES_TOO = "MATCH (x:Service) RETURN count(*) AS n"
"""Another statement with the same rows as SERVICES."""
ON_POSTGRES = (
    "MATCH (s:Service)-[:USES]->(:Technology {name: 'PostgreSQL'}) RETURN count(s) AS services"
)
ON_KUBERNETES = (
    "MATCH (s:Service)-[:USES]->(:Technology {name: 'Kubernetes'}) RETURN count(s) AS services"
)
NO_SUCH_LABEL = "MATCH (r:Robot) RETURN count(r) AS robots"
WITH_A_COMMENT = "MATCH (s:Service) RETURN count(s) AS services // all of them"
SKIPPING = {"guard_first_questions": "off-graph", "evaluate_plain_rows": False}
"""The product's defaults (bot/settings.py): a sure question with one count takes no guard
and no evaluator call, so the calls are the generation's alone."""


def _agent(db: GraphDB, model: ScriptedChatModel, **config: Any) -> Agent:
    settings: dict[str, Any] = {**SKIPPING, **config}
    llms = LLMs(cypher=model, fast=model)
    return Agent(db, llms, InMemoryExampleStore(), AgentConfig(**settings))


def _count(db: GraphDB, statement: str) -> int:
    return int(db.run_read(statement, timeout_s=10.0, max_rows=1).rows[0][0])


@pytest.fixture
def counts(demo_db: GraphDB) -> dict[str, int]:
    found = {s: _count(demo_db, s) for s in (SERVICES, ON_POSTGRES, ON_KUBERNETES)}
    assert len(set(found.values())) == 3 and 0 not in found.values()  # the tests rely on it
    return found


def _temperatures(model: ScriptedChatModel) -> list[float]:
    return sorted(float(kwargs.get("temperature", 0)) for kwargs in model.call_kwargs)


def test_one_candidate_makes_the_calls_it_always_made(demo_db: GraphDB) -> None:
    default = ScriptedChatModel(replies=[cypher_reply(SERVICES)])
    one = ScriptedChatModel(replies=[cypher_reply(SERVICES)])
    before = _agent(demo_db, default).run(QUESTION)
    after = _agent(demo_db, one, candidates=1).run(QUESTION)
    assert before.llm_steps == after.llm_steps == ["generate"]
    assert default.prompts == one.prompts
    assert default.call_kwargs == one.call_kwargs
    assert all("temperature" not in kwargs for kwargs in one.call_kwargs)
    assert after.candidates == [] and after.outcome == "answered"
    assert "choose" not in after.timings_ms and "validate" in after.timings_ms


def test_the_rows_most_candidates_agree_on_are_chosen(
    demo_db: GraphDB, counts: dict[str, int]
) -> None:
    # The temperature-0 statement counts only some services; both samples count them all.
    model = ScriptedChatModel(
        replies=[cypher_reply(ON_POSTGRES)],
        sampled=[cypher_reply(SERVICES), cypher_reply(SERVICES_TOO)],
    )
    result = _agent(demo_db, model, candidates=3).run(QUESTION)
    assert result.outcome == "answered"
    assert result.rows == [[counts[SERVICES]]]
    assert result.llm_steps == ["generate", SAMPLE_STEP, SAMPLE_STEP]
    assert _temperatures(model) == [0, SAMPLE_TEMPERATURE, SAMPLE_TEMPERATURE]
    assert len(model.prompts) == 3 and len(set(model.prompts)) == 1  # one prompt, asked 3 times
    first, *samples = result.candidates
    assert first.temperature == 0 and first.rows == 1 and first.agreeing == 1
    assert not first.chosen and "PostgreSQL" in first.cypher
    assert [c.temperature for c in samples] == [SAMPLE_TEMPERATURE] * 2
    assert [c.agreeing for c in samples] == [2, 2]
    assert [c.chosen for c in samples] == [True, False]  # the earlier of the group
    assert result.cypher == samples[0].cypher
    assert len(result.attempts) == 1 and result.attempts[0].error is None


def test_a_tie_goes_to_the_temperature_0_candidate(
    demo_db: GraphDB, counts: dict[str, int]
) -> None:
    model = ScriptedChatModel(
        replies=[cypher_reply(SERVICES)],
        sampled=[cypher_reply(ON_POSTGRES), cypher_reply(ON_KUBERNETES)],
    )
    result = _agent(demo_db, model, candidates=3).run(QUESTION)
    assert result.rows == [[counts[SERVICES]]]
    assert [c.agreeing for c in result.candidates] == [1, 1, 1]
    assert [c.chosen for c in result.candidates] == [True, False, False]


def test_candidates_that_fail_the_checks_are_left_out(
    demo_db: GraphDB, counts: dict[str, int]
) -> None:
    # A label the graph lacks, and a reply cut off at the token cap: neither runs; the one
    # sample that does is chosen, and no correction is needed.
    cut_off = AIMessage(
        content=cypher_reply(ON_POSTGRES), response_metadata={"finish_reason": "length"}
    )
    model = ScriptedChatModel(
        replies=[cypher_reply(NO_SUCH_LABEL)], sampled=[cut_off, cypher_reply(SERVICES)]
    )
    result = _agent(demo_db, model, candidates=3).run(QUESTION)
    assert result.outcome == "answered" and "correct" not in result.llm_steps
    assert result.rows == [[counts[SERVICES]]]
    first, *samples = result.candidates
    assert first.rows is None and first.agreeing == 0 and not first.chosen
    assert first.error is not None and "Robot" in first.error
    chosen = [c for c in samples if c.chosen]
    failed = [c for c in samples if not c.chosen]
    assert len(chosen) == 1 and chosen[0].rows == 1 and chosen[0].agreeing == 1
    assert failed[0].rows is None and failed[0].error and "cut off" in failed[0].error


def test_when_none_runs_the_first_ones_failure_goes_to_the_correction(
    demo_db: GraphDB, counts: dict[str, int]
) -> None:
    model = ScriptedChatModel(
        replies=[cypher_reply(NO_SUCH_LABEL), cypher_reply(SERVICES)],
        sampled=[cypher_reply(WITH_A_COMMENT), cypher_reply(NO_SUCH_LABEL)],
    )
    result = _agent(demo_db, model, candidates=3).run(QUESTION)
    assert result.llm_steps == ["generate", SAMPLE_STEP, SAMPLE_STEP, "correct"]
    assert result.outcome == "answered" and result.rows == [[counts[SERVICES]]]
    # The correction sees the temperature-0 statement and its error, as with one candidate.
    assert "Robot" in model.prompts[-1] and "Schema check" in model.prompts[-1]
    assert "temperature" not in model.call_kwargs[-1]  # corrections stay single, at 0
    assert result.attempts[0].stage == "schema" and "Robot" in result.attempts[0].cypher
    assert [c.chosen for c in result.candidates] == [True, False, False]
    assert all(c.rows is None and c.error for c in result.candidates)
    assert result.self_healed


def test_the_single_shot_baseline_stays_one_generation(demo_db: GraphDB) -> None:
    model = ScriptedChatModel(replies=[cypher_reply(SERVICES)])
    result = _agent(demo_db, model, candidates=3).run(QUESTION, flow="single-shot")
    assert result.llm_steps == ["generate"] and result.candidates == []


# --- the first correction's candidates (RETRY_CANDIDATES) --------------------------------------


def test_a_first_statement_that_answers_asks_no_retry_candidates(demo_db: GraphDB) -> None:
    model = ScriptedChatModel(replies=[cypher_reply(SERVICES)])
    result = _agent(demo_db, model, retry_candidates=3).run(QUESTION)
    assert result.llm_steps == ["generate"] and result.candidates == []
    assert all("temperature" not in kwargs for kwargs in model.call_kwargs)


def test_the_first_correction_asks_fresh_statements_beside_it(
    demo_db: GraphDB, counts: dict[str, int]
) -> None:
    # The first statement names a label the graph lacks; the correction counts only some
    # services, both fresh statements count them all: their rows are chosen.
    model = ScriptedChatModel(
        replies=[cypher_reply(NO_SUCH_LABEL), cypher_reply(ON_POSTGRES)],
        sampled=[cypher_reply(SERVICES), cypher_reply(SERVICES_TOO)],
    )
    result = _agent(demo_db, model, retry_candidates=3).run(QUESTION)
    assert result.outcome == "answered" and result.rows == [[counts[SERVICES]]]
    assert result.llm_steps == ["generate", "correct", RETRY_STEP, RETRY_STEP]
    assert _temperatures(model) == [0, 0, SAMPLE_TEMPERATURE, SAMPLE_TEMPERATURE]
    generate, correction, *fresh = model.prompts
    # The correction sees the failed statement and its error; the fresh ones are asked the
    # question exactly as the first generation was.
    assert "Robot" in correction and "Robot" not in generate
    assert fresh == [generate, generate]
    first, *samples = result.candidates
    assert [c.attempt for c in result.candidates] == [2, 2, 2]
    assert first.temperature == 0 and "PostgreSQL" in first.cypher and not first.chosen
    assert [c.agreeing for c in samples] == [2, 2] and [c.chosen for c in samples] == [True, False]
    assert [a.stage for a in result.attempts] == ["schema", "ok"]
    assert result.self_healed


def test_a_retry_candidate_with_rows_beats_agreeing_empty_ones(
    demo_db: GraphDB, counts: dict[str, int]
) -> None:
    nothing = "MATCH (s:Service) WHERE s.tier > 100 RETURN s.name AS name, s.tier AS tier"
    model = ScriptedChatModel(
        replies=[cypher_reply(NO_SUCH_LABEL), cypher_reply(SERVICES)],
        sampled=[cypher_reply(nothing), cypher_reply(nothing)],
    )
    result = _agent(demo_db, model, retry_candidates=3).run(QUESTION)
    assert result.rows == [[counts[SERVICES]]]
    assert [(c.rows, c.agreeing, c.chosen) for c in result.candidates] == [
        (1, 1, True),
        (0, 2, False),
        (0, 2, False),
    ]


def test_a_retry_candidate_that_repeats_the_failed_statement_does_not_run_again(
    demo_db: GraphDB, counts: dict[str, int]
) -> None:
    # The first statement ran and found nothing, and the evaluator said so; a fresh sample
    # writes it again, word for word: it fails with the evaluator's words, without running.
    empty = "MATCH (s:Service) WHERE s.tier > 100 RETURN s.name AS name, s.tier AS tier"
    doubt = "No tier is above 100: count every service instead."
    model = ScriptedChatModel(
        replies=[
            cypher_reply(empty),
            evaluation_reply(answers=False, feedback=doubt),
            cypher_reply(SERVICES),
        ],
        sampled=[cypher_reply(empty), cypher_reply(ON_POSTGRES)],
    )
    result = _agent(demo_db, model, retry_candidates=3).run(QUESTION)
    assert result.attempts[0].stage == "evaluate" and doubt in (result.attempts[0].error or "")
    correction, repeated, other = result.candidates
    assert repeated.rows is None and repeated.error == result.attempts[0].error
    assert repeated.cypher == result.attempts[0].cypher
    assert correction.rows == other.rows == 1 and correction.chosen
    assert result.rows == [[counts[SERVICES]]]


def test_retry_candidates_ask_once_per_question(demo_db: GraphDB) -> None:
    # Three attempts allowed: only the first correction samples; the second asks once.
    model = ScriptedChatModel(
        replies=[cypher_reply(NO_SUCH_LABEL)] * 2 + [cypher_reply(SERVICES)],
        sampled=[cypher_reply(NO_SUCH_LABEL)] * 2,
    )
    result = _agent(demo_db, model, retry_candidates=3, max_attempts=3).run(QUESTION)
    assert result.llm_steps == ["generate", "correct", RETRY_STEP, RETRY_STEP, "correct"]
    assert result.outcome == "answered"


def test_candidates_agreeing_on_a_count_of_nothing_lose_to_one_that_counts(
    demo_db: GraphDB, counts: dict[str, int]
) -> None:
    # count() over no match is one row, 0: as good as no rows when candidates are ranked.
    zero = "MATCH (s:Service) WHERE s.tier > 100 RETURN count(s) AS services"
    model = ScriptedChatModel(
        replies=[cypher_reply(NO_SUCH_LABEL), cypher_reply(zero)],
        sampled=[cypher_reply(zero.replace("(s)", "(*)")), cypher_reply(SERVICES)],
    )
    result = _agent(demo_db, model, retry_candidates=3).run(QUESTION)
    assert result.rows == [[counts[SERVICES]]]
    assert [(c.rows, c.agreeing, c.chosen) for c in result.candidates] == [
        (1, 2, False),
        (1, 2, False),
        (1, 1, True),
    ]
