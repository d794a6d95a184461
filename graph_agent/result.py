"""What one agent run returns, and the progress events it emits on the way."""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any, NamedTuple

from graph_agent.errors import FAILURE_TEXT, ErrorKind
from graph_agent.llm import LLMCall
from graph_agent.tool_routing import ToolName, ToolRequest, is_tool_note
from memory.types import Outcome


@dataclass(frozen=True)
class ProgressEvent:
    """A step the agent is starting, with a short text a person can read."""

    step: str
    """Node name: contextualize, guard, generate, choose, validate, execute, evaluate,
    correct."""
    text: str
    """E.g. "Writing a query…", "Running it (attempt 2)…"."""
    attempt: int = 1
    preview: str = ""
    """What the rows say, before the model has judged and worded them (evaluate only, when a
    model call follows): shown at once, then replaced by the answer. Rows that passed every
    check and the channel's redaction, rendered without a model."""


ProgressCallback = Callable[[ProgressEvent], None]
"""Called on the agent's event loop, shared by every question in the process: it must return
at once (hand any I/O to another thread)."""


class Stage(StrEnum):
    """Where an attempt ended: a failure's stage tells the correct step and the router what
    went wrong (and the repair rules which correction this question already had)."""

    EXTRACT = "extract"
    """The reply held no statement."""
    CUT_OFF = "cut_off"
    """The reply stopped at the token cap."""
    COMMENT = "comment"
    """The statement had comments (refused)."""
    POLICY = "policy"
    """Refused by the read-only policy or the channel's restrictions."""
    SCHEMA = "schema"
    """Names or directions the schema lacks."""
    RESOURCE = "resource"
    """Ran out of memory, or repeats a read that did."""
    VALIDATE = "validate"
    """EXPLAIN (or a check before it) rejected it."""
    EXECUTE = "execute"
    """The engine failed while running it."""
    TIMEOUT = "timeout"
    """Ran longer than QUERY_TIMEOUT_S."""
    MISSED_VALUE = "missed_value"
    """No rows, and the filter was not how the graph stores the value."""
    VALUE_NEXT_DOOR = "value_next_door"
    """No rows, and the value belongs to the node next door."""
    COUNTED_LABEL = "counted_label"
    """Rows that never match what the question counts."""
    LEFT_OUT_VALUE = "left_out_value"
    """Rows from a statement that never uses a value the question names."""
    NAMED_ECHO = "named_echo"
    """Rows that only repeat the values the question names."""
    PREVIOUS_AGAIN = "previous_again"
    """A follow-up answered by the statement that answered the turn before it."""
    EVALUATE = "evaluate"
    """The evaluator said the rows do not answer the question."""
    OK = "ok"
    """Answered."""


@dataclass(frozen=True)
class Attempt:
    """One Cypher statement tried, and what became of it."""

    cypher: str
    error: str | None = None
    """Validation/engine error, or the evaluator's feedback, when the attempt failed."""
    stage: Stage = Stage.OK
    """Where it ended (see `Stage`)."""
    rows: int | None = None


@dataclass(frozen=True)
class Candidate:
    """One statement a sampled step offered (the first generation with CANDIDATES > 1, the
    first correction with RETRY_CANDIDATES > 1), and what became of it."""

    cypher: str
    """As it ran (after the validate rules' rewrites), or as far as it got when it failed."""
    temperature: float
    """0 for the first call (the model as built), the sampling temperature for the others."""
    rows: int | None = None
    """Rows it returned; None when it failed."""
    error: str | None = None
    """Why it failed the checks or the run (None when it ran)."""
    agreeing: int = 0
    """Candidates that returned the same rows, itself included (0 when it failed)."""
    chosen: bool = False
    """Its rows went on to the answer step (or, when none ran, its failure to the correction)."""
    attempt: int = 1
    """The attempt it was offered for: 1, the first generation; 2, the first correction."""

    def to_json(self) -> dict[str, Any]:
        return {
            "attempt": self.attempt,
            "cypher": self.cypher,
            "temperature": self.temperature,
            "rows": self.rows,
            "error": self.error,
            "agreeing": self.agreeing,
            "chosen": self.chosen,
        }


class Firing(NamedTuple):
    """One rule that fired in a run: the trace entry."""

    rule: str
    phase: str
    kind: str
    attempt: int
    detail: str
    cypher: str | None = None
    """The statement after a rewrite (None for hints and guards)."""

    def to_json(self) -> dict[str, Any]:
        return self._asdict()


