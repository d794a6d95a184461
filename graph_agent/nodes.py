"""The graph's nodes: async `(state, runtime) -> dict` functions returning only what they change."""

from __future__ import annotations

import asyncio
import functools
import logging
import re
import time
from collections.abc import Awaitable, Callable
from typing import Any, Protocol

from langchain_core.messages import AIMessage, BaseMessage, HumanMessage
from langgraph.runtime import Runtime

from graph_agent import prompts
from graph_agent.answer_offline import denies_rows, plain_answer
from graph_agent.context import Context
from graph_agent.errors import FAILURE_TEXT, LLMError, LLMNotConfiguredError, LLMTimeoutError
from graph_agent.graphdb.errors import (
    CypherSyntaxError,
    GraphConnectionError,
    GraphError,
    NotReadOnlyError,
    QueryTimeoutError,
    ResourceLimitError,
)
from graph_agent.graphdb.protocol import GraphDB, Validation
from graph_agent.graphdb.schema import quote_name, schema_text, schema_vocabulary
from graph_agent.grounding import (
    Evidence,
    leaning_words,
    nothing_found,
    question_entities,
    unsupported_claims,
)
from graph_agent.lint import (
    empty_result_feedback,
    filtered_node,
    lint_cypher,
    literal_filters,
    relabel_for_value,
    value_on_another_label,
)
from graph_agent.llm import LLMCall, call_llm
from graph_agent.pruning import relevant_labels
from graph_agent.question_fit import (
    aggregate_in_where,
    aggregate_in_where_guidance,
    counted_label_feedback,
)
from graph_agent.result import Attempt
from graph_agent.schema_examples import literal, question_focus, rank_examples, retrieval_query
from graph_agent.state import AgentState, NextDoor, UnconfirmedRows
from graph_agent.statement import (
    bind_unbound_variable,
    check_schema,
    order_by_aggregate_guidance,
    property_through_neighbour,
    unbound_variable_guidance,
    with_limit,
)
from graph_agent.structured import Evaluation, ask_structured
from graph_agent.words import article
from guardrails.cypher_policy import RESTRICTION_CATEGORIES, check_cypher
from guardrails.cypher_tokens import referenced_names, tokenize
from guardrails.extract import extract_cypher
from guardrails.intent import asks_for_a_task, asks_to_change
from guardrails.redact_rows import redact_rows
from guardrails.relevance import content_words, name_words, relevance, stem
from guardrails.topic import ScopeDecision, fallback_decision, parse_decision, parse_json_object
from memory.types import Example

logger = logging.getLogger(__name__)

Update = dict[str, Any]


class Node(Protocol):
    """The shape LangGraph calls: the state, and the runtime carrying the Context."""

    def __call__(self, state: AgentState, *, runtime: Runtime[Context]) -> Awaitable[Update]: ...


NO_DATA_MARK = "NO_DATA:"


def step(name: str) -> Callable[[Node], Node]:
    """Time the node, stop it when the deadline has passed, turn LLM failures into a fatal stop."""

    def wrap(node: Node) -> Node:
        @functools.wraps(node)
        async def timed(state: AgentState, runtime: Runtime[Context]) -> Update:
            started = time.perf_counter()
            ctx = runtime.context
            if ctx.remaining_s() <= 0:
                update: Update = {"fatal": True, "error_kind": "deadline"}
            else:
                try:
                    update = await node(state, runtime=runtime)
                except LLMTimeoutError as exc:
                    update = {"fatal": True, "error_kind": "llm_timeout", "last_error": str(exc)}
                except LLMError as exc:
                    update = {"fatal": True, "error_kind": "llm_error", "last_error": str(exc)}
            ms = (time.perf_counter() - started) * 1000
            llm_ms = sum(call.ms for call in update.get("llm_calls", ()))
            update["timings_ms"] = {name: ms - llm_ms, **({"llm": llm_ms} if llm_ms else {})}
            return update

        return timed

    return wrap


def _llm_timeout(ctx: Context) -> float:
    return max(ctx.remaining_s(), 0.001)


# --- understand: contextualize + guard ------------------------------------------------------


def _reuse(example: Example) -> Update:
    return {
        "scope": "in_scope",
        "reused_example_id": example.id,
        "draft": example.cypher,
        "attempt_count": 1,
    }


@step("understand")
async def understand(state: AgentState, runtime: Runtime[Context]) -> Update:
    """Rewrite a follow-up into a standalone question and decide its scope (one LLM call)."""
    ctx = runtime.context
    ctx.progress("understand", "Understanding the question…")
    question = state["question"]
    history = state["history"]
    update: Update = {"standalone_question": question}
    # A verified question needs neither a rewrite nor a guard: reuse it straight away.
    if not history or ctx.llms is None:
        example = await asyncio.to_thread(
            ctx.examples.exact, question, schema_fingerprint=ctx.schema_fingerprint
        )
        if example is not None:
            return update | _reuse(example)
    if asks_to_change(question):
        # Decided without the model: a small one called "delete all orders" in scope, and the
        # person deserves "I only read" rather than three refused write statements.
        return update | {"scope": "out_of_scope", "scope_reason": WRITE_REQUEST}
    if asks_for_a_task(question):
        return update | {"scope": "out_of_scope", "scope_reason": TASK_REQUEST}
    hints = await _hints(ctx, question)
    related = relevance(question, schema_vocabulary(ctx.schema), [v for _l, _p, v in hints])
    if related.decline:
        # A 1.5B guard called "a recipe for gnocchi" and "the weather in Palma" in scope
        # because a word matched a stored value; the topic word matches nothing in the graph.
        logger.info("declined before the model: %s", related.reason)
        return update | {"scope": "out_of_scope", "scope_reason": related.reason}
    update["value_hints"] = hints
    if ctx.llms is None:
        return update | {"fatal": True, "error_kind": "llm_not_configured"}

    messages = prompts.GUARD.render(
        description=ctx.description,
        follow_up_example=prompts.follow_up_example(ctx.schema),
        history=prompts.render_history(history, ctx.config.history_chars),
        question=question,
    )
    decision, calls = await ask_structured(
        ctx.llms.fast,
        messages,
        parse_decision,
        step="guard",
        timeout_s=_llm_timeout(ctx),
        json_mode=ctx.config.json_mode,
        max_tokens=ctx.config.llm_max_tokens,
    )
    if decision is None:
        decision = fallback_decision(question)
    elif history:
        decision, more = await _stand_alone(ctx, messages, decision, question)
        calls = [*calls, *more]
    standalone = question
    if history and decision.standalone_question.strip():
        standalone = decision.standalone_question.strip()
    update |= {
        "llm_calls": calls,
        "standalone_question": standalone,
        "scope": decision.scope,
        "scope_reason": decision.reason,
        "clarification": decision.clarification or "",
    }
    if decision.scope == "in_scope" and history:
        example = await asyncio.to_thread(
            ctx.examples.exact, standalone, schema_fingerprint=ctx.schema_fingerprint
        )
        if example is not None:
            update |= _reuse(example)
    return update


