"""Execute: run the statement read-only with a timeout and a row cap; the execute rules."""

from __future__ import annotations

import asyncio
import logging

from langgraph.runtime import Runtime

from graph_agent.context import Context
from graph_agent.graphdb.errors import (
    CypherSyntaxError,
    EngineRestartedError,
    GraphConnectionError,
    GraphError,
    NotReadOnlyError,
    QueryTimeoutError,
    ResourceLimitError,
)
from graph_agent.nodes.common import Update, attempt_failed, step
from graph_agent.repair import Case, Kind, Runner, Trigger
from graph_agent.repair.probes import nothing_found
from graph_agent.repair.validate_rules import COSTLY_READ_HINT
from graph_agent.result import Stage
from graph_agent.state import AgentState
from graph_agent.statement import (
    with_limit,
)
from guardrails import check_cypher, redact_rows

logger = logging.getLogger(__name__)


@step("execute")
async def execute(state: AgentState, runtime: Runtime[Context]) -> Update:
    """Run the statement read-only with a timeout and a row cap."""
    ctx = runtime.context
    attempt = state["attempt_count"]
    ctx.progress("execute", "Running it…" if attempt == 1 else f"Running it (attempt {attempt})…")
    return await run_statement(ctx, state, state["cypher"])


async def run_statement(ctx: Context, state: AgentState, checked: str) -> Update:
    """What execute puts in the state for the checked statement: its rows, or the failed
    attempt (the choose step runs each sampled candidate with it)."""
    capped = with_limit(checked, ctx.config.max_rows)
    judged = check_cypher(capped, ctx.policy)
    if not judged.allowed:
        return attempt_failed(
            capped, f"Refused by the read-only policy: {judged.reason}", Stage.POLICY
        )
    cypher = judged.canonical or capped
    timeout = min(ctx.config.query_timeout_s, max(ctx.remaining_s(), 0.1))
    try:
        # The engine checks its timeout between steps and can overshoot it under load; the
        # question does not wait past the grace (the engine still stops the read itself).
        result = await asyncio.wait_for(
            asyncio.to_thread(
                ctx.db.run_read, cypher, None, timeout_s=timeout, max_rows=ctx.config.max_rows
            ),
            timeout + READ_GRACE_S,
        )
    except (QueryTimeoutError, TimeoutError):
        return attempt_failed(
            cypher,
            f"The query ran longer than {timeout:.0f} s. {COSTLY_READ_HINT}",
            Stage.TIMEOUT,
        )
    except ResourceLimitError as exc:
        return attempt_failed(cypher, f"{exc} {COSTLY_READ_HINT}", Stage.RESOURCE)
    except CypherSyntaxError as exc:
        return attempt_failed(
            cypher, f"The engine rejected it: {exc.engine_message}", Stage.EXECUTE
        )
    except NotReadOnlyError as exc:
        return attempt_failed(cypher, f"Refused as not read-only: {exc}", Stage.POLICY)
    except EngineRestartedError as exc:
        return {"fatal": True, "error_kind": "graph_restarted", "last_error": str(exc)}
    except GraphConnectionError as exc:
        return {"fatal": True, "error_kind": "graph_down", "last_error": str(exc)}
    except GraphError as exc:
        return attempt_failed(cypher, f"The engine failed: {exc}", Stage.EXECUTE)
    # Before any model, person, memory or trace sees the rows: the channel's hidden names go,
    # whatever statement produced them.
    visible = redact_rows(result.columns, result.rows, ctx.policy)
    rules = Runner(
        Case(
            state["standalone_question"],
            cypher,
            ctx,
            state,
            columns=visible.columns,
            rows=visible.rows,
            truncated=result.truncated,
        )
    )
    rows, truncated = visible.rows, result.truncated
    nothing = nothing_found(rows)
    spent: Update = {}
    if nothing and (done := await rules.first(Trigger.EMPTY_RESULT, Kind.REWRITE)) is not None:
        spent = {"llm_calls": list(done.update.get("llm_calls", []))}
        if done.cypher is not None:
            # The statement read again with its filter's value completed, on the property
            # that holds it, or chosen (value-completed, value-property, value-chosen; never
            # in a restricted channel): its rows, and it is the statement shown.
            cypher = done.cypher
            rows = redact_rows(result.columns, done.update["rows"], ctx.policy).rows
            truncated, nothing = bool(done.update.get("truncated")), False
    fix = await rules.first(Trigger.EMPTY_RESULT) if nothing else None
    if fix is None and rows:
        fix = await rules.first(Trigger.ROWS, cypher=cypher, rows=rows)
    if fix is not None:
        failed = attempt_failed(cypher, fix.note or fix.detail, fix.stage or Stage.EXECUTE)
        return failed | dict(fix.update) | spent | rules.trace()
    kept = None
    if rows and (kept := await rules.first(Trigger.ROWS, Kind.REWRITE, cypher=cypher, rows=rows)):
        # Rows of the same statement read again (ties-shown, distinct-rows; never in a
        # restricted channel, and were it one day, its hidden names would go here as from any
        # rows).
        rows = redact_rows(result.columns, kept.update["rows"], ctx.policy).rows
        truncated = bool(kept.update.get("truncated"))
        if kept.update.get("shown"):
            # distinct-rows: the DISTINCT read is the statement the rows came from.
            cypher = kept.cypher or cypher
    return (
        {
            "cypher": cypher,
            "columns": visible.columns,
            "rows": rows,
            "truncated": truncated,
            "tied": bool(kept is not None and kept.update.get("tied")),
            "last_error": None,
            "last_stage": Stage.EXECUTE,
        }
        | spent
        | rules.trace()
    )


READ_GRACE_S = 1.5
"""How long past its timeout a read may take before the question stops waiting for it."""
