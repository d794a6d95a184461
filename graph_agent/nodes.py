"""The graph's nodes: async `(state, runtime) -> dict` functions returning only what they change."""

from __future__ import annotations

import asyncio
import functools
import logging
import time
from collections.abc import Awaitable, Callable
from typing import Any, Protocol

from langchain_core.messages import AIMessage, BaseMessage, HumanMessage
from langgraph.runtime import Runtime

from graph_agent import prompts
from graph_agent.answer_offline import plain_answer
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
from graph_agent.graphdb.protocol import Validation
from graph_agent.graphdb.schema import schema_text, schema_vocabulary
from graph_agent.grounding import (
    leaning_words,
    nothing_found,
    question_entities,
)
from graph_agent.llm import LLMCall, call_llm
from graph_agent.pruning import relevant_labels
from graph_agent.repair import Case, Kind, Runner, Trigger
from graph_agent.repair.validate_rules import COSTLY_READ_HINT
from graph_agent.result import Attempt
from graph_agent.schema_examples import question_focus, rank_examples, retrieval_query
from graph_agent.state import AgentState, UnconfirmedRows
from graph_agent.statement import (
    check_schema,
    with_limit,
)
from graph_agent.structured import Evaluation, ask_structured
from guardrails.cypher_policy import RESTRICTION_CATEGORIES, check_cypher
from guardrails.cypher_tokens import referenced_names, tokenize
from guardrails.extract import extract_cypher
from guardrails.intent import asks_for_a_task, asks_to_change
from guardrails.redact_rows import redact_rows
from guardrails.relevance import relevance
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
    # The rules' trace counts this reply as the new attempt.
    now: AgentState = {**state, "attempt_count": attempt}
    rules = Runner(Case(question, extract_cypher(reply), ctx, now))
    if not call.cut_off:
        statement = extract_cypher(reply)
        if (shown := await rules.rewrite(Trigger.REPLY, statement)) != statement:
            reply = f"```cypher\n{shown}\n```"
        if (reask := await rules.first(Trigger.REPLY, Kind.HINT, cypher=shown)) is not None:
            ctx.progress("correct", "Trying a different query…", attempt)
            reply, call = await call_llm(
                ctx.llms.cypher.bind(temperature=REPEAT_TEMPERATURE),
                [*messages, AIMessage(reply), HumanMessage(reask.note or "")],
                step="correct",
                timeout_s=_llm_timeout(ctx),
                max_tokens=ctx.config.llm_max_tokens,
            )
            calls.append(call)
    update |= rules.trace()
    update |= {"draft": reply, "llm_calls": calls}
    if (missing := _no_data(reply)) is not None:
        update |= {"outcome": "no_data", "answer": f"The graph has no data on {missing}"}
    elif call.cut_off:
        update |= _cut_off(reply)
    return update


REPEAT_TEMPERATURE = 0.7
"""Sampling temperature of the one re-ask after a correction repeated a failed statement."""


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
    """Extract the statement, apply the read-only policy, check names and directions, EXPLAIN;
    the repair catalogue's validate rules run at each of those points."""
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
    rules = Runner(Case(state["standalone_question"], cypher, ctx, state))
    try:
        update = await _validate(ctx, rules, cypher)
    except GraphConnectionError as exc:
        update = {"fatal": True, "error_kind": "graph_down", "last_error": str(exc)}
    return update | rules.trace()


