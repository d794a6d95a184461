"""Use a graph tool: the card, neighbourhood or connection the question asked for, or a "did you
mean…?" when a name is unclear; a tool that finds nothing hands the question to the statement
loop."""

from __future__ import annotations

import asyncio
import logging
from dataclasses import dataclass, replace
from typing import Literal

from langgraph.runtime import Runtime

from graph_agent.context import Context
from graph_agent.graphdb.errors import GraphConnectionError, GraphError
from graph_agent.graphdb.protocol import GraphReader, GraphSchema
from graph_agent.grounding import nothing_found
from graph_agent.nodes.common import Update, step
from graph_agent.nodes.execution import READ_GRACE_S
from graph_agent.result import Choice, Stage
from graph_agent.state import AgentState
from graph_agent.tool_routing import ToolRequest, continued
from graph_agent.tools import (
    DEFAULT_LIMITS,
    Connection,
    Entity,
    EntityCard,
    Neighbourhood,
    Resolution,
    ToolLimits,
    card,
    connection,
    neighbourhood,
    recheck,
)
from guardrails import CypherPolicy, redact_rows

logger = logging.getLogger(__name__)

PROGRESS = {
    "card": "Looking it up in the graph…",
    "neighbourhood": "Looking at what it is linked to…",
    "connection": "Finding how they are connected…",
}
ASK_WHICH = "Which “{name}” do you mean?"
ASK_CLOSEST = "Nothing in the graph is called “{name}”. Did you mean one of these?"
NONE_OF_THESE = "None of these"

ToolResult = EntityCard | Neighbourhood | Connection


@dataclass(frozen=True)
class ToolCall:
    """A request as it ran: its result, and what each of its names resolved to."""

    request: ToolRequest
    result: ToolResult
    resolutions: tuple[Resolution, ...]


def call_tool(
    graph: GraphReader,
    schema: GraphSchema,
    request: ToolRequest,
    policy: CypherPolicy | None,
    limits: ToolLimits = DEFAULT_LIMITS,
) -> ToolCall:
    """Run `request` (blocking): an entity chosen in an earlier turn is read again by its key
    first, and stands for its name only when the channel still sees it under that name."""
    arguments: list[str | Entity] = []
    for slot, name in enumerate(request.names):
        argument = request.argument(slot)
        if isinstance(argument, Entity):
            checked = recheck(graph, schema, argument, policy=policy, limits=limits)
            if checked is None:
                logger.info("a chosen entity is gone or hidden; resolving its name again")
            argument = checked if checked is not None else name
        arguments.append(argument)
    result: ToolResult
    if request.tool == "connection":
        result = connection(graph, schema, arguments[0], arguments[1], policy=policy, limits=limits)
        return ToolCall(request, result, (result.source, result.target))
    if request.tool == "neighbourhood":
        result = neighbourhood(graph, schema, arguments[0], policy=policy, limits=limits)
    else:
        result = card(graph, schema, arguments[0], policy=policy, limits=limits)
    return ToolCall(request, result, (result.resolution,))


@step("use_tool")
async def use_tool(state: AgentState, runtime: Runtime[Context]) -> Update:
    """Run the graph tool the question asked for, under the channel's policy and the
    statement time limit: its rows go to the answer step, an unclear name back to the person
    (once per question), and a name or route it cannot find to the statement loop."""
    ctx = runtime.context
    request = state.get("tool_request")
    if request is None:
        return _statement_loop(ctx)
    ctx.progress("use_tool", PROGRESS[request.tool])
    budget = min(ctx.config.query_timeout_s, max(ctx.remaining_s(), 0.1))
    limits = replace(DEFAULT_LIMITS, timeout_s=budget)
    try:
        # The engine stops each read at the budget; the question does not wait past the grace.
        called = await asyncio.wait_for(
            asyncio.to_thread(call_tool, ctx.db, ctx.schema, request, ctx.policy, limits),
            budget + READ_GRACE_S,
        )
    except GraphConnectionError as exc:
        return {"fatal": True, "error_kind": "graph_down", "last_error": str(exc)}
    except (GraphError, TimeoutError) as exc:
        logger.warning("graph tool %s failed (%s); writing a statement instead", request.tool, exc)
        return _statement_loop(ctx)
    verdict = judge(called)
    if verdict.next == "rows":
        return _rows(ctx, called)
    if verdict.next == "ask" and verdict.slot is not None and not state.get("clarified"):
        return _ask_back(state["standalone_question"], called, verdict.slot)
    if verdict.next == "nothing" and verdict.slot is not None:
        name = called.request.names[verdict.slot]
        return {"outcome": "no_data", "answer": nothing_found([name]), "tool": None}
    why = verdict.why or "a name is still unclear after its clarifying round"
    logger.info("graph tool %s: %s; writing a statement", request.tool, why)
    return _statement_loop(ctx)


