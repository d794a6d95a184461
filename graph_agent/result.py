"""What one agent run returns, and the progress events it emits on the way."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from memory.types import Outcome


@dataclass(frozen=True)
class ProgressEvent:
    """A step the agent is starting, with a short text a person can read."""

    step: str
    """Node name: contextualize, guard, generate, validate, execute, evaluate, correct."""
    text: str
    """E.g. "Writing a query…", "Running it (attempt 2)…"."""
    attempt: int = 1


ProgressCallback = Callable[[ProgressEvent], None]
"""Called on the agent's event loop, shared by every question in the process: it must return
at once (hand any I/O to another thread)."""


@dataclass(frozen=True)
class Attempt:
    """One Cypher statement tried, and what became of it."""

    cypher: str
    error: str | None = None
    """Validation/engine error, or the evaluator's feedback, when the attempt failed."""
    stage: str = ""
    """Where it ended: policy, validate, schema, execute, evaluate, ok."""
    rows: int | None = None


@dataclass
class AgentResult:
    """The outcome of one question."""

    question: str
    standalone_question: str
    answer: str
    outcome: Outcome
    cypher: str | None = None
    columns: list[str] = field(default_factory=list)
    rows: list[list[Any]] = field(default_factory=list)
    truncated: bool = False
    attempts: list[Attempt] = field(default_factory=list)
    llm_calls: int = 0
    llm_steps: list[str] = field(default_factory=list)
    """The step of each LLM call, in order (guard, generate, evaluate, correct, `…:repair`)."""
    prompt_tokens: int = 0
    completion_tokens: int = 0
    timings_ms: dict[str, float] = field(default_factory=dict)
    example_ids: list[int] = field(default_factory=list)
    """Examples shown to generate, or the reused one."""
    reused_example_id: int | None = None
    self_healed: bool = False
    """Answered only after a correction (handed to the example store as a candidate)."""
    suggestions: list[str] = field(default_factory=list)
    """Example questions offered with a refusal or a clarification request."""
    schema_fingerprint: str | None = None
    """Fingerprint of the schema the Cypher was verified on (stamped on taught examples)."""
    error_kind: str | None = None
    """llm_not_configured, llm_error, llm_timeout, graph_down, query_timeout, deadline…"""
    ungrounded: bool = False
    """The model's answer named a number or name the rows (or, for an empty result, the
    question) do not hold; the plain rendering of the rows or "nothing matches" replaced it."""

    @property
    def total_ms(self) -> float:
        return sum(self.timings_ms.values())