async def _stand_alone(
    ctx: Context, messages: list[BaseMessage], decision: ScopeDecision, question: str
) -> tuple[ScopeDecision, list[LLMCall]]:
    """One repair when the rewrite still leans on the history ("what else did he write?");
    the rewrite that leans least is kept."""
    standalone = decision.standalone_question.strip() or question
    words = leaning_words(standalone, question)
    if decision.scope != "in_scope" or not words:
        return decision, []
    assert ctx.llms is not None
    logger.info("standalone question still leans on the history; asking once more")
    repaired, calls = await ask_structured(
        ctx.llms.fast,
        prompts.resolve_messages(messages, decision.model_dump_json(), words),
        parse_decision,
        step="guard:resolve",
        timeout_s=_llm_timeout(ctx),
        json_mode=ctx.config.json_mode,
        max_tokens=ctx.config.llm_max_tokens,
    )
    if repaired is None or repaired.scope != "in_scope":
        return decision, calls
    left = leaning_words(repaired.standalone_question.strip() or question, question)
    if left:
        logger.info("standalone question still leans on the history after one repair")
    return (repaired if len(left) < len(words) else decision), calls


WRITE_REQUEST = "asks to change the graph"
"""The guard's reason when the question itself is an instruction to change data."""
TASK_REQUEST = "asks for an errand or a piece of writing"
"""The guard's reason for "Book me a flight…", "Write a Python function…"."""


@step("refuse")
async def refuse(state: AgentState, runtime: Runtime[Context]) -> Update:
    """A helpful refusal: what the bot can answer, with example questions."""
    ctx = runtime.context
    suggestions = ctx.suggestions[:3]
    if state.get("scope_reason") == WRITE_REQUEST:
        answer = (
            "I can only read the graph, never change it: ask an admin to make that change. "
            "I can look things up for you (who, which, how many…)."
        )
        if suggestions:
            answer += " For example:\n" + "\n".join(f"• {q}" for q in suggestions)
        return {"outcome": "out_of_scope", "answer": answer, "suggestions": suggestions}
    if state.get("scope_reason") == TASK_REQUEST:
        lead = "I can't do errands or write code or texts; I answer questions from the graph."
    else:
        lead = "That question looks like it is about something else."
    answer = f"I can only answer questions about what is in the graph: {ctx.description}\n{lead}"
    if suggestions:
        answer += " You could ask, for example:\n" + "\n".join(f"• {q}" for q in suggestions)
    return {"outcome": "out_of_scope", "answer": answer, "suggestions": suggestions}


@step("clarify")
async def clarify(state: AgentState, runtime: Runtime[Context]) -> Update:
    """Ask back what the question means, with example questions."""
    ctx = runtime.context
    suggestions = ctx.suggestions[:3]
    answer = state.get("clarification") or "Could you say a bit more about what you want to know?"
    if suggestions:
        answer += "\nFor example:\n" + "\n".join(f"• {q}" for q in suggestions)
    return {"outcome": "needs_clarification", "answer": answer, "suggestions": suggestions}


# --- generate / correct ---------------------------------------------------------------------


async def _examples(ctx: Context, question: str) -> list[Example]:
    """Candidate examples for the question's words, labels and shape (a few times k, ranked
    later with the value hints); those verified on another schema must still fit this one."""
    query = retrieval_query(question, question_focus(question, ctx.schema))
    found = await asyncio.to_thread(
        ctx.examples.similar,
        query,
        4 * ctx.config.few_shot_k,
        schema_fingerprint=ctx.schema_fingerprint,
    )
    kept = []
    for example in found:
        stale = not getattr(example, "verified_on_current", True)
        if stale and check_schema(example.cypher, ctx.schema).problems:
            continue
        if ctx.policy is not None and not check_cypher(example.cypher, ctx.policy).allowed:
            # A channel that may not see a label must not see it in an example either.
            continue
        kept.append(example)
    return kept


async def _hints(ctx: Context, question: str) -> list[tuple[str, str, str]]:
    if ctx.config.value_hints <= 0:
        return []
    try:
        matches = await asyncio.to_thread(ctx.db.lookup_values, question, ctx.config.value_hints)
    except GraphError:
        logger.warning("value lookup failed; generating without hints", exc_info=True)
        return []
    # The schema is the channel's view: a hint on a hidden label or property names a value
    # that channel may not see.
    visible = {(label.name, p.name) for label in ctx.schema.labels for p in label.properties}
    return [(m.label, m.property, m.value) for m in matches if (m.label, m.property) in visible]


async def _prompt_parts(
    ctx: Context, question: str, known_hints: list[tuple[str, str, str]] | None = None
) -> tuple[dict[str, str], list[int], list[tuple[str, str, str]]]:
    """Schema (pruned for large graphs), examples and value hints for generate and correct;
    also the example ids and the structured hints (kept in the state for validate/execute).
    `known_hints` are the hints already looked up for this very question."""
    if known_hints is None:
        candidates, hints = await asyncio.gather(_examples(ctx, question), _hints(ctx, question))
    else:
        candidates, hints = await _examples(ctx, question), known_hints
    boost = {label for label, _prop, _value in hints}
    focus = question_focus(question, ctx.schema, sorted(boost))
    examples = rank_examples(candidates, question, focus, ctx.config.few_shot_k)
    for example in examples:
        boost |= referenced_names(example.cypher).labels
    labels = relevant_labels(
        ctx.schema, question, limit=ctx.config.schema_prune_labels, boost=sorted(boost)
    )
    parts = {
        "dialect": ctx.db.dialect,
        "row_limit": str(ctx.config.rows_to_llm),
        "schema": schema_text(ctx.schema, labels=labels),
        "examples": prompts.render_examples(examples),
        "hints": prompts.render_hints(hints),
        "question": question,
    }
    return parts, [e.id for e in examples], hints


