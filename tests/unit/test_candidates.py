"""Choosing between sampled candidates by their rows (graph_agent/candidates.py): the grouping,
the pick and its ties, the sampling calls, the routing and the eval's run key and record."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from graph_agent.candidates import (
    RETRY_CANDIDATES,
    SAMPLE_STEP,
    SAMPLE_TEMPERATURE,
    agreement,
    pick,
    rows_key,
    sample,
)
from graph_agent.errors import LLMError
from graph_agent.evaluation import RunOptions
from graph_agent.evaluation.items import EvalItem
from graph_agent.evaluation.runner import score_record
from graph_agent.result import AgentResult, Candidate
from graph_agent.routing import after_choose, after_draft
from graph_agent.state import AgentState, Draft
from rig.scripted_llm import ScriptedChatModel

A = [["x", 1], ["y", 2]]
A_REORDERED = [["y", 2], ["x", 1]]
B = [["x", 1]]

PICKS: list[tuple[list[Any], int | None, list[int]]] = [
    # (rows per candidate, None for one that failed), chosen, agreeing per candidate
    ([A, B, A_REORDERED], 0, [2, 1, 2]),
    ([B, A, A], 1, [1, 2, 2]),
    ([None, A, B], 1, [0, 1, 1]),  # a tie between the ones that ran: the earliest
    ([A, B, [[3]]], 0, [1, 1, 1]),  # a tie: the temperature-0 one
    ([[], B, None], 1, [1, 1, 0]),  # a tie: rows before no rows
    ([[], [], B], 0, [2, 2, 1]),  # a larger group of no rows still wins
    ([None, None, None], None, [0, 0, 0]),
    ([A], 0, [1]),
    ([[[0]], B, None], 1, [1, 1, 0]),  # a tie: the zero count of no match is no rows
]


@pytest.mark.parametrize(("results", "chosen", "agreeing"), PICKS)
def test_pick(results: list[Any], chosen: int | None, agreeing: list[int]) -> None:
    assert pick(results) == chosen
    assert agreement(results) == agreeing


RETRY_PICKS: list[tuple[list[Any], int | None]] = [
    # A correction's candidates: any rows before no rows, then as `pick`.
    ([[], [], B], 2),  # the two that agree on nothing lose to the one with rows
    ([[], B, A], 1),  # rows tied one to one: the earliest of them
    ([B, A, A_REORDERED], 1),
    ([None, [], None], 1),  # nothing but no rows: still chosen over failures
    ([None, None], None),
    ([[[0]], [[0]], B], 2),  # zeros over no match count as no rows
]


@pytest.mark.parametrize(("results", "chosen"), RETRY_PICKS)
def test_pick_for_a_correction_puts_rows_first(results: list[Any], chosen: int | None) -> None:
    assert pick(results, rows_first=True) == chosen


def test_rows_key_ignores_order_but_not_repeats_or_types() -> None:
    assert rows_key(A) == rows_key(A_REORDERED)
    assert rows_key(B) != rows_key(B + B)
    assert rows_key([[1]]) != rows_key([["1"]])


def _messages() -> list[Any]:
    from langchain_core.messages import HumanMessage

    return [HumanMessage("write a statement")]


def test_sample_asks_once_as_usual_and_the_rest_at_a_temperature() -> None:
    model = ScriptedChatModel(replies=["first"], sampled=["second", "third"])
    drafts, calls = asyncio.run(sample(model, _messages(), 3, timeout_s=5.0, max_tokens=None))
    assert drafts[0] == Draft("first", 0.0, False)
    assert sorted(d.reply for d in drafts[1:]) == ["second", "third"]
    assert [d.temperature for d in drafts] == [0.0, SAMPLE_TEMPERATURE, SAMPLE_TEMPERATURE]
    assert [c.step for c in calls] == ["generate", SAMPLE_STEP, SAMPLE_STEP]
    kwargs = sorted(model.call_kwargs, key=lambda k: k.get("temperature", 0))
    assert "temperature" not in kwargs[0] and kwargs[0]["max_tokens"] == 400  # as usual
    assert all(k["temperature"] == SAMPLE_TEMPERATURE for k in kwargs[1:])


def test_a_lost_sample_is_left_out_and_a_lost_first_call_raises() -> None:
    model = ScriptedChatModel(replies=["first"], sampled=[RuntimeError("busy"), "second"])
    drafts, calls = asyncio.run(sample(model, _messages(), 3, timeout_s=5.0, max_tokens=None))
    assert [d.reply for d in drafts] == ["first", "second"] and len(calls) == 2
    failing = ScriptedChatModel(replies=[RuntimeError("down")], sampled=["a", "b"])
    with pytest.raises(LLMError):
        asyncio.run(sample(failing, _messages(), 3, timeout_s=5.0, max_tokens=None))


def _state(**fields: Any) -> AgentState:
    return {"question": "q", "history": [], "attempt_count": 1, "max_attempts": 3, **fields}  # type: ignore[typeddict-item]


def test_routing_through_the_choose_step() -> None:
    drafts = [Draft("a", 0.0, False), Draft("b", SAMPLE_TEMPERATURE, False)]
    assert after_draft(_state(candidate_drafts=drafts)) == "choose"
    assert after_draft(_state(candidate_drafts=[])) == "validate"
    assert after_draft(_state(candidate_drafts=drafts, outcome="no_data")) == "__end__"
    assert after_choose(_state(last_error=None)) == "evaluate"
    assert after_choose(_state(last_error="Schema check: …")) == "correct"
    assert after_choose(_state(last_error="x", attempt_count=3)) == "give_up"
    assert after_choose(_state(fatal=True)) == "give_up"


def test_runs_with_several_candidates_are_keyed_apart() -> None:
    assert RunOptions().key == RunOptions(candidates=1).key == "full/examples-on"
    assert RunOptions(candidates=3).key == "full/examples-on/candidates-3"
    assert RunOptions(mode="single-shot", candidates=3).key == "single-shot/examples-on"
    # The product's RETRY_CANDIDATES is the plain run; another number is its own.
    assert RunOptions(retry_candidates=RETRY_CANDIDATES).key == "full/examples-on"
    assert RunOptions(retry_candidates=1).key == "full/examples-on/retry-1"
    assert (
        RunOptions(candidates=3, retry_candidates=2).key == "full/examples-on/candidates-3/retry-2"
    )


def test_the_record_lists_the_candidates() -> None:
    chosen = Candidate("MATCH (n) RETURN count(n) AS n", 0.0, rows=1, agreeing=1, chosen=True)
    failed = Candidate("MATCH (r:Robot) RETURN r", SAMPLE_TEMPERATURE, error="unknown label")
    result = AgentResult("q", "q", "3", "answered", candidates=[chosen, failed])
    record = score_record(EvalItem(id="1", question="q"), RunOptions(), result, None, latency_ms=1)
    assert record["candidates"] == [chosen.to_json(), failed.to_json()]
    assert record["candidates"][1]["rows"] is None and record["candidates"][0]["chosen"]
    assert [c["attempt"] for c in record["candidates"]] == [1, 1]
    retried = Candidate("MATCH (n) RETURN n", 0.0, attempt=2).to_json()
    assert retried["attempt"] == 2
