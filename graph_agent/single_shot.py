"""The naive baseline's nodes: one generation run as-is, with no validation, correction or
evaluation (`Agent.arun(question, flow="single-shot")` runs them)."""

from __future__ import annotations

import asyncio
from typing import Any, Literal

from langgraph.graph import START, StateGraph
from langgraph.graph.state import CompiledStateGraph
from langgraph.runtime import Runtime

from graph_agent import nodes
from graph_agent.answer_offline import plain_answer
from graph_agent.context import Context
from graph_agent.graphdb.errors import EngineRestartedError, GraphConnectionError, GraphError
from graph_agent.result import Attempt, Stage
from graph_agent.state import AgentState
from graph_agent.statement import with_limit
from guardrails import check_cypher, extract_cypher


@nodes.step("prepare")
async def prepare(state: AgentState, runtime: Runtime[Context]) -> dict[str, Any]:
    """No rewrite and no guard: the question goes to generation as asked."""
    if runtime.context.llms is None:
        return {"fatal": True, "error_kind": "llm_not_configured"}
    return {"standalone_question": state["question"]}


@nodes.step("execute")
async def run_once(state: AgentState, runtime: Runtime[Context]) -> dict[str, Any]:
    """Extract the statement and run it read-only; whatever happens is the result."""
    ctx = runtime.context
    cypher = extract_cypher(state.get("draft", ""))
    # The read-only policy stays on: the baseline must not be able to write either.
    verdict = check_cypher(cypher, ctx.policy) if cypher.strip() else None
    if verdict is None or not verdict.allowed:
        error = "no Cypher in the reply" if verdict is None else f"policy: {verdict.reason}"
        return _failed(cypher, error, Stage.POLICY if verdict else Stage.EXTRACT)
    cypher = with_limit(cypher, ctx.config.max_rows)
    timeout = min(ctx.config.query_timeout_s, max(ctx.remaining_s(), 0.1))
    try:
        result = await asyncio.to_thread(
            ctx.db.run_read, cypher, None, timeout_s=timeout, max_rows=ctx.config.max_rows
        )
    except EngineRestartedError as exc:
        return {"fatal": True, "error_kind": "graph_restarted", "last_error": str(exc)}
    except GraphConnectionError as exc:
        return {"fatal": True, "error_kind": "graph_down", "last_error": str(exc)}
    except GraphError as exc:
        return _failed(cypher, str(exc), Stage.EXECUTE)
    rows = [list(row) for row in result.rows]
    return {
        "cypher": cypher,
        "columns": list(result.columns),
        "rows": rows,
        "truncated": result.truncated,
        "outcome": "answered" if rows else "no_data",
        "answer": plain_answer(result.columns, rows, truncated=result.truncated),
        "attempts": [Attempt(cypher=cypher, stage=Stage.OK, rows=len(rows))],
    }


def _failed(cypher: str, error: str, stage: Stage) -> dict[str, Any]:
    return {
        "cypher": cypher,
        "outcome": "failed",
        "error_kind": "query_error",
        "answer": f"The query failed: {error[:300]}",
        "attempts": [Attempt(cypher=cypher, error=error, stage=stage)],
    }


def _after_prepare(state: AgentState) -> Literal["generate", "give_up"]:
    return "give_up" if state.get("fatal") else "generate"


def _after_generate(state: AgentState) -> Literal["run_once", "give_up", "__end__"]:
    if state.get("fatal"):
        return "give_up"
    return "__end__" if state.get("outcome") else "run_once"


def _after_run(state: AgentState) -> Literal["give_up", "__end__"]:
    return "give_up" if state.get("fatal") else "__end__"


def build_single_shot_graph() -> CompiledStateGraph[AgentState, Context, AgentState, AgentState]:
    """prepare → generate (the product's own node and prompt) → run_once."""
    graph = StateGraph(AgentState, context_schema=Context)
    graph.add_node("prepare", prepare)
    graph.add_node("generate", nodes.generate)
    graph.add_node("run_once", run_once)
    graph.add_node("give_up", nodes.give_up)
    graph.add_edge(START, "prepare")
    graph.add_conditional_edges("prepare", _after_prepare)
    graph.add_conditional_edges("generate", _after_generate)
    graph.add_conditional_edges("run_once", _after_run)
    graph.add_edge("give_up", "__end__")
    return graph.compile()