def _no_data(draft: str) -> str | None:
    text = draft.strip().strip("`").strip()
    if text.upper().startswith(NO_DATA_MARK):
        return text[len(NO_DATA_MARK) :].strip() or "what the question asks for"
    return None


@step("generate")
async def generate(state: AgentState, runtime: Runtime[Context]) -> Update:
    """Write the first statement from the schema, examples and value hints (one LLM call)."""
    ctx = runtime.context
    assert ctx.llms is not None  # the router only comes here with an LLM
    ctx.progress("generate", "Writing a query…")
    question = state["standalone_question"]
    looked_up = state.get("value_hints") if question == state["question"] else None
    parts, example_ids, hints = await _prompt_parts(ctx, question, looked_up)
    parts["previous"] = prompts.render_previous(state["history"])
    reply, call = await call_llm(
        ctx.llms.cypher,
        prompts.GENERATE.render(**parts),
        step="generate",
        timeout_s=_llm_timeout(ctx),
        max_tokens=ctx.config.llm_max_tokens,
    )
    update: Update = {
        "draft": reply,
        "attempt_count": 1,
        "example_ids": example_ids,
        "value_hints": hints,
        "llm_calls": [call],
    }
    if (missing := _no_data(reply)) is not None:
        update |= {"outcome": "no_data", "answer": f"The graph has no data on {missing}"}
    elif call.cut_off:
        update |= _cut_off(reply)
    return update


@step("correct")
async def correct(state: AgentState, runtime: Runtime[Context]) -> Update:
    """A new statement from the failed one and what went wrong (one LLM call)."""
    ctx = runtime.context
    attempt = state["attempt_count"] + 1
    if ctx.llms is None:
        return {"fatal": True, "error_kind": "llm_not_configured"}
    ctx.progress("correct", "Fixing the query…", attempt)
    # The prompt is built again from what the state holds (question, value hints, history):
    # the same schema, examples and hints generate showed, without rendered text in state.
    question = state["standalone_question"]
    generated = "example_ids" in state
    known = state.get("value_hints") if generated or question == state["question"] else None
    parts, _ids, hints = await _prompt_parts(ctx, question, known)
    parts["previous"] = prompts.render_previous(state["history"])
    found: Update = {} if known is not None else {"value_hints": hints}
    previous = state.get("cypher") or state.get("draft", "")
    error = state.get("last_error") or "unknown problem"
    messages = prompts.CORRECT.render(**parts, cypher=previous, error=error)
    reply, call = await call_llm(
        ctx.llms.cypher,
        messages,
        step="correct",
        timeout_s=_llm_timeout(ctx),
        max_tokens=ctx.config.llm_max_tokens,
    )
    calls = [call]
    update: Update = {"attempt_count": attempt, **found}
    if not call.cut_off and (shown := _kept_next_door_filter(state, reply)) is not None:
        # The note showed the statement through the neighbour; a 1.5B model kept its filter
        # (sent the statement back, or changed something else) on every run. Run the one shown.
        logger.info("the correction kept the filter the note was about; running the one shown")
        reply = f"```cypher\n{shown}\n```"
    if (
        not call.cut_off
        and not state.get("reasked")
        and not state.get("missing_data")
        and state.get("last_stage") in _FAILS_AGAIN_UNCHANGED
        and _already_failed(state, reply)
    ):
        # At temperature 0 a small model that repeats a failed statement repeats it on every
        # attempt (3 of 4 failures on a network graph were one statement written 3 times).
        # Ask once more in the same attempt, saying so, with some room to vary. (Not when the
        # statement names a word of the question the graph lacks: repeating that is the sign
        # validate reads as "the graph has no data on it".) Once per question: the attempts
        # stay the bound, and a model that repeats itself twice costs one call more, not two.
        ctx.progress("correct", "Trying a different query…", attempt)
        reply, call = await call_llm(
            ctx.llms.cypher.bind(temperature=REPEAT_TEMPERATURE),
            [*messages, AIMessage(reply), HumanMessage(prompts.REPEATED_STATEMENT)],
            step="correct",
            timeout_s=_llm_timeout(ctx),
            max_tokens=ctx.config.llm_max_tokens,
        )
        calls.append(call)
        update["reasked"] = True
    update |= {"draft": reply, "llm_calls": calls}
    if (missing := _no_data(reply)) is not None:
        update |= {"outcome": "no_data", "answer": f"The graph has no data on {missing}"}
    elif call.cut_off:
        update |= _cut_off(reply)
    return update


_FAILS_AGAIN_UNCHANGED = frozenset({"schema", "validate", "execute", "value_next_door"})
"""Stages whose failure the same statement meets again and another statement may avoid. Not
`missed_value` or `evaluate`: a repeat there is the model saying the value or the rows are what
the graph has, which those steps then accept once; not `policy`: a statement that keeps reading
what the channel may not see or keeps writing is refused whatever it is asked. But
`value_next_door` is: no node of that label holds the value, a node next to it does (a 1.5B
model sent `(v:Version {name: 'Ubuntu'})` back unchanged, shown the statement through the OS)."""

REPEAT_TEMPERATURE = 0.7
"""Sampling temperature of the one re-ask after a correction repeated a failed statement."""


def _kept_next_door_filter(state: AgentState, reply: str) -> str | None:
    """The statement the value-next-door note showed, when the correction right after it still
    filters that label on that value; else None."""
    shown = state.get("next_door")
    if shown is None or state.get("last_stage") != "value_next_door":
        return None
    filters = {
        (label, prop, value.casefold())
        for label, prop, value in literal_filters(extract_cypher(reply))
    }
    return shown.cypher if (shown.label, shown.prop, shown.value.casefold()) in filters else None


def _same_statement(cypher: str) -> str:
    return " ".join(cypher.split()).rstrip(";").strip()


