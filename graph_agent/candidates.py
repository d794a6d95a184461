"""Several candidates chosen by their results: sampling the first generation (CANDIDATES) or,
when the first statement failed, the first correction (RETRY_CANDIDATES), and picking the rows
most candidates agree on. The choose node (nodes/choosing.py) runs them."""

from __future__ import annotations

import asyncio
import json
import logging
from collections.abc import Sequence
from typing import Any, NamedTuple

from langchain_core.messages import BaseMessage
from langchain_core.runnables import Runnable

from graph_agent.llm import LLMCall, call_llm
from graph_agent.repair.probes import nothing_found
from graph_agent.state import Draft

logger = logging.getLogger(__name__)

SAMPLE_TEMPERATURE = 0.7
"""The sampled calls' temperature: enough for a small model to write a different statement
now and then, not so much that it stops following the prompt (not yet tuned)."""
SAMPLE_STEP = "generate:sample"
"""The step name of a sampled call in the trace (the first call stays "generate")."""
RETRY_CANDIDATES = 3
"""The product's RETRY_CANDIDATES (bot/settings.py): on the test splits it raised strict
accuracy 86 -> 90 of 160 with the local model (docs/eval.md). An eval run with another
number is keyed apart."""
RETRY_STEP = "correct:sample"
"""The step name of a fresh generation sampled beside the first correction (RETRY_CANDIDATES)."""

Rows = Sequence[Sequence[Any]]


class Ask(NamedTuple):
    """One call of a sampled step: its prompt, its step name in the trace, its temperature
    (None: the model's own, as a single call asks)."""

    messages: list[BaseMessage]
    step: str
    temperature: float | None


async def sample(
    model: Runnable[Any, Any],
    messages: list[BaseMessage],
    count: int,
    *,
    timeout_s: float,
    max_tokens: int | None,
) -> tuple[list[Draft], list[LLMCall]]:
    """`count` replies to one prompt, asked at once (a server with several slots answers them
    in parallel): the first exactly as a single generation asks it, the others at
    SAMPLE_TEMPERATURE. Separate calls, not OpenAI's `n`, which local servers do not all
    honour."""
    asks = [
        Ask(messages, "generate", None),
        *[Ask(messages, SAMPLE_STEP, SAMPLE_TEMPERATURE)] * (count - 1),
    ]
    return await ask_all(model, asks, timeout_s=timeout_s, max_tokens=max_tokens)


async def ask_all(
    model: Runnable[Any, Any],
    asks: Sequence[Ask],
    *,
    timeout_s: float,
    max_tokens: int | None,
) -> tuple[list[Draft], list[LLMCall]]:
    """A reply to each ask, asked at once. A sampled call that fails is left out (logged); a
    failed first call raises, as the single call it stands for would."""
    answers = await asyncio.gather(
        *(
            call_llm(
                model,
                ask.messages,
                step=ask.step,
                timeout_s=timeout_s,
                max_tokens=max_tokens,
                temperature=ask.temperature,
            )
            for ask in asks
        ),
        return_exceptions=True,
    )
    drafts: list[Draft] = []
    calls: list[LLMCall] = []
    for i, (ask, answer) in enumerate(zip(asks, answers, strict=True)):
        if isinstance(answer, BaseException):
            if i == 0:
                raise answer
            logger.warning("a sampled statement was lost: %s", type(answer).__name__)
            continue
        reply, call = answer
        drafts.append(Draft(reply, ask.temperature or 0.0, call.cut_off))
        calls.append(call)
    return drafts, calls


def rows_key(rows: Rows) -> str:
    """Rows as a multiset, for comparison: order is ignored (two statements may sort alike
    rows differently, or not at all), and column names too (aliases differ)."""
    return json.dumps(sorted(json.dumps(list(row), sort_keys=True, default=str) for row in rows))


def agreement(results: Sequence[Rows | None]) -> list[int]:
    """Per candidate, how many candidates returned the same rows, itself included (0 for a
    candidate that failed: None)."""
    keys = [None if rows is None else rows_key(rows) for rows in results]
    return [0 if key is None else keys.count(key) for key in keys]


def pick(results: Sequence[Rows | None], *, rows_first: bool = False) -> int | None:
    """The candidate whose rows go on, None when none ran: one of the largest group of
    candidates with equal rows; between groups as large, rows before no rows (or the one row
    of zeros an aggregate gives over no match: `nothing_found`), then the group of the
    earliest candidate, so the temperature-0 one wins a tie. (The issue lets the
    evaluator break ties; that would cost a call per tied group, and the temperature-0
    statement is the one a single generation would have answered with.)

    `rows_first`: any rows before no rows, however many agree on none (a correction's
    candidates: the statement they replace failed, most often by finding nothing)."""
    counts = agreement(results)
    ran = [i for i, rows in enumerate(results) if rows is not None]
    if not ran:
        return None
    found = [rows is not None and not nothing_found(rows) for rows in results]
    if rows_first:
        return min(ran, key=lambda i: (not found[i], -counts[i], i))
    return min(ran, key=lambda i: (-counts[i], not found[i], i))