@dataclass(frozen=True)
class Choice:
    """One answer to a "did you mean…?": a candidate for the name that was unclear, or none
    of them. Asked again with `Agent.run(choice.question, choice=choice, history=…)`, it
    continues the same question with that entity, without a second clarifying round."""

    text: str
    """What a button or a numbered line shows: `Alice Smith (Person)`, `None of these`."""
    question: str
    """The question it continues with, in words: the asked one with the chosen name in it."""
    request: ToolRequest | None = None
    """The same graph tool call with the chosen entity in place; None for "none of these"
    (the question goes to the statement loop instead)."""
    label: str | None = None
    """The candidate's label (None for "none of these")."""
    name: str | None = None
    """The candidate's identifying value (None for "none of these")."""

    def to_dict(self) -> dict[str, Any]:
        """Plain JSON values: what a Slack button's value (≤ 2,000 characters) carries."""
        return {
            "text": self.text,
            "question": self.question,
            "request": self.request.to_dict() if self.request is not None else None,
            "label": self.label,
            "name": self.name,
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Choice:
        """The choice `to_dict` gave (ValueError when it is not one)."""
        request = data.get("request")
        question = data.get("question")
        if not isinstance(question, str) or not question.strip():
            raise ValueError("a choice needs the question it continues")
        label, name = data.get("label"), data.get("name")
        return cls(
            text=str(data.get("text") or ""),
            question=question,
            request=ToolRequest.from_dict(request) if isinstance(request, Mapping) else None,
            label=None if label is None else str(label),
            name=None if name is None else str(name),
        )


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
    cached_prompt_tokens: int = 0
    """Of `prompt_tokens`, those the server read from its prompt cache."""
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
    error_kind: ErrorKind | None = None
    """Why it failed (None unless outcome is "failed")."""
    unconfirmed: bool = False
    """No attempt was confirmed by the evaluate step; the answer gives the first rows a query
    returned, with a caveat."""
    rules_fired: list[Firing] = field(default_factory=list)
    """Repair rules that fired (graph_agent/repair), in order."""
    ungrounded: bool = False
    """The model's answer named a number or name the rows (or, for an empty result, the
    question) do not hold; the plain rendering of the rows or "nothing matches" replaced it."""
    tool: ToolName | None = None
    """The graph tool whose rows answered (card, neighbourhood, connection); None when a
    statement did. `cypher` then holds the tool's note (`// graph tool: card("Chai")`)."""
    choices: list[Choice] = field(default_factory=list)
    """With outcome "needs_clarification" from a graph tool: the candidates for the unclear
    name, then "none of these" (the last, without a request)."""
    candidates: list[Candidate] = field(default_factory=list)
    """With CANDIDATES > 1: every statement the first generation sampled, the temperature-0
    one first, with its rows or error, how many agreed with it, and which was chosen."""

    @property
    def total_ms(self) -> float:
        return sum(self.timings_ms.values())


def failure(question: str, kind: ErrorKind, answer: str, started: float) -> AgentResult:
    """A run that failed before or outside the state machine (no graph, the deadline)."""
    return AgentResult(
        question=question,
        standalone_question=question,
        answer=answer,
        outcome="failed",
        error_kind=kind,
        timings_ms={"total": (time.perf_counter() - started) * 1000},
    )


def result_from_state(question: str, state: Mapping[str, Any], setup_ms: float) -> AgentResult:
    """The typed result of a finished run from the graph's final state."""
    calls: list[LLMCall] = state.get("llm_calls", [])
    reused = state.get("reused_example_id")
    example_ids = list(state.get("example_ids", []))
    if reused is not None:
        example_ids = [reused]
    outcome = state.get("outcome", "failed")
    answered = outcome in ("answered", "no_data")
    cypher = state.get("cypher") or None
    # The tool answered when its note is the final statement (a statement after a doubted
    # tool answer replaces it).
    tool = state.get("tool") if answered and is_tool_note(cypher) else None
    answer = state.get("answer", "")
    if outcome == "failed" and state.get("error_kind") == "llm_not_configured":
        answer = FAILURE_TEXT["llm_not_configured"]
    return AgentResult(
        question=question,
        standalone_question=state.get("standalone_question", question),
        answer=answer,
        outcome=outcome,
        cypher=cypher,
        columns=list(state.get("columns", [])) if answered else [],
        rows=list(state.get("rows", [])) if answered else [],
        truncated=bool(state.get("truncated", False)) and answered,
        attempts=list(state.get("attempts", [])),
        llm_calls=len(calls),
        llm_steps=[call.step for call in calls],
        prompt_tokens=sum(call.prompt_tokens for call in calls),
        completion_tokens=sum(call.completion_tokens for call in calls),
        cached_prompt_tokens=sum(call.cached_tokens for call in calls),
        timings_ms={"setup": setup_ms, **state.get("timings_ms", {})},
        example_ids=example_ids,
        reused_example_id=reused,
        self_healed=bool(state.get("self_healed", False)),
        suggestions=list(state.get("suggestions", [])),
        error_kind=state.get("error_kind") if outcome == "failed" else None,
        ungrounded=bool(state.get("ungrounded", False)),
        rules_fired=list(state.get("rules_fired", [])),
        unconfirmed=bool(state.get("unconfirmed", False)),
        tool=tool,
        choices=list(state.get("choices", [])),
        candidates=list(state.get("candidates", [])),
    )