def _already_failed(state: AgentState, reply: str) -> bool:
    """Whether `reply`'s statement is one this question already tried and saw fail."""
    statement = _same_statement(extract_cypher(reply))
    if not statement:
        return False
    tried = {_same_statement(a.cypher) for a in state.get("attempts") or [] if a.error}
    tried.add(_same_statement(extract_cypher(state.get("draft", ""))))
    return statement in tried


# --- validate / execute ---------------------------------------------------------------------


def _failed(cypher: str, error: str, stage: str) -> Update:
    return {
        "cypher": cypher,
        "last_error": error,
        "last_stage": stage,
        "attempts": [Attempt(cypher=cypher, error=error, stage=stage)],
    }


def _cut_off(reply: str) -> Update:
    """A statement reply that stopped at the token cap: a failed attempt (the router sends it
    to correct), never run half-written."""
    return _failed(
        extract_cypher(reply),
        "Your reply was cut off at the length limit before the statement was complete. "
        "Reply with only the statement in a ```cypher block, shorter: no explanation.",
        "cut_off",
    )


@step("validate")
async def validate(state: AgentState, runtime: Runtime[Context]) -> Update:
    """Extract the statement, apply the read-only policy, check names and directions, EXPLAIN."""
    ctx = runtime.context
    ctx.progress("validate", "Checking the query…", state["attempt_count"])
    cypher = extract_cypher(state.get("draft", ""))
    if not cypher.strip():
        return _failed("", "The reply contained no Cypher statement.", "extract")
    if any(t.kind == "comment" for t in tokenize(cypher, include_comments=True)):
        # No honest query needs one, and a comment in a dotted procedure name crashed FalkorDB.
        return _failed(cypher, COMMENT_REFUSAL, "comment")
    verdict = check_cypher(cypher, ctx.policy)
    if not verdict.allowed:
        return _failed(cypher, f"Refused by the read-only policy: {verdict.reason}", "policy")
    cypher = verdict.canonical or cypher
    linted = lint_cypher(cypher, state.get("value_hints") or [])
    if linted.fixes:
        logger.info("auto-corrected: %s", "; ".join(linted.fixes))
    cypher = linted.cypher
    rewritten = bool(linted.fixes)
    checked = check_schema(cypher, ctx.schema)
    hints = state.get("value_hints") or []
    if checked.problems and (relabelled := relabel_for_value(cypher, ctx.schema, hints)):
        cypher, fix = relabelled
        logger.info("auto-corrected: %s, the label that holds the value", fix)
        rewritten = True
        checked = check_schema(cypher, ctx.schema)
    if checked.problems and (moved := property_through_neighbour(cypher, ctx.schema)):
        cypher, fix = moved
        logger.info("auto-corrected: %s", fix)
        rewritten = True
        checked = check_schema(cypher, ctx.schema)
    if checked.problems:
        problems = checked.problems
        if elsewhere := value_on_another_label(cypher, ctx.schema, hints):
            problems = [elsewhere, *problems]  # first: the long list of patterns buried it
        failed = _failed(cypher, "Schema check: " + "; ".join(problems), "schema")
        missing = _asked_but_missing(state["standalone_question"], checked.unknown, ctx)
        before = set(state.get("missing_data") or [])
        if missing and before & set(missing):
            # Twice a name for a word of the question that the graph lacks ("salary"): a
            # third attempt will not find what is not there.
            failed["fatal"] = True
        return failed | ({"missing_data": sorted(before | set(missing))} if missing else {})
    if checked.corrections:
        logger.info("auto-corrected: %s", "; ".join(checked.corrections))
    if checked.cypher != cypher or rewritten:
        # Rewritten after the policy's verdict: judge the text that will run, not the draft.
        final = check_cypher(checked.cypher, ctx.policy)
        if not final.allowed:
            return _failed(
                checked.cypher, f"Refused by the read-only policy: {final.reason}", "policy"
            )
        cypher = final.canonical or checked.cypher
    else:
        cypher = checked.cypher
    if (repeated := _repeats_a_costly_read(state, cypher, ctx.config.max_rows)) is not None:
        return _failed(cypher, repeated, "resource")
    if aggregate_in_where(cypher):
        guidance = aggregate_in_where_guidance(cypher, state["standalone_question"], ctx.schema)
        return _failed(cypher, f"Not valid Cypher: {guidance}.", "validate")
    asked: frozenset[str] = frozenset()
    try:
        validation = await asyncio.to_thread(ctx.db.validate, cypher)
        if not validation.ok:
            asked = question_focus(state["standalone_question"], ctx.schema).labels
            if bound := await _bind_unbound(ctx, cypher, validation.error or "", asked):
                cypher, validation = bound
    except GraphConnectionError as exc:
        return {"fatal": True, "error_kind": "graph_down", "last_error": str(exc)}
    if not validation.ok:
        error = validation.error or "unknown error"
        guidance = unbound_variable_guidance(error, cypher, ctx.schema, asked)
        if guidance := guidance or order_by_aggregate_guidance(error):
            error = f"{error.rstrip('. ')}. {guidance}"
        return _failed(cypher, f"The engine rejected it: {error}", "validate")
    if validation.read_only is False:
        return _failed(cypher, "The engine says this statement would write.", "policy")
    return {"cypher": cypher, "last_error": None, "last_stage": "validate"}


async def _bind_unbound(
    ctx: Context, cypher: str, error: str, asked: frozenset[str]
) -> tuple[str, Validation] | None:
    """The statement with its unbound variable matched through the one pattern the hint would
    name (`bind_unbound_variable`), checked by the policy and EXPLAINed again; None unless
    that works."""
    bound = bind_unbound_variable(error, cypher, ctx.schema, asked)
    if bound is None:
        return None
    verdict = check_cypher(bound[0], ctx.policy)
    if not verdict.allowed:
        return None
    statement = verdict.canonical or bound[0]
    second = await asyncio.to_thread(ctx.db.validate, statement)
    if not second.ok:
        return None
    logger.info("auto-corrected: %s", bound[1])
    return statement, second


