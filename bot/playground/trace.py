"""What happened behind each answer: the agent's results and progress, kept for the playground's side panel."""

from __future__ import annotations

import logging
import threading
import time
from collections import deque
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from bot import charts
from bot.slack.answering import AgentPort
from graph_agent.result import AgentResult, Choice, ProgressEvent
from guardrails.cypher_policy import CypherPolicy
from memory.types import Turn

logger = logging.getLogger(__name__)

KEEP = 500
"""Traces kept in memory; older answers lose their side panel, never their Slack message."""
ROWS_SHOWN = 50


@dataclass(frozen=True)
class Step:
    """One progress event, timed from the start of the run."""

    at_ms: float
    step: str
    text: str
    attempt: int


@dataclass
class Trace:
    """One agent run: the result and the steps it announced on the way."""

    result: AgentResult
    steps: list[Step] = field(default_factory=list)
    history_turns: int = 0
    """Previous turns of the thread the agent was given (follow-ups have some)."""
    finished_at: float = 0.0
    turn_id: int | None = None
    """The memory turn this trace was matched to (so two equal answers never share one)."""

    def to_json(self) -> dict[str, Any]:
        result = self.result
        return {
            "question": result.question,
            "standalone_question": result.standalone_question,
            "outcome": result.outcome,
            "error_kind": result.error_kind,
            "answer": result.answer,
            "cypher": result.cypher,
            "attempts": [
                {"cypher": a.cypher, "error": a.error, "stage": a.stage, "rows": a.rows}
                for a in result.attempts
            ],
            "columns": list(result.columns),
            "rows": [[_jsonable(v) for v in row] for row in result.rows[:ROWS_SHOWN]],
            "row_count": len(result.rows),
            "truncated": result.truncated,
            "llm_calls": result.llm_calls,
            "llm_steps": list(result.llm_steps),
            "prompt_tokens": result.prompt_tokens,
            "completion_tokens": result.completion_tokens,
            "cached_prompt_tokens": result.cached_prompt_tokens,
            "timings_ms": {k: round(v, 1) for k, v in result.timings_ms.items()},
            "total_ms": round(result.total_ms, 1),
            "example_ids": list(result.example_ids),
            "reused_example_id": result.reused_example_id,
            "self_healed": result.self_healed,
            "rules_fired": [firing.to_json() for firing in result.rules_fired],
            "candidates": [candidate.to_json() for candidate in result.candidates],
            "history_turns": self.history_turns,
            "chart": chart_json(result),
            "steps": [
                {"at_ms": round(s.at_ms, 1), "step": s.step, "text": s.text, "attempt": s.attempt}
                for s in self.steps
            ],
        }


def _jsonable(value: Any) -> Any:
    if value is None or isinstance(value, bool | int | float | str):
        return value
    if isinstance(value, list | tuple):
        return [_jsonable(v) for v in value]
    if isinstance(value, dict):
        return {str(k): _jsonable(v) for k, v in value.items()}
    return str(value)


class TracingAgent:
    """The bot's agent, unchanged, with each run's result and progress kept for the side panel.

    Memory's turn says what was asked and answered; the result says how (every attempt, the
    rows, the LLM calls and timings), so the playground keeps both and pairs them up."""

    def __init__(self, agent: AgentPort, keep: int = KEEP) -> None:
        self.agent = agent
        self._traces: deque[Trace] = deque(maxlen=keep)
        self._lock = threading.Lock()

    def run(
        self,
        question: str,
        *,
        history: Sequence[Turn] = (),
        on_progress: Callable[[ProgressEvent], None] | None = None,
        policy: CypherPolicy | None = None,
        choice: Choice | None = None,
    ) -> AgentResult:
        started = time.perf_counter()
        steps: list[Step] = []

        def progress(event: ProgressEvent) -> None:
            at_ms = (time.perf_counter() - started) * 1000
            steps.append(Step(at_ms, event.step, event.text, event.attempt))
            if on_progress is not None:
                on_progress(event)

        result = self.agent.run(
            question, history=history, on_progress=progress, policy=policy, choice=choice
        )
        trace = Trace(result, steps, history_turns=len(history), finished_at=time.time())
        with self._lock:
            self._traces.append(trace)
        return result

    def suggestions(self, n: int = 3) -> list[str]:
        return self.agent.suggestions(n)

    def describe(self) -> str:
        return self.agent.describe()

    def trace_for(self, turn: Turn) -> Trace | None:
        """The run that produced `turn`: the newest one with the same question, answer and
        Cypher that no other turn has claimed."""
        with self._lock:
            for trace in reversed(self._traces):
                if trace.turn_id == turn.id:
                    return trace
            for trace in reversed(self._traces):
                result = trace.result
                if (
                    trace.turn_id is None
                    and result.question == turn.question
                    and result.answer == turn.answer
                    and (result.cypher or None) == (turn.cypher or None)
                ):
                    trace.turn_id = turn.id
                    return trace
        return None


def chart_json(result: AgentResult) -> dict[str, Any]:
    """The chart decision behind an answer: its kind and Vega-Lite spec, or why there is none
    (the same pure functions the Slack upload uses; nothing is drawn here)."""
    if result.outcome != "answered" or not result.rows:
        return {"kind": None, "reason": "no rows answered the question", "spec": None}
    decision = charts.decide(result.columns, result.rows)
    if decision.kind is None:
        return {"kind": None, "reason": decision.reason, "spec": None}
    title = result.standalone_question or result.question
    spec = charts.spec(title, result.columns, result.rows, decision)
    return {"kind": decision.kind, "reason": decision.reason, "spec": spec}
