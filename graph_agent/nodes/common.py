"""What every node shares: the update type, the `step` wrapper (timing, deadline, LLM
failures), the failed-attempt update and the reply checks."""

from __future__ import annotations

import functools
import logging
import time
from collections.abc import Awaitable, Callable
from typing import Any, Protocol

from langgraph.runtime import Runtime

from graph_agent.context import Context
from graph_agent.errors import LLMError, LLMTimeoutError
from graph_agent.result import Attempt, Stage
from graph_agent.state import AgentState
from guardrails import extract_cypher

logger = logging.getLogger(__name__)

Update = dict[str, Any]


class Node(Protocol):
    """The shape LangGraph calls: the state, and the runtime carrying the Context."""

    def __call__(self, state: AgentState, *, runtime: Runtime[Context]) -> Awaitable[Update]: ...


NO_DATA_MARK = "NO_DATA:"


def step(name: str) -> Callable[[Node], Node]:
    """Time the node, stop it when the deadline has passed, turn LLM failures into a fatal stop."""

    def wrap(node: Node) -> Node:
        @functools.wraps(node)
        async def timed(state: AgentState, runtime: Runtime[Context]) -> Update:
            started = time.perf_counter()
            ctx = runtime.context
            if ctx.remaining_s() <= 0:
                update: Update = {"fatal": True, "error_kind": "deadline"}
            else:
                try:
                    update = await node(state, runtime=runtime)
                except LLMTimeoutError as exc:
                    update = {"fatal": True, "error_kind": "llm_timeout", "last_error": str(exc)}
                except LLMError as exc:
                    update = {"fatal": True, "error_kind": "llm_error", "last_error": str(exc)}
            ms = (time.perf_counter() - started) * 1000
            # Sampled candidates' calls overlap: the model's share is at most the step's time.
            llm_ms = min(sum(call.ms for call in update.get("llm_calls", ())), ms)
            update["timings_ms"] = {name: ms - llm_ms, **({"llm": llm_ms} if llm_ms else {})}
            return update

        return timed

    return wrap


def llm_timeout(ctx: Context) -> float:
    return max(ctx.remaining_s(), 0.001)


def attempt_failed(cypher: str, error: str, stage: Stage) -> Update:
    return {
        "cypher": cypher,
        "last_error": error,
        "last_stage": stage,
        "attempts": [Attempt(cypher=cypher, error=error, stage=stage)],
    }


def cut_off(reply: str) -> Update:
    """A statement reply that stopped at the token cap: a failed attempt (the router sends it
    to correct), never run half-written."""
    return attempt_failed(
        extract_cypher(reply),
        "Your reply was cut off at the length limit before the statement was complete. "
        "Reply with only the statement in a ```cypher block, shorter: no explanation.",
        Stage.CUT_OFF,
    )


def no_data(draft: str) -> str | None:
    text = draft.strip().strip("`").strip()
    if text.upper().startswith(NO_DATA_MARK):
        return text[len(NO_DATA_MARK) :].strip() or "what the question asks for"
    return None
