"""What a repair rule is: where it runs, what kind of change it makes, and what it gives back.

A rule answers one kind of mistake a model makes in a statement or an answer, in general
terms (never one dataset's words). Rules never talk to Slack, never write, and never run a
statement themselves: a rewrite goes back through the runner, which checks the policy (and,
where the trigger says so, the schema or EXPLAIN) before the statement is used.
"""

from __future__ import annotations

import inspect
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any

from graph_agent.context import Context
from graph_agent.repair.choices import Chooser, ModelChooser
from graph_agent.repair.probes import GraphProber, Prober
from graph_agent.result import Firing, Stage
from graph_agent.state import AgentState

__all__ = ["Apply", "Case", "Firing", "Fix", "Kind", "Phase", "Rule", "Trigger", "rule"]

Hint = tuple[str, str, str]
"""A value hint: (label, property, stored value)."""


class Phase(StrEnum):
    """The graph node a rule runs in."""

    VALIDATE = "validate"
    EXECUTE = "execute"
    CORRECT = "correct"
    ANSWER = "answer"


class Kind(StrEnum):
    """What a rule does when it fires."""

    REWRITE = "rewrite"
    """Changes the statement without the model (re-checked before it is used)."""
    HINT = "hint"
    """Fails the attempt with a note the correction step gives the model."""
    GUARD = "guard"
    """Stops something from going out as it is: a statement not run, an answer replaced."""


class Trigger(StrEnum):
    """The moment inside a phase at which a rule is asked."""

    STATEMENT = "statement"
    """validate: every extracted statement the policy allowed."""
    SCHEMA_PROBLEM = "schema_problem"
    """validate: the statement names something the schema lacks or has the other way round."""
    BEFORE_ENGINE = "before_engine"
    """validate: the statement fits the schema and is about to be EXPLAINed."""
    ENGINE_ERROR = "engine_error"
    """validate: EXPLAIN rejected the statement."""
    EMPTY_RESULT = "empty_result"
    """execute: no rows, or the one row of 0/null an aggregate gives over nothing."""
    ROWS = "rows"
    """execute: rows came back."""
    WORDED_ANSWER = "worded_answer"
    """answer: the model's worded answer over rows that answer the question."""


@dataclass(frozen=True)
class Case:
    """What a rule may look at: the question, the statement, the run so far."""

    question: str
    """The standalone question."""
    cypher: str
    ctx: Context
    state: AgentState
    error: str = ""
    """The engine's error (engine_error) or the schema check's problems (schema_problem)."""
    unknown: Sequence[str] = ()
    """Names the statement used that the schema lacks (schema_problem)."""
    columns: Sequence[str] = ()
    rows: Sequence[Sequence[Any]] = ()
    truncated: bool = False
    answer: str = ""
    """The model's worded answer (worded_answer), or its reply (reply)."""
    prober: Prober | None = None
    """Reads behind a note; None: the run's graph through its policy."""
    chooser: Chooser | None = None
    """Asks the model which stored value a word means; None: the run's fast model."""

    @property
    def probe(self) -> Prober:
        return self.prober or GraphProber(self.ctx.db, self.ctx.policy)

    @property
    def choose(self) -> Chooser:
        return self.chooser or ModelChooser(self.ctx)

    @property
    def hints(self) -> list[Hint]:
        return list(self.state.get("value_hints") or [])

    @property
    def attempts_left(self) -> int:
        return self.state["max_attempts"] - self.state["attempt_count"]


@dataclass(frozen=True)
class Fix:
    """What a rule that fired gives back."""

    detail: str
    """What changed or what was said, in a few words (the trace shows it)."""
    cypher: str | None = None
    """rewrite: the new statement."""
    note: str | None = None
    """hint: the text for the correction step; guard: why (a refusal) or the new answer."""
    stage: Stage | None = None
    """The stage a failed attempt is recorded under (hint, guard before the engine)."""
    update: Mapping[str, Any] = field(default_factory=dict)
    """Anything else the node should put in the state (a kept result, a flag)."""


Apply = Callable[[Case], "Fix | Awaitable[Fix | None] | None"]


@dataclass(frozen=True)
class Rule:
    """A named check with its place in the loop; `apply` may be sync or async."""

    name: str
    phase: Phase
    trigger: Trigger
    kind: Kind
    apply_fn: Apply
    once: str | None = None
    """Rules sharing a `once` group fire at most once per question between them."""

    @property
    def doc(self) -> str:
        return inspect.getdoc(self.apply_fn) or ""

    async def apply(self, case: Case) -> Fix | None:
        fix = self.apply_fn(case)
        if inspect.isawaitable(fix):
            return await fix
        return fix


def rule(
    name: str, phase: Phase, trigger: Trigger, kind: Kind, *, once: str | None = None
) -> Callable[[Apply], Rule]:
    """Declare a rule from its function (the function's docstring is the rule's)."""

    def wrap(fn: Apply) -> Rule:
        return Rule(name, phase, trigger, kind, fn, once)

    return wrap