@step("execute")
async def execute(state: AgentState, runtime: Runtime[Context]) -> Update:
    """Run the statement read-only with a timeout and a row cap."""
    ctx = runtime.context
    attempt = state["attempt_count"]
    ctx.progress("execute", "Running it…" if attempt == 1 else f"Running it (attempt {attempt})…")
    capped = with_limit(state["cypher"], ctx.config.max_rows)
    judged = check_cypher(capped, ctx.policy)
    if not judged.allowed:
        return _failed(capped, f"Refused by the read-only policy: {judged.reason}", "policy")
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
        return _failed(
            cypher,
            f"The query ran longer than {timeout:.0f} s. {COSTLY_READ_HINT}",
            "timeout",
        )
    except ResourceLimitError as exc:
        return _failed(cypher, f"{exc} {COSTLY_READ_HINT}", "resource")
    except CypherSyntaxError as exc:
        return _failed(cypher, f"The engine rejected it: {exc.engine_message}", "execute")
    except NotReadOnlyError as exc:
        return _failed(cypher, f"Refused as not read-only: {exc}", "policy")
    except GraphConnectionError as exc:
        return {"fatal": True, "error_kind": "graph_down", "last_error": str(exc)}
    except GraphError as exc:
        return _failed(cypher, f"The engine failed: {exc}", "execute")
    # Before any model, person, memory or trace sees the rows: the channel's hidden names go,
    # whatever statement produced them.
    visible = redact_rows(result.columns, result.rows, ctx.policy)
    nothing = _nothing_found(visible.rows)
    if nothing and (feedback := _missed_value(state, cypher)):
        return _failed(cypher, feedback, "missed_value")
    if nothing and (failed := await _misplaced_literal(state, ctx, cypher)):
        return failed
    if visible.rows and (feedback := _counts_something_else(state, ctx, cypher)):
        failed = _failed(cypher, feedback, "counted_label")
        if not state.get("unconfirmed_rows"):
            # Kept, as evaluate keeps doubted rows: if no later attempt does better, these
            # rows with a caveat beat "I couldn't answer".
            rows = UnconfirmedRows(cypher, visible.columns, visible.rows, result.truncated)
            failed["unconfirmed_rows"] = rows
        return failed
    return {
        "cypher": cypher,
        "columns": visible.columns,
        "rows": visible.rows,
        "truncated": result.truncated,
        "last_error": None,
        "last_stage": "execute",
    }


READ_GRACE_S = 1.5
"""How long past its timeout a read may take before the question stops waiting for it."""
COMMENT_REFUSAL = (
    "Refused by the read-only policy: the statement has comments (// or /* */). "
    "Write it again without any comments."
)
COSTLY_READ_HINT = (
    "Write a different, cheaper statement: filter early, aggregate (count, sum) instead of "
    "collecting, never combine every row with every other, and do not send this one again."
)


def _shape(cypher: str) -> str:
    return "".join(cypher.split()).casefold()


def _repeats_a_costly_read(state: AgentState, cypher: str, max_rows: int) -> str | None:
    """Feedback when the statement is (but for spacing and case) one that already ran out of
    time or memory in this question: running it again would only cost the same again."""
    shape = _shape(with_limit(cypher, max_rows))
    for attempt in state.get("attempts", []):
        if attempt.stage in ("timeout", "resource") and _shape(attempt.cypher) == shape:
            return (
                "This is the statement that already ran out of time or memory; it was not run "
                f"again. {COSTLY_READ_HINT}"
            )
    return None


def _missed_value(state: AgentState, cypher: str) -> str | None:
    """Feedback for an empty result that a value hint explains (the statement used none of
    the stored values the question names): once per question, and only while an attempt
    remains, so that a true "nothing matches" still gets its answer."""
    if state["attempt_count"] >= state["max_attempts"]:
        return None
    if any(a.stage in _VALUE_STAGES for a in state.get("attempts", [])):
        return None
    feedback = empty_result_feedback(cypher, state.get("value_hints") or [])
    if feedback is not None:
        logger.info("0 rows and the statement missed a hinted value; one correction")
    return feedback


def _nothing_found(rows: list[list[Any]]) -> bool:
    """No rows, or the one row an aggregate gives over no match (`count(m)` → 0, `sum` → null):
    `t.type = 'xs-1/1/1'` where that is a Type's name answered "0" in a real playground
    follow-up, and the value checks never looked because a row came back."""
    if not rows:
        return True
    return len(rows) == 1 and all(
        value is None or (value == 0 and not isinstance(value, bool)) for value in rows[0]
    )


def _counts_something_else(state: AgentState, ctx: Context, cypher: str) -> str | None:
    """Feedback for rows from a statement that never matches the label the question counts
    ("How many machines…" answered by counting the rack): once per question, so a statement
    the model sends back unchanged is then judged on its rows. On the last attempt it still
    fails: the rows are then given as unconfirmed, not as the answer ("DC1 has the most racks
    with 1 rack" was a real 1.5B answer from counting data centres)."""
    if any(a.stage == "counted_label" for a in state.get("attempts", [])):
        return None
    feedback = counted_label_feedback(cypher, state["standalone_question"], ctx.schema)
    if feedback is not None:
        logger.info("rows from a statement that does not match the counted label; one correction")
    return feedback


def _written_as(text: str) -> tuple[str, bool]:
    case = (
        "upper"
        if text.isupper()
        else "lower"
        if text.islower()
        else "title"
        if text.istitle()
        else "mixed"
    )
    return case, len(text) <= 4


def _written_alike(value: str, stored: list[str]) -> bool:
    """Whether `value` is written like the stored values (same case pattern, both short codes
    or both longer): then no node holding it means there is none ("Atlantis" among team names),
    not that it was written wrong ("Spain" among country codes like "ES")."""
    return _written_as(value) in {_written_as(v) for v in stored}


MAX_LITERAL_CHECKS = 3
SAMPLE_VALUES_SHOWN = 5


_VALUE_STAGES = ("missed_value", "value_next_door")
"""Stages of the one correction per question about a filtered value (see `_missed_value`)."""


