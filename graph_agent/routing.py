"""Pure routers: each reads the state and names the next node."""

from __future__ import annotations

from typing import Literal

from graph_agent.state import AgentState
from graph_agent.tool_routing import is_tool_note


def after_understand(
    state: AgentState,
) -> Literal["refuse", "clarify", "use_tool", "generate", "validate", "give_up"]:
    """Refuse, ask back, use a graph tool, reuse a verified statement, or write a new one."""
    if state.get("fatal"):
        return "give_up"
    scope = state.get("scope", "in_scope")
    if scope == "out_of_scope":
        return "refuse"
    if scope == "needs_clarification":
        return "clarify"
    if state.get("tool_request") is not None:
        return "use_tool"
    if state.get("reused_example_id") is not None:
        return "validate"
    return "generate"


def after_tool(state: AgentState) -> Literal["evaluate", "generate", "give_up", "__end__"]:
    """The tool's rows to the answer step; a "did you mean" ends the run; a tool that found
    nothing hands the question to the statement loop."""
    if state.get("fatal"):
        return "give_up"
    if state.get("outcome"):
        return "__end__"
    if state.get("tool"):
        return "evaluate"
    return "generate"


def after_draft(
    state: AgentState,
) -> Literal["validate", "choose", "correct", "give_up", "__end__"]:
    """After generate/correct: check the statement (several sampled ones: choose between
    them), stop when the schema cannot answer, or count a reply cut off at the token cap as a
    failed attempt."""
    if state.get("fatal"):
        return "give_up"
    if state.get("outcome"):
        return "__end__"
    if state.get("candidate_drafts"):
        return "choose"
    calls = state.get("llm_calls") or []
    if calls and calls[-1].cut_off:  # the call generate/correct just made
        return _retry(state)
    return "validate"


def _retry(state: AgentState) -> Literal["correct", "give_up"]:
    """Correct while attempts remain (each statement, even a cut-off one, is an attempt)."""
    if state["attempt_count"] < state["max_attempts"]:
        return "correct"
    return "give_up"


def after_validate(state: AgentState) -> Literal["execute", "correct", "give_up"]:
    """Run a checked statement; otherwise correct it while attempts remain."""
    if state.get("fatal"):
        return "give_up"
    if state.get("last_error"):
        return _retry(state)
    return "execute"


def after_execute(state: AgentState) -> Literal["evaluate", "correct", "give_up"]:
    """Read the rows; otherwise correct while attempts remain."""
    if state.get("fatal"):
        return "give_up"
    if state.get("last_error"):
        return _retry(state)
    return "evaluate"


def after_choose(state: AgentState) -> Literal["evaluate", "correct", "give_up"]:
    """The chosen candidate's rows to the answer step; when none ran, the temperature-0 one's
    failure to the correction, as from validate or execute without candidates."""
    return after_execute(state)


def after_evaluate(
    state: AgentState,
) -> Literal["correct", "generate", "give_up", "__end__"]:
    """Done when answered; otherwise correct while attempts remain. A graph tool's rows the
    evaluator doubted are no statement to correct: the statement loop starts afresh."""
    if state.get("fatal"):
        return "give_up"
    if state.get("outcome"):
        return "__end__"
    if is_tool_note(state.get("cypher")):
        return "generate"
    return _retry(state)