@dataclass(frozen=True)
class Verdict:
    """What a tool call leads to: its rows answer, a name is asked back, or a statement is
    written instead (`why`, for the log)."""

    next: Literal["rows", "ask", "nothing", "statements"]
    slot: int | None = None
    """The argument to ask about."""
    why: str = ""


def judge(called: ToolCall) -> Verdict:
    """Rows when every name resolved (and a connection found a route); otherwise ask about
    the first name that fits several things, or none but comes close to some (a stored value
    that names no node is a filter, not a misspelt name); a name that fits nothing at all, or
    no route, leaves the question to a statement; a name neither the tool nor the value lookup
    finds anything like is not in the graph ("nothing")."""
    if all(r.entity is not None for r in called.resolutions):
        result = called.result
        if isinstance(result, Connection) and not result.routes:
            return Verdict("statements", why=f"no route within {result.max_hops} hops")
        return Verdict("rows")
    asked: int | None = None
    for slot, resolution in enumerate(called.resolutions):
        if resolution.entity is not None:
            continue
        near = bool(resolution.near_misses) and not called.request.was_hinted(slot)
        if not resolution.candidates and not near:
            if not resolution.near_misses and not called.request.was_hinted(slot):
                # Nothing like it anywhere: a written statement would only filter on it and
                # come back empty (3 of 3 such dev items failed after 4-7 LLM calls).
                return Verdict("nothing", slot, why="a name fits nothing in the graph")
            return Verdict("statements", why="a name fits nothing in the graph")
        asked = slot if asked is None else asked
    return Verdict("ask", asked)


def _ask_back(question: str, called: ToolCall, slot: int) -> Update:
    """ "Which Alice do you mean?" with the candidates as choices, then "none of these"."""
    resolution = called.resolutions[slot]
    name = called.request.names[slot]
    candidates = resolution.candidates or resolution.near_misses
    choices = [
        Choice(
            text=c.entity.text(),
            question=continued(question, name, c.entity.name),
            request=called.request.with_entity(slot, c.entity),
            label=c.entity.label,
            name=c.entity.name,
        )
        for c in candidates
    ]
    choices.append(Choice(text=NONE_OF_THESE, question=question))
    lead = (ASK_WHICH if resolution.candidates else ASK_CLOSEST).format(name=name)
    listed = "\n".join(f"• {choice.text}" for choice in choices[:-1])
    return {
        "outcome": "needs_clarification",
        "answer": f"{lead}\n{listed}",
        "choices": choices,
        "suggestions": [],
    }


def _rows(ctx: Context, called: ToolCall) -> Update:
    """The tool's rows for the answer step, redacted as every statement's rows are."""
    result = called.result
    visible = redact_rows(list(result.columns), result.rows(), ctx.policy)
    text = result.text()
    if visible.removed_rows or visible.removed_values or visible.removed_columns:
        # The tools read only what the channel sees; rows that still lost something must not
        # be described by the text made before the redaction.
        logger.warning("graph tool rows were redacted; answering from the redacted rows")
        text = ""
    names = [r.entity.name for r in called.resolutions if r.entity is not None]
    return {
        "cypher": called.request.note(names),
        "columns": visible.columns,
        "rows": visible.rows,
        "truncated": result.partial,
        "tool": called.request.tool,
        "tool_text": text,
        "attempt_count": 1,
        "last_error": None,
        "last_stage": Stage.EXECUTE,
    }


def _statement_loop(ctx: Context) -> Update:
    """No tool answer: the statement loop takes the question (it needs a model)."""
    if ctx.llms is None:
        return {"fatal": True, "error_kind": "llm_not_configured", "tool": None}
    return {"tool": None}
