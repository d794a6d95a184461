"""Generate and correct: one LLM call each for a statement (generate samples several when
CANDIDATES > 1, the first correction when RETRY_CANDIDATES > 1)."""

from __future__ import annotations

import logging

from langchain_core.messages import BaseMessage
from langgraph.runtime import Runtime

from graph_agent import prompts
from graph_agent.candidates import RETRY_STEP, SAMPLE_TEMPERATURE, Ask, ask_all, sample
from graph_agent.context import Context
from graph_agent.llm import LLMCall, call_llm
from graph_agent.nodes.common import Update, cut_off, llm_timeout, no_data, step
from graph_agent.nodes.prompt_parts import prompt_parts
from graph_agent.state import AgentState, Draft

logger = logging.getLogger(__name__)


@step("generate")
async def generate(state: AgentState, runtime: Runtime[Context]) -> Update:
    """Write the first statement from the schema, examples and value hints (one LLM call)."""
    ctx = runtime.context
    assert ctx.llms is not None  # the router only comes here with an LLM
    ctx.progress("generate", "Writing a query…")
    question = state["standalone_question"]
    looked_up = state.get("value_hints") if question == state["question"] else None
    parts, example_ids, hints, paths = await prompt_parts(ctx, question, looked_up)
    parts["previous"] = prompts.render_previous(state["history"])
    messages = prompts.GENERATE.render(**parts)
    if (count := state.get("candidate_count", 1)) > 1:
        return await _sampled(ctx, messages, count) | {
            "attempt_count": 1,
            "example_ids": example_ids,
            "value_hints": hints,
            "path_patterns": paths,
        }
    reply, call = await call_llm(
        ctx.llms.cypher,
        messages,
        step="generate",
        timeout_s=llm_timeout(ctx),
        max_tokens=ctx.config.llm_max_tokens,
    )
    update: Update = {
        "draft": reply,
        "attempt_count": 1,
        "example_ids": example_ids,
        "value_hints": hints,
        "path_patterns": paths,
        "llm_calls": [call],
    }
    if (missing := no_data(reply)) is not None:
        update |= _no_data_answer(missing)
    elif call.cut_off:
        update |= cut_off(reply)
    return update


async def _sampled(ctx: Context, messages: list[BaseMessage], count: int) -> Update:
    """`count` replies to the one prompt, for the choose step."""
    assert ctx.llms is not None
    drafts, calls = await sample(
        ctx.llms.cypher,
        messages,
        count,
        timeout_s=llm_timeout(ctx),
        max_tokens=ctx.config.llm_max_tokens,
    )
    return _offered(drafts, calls)


def _offered(drafts: list[Draft], calls: list[LLMCall]) -> Update:
    """Sampled replies for the choose step. The temperature-0 reply decides "no data" as a
    single call would; a reply cut off is the choose step's to judge."""
    update: Update = {"draft": drafts[0].reply, "llm_calls": calls}
    if (missing := no_data(drafts[0].reply)) is not None:
        return update | _no_data_answer(missing)
    return update | {"candidate_drafts": drafts}


def _no_data_answer(missing: str) -> Update:
    return {"outcome": "no_data", "answer": f"The graph has no data on {missing}"}


@step("correct")
async def correct(state: AgentState, runtime: Runtime[Context]) -> Update:
    """A new statement from the failed one and what went wrong (one LLM call; the first
    correction with RETRY_CANDIDATES = N > 1 asks N at once, for the choose step)."""
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
    known_paths = state.get("path_patterns") if known is not None else None
    parts, _ids, hints, paths = await prompt_parts(ctx, question, known, known_paths)
    parts["previous"] = prompts.render_previous(state["history"])
    found: Update = {} if known is not None else {"value_hints": hints}
    if known_paths is None:
        found["path_patterns"] = paths
    previous = state.get("cypher") or state.get("draft", "")
    error = state.get("last_error") or "unknown problem"
    messages = prompts.CORRECT.render(**parts, cypher=previous, error=error)
    update: Update = {"attempt_count": attempt, **found}
    if attempt == 2 and (count := ctx.config.retry_candidates) > 1:
        # Beside the correction, fresh statements for the question as generate asked it: when
        # the first statement went wrong, another path is as likely to help as a mended one.
        fresh = prompts.GENERATE.render(**parts)
        asks = [
            Ask(messages, "correct", None),
            *[Ask(fresh, RETRY_STEP, SAMPLE_TEMPERATURE)] * (count - 1),
        ]
        drafts, calls = await ask_all(
            ctx.llms.cypher,
            asks,
            timeout_s=llm_timeout(ctx),
            max_tokens=ctx.config.llm_max_tokens,
        )
        return update | _offered(drafts, calls)
    reply, call = await call_llm(
        ctx.llms.cypher,
        messages,
        step="correct",
        timeout_s=llm_timeout(ctx),
        max_tokens=ctx.config.llm_max_tokens,
    )
    update |= {"draft": reply, "llm_calls": [call]}
    if (missing := no_data(reply)) is not None:
        update |= _no_data_answer(missing)
    elif call.cut_off:
        update |= cut_off(reply)
    return update
