"""Choose: check and run every sampled statement as validate and execute would, and carry on
with the rows most of them agree on (CANDIDATES > 1 at the first generation, RETRY_CANDIDATES
> 1 at the first correction; graph_agent/candidates.py)."""

from __future__ import annotations

import logging
from typing import Any, cast

from langgraph.runtime import Runtime

from graph_agent.candidates import agreement, pick
from graph_agent.context import Context
from graph_agent.nodes.common import Update, attempt_failed, cut_off, no_data, step
from graph_agent.nodes.execution import run_statement
from graph_agent.nodes.validation import check_statement
from graph_agent.result import Attempt, Candidate, Stage
from graph_agent.state import AgentState, Draft
from graph_agent.statement import with_limit
from guardrails import extract_cypher

logger = logging.getLogger(__name__)

NO_STATEMENT = "The reply held no statement: it said the graph has no data for the question."
SAME_AGAIN = "The same statement as an attempt that did not answer the question."


@step("choose")
async def choose(state: AgentState, runtime: Runtime[Context]) -> Update:
    """Each distinct sampled statement through validate's checks and execute's run (its rules
    included); the state then holds what validate and execute would have left for the chosen
    one (its rows, for the evaluate step, not run again), or, when none ran, for the
    temperature-0 one (its failure, for the correct step, as without candidates).

    A correction's candidates: a statement that already failed on this question fails again
    without running, and any rows come before none (what failed most often found nothing)."""
    ctx = runtime.context
    drafts = state.get("candidate_drafts") or []
    attempt = state["attempt_count"]
    ctx.progress("choose", f"Checking and running {len(drafts)} queries…")
    tried: dict[tuple[bool, str], Update] = {}
    updates: list[Update] = []
    for draft in drafts:
        key = (draft.cut_off, extract_cypher(draft.reply).strip())
        if key not in tried:
            tried[key] = await _try(ctx, state, draft)
            if tried[key].get("fatal"):
                return tried[key] | {"candidate_drafts": []}
        updates.append(tried[key])
    results = [update["rows"] if _ran(update) else None for update in updates]
    counts = agreement(results)
    chosen = pick(results, rows_first=attempt > 1)
    index = 0 if chosen is None else chosen
    trace = [
        Candidate(
            cypher=update.get("cypher") or "",
            temperature=draft.temperature,
            rows=None if rows is None else len(rows),
            error=None if rows is not None else update.get("last_error"),
            agreeing=count,
            chosen=i == index,
            attempt=attempt,
        )
        for i, (draft, update, rows, count) in enumerate(
            zip(drafts, updates, results, counts, strict=True)
        )
    ]
    logger.info(
        "candidates: %d sampled, %d ran, chose #%d (%d agreeing)",
        len(drafts),
        sum(rows is not None for rows in results),
        index + 1,
        counts[index],
    )
    return updates[index] | {
        "draft": drafts[index].reply,
        "candidates": trace,
        "candidate_drafts": [],
    }


async def _try(ctx: Context, state: AgentState, draft: Draft) -> Update:
    """What validate and then execute would have put in the state for this reply."""
    if no_data(draft.reply) is not None:
        return attempt_failed("", NO_STATEMENT, Stage.EXTRACT)
    if draft.cut_off:
        return cut_off(draft.reply)
    drafted = cast(AgentState, {**state, "draft": draft.reply})
    checked = await check_statement(ctx, drafted, draft.reply)
    if checked.get("fatal") or checked.get("last_error"):
        return checked
    if (earlier := _failed_before(ctx, state, checked["cypher"])) is not None:
        return attempt_failed(earlier.cypher, earlier.error or SAME_AGAIN, earlier.stage)
    fired: list[Any] = list(checked.get("rules_fired", []))
    # Execute's rules see what validate left, as they do in the loop ("once per question").
    seen = cast(
        AgentState, {**drafted, **checked, "rules_fired": [*state.get("rules_fired", []), *fired]}
    )
    ran = await run_statement(ctx, seen, checked["cypher"])
    fired += ran.get("rules_fired", [])
    return checked | ran | ({"rules_fired": fired} if fired else {})


def _failed_before(ctx: Context, state: AgentState, cypher: str) -> Attempt | None:
    """The earlier attempt of this question that ran this very statement (they all failed,
    or there would be no candidates to choose from now): checked as it is, or capped as
    execute runs it."""
    forms = {cypher.strip(), with_limit(cypher, ctx.config.max_rows).strip()}
    return next((a for a in state.get("attempts", []) if a.cypher.strip() in forms), None)


def _ran(update: Update) -> bool:
    return not update.get("last_error") and "rows" in update