async def _misplaced_literal(state: AgentState, ctx: Context, cypher: str) -> Update | None:
    """Feedback for an empty result whose string filter matches no node at all: the value is
    on another property (no Airport has city 'Heathrow', one has descr 'Heathrow'), or is
    written differently from what the graph stores (no Country has code 'Spain'; codes look
    like 'AT', 'BE', 'DE'). A few short reads, once per question and only while an attempt
    remains, like `_missed_value`; a failing read just skips the check."""
    if state["attempt_count"] >= state["max_attempts"]:
        return None
    if any(a.stage in _VALUE_STAGES for a in state.get("attempts", [])):
        return None
    if ctx.policy is not None:
        return None  # sampled values would bypass the channel's row redaction
    for label, prop, value in literal_filters(cypher)[:MAX_LITERAL_CHECKS]:
        info = ctx.schema.label(label)
        if info is None or not value.strip():
            continue
        if linked := await _value_on_a_neighbour(ctx, cypher, label, prop, value, state):
            logger.info("0 rows: the value is held by a node next to %s", label)
            text, shown = linked
            failed = _failed(cypher, text, "value_next_door")
            return failed | ({"next_door": shown} if shown is not None else {})
        others = [o.name for o in info.properties if o.name != prop and "STRING" in o.types]
        try:
            feedback = await _literal_feedback(ctx.db, label, prop, value, others[:12])
        except Exception:
            logger.debug("literal check failed", exc_info=True)
            return None
        if feedback is not None:
            logger.info("0 rows: no %s has %s = %r", label, prop, value)
            return _failed(cypher, feedback, "missed_value")
    return None


async def _value_on_a_neighbour(
    ctx: Context, cypher: str, label: str, prop: str, value: str, state: AgentState
) -> tuple[str, NextDoor | None] | None:
    """`(v:Version {name: 'Ubuntu'})` where 'Ubuntu' is a Software's name and software has
    versions: the value belongs to the node at the other end of a relationship (found from the
    value hints already looked up). The feedback shows the statement with the filter moved to
    that node: told only "(:OS)-[:VERSION]->(:Version) exists", a 1.5B model sent its statement
    back unchanged. Each such statement is tried (one row at most, a short timeout), and those
    that match something come first: on the network graph the first pattern by the schema's
    order, through INSTANCE, matched nothing."""
    names = referenced_names(cypher)
    used = names.rel_types
    span = filtered_node(cypher, label, prop, value)
    var = span[2] if span else ""
    here = f"({var}:{label})"
    holders: list[str] = []
    links: list[tuple[bool, str]] = []
    same_node: list[str] = []
    for h_label, h_prop, held in state.get("value_hints") or []:
        if h_label == label or held.casefold() != value.casefold():
            continue
        near = f"(:{h_label} {{{h_prop}: {literal(held)}}})"
        found = [
            (r.type in used, f"{here}<-[:{r.type}]-{near}" if r.start == h_label
             else f"{here}-[:{r.type}]->{near}")
            for r in ctx.schema.relationships
            if {r.start, r.end} == {label, h_label}
        ]  # fmt: skip
        own = next((v for v, bound in names.variables.items() if bound == h_label), None)
        if own is not None:
            # The statement already reaches a node of that label: through the relationship it
            # uses, the value is that node's ("SREs who work from London": filter the Person,
            # not another Person on the same project, as a shown statement once made a model
            # do); only a relationship it does not use yet leads to another node.
            fresh = [f for f in found if not f[0]]
            if found and not fresh:
                same_node.append(
                    f"{literal(held)} is {article(h_label)} {h_label}'s {h_prop}, and the "
                    f"statement already matches {own} ({h_label}): filter {own} on {h_prop} = "
                    f"{literal(held)} instead of the {label}"
                )
                continue
            found = fresh
        if found:
            holders.append(f"{article(h_label)} {h_label}'s {h_prop}")
            links.extend(found)
    if not links:
        if same_node:
            text = f"The query returned no rows: no {label} has {prop} {literal(value)}, but "
            return text + same_node[0] + ".", None
        return None
    # A relationship the statement does not use yet first: the one it uses led nowhere.
    patterns = list(dict.fromkeys(text for _used, text in sorted(links, key=lambda x: x[0])))
    statements: dict[str, str] = {}
    if span is not None:
        start, end, _var = span
        tried = {p: f"{cypher[:start]}{p}{cypher[end:]}" for p in patterns[:MAX_NEXT_DOOR_READS]}
        matching = {p: s for p, s in tried.items() if await _matches_something(ctx, s)}
        patterns = [*matching, *(p for p in patterns if p not in matching)]
        statements = matching
    text = (
        f"The query returned no rows: no {label} has {prop} {literal(value)}, but "
        f"{literal(value)} is {' and '.join(dict.fromkeys(holders))}. Reach the {label} from "
        f"that node: {' or '.join(patterns[:3])}"
    )
    shown = None
    if statements:
        statement = statements[patterns[0]]
        text += f", e.g. {statement}"
        shown = NextDoor(label, prop, value, statement)
    return " ".join(text.split()) + ".", shown


PROBE_TIMEOUT_S = 2.0
"""Engine timeout of the short reads behind a correction note (a value's spelling, a route)."""
MAX_NEXT_DOOR_READS = 4
"""Statements through a neighbour tried for one value-next-door note (one row each)."""


async def _matches_something(ctx: Context, statement: str) -> bool:
    """Whether a read-only statement the policy allows returns a row (a failing read: no)."""
    judged = check_cypher(statement, ctx.policy)
    if not judged.allowed:
        return False
    try:
        result = await asyncio.to_thread(
            ctx.db.run_read,
            judged.canonical or statement,
            None,
            timeout_s=PROBE_TIMEOUT_S,
            max_rows=1,
        )
    except GraphError:
        logger.debug("a statement through the neighbour failed", exc_info=True)
        return False
    return bool(result.rows)


async def _literal_feedback(
    db: GraphDB, label: str, prop: str, value: str, others: list[str]
) -> str | None:
    async def read(statement: str, rows: int) -> list[list[Any]]:
        result = await asyncio.to_thread(
            db.run_read, statement, {"v": value}, timeout_s=PROBE_TIMEOUT_S, max_rows=rows
        )
        return [list(r) for r in result.rows]

    node, key = f"(n:{quote_name(label)})", f"n.{quote_name(prop)}"
    if (await read(f"MATCH {node} WHERE {key} = $v RETURN count(n)", 1))[0][0]:
        return None
    if others:
        holds = " OR ".join(f"toLower(n.{quote_name(o)}) = toLower($v)" for o in others)
        shown = ", ".join(f"n.{quote_name(o)}" for o in others)
        rows = await read(f"MATCH {node} WHERE {holds} RETURN {key}, {shown} LIMIT 1", 1)
        found = dict(zip(others, rows[0][1:], strict=False)) if rows else {}
        for where, held in found.items():
            if isinstance(held, str) and held.casefold() == value.casefold():
                own = rows[0][0]
                also = f" or {prop} = {literal(own)}" if own is not None else ""
                return (
                    f"The query returned no rows: no {label} has {prop} {literal(value)}, "
                    f"but {literal(held)} is {article(label)} {label}'s {where}. "
                    f"Filter on {where} = {literal(held)}{also} instead."
                )
    samples = await read(
        f"MATCH {node} WHERE {key} IS NOT NULL RETURN DISTINCT {key} LIMIT {SAMPLE_VALUES_SHOWN}",
        SAMPLE_VALUES_SHOWN,
    )
    stored = [str(r[0]) for r in samples]
    if not stored or _written_alike(value, stored):
        return None
    return (
        f"The query returned no rows: no {label} has {prop} {literal(value)}. "
        f"{label}.{prop} holds values like {', '.join(literal(v) for v in stored)}: write the "
        "value the way the graph stores it (a code, an abbreviation), or filter on another "
        "property."
    )


