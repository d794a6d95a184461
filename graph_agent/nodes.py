"""The graph's nodes: async `(state, runtime) -> dict` functions returning only what they change."""

from __future__ import annotations

import asyncio
import functools
import logging
import time
from collections.abc import Awaitable, Callable
from typing import Any, Protocol

from langgraph.runtime import Runtime

from graph_agent import prompts
from graph_agent.answer_offline import denies_rows, plain_answer
from graph_agent.context import Context
from graph_agent.errors import LLMError, LLMNotConfiguredError, LLMTimeoutError
from graph_agent.graphdb.errors import (
    CypherSyntaxError,
    GraphConnectionError,
    GraphError,
    NotReadOnlyError,
    QueryTimeoutError,
)
from graph_agent.graphdb.schema import schema_text
from graph_agent.llm import LLMCall, call_llm
from graph_agent.pruning import relevant_labels
from graph_agent.result import Attempt
from graph_agent.state import AgentState
from graph_agent.statement import check_schema, with_limit
from graph_agent.structured import Evaluation, ask_structured
from guardrails.cypher_policy import check_cypher
from guardrails.cypher_tokens import referenced_names
from guardrails.extract import extract_cypher
from guardrails.topic import fallback_decision, parse_decision, parse_json_object
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
    history = state.get("history", [])
    update: Update = {"standalone_question": question}
    # A verified question needs neither a rewrite nor a guard: reuse it straight away.
    if not history or ctx.llms is None:
        example = await asyncio.to_thread(ctx.examples.exact, question)
        if example is not None:
            return update | _reuse(example)
    if ctx.llms is None:
        return update | {"fatal": True, "error_kind": "llm_not_configured"}

    messages = prompts.GUARD.render(
        description=ctx.description,
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
    )
    if decision is None:
        decision = fallback_decision(question)
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
        example = await asyncio.to_thread(ctx.examples.exact, standalone)
        if example is not None:
            update |= _reuse(example)
    return update


@step("refuse")
async def refuse(state: AgentState, runtime: Runtime[Context]) -> Update:
    """A helpful refusal: what the bot can answer, with example questions."""
    ctx = runtime.context
    suggestions = ctx.suggestions[:3]
    answer = (
        f"I can only answer questions about what is in the graph: {ctx.description}\n"
        "That question looks like it is about something else."
    )
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
    """Top-k examples; those verified on another schema must still fit this one."""
    found = await asyncio.to_thread(ctx.examples.similar, question, ctx.config.few_shot_k)
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
    visible = {label.name for label in ctx.schema.labels}
    return [(m.label, m.property, m.value) for m in matches if m.label in visible]


async def _prompt_parts(ctx: Context, question: str) -> tuple[dict[str, str], list[int]]:
    """Schema (pruned for large graphs), examples and value hints for generate and correct."""
    examples, hints = await asyncio.gather(_examples(ctx, question), _hints(ctx, question))
    boost = {label for label, _prop, _value in hints}
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
    return parts, [e.id for e in examples]


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
    parts, example_ids = await _prompt_parts(ctx, state["standalone_question"])
    reply, call = await call_llm(
        ctx.llms.cypher,
        prompts.GENERATE.render(**parts),
        step="generate",
        timeout_s=_llm_timeout(ctx),
    )
    update: Update = {
        "draft": reply,
        "attempt_count": 1,
        "example_ids": example_ids,
        "prompt_parts": parts,
        "llm_calls": [call],
    }
    if (missing := _no_data(reply)) is not None:
        update |= {"outcome": "no_data", "answer": f"The graph has no data on {missing}"}
    return update


@step("correct")
async def correct(state: AgentState, runtime: Runtime[Context]) -> Update:
    """A new statement from the failed one and what went wrong (one LLM call)."""
    ctx = runtime.context
    attempt = state.get("attempt_count", 1) + 1
    if ctx.llms is None:
        return {"fatal": True, "error_kind": "llm_not_configured"}
    ctx.progress("correct", "Fixing the query…", attempt)
    parts = state.get("prompt_parts") or {}
    if not parts:  # a reused example failed: generate never ran
        parts, _ids = await _prompt_parts(ctx, state["standalone_question"])
    previous = state.get("cypher") or state.get("draft", "")
    reply, call = await call_llm(
        ctx.llms.cypher,
        prompts.CORRECT.render(
            **parts, cypher=previous, error=state.get("last_error") or "unknown problem"
        ),
        step="correct",
        timeout_s=_llm_timeout(ctx),
    )
    update: Update = {"draft": reply, "attempt_count": attempt, "llm_calls": [call]}
    if (missing := _no_data(reply)) is not None:
        update |= {"outcome": "no_data", "answer": f"The graph has no data on {missing}"}
    return update


# --- validate / execute ---------------------------------------------------------------------


def _failed(cypher: str, error: str, stage: str) -> Update:
    return {
        "cypher": cypher,
        "last_error": error,
        "last_stage": stage,
        "attempts": [Attempt(cypher=cypher, error=error, stage=stage)],
    }


