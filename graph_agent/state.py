"""The agent's typed state: what one question accumulates on its way through the graph."""

from __future__ import annotations

import operator
from typing import Annotated, Any, NamedTuple, NotRequired, TypedDict

from graph_agent.errors import ErrorKind
from graph_agent.llm import LLMCall
from graph_agent.result import Attempt, Candidate, Choice, Firing, Stage
from graph_agent.tool_routing import ToolName, ToolRequest
from guardrails import Scope
from memory.types import Outcome, Turn


def merge_timings(left: dict[str, float], right: dict[str, float]) -> dict[str, float]:
    """Reducer: add up milliseconds per step (steps repeat in the correction loop)."""
    merged = dict(left)
    for step, ms in right.items():
        merged[step] = merged.get(step, 0.0) + ms
    return merged


class UnconfirmedRows(NamedTuple):
    """A statement's result that the evaluate step did not accept."""

    cypher: str
    columns: list[str]
    rows: list[list[Any]]
    truncated: bool


class Draft(NamedTuple):
    """One reply of the first generation when it sampled several (CANDIDATES > 1)."""

    reply: str
    temperature: float
    cut_off: bool
    """The reply stopped at the token cap."""


class AgentState(TypedDict):
    """One question's state; nodes return only the keys they change.

    The four keys without NotRequired are set by whoever starts a run; the rest appear as
    the nodes produce them."""

    question: str
    """The user's text as asked."""
    history: list[Turn]
    """Previous turns of the conversation, oldest first (already trimmed)."""
    standalone_question: NotRequired[str]
    """The question rewritten to stand alone (equal to `question` without history)."""
    scope: NotRequired[Scope]
    """The guard's decision."""
    scope_reason: NotRequired[str]
    """Why the guard decided so (logged, shown in refusals when helpful)."""
    clarification: NotRequired[str]
    """The question to ask back when the guard needs clarification."""
    reused_example_id: NotRequired[int | None]
    """The example whose Cypher is reused verbatim (exact question match)."""
    example_ids: NotRequired[list[int]]
    """Examples shown to the generate step."""
    value_hints: NotRequired[list[tuple[str, str, str]]]
    """Stored values matching words of the question, (label, property, value), best first:
    validate fixes literals with them, execute explains an empty result with them."""
    path_patterns: NotRequired[list[str]]
    """The schema paths generate showed (graph_agent/schema_paths.py), for the corrections."""
    tool_request: NotRequired[ToolRequest | None]
    """The graph tool that fits the standalone question, with its arguments (None: write a
    statement); set by understand, or by a "did you mean" choice that continues a question."""
    clarified: NotRequired[bool]
    """This question had its one clarifying round already (it continues from a choice): a
    name still unclear goes to the statement loop, never back to the person."""
    tool: NotRequired[ToolName | None]
    """The graph tool whose rows the state holds (its note is then the `cypher`)."""
    tool_text: NotRequired[str]
    """That tool's own rendering of its rows: the plain answer when no model words one."""
    choices: NotRequired[list[Choice]]
    """The candidates offered when a name is unclear, then "none of these"."""
    candidate_count: NotRequired[int]
    """Statements the first generation samples (the CANDIDATES setting; absent: one, as the
    single-shot baseline always has)."""
    candidate_drafts: NotRequired[list[Draft]]
    """The first generation's sampled replies, the temperature-0 one first, until the choose
    step has tried them (then empty); never set with one candidate."""
    candidates: NotRequired[Annotated[list[Candidate], operator.add]]
    """What became of each sampled statement (graph_agent/candidates.py), for the trace."""
    draft: NotRequired[str]
    """The latest LLM reply (or reused Cypher) that should contain one statement."""
    cypher: NotRequired[str]
    """The latest extracted, checked statement."""
    columns: NotRequired[list[str]]
    """Columns of the latest run."""
    rows: NotRequired[list[list[Any]]]
    """Rows of the latest run (capped at max_rows)."""
    truncated: NotRequired[bool]
    """The latest run had more rows than max_rows."""
    tied: NotRequired[bool]
    """The latest rows are the ones tied for first (ties-shown): the answer says they tie."""
    last_error: NotRequired[str | None]
    """What went wrong with the latest attempt (fed to the correct step)."""
    last_stage: NotRequired[Stage]
    """Where the latest attempt stopped (see `Stage`)."""
    attempts: NotRequired[Annotated[list[Attempt], operator.add]]
    """Every finished attempt, in order."""
    attempt_count: int
    """Statements tried so far (generate or reuse counts as 1, each correction adds 1)."""
    max_attempts: int
    """Loop bound: statements allowed for this question (from the config)."""
    unconfirmed_rows: NotRequired[UnconfirmedRows]
    """The first result the evaluate step doubted: the answer when no later attempt does better."""
    unconfirmed: NotRequired[bool]
    """The answer is such a doubted result, given with a caveat."""
    missing_data: NotRequired[list[str]]
    """Words of the question that statements needed as names the graph lacks ("salary")."""
    answer: NotRequired[str]
    """The final text for the user."""
    ungrounded: NotRequired[bool]
    """The model's answer named a number or name the rows do not hold, so it was replaced."""
    outcome: NotRequired[Outcome]
    """Set once the run has an answer (or an honest failure)."""
    error_kind: NotRequired[ErrorKind | None]
    """Why the run failed, for the bot."""
    fatal: NotRequired[bool]
    """An unrecoverable error happened: stop and explain."""
    suggestions: NotRequired[list[str]]
    """Example questions offered with a refusal or clarification."""
    self_healed: NotRequired[bool]
    """Answered only after a correction."""
    rules_fired: NotRequired[Annotated[list[Firing], operator.add]]
    """Every repair rule that fired, in order (graph_agent/repair)."""
    llm_calls: NotRequired[Annotated[list[LLMCall], operator.add]]
    """Every LLM call made, in order."""
    timings_ms: NotRequired[Annotated[dict[str, float], merge_timings]]
    """Milliseconds spent per step, summed over the loop."""
