"""Understand: rewrite a follow-up, decide its scope; refuse and clarify."""

from __future__ import annotations

import asyncio
import logging

from langchain_core.messages import BaseMessage
from langgraph.runtime import Runtime

from graph_agent import prompts
from graph_agent.config import GuardFirst
from graph_agent.context import Context
from graph_agent.graphdb.schema import schema_vocabulary
from graph_agent.grounding import dropped_reference, leaning_words, lost_referent, with_referent
from graph_agent.llm import LLMCall
from graph_agent.nodes.common import Update, llm_timeout, step
from graph_agent.nodes.prompt_parts import value_hints
from graph_agent.state import AgentState
from graph_agent.structured import ask_structured
from graph_agent.tool_routing import parse_note, route
from guardrails import (
    Relevance,
    ScopeDecision,
    asks_for_a_task,
    asks_to_change,
    fallback_decision,
    parse_decision,
    relevance,
)
from memory.types import Example, Turn

logger = logging.getLogger(__name__)


def _reuse(example: Example) -> Update:
    request = parse_note(example.cypher)
    if request is not None:
        # A taught graph tool answer: the tool is asked again (its note is no statement).
        return {"scope": "in_scope", "reused_example_id": example.id, "tool_request": request}
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
    if state.get("clarified"):
        # A "did you mean" answered: the question was understood (rewritten, in scope) in
        # its first round, and the choice already holds the tool call, or none of it.
        if state.get("tool_request") is None and ctx.llms is None:
            return update | {"fatal": True, "error_kind": "llm_not_configured"}
        return update | {"scope": "in_scope"}
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
    hints = await value_hints(ctx, question)
    related = relevance(question, schema_vocabulary(ctx.schema), [v for _l, _p, v in hints])
    if related.decline:
        # A 1.5B guard called "a recipe for gnocchi" and "the weather in Palma" in scope
        # because a word matched a stored value; the topic word matches nothing in the graph.
        logger.info("declined before the model: %s", related.reason)
        return update | {"scope": "out_of_scope", "scope_reason": related.reason}
    update["value_hints"] = hints
    if ctx.llms is None:
        return update | {"fatal": True, "error_kind": "llm_not_configured"}
    if not history and not _needs_guard(ctx.config.guard_first_questions, related):
        # A first question the cheap checks placed in the graph: the guard's call has nothing
        # to decide (on the dev splits it never declined or rewrote one; docs/eval.md). One
        # about something the graph lacks ("salary") is declined after its statement.
        update |= {"scope": "in_scope", "scope_reason": "the graph knows its words"}
        return update | await _tool_for(ctx, question, question, hints)

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
        timeout_s=llm_timeout(ctx),
        json_mode=ctx.config.json_mode,
        max_tokens=ctx.config.llm_max_tokens,
    )
    if decision is None:
        decision = fallback_decision(question)
    elif history:
        decision, more = await _stand_alone(ctx, messages, decision, question, history[-1])
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
            return update | _reuse(example)
    if decision.scope == "in_scope":
        update |= await _tool_for(ctx, standalone, question, hints)
    return update


async def _tool_for(
    ctx: Context, standalone: str, question: str, hints: list[tuple[str, str, str]]
) -> Update:
    """The graph tool whose shape the standalone question has, if any (no model call). A
    rewritten follow-up names what the asked words did not ("how is she connected to…"):
    its names are looked up again."""
    if standalone != question:
        hints = await value_hints(ctx, standalone)
    request = route(standalone, ctx.schema, hints)
    if request is None:
        return {}
    logger.info("graph tool fits: %s with %d name(s)", request.tool, len(request.names))
    return {"tool_request": request}


def _needs_guard(level: GuardFirst, related: Relevance) -> bool:
    """Whether a first question the cheap checks passed still goes to the LLM guard: always
    with "all"; with "foreign-words" when a content word is not the graph's; with "off-graph"
    only when none of its content words is."""
    if level == "all" or not related.touching:
        return True
    return level == "foreign-words" and bool(related.foreign)


async def _stand_alone(
    ctx: Context, messages: list[BaseMessage], decision: ScopeDecision, question: str, last: Turn
) -> tuple[ScopeDecision, list[LLMCall]]:
    """One repair when the rewrite still leans on the history ("what else did he write?");
    the rewrite that leans least is kept. A rewrite that lost the follow-up's "of those" (the
    previous answer it asks among) becomes the follow-up with the previous question beside
    it, with no call: on the cybersecurity playground the 1.5B model lost it again when asked.
    A rewrite that lost the follow-up's "it" when the previous answer named one thing gets
    that name in its place, with no call (a supply-chain playground)."""
    standalone = decision.standalone_question.strip() or question
    words = leaning_words(standalone, question)
    if decision.scope != "in_scope":
        return decision, []
    if not words:
        referent = lost_referent(standalone, question, last.answer)
        if referent is not None:
            logger.info(
                "standalone question lost the follow-up's %r: the answer's name put in", referent[0]
            )
            named = with_referent(question, *referent)
            return decision.model_copy(update={"standalone_question": named}), []
        previous = last.standalone_question or last.question
        labels = [label.name for label in ctx.schema.labels]
        lost = dropped_reference(standalone, question, previous, labels)
        if not lost:
            return decision, []
        logger.info(
            "standalone question lost the follow-up's %r: the previous question kept", lost[0]
        )
        kept = (
            f"{question.strip()[:1].upper()}{question.strip()[1:]} ({lost[0]}: {previous.strip()})"
        )
        return decision.model_copy(update={"standalone_question": kept}), []
    assert ctx.llms is not None
    logger.info("standalone question still leans on the history; asking once more")
    repaired, calls = await ask_structured(
        ctx.llms.fast,
        prompts.resolve_messages(messages, decision.model_dump_json(), words),
        parse_decision,
        step="guard:resolve",
        timeout_s=llm_timeout(ctx),
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