@step("validate")
async def validate(state: AgentState, runtime: Runtime[Context]) -> Update:
    """Extract the statement, apply the read-only policy, check names and directions, EXPLAIN."""
    ctx = runtime.context
    ctx.progress("validate", "Checking the query…", state.get("attempt_count", 1))
    cypher = extract_cypher(state.get("draft", ""))
    if not cypher.strip():
        return _failed("", "The reply contained no Cypher statement.", "extract")
    verdict = check_cypher(cypher, ctx.policy)
    if not verdict.allowed:
        return _failed(cypher, f"Refused by the read-only policy: {verdict.reason}", "policy")
    checked = check_schema(cypher, ctx.schema)
    if checked.problems:
        return _failed(cypher, "Schema check: " + "; ".join(checked.problems), "schema")
    if checked.corrections:
        logger.info("auto-corrected: %s", "; ".join(checked.corrections))
    cypher = checked.cypher
    try:
        validation = await asyncio.to_thread(ctx.db.validate, cypher)
    except GraphConnectionError as exc:
        return {"fatal": True, "error_kind": "graph_down", "last_error": str(exc)}
    if not validation.ok:
        return _failed(cypher, f"The engine rejected it: {validation.error}", "validate")
    if validation.read_only is False:
        return _failed(cypher, "The engine says this statement would write.", "policy")
    return {"cypher": cypher, "last_error": None, "last_stage": "validate"}


@step("execute")
async def execute(state: AgentState, runtime: Runtime[Context]) -> Update:
    """Run the statement read-only with a timeout and a row cap."""
    ctx = runtime.context
    attempt = state.get("attempt_count", 1)
    ctx.progress("execute", "Running it…" if attempt == 1 else f"Running it (attempt {attempt})…")
    cypher = with_limit(state["cypher"], ctx.config.max_rows)
    timeout = min(ctx.config.query_timeout_s, max(ctx.remaining_s(), 0.1))
    try:
        result = await asyncio.to_thread(
            ctx.db.run_read, cypher, None, timeout_s=timeout, max_rows=ctx.config.max_rows
        )
    except QueryTimeoutError:
        return _failed(cypher, f"The query ran longer than {timeout:.0f} s.", "timeout")
    except CypherSyntaxError as exc:
        return _failed(cypher, f"The engine rejected it: {exc.engine_message}", "execute")
    except NotReadOnlyError as exc:
        return _failed(cypher, f"Refused as not read-only: {exc}", "policy")
    except GraphConnectionError as exc:
        return {"fatal": True, "error_kind": "graph_down", "last_error": str(exc)}
    except GraphError as exc:
        return _failed(cypher, f"The engine failed: {exc}", "execute")
    return {
        "cypher": cypher,
        "columns": list(result.columns),
        "rows": [list(row) for row in result.rows],
        "truncated": result.truncated,
        "last_error": None,
        "last_stage": "execute",
    }


# --- evaluate + answer ----------------------------------------------------------------------


def _evaluation(reply: str) -> Evaluation:
    parsed: Evaluation = parse_json_object(reply, Evaluation)
    return parsed


@step("evaluate")
async def evaluate(state: AgentState, runtime: Runtime[Context]) -> Update:
    """Judge whether the rows answer the question and, if so, write the answer (one LLM call)."""
    ctx = runtime.context
    ctx.progress("evaluate", "Reading the results…", state.get("attempt_count", 1))
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
        note = f"{len(rows)} rows" + (", more exist" if truncated else "")
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
        return {"llm_calls": calls} | _failed(cypher, feedback, "evaluate")
    attempt = state.get("attempt_count", 1)
    self_healed = attempt > 1
    if self_healed:
        await _hand_off(ctx, state["standalone_question"], cypher)
    return {
        "llm_calls": calls,
        "answer": verdict.answer.strip(),
        "outcome": "answered" if rows else "no_data",
        "self_healed": self_healed,
        "attempts": [Attempt(cypher=cypher, stage="ok", rows=len(rows))],
        "last_stage": "ok",
    }


async def _hand_off(ctx: Context, question: str, cypher: str) -> None:
    """A statement that worked only after correction becomes a self-healed candidate."""
    try:
        await asyncio.to_thread(
            ctx.examples.add_candidate, question, cypher, ctx.schema_fingerprint
        )
    except Exception:  # learning is a bonus; the answer stands without it
        logger.warning("could not record the self-healed candidate", exc_info=True)


# --- give up --------------------------------------------------------------------------------

FAILURE_TEXT = {
    "llm_timeout": "The language model took too long to answer. Try again in a minute, "
    "or ask a shorter question.",
    "llm_error": "I couldn't reach the language model. Try again shortly; if it keeps "
    "happening, ask an admin to check the LLM settings (OPENAI_BASE_URL, LLM_MODEL).",
    "graph_down": "I couldn't reach the graph database. Try again shortly, or ask an admin "
    "to run `cypherbot doctor`.",
    "query_timeout": "The query took too long each time I tried. Try narrowing the question, "
    "for example to one team or a time range.",
    "deadline": "I ran out of time before finding an answer. Try a narrower question.",
}


@step("give_up")
async def give_up(state: AgentState, runtime: Runtime[Context]) -> Update:
    """An honest failure that says what went wrong and what to try."""
    kind = state.get("error_kind")
    if kind is None:
        kind = "query_timeout" if state.get("last_stage") == "timeout" else "attempts_exhausted"
    if kind == "llm_not_configured":
        answer = str(LLMNotConfiguredError())
    elif kind == "attempts_exhausted" and state.get("last_stage") == "policy":
        answer = (
            "I can only read the graph, never change it, and the queries I came up with for "
            "this would have changed it, so I refused them. If you meant to look something "
            "up, try asking about what is in the graph (who, which, how many…)."
        )
    elif kind == "attempts_exhausted":
        tried = len(state.get("attempts", []))
        last = (state.get("last_error") or "").strip()
        answer = (
            f"I couldn't write a query that answers this ({tried} attempt"
            f"{'s' if tried != 1 else ''}). The last problem was: {last[:300]}\n"
            "Try rephrasing it, or name the exact thing you mean (a team, a service…)."
        )
    else:
        answer = FAILURE_TEXT[kind]
    return {"outcome": "failed", "error_kind": kind, "answer": answer}
