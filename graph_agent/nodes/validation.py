"""Validate: extract the statement, the policy, the schema check, EXPLAIN, with the
validate rules of the repair catalogue at each point."""

from __future__ import annotations

import asyncio
import logging

from langgraph.runtime import Runtime

from graph_agent.context import Context
from graph_agent.graphdb.errors import (
    EngineRestartedError,
    GraphConnectionError,
)
from graph_agent.graphdb.protocol import Validation
from graph_agent.nodes.common import Update, attempt_failed, step
from graph_agent.repair import Case, Kind, Runner, Trigger
from graph_agent.result import Stage
from graph_agent.schema_check import check_schema
from graph_agent.state import AgentState
from guardrails import check_cypher, extract_cypher, plan_problem, referenced_names, tokenize

logger = logging.getLogger(__name__)


@step("validate")
async def validate(state: AgentState, runtime: Runtime[Context]) -> Update:
    """Extract the statement, apply the read-only policy, check names and directions, EXPLAIN;
    the repair catalogue's validate rules run at each of those points."""
    ctx = runtime.context
    ctx.progress("validate", "Checking the query…", state["attempt_count"])
    return await check_statement(ctx, state, state.get("draft", ""))


async def check_statement(ctx: Context, state: AgentState, draft: str) -> Update:
    """What validate puts in the state for the reply `draft`: the checked statement, or the
    failed attempt (the choose step checks each sampled candidate with it)."""
    cypher = extract_cypher(draft)
    if not cypher.strip():
        return attempt_failed("", "The reply contained no Cypher statement.", Stage.EXTRACT)
    if any(t.kind == "comment" for t in tokenize(cypher, include_comments=True)):
        # No honest query needs one, and a comment in a dotted procedure name crashed FalkorDB.
        return attempt_failed(cypher, COMMENT_REFUSAL, Stage.COMMENT)
    verdict = check_cypher(cypher, ctx.policy)
    if not verdict.allowed:
        return attempt_failed(
            cypher, f"Refused by the read-only policy: {verdict.reason}", Stage.POLICY
        )
    cypher = verdict.canonical or cypher
    rules = Runner(Case(state["standalone_question"], cypher, ctx, state))
    try:
        update = await _validate(ctx, rules, cypher)
    except EngineRestartedError as exc:
        update = {"fatal": True, "error_kind": "graph_restarted", "last_error": str(exc)}
    except GraphConnectionError as exc:
        update = {"fatal": True, "error_kind": "graph_down", "last_error": str(exc)}
    return update | rules.trace()


async def _validate(ctx: Context, rules: Runner, cypher: str) -> Update:
    cypher = await rules.rewrite(Trigger.STATEMENT, cypher)
    checked = check_schema(cypher, ctx.schema)
    if checked.problems:
        fixed = await rules.rewrite(
            Trigger.SCHEMA_PROBLEM,
            cypher,
            needed=lambda c: bool(check_schema(c, ctx.schema).problems),
        )
        if fixed != cypher and not check_schema(fixed, ctx.schema).problems:
            # What a schema rewrite made fit goes through the statement repairs once more: a
            # crew read from PILOT, moved to the starship that holds it as text, was still
            # sorted as text (the Star Wars trial), numbers-as-text having run before the move;
            # a denial of the hop the statement matches was only seen once relationship-road
            # had put the type the model invented right (a trial on a graph of drugs). A new
            # road is not chosen again by the question's words ("version" for VERSION, where
            # the data's road goes through INSTANCE).
            skip = () if _moved_reads_only(cypher, fixed) else ROAD_CHOOSING_RULES
            fixed = await rules.rewrite(Trigger.STATEMENT, fixed, skip=skip)
        cypher = fixed
        checked = check_schema(cypher, ctx.schema)
    if checked.problems:
        failed = attempt_failed(
            cypher, "Schema check: " + "; ".join(checked.problems), Stage.SCHEMA
        )
        guard = await rules.first(
            Trigger.SCHEMA_PROBLEM, Kind.GUARD, cypher=cypher, unknown=checked.unknown
        )
        return failed | (dict(guard.update) if guard else {})
    # A direction the schema check would turn round is the relationship-direction rule's (run
    # with the statement rules above); the statement runs as the rules left it.
    if guard := await rules.first(Trigger.BEFORE_ENGINE, Kind.GUARD, cypher=cypher):
        return attempt_failed(cypher, guard.note or guard.detail, guard.stage or Stage.VALIDATE)
    validation = await asyncio.to_thread(ctx.db.validate, cypher)
    if not validation.ok:
        explained: dict[str, Validation] = {}

        async def explains(candidate: str) -> bool:
            explained[candidate] = await asyncio.to_thread(ctx.db.validate, candidate)
            return explained[candidate].ok

        error = validation.error or ""
        bound = await rules.rewrite(Trigger.ENGINE_ERROR, cypher, verify=explains, error=error)
        if bound != cypher:
            cypher, validation = bound, explained[bound]
            # What the engine now runs goes through the statement repairs once more: a WITH
            # that keeps its node can now take the bound the question puts on its count.
            again = await rules.rewrite(Trigger.STATEMENT, cypher, verify=explains)
            if again != cypher:
                cypher, validation = again, explained[again]
            # A node matched there may be read by a property its label lacks (`c2.name` of a
            # Country, called by its `code`): the schema rewrites get their turn, and what
            # they leave goes back as the schema check's finding, not the engine's.
            if check_schema(cypher, ctx.schema).problems:
                cypher = await rules.rewrite(
                    Trigger.SCHEMA_PROBLEM,
                    cypher,
                    verify=explains,
                    needed=lambda c: bool(check_schema(c, ctx.schema).problems),
                )
                if problems := check_schema(cypher, ctx.schema).problems:
                    return attempt_failed(
                        cypher, "Schema check: " + "; ".join(problems), Stage.SCHEMA
                    )
                validation = explained[cypher]
    if not validation.ok:
        error = validation.error or "unknown error"
        if note := await rules.first(Trigger.ENGINE_ERROR, Kind.HINT, cypher=cypher, error=error):
            error = f"{error.rstrip('. ')}. {note.note}"
        return attempt_failed(cypher, f"The engine rejected it: {error}", Stage.VALIDATE)
    if validation.read_only is False:
        return attempt_failed(cypher, "The engine says this statement would write.", Stage.POLICY)
    if (problem := plan_problem(validation.plan, ctx.policy)) is not None:
        return attempt_failed(cypher, f"Refused in this channel: {problem}.", Stage.POLICY)
    return {"cypher": cypher, "last_error": None, "last_stage": Stage.VALIDATE}


ROAD_CHOOSING_RULES = frozenset(
    {
        "relationship-direction",
        "reciprocal-relationship",
        "relationship-word",
        "relationship-word-order",
    }
)
"""Statement rules that choose a road by the question's words: not asked again of a road the
schema rewrites chose from the schema and the data."""


def _moved_reads_only(before: str, after: str) -> bool:
    """A schema rewrite that changed the statement but not what it walks (its labels and
    relationship types): a property read moved to the node that holds it. A new road (the
    hops the data has, `relationship-road`) is not read again: the statement rules would
    choose the road by the question's words once more ("version" for VERSION, where the
    data's road goes through INSTANCE)."""
    if after == before:
        return False
    old, new = referenced_names(before), referenced_names(after)
    return old.labels == new.labels and old.rel_types == new.rel_types


COMMENT_REFUSAL = (
    "Refused by the read-only policy: the statement has comments (// or /* */). "
    "Write it again without any comments."
)