# --- evaluate + answer ----------------------------------------------------------------------


def _evaluation(reply: str) -> Evaluation:
    parsed: Evaluation = parse_json_object(reply, Evaluation)
    return parsed


@step("evaluate")
async def evaluate(state: AgentState, runtime: Runtime[Context]) -> Update:
    """Judge whether the rows answer the question and, if so, write the answer (one LLM call)."""
    ctx = runtime.context
    ctx.progress("evaluate", "Reading the results…", state["attempt_count"])
    cypher, columns, rows = state["cypher"], state.get("columns", []), state.get("rows", [])
    truncated = state.get("truncated", False)
    calls: list[LLMCall] = []
    if ctx.llms is None:
        verdict = Evaluation(
            answers_question=True, answer=plain_answer(columns, rows, truncated=truncated)
        )
    else:
        text, shown = prompts.render_rows(
            columns, rows, max_rows=ctx.config.rows_to_llm, max_chars=ctx.config.rows_chars_to_llm
        )
        at_cap = truncated or len(rows) >= ctx.config.max_rows
        # At the cap the row count is the cap, not a count: "1000 machines in each zone" was
        # a real 1.5B answer from a capped list of machine names.
        note = f"{len(rows)} rows" + (", the row limit: more may exist" if at_cap else "")
        if shown < len(rows):
            note += f", first {shown} shown"
        parsed, calls = await ask_structured(
            ctx.llms.fast,
            prompts.EVALUATE.render(
                cypher=cypher, row_note=note, rows=text, question=state["standalone_question"]
            ),
            _evaluation,
            step="evaluate",
            timeout_s=_llm_timeout(ctx),
            json_mode=ctx.config.json_mode,
            max_tokens=ctx.config.llm_max_tokens,
        )
        # Unreadable twice: the rows are the best we have; show them plainly.
        verdict = parsed or Evaluation(
            answers_question=True, answer=plain_answer(columns, rows, truncated=truncated)
        )
        if verdict.answers_question and (
            not verdict.answer.strip() or (rows and denies_rows(verdict.answer))
        ):
            # An empty answer, or one that says there is nothing while rows came back (small
            # models misread "services with no tier" as "no data"): the rows speak instead.
            verdict.answer = plain_answer(columns, rows, truncated=truncated)
    if not verdict.answers_question:
        feedback = verdict.feedback.strip() or "The rows do not answer the question."
        update: Update = {"llm_calls": calls} | _failed(cypher, feedback, "evaluate")
        if rows and not state.get("unconfirmed_rows"):
            # Kept in case no later attempt does better: a small evaluator often doubts right
            # rows, and the rows with a caveat beat "I couldn't answer".
            update["unconfirmed_rows"] = UnconfirmedRows(cypher, columns, rows, truncated)
        return update
    answer, ungrounded = _grounded(ctx, state, verdict.answer.strip())
    attempt = state["attempt_count"]
    self_healed = attempt > 1
    if self_healed:
        await _hand_off(ctx, state["standalone_question"], cypher)
    return {
        "llm_calls": calls,
        "answer": answer,
        "ungrounded": ungrounded,
        "outcome": "answered" if rows else "no_data",
        "self_healed": self_healed,
        "attempts": [Attempt(cypher=cypher, stage="ok", rows=len(rows))],
        "last_stage": "ok",
    }


_ROW_CAP = re.compile(r"\b(?:LIMIT|SKIP)\s+\d+", re.IGNORECASE)


def _grounded(ctx: Context, state: AgentState, answer: str) -> tuple[str, bool]:
    """The answer held to the rows (no model call): (text to give, whether it was replaced).

    An empty result gets a plain "nothing matches" naming what the question named; an answer
    with a number or name that neither the rows nor the question and query hold gets the
    plain rendering of the rows instead.
    """
    question, cypher = state["standalone_question"], state.get("cypher", "")
    columns, rows = state.get("columns", []), state.get("rows", [])
    plain = plain_answer(columns, rows, truncated=state.get("truncated", False))
    missing: list[str] = []
    if answer != plain:  # the plain rendering is the rows themselves
        # The query's literals may be echoed, but not its row cap: "100 miles" from LIMIT 100
        # over rows of nulls was a real 1.5B answer.
        known = " ".join([question, _ROW_CAP.sub(" ", cypher), *columns])
        at_cap = state.get("truncated", False) or len(rows) >= ctx.config.max_rows
        missing = unsupported_claims(answer, Evidence(rows, known, count_rows=not at_cap))
    if missing:
        # Counts only at INFO: the claims may quote the user's text.
        logger.info("answer named %d things the rows do not hold; replaced", len(missing))
        logger.debug("unsupported claims: %s", missing)
    if not rows:
        hints = [value for _label, _prop, value in state.get("value_hints") or []]
        schema_words = [label.name for label in ctx.schema.labels]
        schema_words += [rel.type for rel in ctx.schema.relationships]
        return nothing_found(question_entities(question, hints, schema_words)), bool(missing)
    if missing:
        return plain, True
    if _omits_the_value(answer, rows):
        logger.info("answer left out the one value the rows hold; replaced")
        return plain, False
    return answer, False


