"""The agent's typed state: what one question accumulates on its way through the graph."""

from __future__ import annotations

import operator
from typing import Annotated, Any, Literal, TypedDict

from graph_agent.llm import LLMCall
from graph_agent.result import Attempt
from memory.types import Outcome, Turn

Scope = Literal["in_scope", "out_of_scope", "needs_clarification"]


def merge_timings(left: dict[str, float], right: dict[str, float]) -> dict[str, float]:
    """Reducer: add up milliseconds per step (steps repeat in the correction loop)."""
    merged = dict(left)
    for step, ms in right.items():
        merged[step] = merged.get(step, 0.0) + ms
    return merged


class AgentState(TypedDict, total=False):
    """One question's state; nodes return only the keys they change."""

    question: str
    """The user's text as asked."""
    history: list[Turn]
    """Previous turns of the conversation, oldest first (already trimmed)."""
    standalone_question: str
    """The question rewritten to stand alone (equal to `question` without history)."""
    scope: Scope
    """The guard's decision."""
    scope_reason: str
    """Why the guard decided so (logged, shown in refusals when helpful)."""
    clarification: str
    """The question to ask back when the guard needs clarification."""
    reused_example_id: int | None
    """The example whose Cypher is reused verbatim (exact question match)."""
    example_ids: list[int]
    """Examples shown to the generate step."""
    prompt_parts: dict[str, str]
    """Schema text, examples and value hints built once by generate, reused by correct."""
    value_hints: list[tuple[str, str, str]]
    """Stored values matching words of the question, (label, property, value), best first:
    validate fixes literals with them, execute explains an empty result with them."""
    draft: str
    """The latest LLM reply (or reused Cypher) that should contain one statement."""
    cypher: str
    """The latest extracted, checked statement."""
    columns: list[str]
    """Columns of the latest run."""
    rows: list[list[Any]]
    """Rows of the latest run (capped at max_rows)."""
    truncated: bool
    """The latest run had more rows than max_rows."""
    last_error: str | None
    """What went wrong with the latest attempt (fed to the correct step)."""
    last_stage: str
    """Where the latest attempt stopped: policy, schema, validate, execute, evaluate, ok."""
    attempts: Annotated[list[Attempt], operator.add]
    """Every finished attempt, in order."""
    attempt_count: int
    """Statements tried so far (generate or reuse counts as 1, each correction adds 1)."""
    max_attempts: int
    """Loop bound: statements allowed for this question (from the config)."""
    missing_data: list[str]
    """Words of the question that statements needed as names the graph lacks ("salary")."""
    answer: str
    """The final text for the user."""
    ungrounded: bool
    """The model's answer named a number or name the rows do not hold, so it was replaced."""
    outcome: Outcome
    """Set once the run has an answer (or an honest failure)."""
    error_kind: str | None
    """Why the run failed, for the bot: llm_not_configured, llm_timeout, llm_error,
    graph_down, query_timeout, deadline, attempts_exhausted."""
    fatal: bool
    """An unrecoverable error happened: stop and explain."""
    suggestions: list[str]
    """Example questions offered with a refusal or clarification."""
    self_healed: bool
    """Answered only after a correction."""
    llm_calls: Annotated[list[LLMCall], operator.add]
    """Every LLM call made, in order."""
    timings_ms: Annotated[dict[str, float], merge_timings]
    """Milliseconds spent per step, summed over the loop."""