async def _validate(ctx: Context, rules: Runner, cypher: str) -> Update:
    cypher = await rules.rewrite(Trigger.STATEMENT, cypher)
    checked = check_schema(cypher, ctx.schema)
    if checked.problems:
        cypher = await rules.rewrite(
            Trigger.SCHEMA_PROBLEM,
            cypher,
            needed=lambda c: bool(check_schema(c, ctx.schema).problems),
        )
        checked = check_schema(cypher, ctx.schema)
    if checked.problems:
        problems = checked.problems
        if note := await rules.first(Trigger.SCHEMA_PROBLEM, Kind.HINT, cypher=cypher):
            problems = [note.note or "", *problems]  # first: the long list of patterns buried it
        failed = _failed(cypher, "Schema check: " + "; ".join(problems), "schema")
        guard = await rules.first(
            Trigger.SCHEMA_PROBLEM, Kind.GUARD, cypher=cypher, unknown=checked.unknown
        )
        return failed | (dict(guard.update) if guard else {})
    if checked.corrections:
        logger.info("auto-corrected: %s", "; ".join(checked.corrections))
    if checked.cypher != cypher:
        # The schema check flipped a direction: judge the text that will run.
        final = check_cypher(checked.cypher, ctx.policy)
        if not final.allowed:
            return _failed(
                checked.cypher, f"Refused by the read-only policy: {final.reason}", "policy"
            )
        cypher = final.canonical or checked.cypher
    if guard := await rules.first(Trigger.BEFORE_ENGINE, Kind.GUARD, cypher=cypher):
        return _failed(cypher, guard.note or guard.detail, guard.stage or "validate")
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
    if not validation.ok:
        error = validation.error or "unknown error"
        if note := await rules.first(Trigger.ENGINE_ERROR, Kind.HINT, cypher=cypher, error=error):
            error = f"{error.rstrip('. ')}. {note.note}"
        return _failed(cypher, f"The engine rejected it: {error}", "validate")
    if validation.read_only is False:
        return _failed(cypher, "The engine says this statement would write.", "policy")
    return {"cypher": cypher, "last_error": None, "last_stage": "validate"}


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
    fix = await rules.first(Trigger.EMPTY_RESULT) if _nothing_found(visible.rows) else None
    if fix is None and visible.rows:
        fix = await rules.first(Trigger.ROWS)
    if fix is not None:
        failed = _failed(cypher, fix.note or fix.detail, fix.stage or "execute")
        return failed | dict(fix.update) | rules.trace()
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


def _nothing_found(rows: list[list[Any]]) -> bool:
    """No rows, or the one row an aggregate gives over no match (`count(m)` → 0, `sum` → null):
    `t.type = 'xs-1/1/1'` where that is a Type's name answered "0" in a real playground
    follow-up, and the value checks never looked because a row came back."""
    if not rows:
        return True
    return len(rows) == 1 and all(
        value is None or (value == 0 and not isinstance(value, bool)) for value in rows[0]
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
    if not verdict.answers_question:
        feedback = verdict.feedback.strip() or "The rows do not answer the question."
        update: Update = {"llm_calls": calls} | _failed(cypher, feedback, "evaluate")
        if rows and not state.get("unconfirmed_rows"):
            # Kept in case no later attempt does better: a small evaluator often doubts right
            # rows, and the rows with a caveat beat "I couldn't answer".
            update["unconfirmed_rows"] = UnconfirmedRows(cypher, columns, rows, truncated)
        return update
    answer, ungrounded, rules = await _grounded(ctx, state, verdict.answer.strip())
    attempt = state["attempt_count"]
    self_healed = attempt > 1
    if self_healed:
        await _hand_off(ctx, state["standalone_question"], cypher)
    return rules.trace() | {
        "llm_calls": calls,
        "answer": answer,
        "ungrounded": ungrounded,
        "outcome": "answered" if rows else "no_data",
        "self_healed": self_healed,
        "attempts": [Attempt(cypher=cypher, stage="ok", rows=len(rows))],
        "last_stage": "ok",
    }


async def _grounded(ctx: Context, state: AgentState, answer: str) -> tuple[str, bool, Runner]:
    """The answer held to the rows by the answer guards: (text to give, whether the model's
    answer named something the rows do not hold, the guards' runner). An empty result gets a
    plain "nothing matches" naming what the question named."""
    question = state["standalone_question"]
    columns, rows = state.get("columns", []), state.get("rows", [])
    case = Case(
        question,
        state.get("cypher", ""),
        ctx,
        state,
        columns=columns,
        rows=rows,
        truncated=state.get("truncated", False),
        answer=answer,
    )
    rules = Runner(case)
    fix = await rules.first(Trigger.WORDED_ANSWER)
    ungrounded = bool(fix is not None and fix.update.get("ungrounded"))
    if not rows:
        hints = [value for _label, _prop, value in state.get("value_hints") or []]
        schema_words = [label.name for label in ctx.schema.labels]
        schema_words += [rel.type for rel in ctx.schema.relationships]
        return nothing_found(question_entities(question, hints, schema_words)), ungrounded, rules
    return (fix.note or answer if fix is not None else answer), ungrounded, rules


async def _hand_off(ctx: Context, question: str, cypher: str) -> None:
    """A statement that worked only after correction becomes a self-healed candidate."""
    try:
        await asyncio.to_thread(
            ctx.examples.add_candidate, question, cypher, ctx.schema_fingerprint
        )
    except Exception:  # learning is a bonus; the answer stands without it
        logger.warning("could not record the self-healed candidate", exc_info=True)


# --- give up --------------------------------------------------------------------------------


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