def _omits_the_value(answer: str, rows: list[list[Any]]) -> bool:
    """A one-value result the answer does not state: "zone" for a rack's zone 2 was a real
    1.5B answer. Zero and booleans are left alone ("no machines", "yes" state them in words)."""
    if len(rows) != 1 or len(rows[0]) != 1:
        return False
    value = rows[0][0]
    if isinstance(value, bool) or value is None or value == 0:
        return False
    if isinstance(value, int):
        forms = {str(value), f"{value:,}"}
    elif isinstance(value, float):
        forms = {str(value), f"{value:.1f}", f"{value:.2f}", f"{value:,.2f}", f"{round(value):,}"}
        forms |= {str(round(value))}
    elif isinstance(value, str) and value.strip():
        forms = {value.strip()}
    else:
        return False
    text = answer.casefold()
    return not any(form.casefold() in text for form in forms)


async def _hand_off(ctx: Context, question: str, cypher: str) -> None:
    """A statement that worked only after correction becomes a self-healed candidate."""
    try:
        await asyncio.to_thread(
            ctx.examples.add_candidate, question, cypher, ctx.schema_fingerprint
        )
    except Exception:  # learning is a bonus; the answer stands without it
        logger.warning("could not record the self-healed candidate", exc_info=True)


# --- give up --------------------------------------------------------------------------------


def _asked_but_missing(question: str, unknown: list[str], ctx: Context) -> list[str]:
    """Words of the question that a statement needed as a label, type or property the graph
    lacks, and that nothing else in the graph is called ("salary" in `e.salary`)."""
    asked = {stem(w): w.lower() for w in content_words(question)}
    vocabulary = schema_vocabulary(ctx.schema)
    found = []
    for name in unknown:
        for word in name_words(name):
            if stem(word) in asked and not vocabulary.knows(word):
                found.append(asked[stem(word)])
    return list(dict.fromkeys(found))


def _tried_to_write(state: AgentState) -> bool:
    """A statement of this run was refused by the read-only policy: something (the question,
    the data the model read) pushes towards a write, and the refusal is the answer."""
    return any(a.stage == "policy" for a in state.get("attempts", []))


def _unconfirmed(kept: UnconfirmedRows) -> Update:
    """Every attempt was doubted or failed, but one query did return rows: give those, saying
    they are unconfirmed (never the model's doubts, which may be wrong or made up)."""
    logger.info("no attempt was confirmed; answering with the first rows, marked unconfirmed")
    rows = plain_answer(kept.columns, kept.rows, truncated=kept.truncated)
    return {
        "outcome": "answered",
        "unconfirmed": True,
        "error_kind": None,
        "cypher": kept.cypher,
        "columns": kept.columns,
        "rows": kept.rows,
        "truncated": kept.truncated,
        "answer": "I couldn't confirm that these results answer your question exactly; this is "
        f"what my first query found (check its query):\n{rows}",
    }


def _no_such_data(state: AgentState, ctx: Context) -> Update:
    """The question asks for something the graph has no name for: say so, plainly."""
    words = state.get("missing_data") or []
    logger.info("the graph has no label, type or property for: %s", ", ".join(words))
    topic = " or ".join(f"“{w}”" for w in words[:3])
    answer = (
        f"The graph has no data on {topic}: nothing in it is called that, so I can't answer "
        f"this from it. It holds {ctx.description[:1].lower()}{ctx.description[1:]}"
    )
    return {"outcome": "out_of_scope", "error_kind": None, "answer": answer}


def _refused_for_this_channel(state: AgentState, ctx: Context) -> bool:
    """The last statement was refused for the channel's restrictions (not as a write)."""
    if state.get("last_stage") != "policy" or ctx.policy is None:
        return False
    verdict = check_cypher(state.get("cypher") or "", ctx.policy)
    return verdict.category in RESTRICTION_CATEGORIES


GIVE_UP_TEXT = {
    "schema": "I couldn't match it to what the graph holds.",
    "validate": "The database couldn't run the queries I wrote for it.",
    "execute": "The database couldn't run the queries I wrote for it.",
    "evaluate": "The results I got didn't answer it.",
    "extract": "I didn't manage to write a query for it.",
}
"""What the last failed attempt means, in words for the person (never the engine's text)."""
GIVE_UP_DEFAULT = "None of the queries I wrote gave an answer."


@step("give_up")
async def give_up(state: AgentState, runtime: Runtime[Context]) -> Update:
    """An honest failure that says what went wrong and what to try."""
    kind = state.get("error_kind")
    if (
        state.get("missing_data")
        and kind in (None, "attempts_exhausted")
        and state.get("last_stage") == "schema"
    ):
        return _no_such_data(state, runtime.context)
    kept = state.get("unconfirmed_rows")
    if kind is None and kept is not None and not _tried_to_write(state):
        return _unconfirmed(kept)
    if kind is None:
        costly = state.get("last_stage") in ("timeout", "resource")
        kind = "query_timeout" if costly else "attempts_exhausted"
    if kind == "llm_not_configured":
        answer = str(LLMNotConfiguredError())
    elif kind == "attempts_exhausted" and _refused_for_this_channel(state, runtime.context):
        answer = (
            "Part of what this needs is not available in this channel, so I didn't look it up. "
            "Ask for specific details by name (names, counts), or ask where that data is shared."
        )
    elif kind == "attempts_exhausted" and state.get("last_stage") == "policy":
        answer = (
            "I can only read the graph, never change it, and the queries I came up with for "
            "this would have changed it, so I refused them. If you meant to look something "
            "up, try asking about what is in the graph (who, which, how many…)."
        )
    elif kind == "attempts_exhausted":
        tried = len(state.get("attempts", []))
        stage = state.get("last_stage") or ""
        # Engine and checker text (errMsg, errCtx, the statement) stays in the log and in the
        # attempts the trace shows; the person gets what it means and what to try.
        logger.info(
            "giving up after %d attempts; last problem at %s: %s",
            tried,
            stage,
            (state.get("last_error") or "")[:300],
        )
        answer = (
            f"I couldn't write a query that answers this ({tried} attempt"
            f"{'s' if tried != 1 else ''}). {GIVE_UP_TEXT.get(stage, GIVE_UP_DEFAULT)}\n"
            "Try rephrasing it, or name the exact thing you mean, as it is written in the graph."
        )
    else:
        answer = FAILURE_TEXT[kind]
    return {"outcome": "failed", "error_kind": kind, "answer": answer}
