"""Several candidates chosen by their results (CANDIDATES): sampling the first generation, and
picking the rows most candidates agree on. The choose node (nodes/choosing.py) runs them."""

from __future__ import annotations

import asyncio
import json
import logging
from collections.abc import Sequence
from typing import Any

from langchain_core.messages import BaseMessage
from langchain_core.runnables import Runnable

from graph_agent.llm import LLMCall, call_llm
from graph_agent.state import Draft

logger = logging.getLogger(__name__)

SAMPLE_TEMPERATURE = 0.7
"""The sampled calls' temperature: enough for a small model to write a different statement
now and then, not so much that it stops following the prompt (not yet tuned)."""
SAMPLE_STEP = "generate:sample"
"""The step name of a sampled call in the trace (the first call stays "generate")."""

Rows = Sequence[Sequence[Any]]


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
    honour. A sampled call that fails is left out (logged); a failed first call raises, as a
    single generation's would."""
    temperatures: list[float | None] = [None, *[SAMPLE_TEMPERATURE] * (count - 1)]
    answers = await asyncio.gather(
        *(
            call_llm(
                model,
                messages,
                step="generate" if temperature is None else SAMPLE_STEP,
                timeout_s=timeout_s,
                max_tokens=max_tokens,
                temperature=temperature,
            )
            for temperature in temperatures
        ),
        return_exceptions=True,
    )
    drafts: list[Draft] = []
    calls: list[LLMCall] = []
    for temperature, answer in zip(temperatures, answers, strict=True):
        if isinstance(answer, BaseException):
            if temperature is None:
                raise answer
            logger.warning("a sampled statement was lost: %s", type(answer).__name__)
            continue
        reply, call = answer
        drafts.append(Draft(reply, temperature or 0.0, call.cut_off))
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


def pick(results: Sequence[Rows | None]) -> int | None:
    """The candidate whose rows go on, None when none ran: one of the largest group of
    candidates with equal rows; between groups as large, rows before no rows, then the group
    of the earliest candidate, so the temperature-0 one wins a tie. (The issue lets the
    evaluator break ties; that would cost a call per tied group, and the temperature-0
    statement is the one a single generation would have answered with.)"""
    counts = agreement(results)
    ran = [i for i, rows in enumerate(results) if rows is not None]
    if not ran:
        return None
    return min(ran, key=lambda i: (-counts[i], not results[i], i))
