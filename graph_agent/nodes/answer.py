"""Evaluate and answer: one LLM call judges the rows and words the answer; the answer guards."""

from __future__ import annotations

import asyncio
import logging
import re
from collections.abc import Sequence
from typing import Any

from langgraph.runtime import Runtime

from graph_agent import prompts
from graph_agent.answer_offline import rows_in_words, tied_answer
from graph_agent.context import Context
from graph_agent.grounding import (
    nothing_found,
    question_entities,
)
from graph_agent.llm import LLMCall
from graph_agent.nodes.common import Update, attempt_failed, llm_timeout, step
from graph_agent.repair import Case, Runner, Trigger
from graph_agent.result import Attempt, Stage
from graph_agent.state import AgentState, UnconfirmedRows
from graph_agent.structured import Evaluation, ask_structured
from guardrails import parse_json_object

logger = logging.getLogger(__name__)


def _evaluation(reply: str) -> Evaluation:
    parsed: Evaluation = parse_json_object(reply, Evaluation)
    return parsed


_VERDICT = re.compile(r'"answers_question"\s*:\s*(true|false)', re.IGNORECASE)
_FEEDBACK = re.compile(r'"feedback"\s*:\s*"((?:[^"\\]|\\.)*)')


def verdict_so_far(reply: str, rows_in_words: str) -> Evaluation | None:
    """The verdict of an evaluate reply cut off at the token cap, or None when it stopped before
    giving one. Asked about many rows, the 1.5B model wrote them out into its answer until the
    cap (500 tokens: a minute or two on a local server), and the repair call that followed
    spent the rest of the question's time ("Which airports serve London?" took 118 s, "Which
    destinations are served from both Luton and Stansted?" ran out of time; airports dev
    items). Its verdict comes first and is whole: "yes" keeps the rows, worded from the rows
    themselves (the model's own list stopped halfway); "no" keeps whatever feedback it had
    written."""
    found = _VERDICT.search(reply)
    if found is None:
        return None
    if found.group(1).lower() == "true":
        return Evaluation(answers_question=True, answer=rows_in_words)
    feedback = _FEEDBACK.search(reply)
    return Evaluation(answers_question=False, feedback=feedback.group(1) if feedback else "")


@step("evaluate")
async def evaluate(state: AgentState, runtime: Runtime[Context]) -> Update:
    """Judge whether the rows answer the question and, if so, write the answer (one LLM call)."""
    ctx = runtime.context
    cypher, columns, rows = state["cypher"], state.get("columns", []), state.get("rows", [])
    truncated = state.get("truncated", False)
    calls: list[LLMCall] = []
    plain = not ctx.config.evaluate_plain_rows and plainly_answers(columns, rows, truncated)
    # A graph tool's own rendering reads better than its rows laid out column by column, and
    # better than a model's: worded by the 1.5B model, "Tofu —SUPPLIES← Mayumi's —SUPPLIES→
    # Konbu" became "Tofu → Konbu" (dev items). Its rows are exact: no call to judge them.
    tool_text = state.get("tool_text")
    plain = plain or bool(tool_text and not ctx.config.word_tool_answers)
    plain_text = rows_in_words(columns, rows, truncated=truncated, tool_text=tool_text)
    model_call = ctx.llms is not None and not plain
    # Rows first: while the model judges and words them, the person already sees what they say.
    ctx.progress(
        "evaluate",
        "Reading the results…",
        state["attempt_count"],
        preview=plain_text if model_call and rows else "",
    )
    if ctx.llms is None or not model_call:
        verdict = Evaluation(answers_question=True, answer=plain_text)
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
        if len(rows) > PLAIN_ROWS:
            # Asked about 255 airports, the 1.5B model copied them into its answer until the
            # token cap, twice (dev items); the person gets every row as a table anyway.
            note += MANY_ROWS_NOTE
        parsed, calls = await ask_structured(
            ctx.llms.fast,
            prompts.EVALUATE.render(
                cypher=cypher, row_note=note, rows=text, question=state["standalone_question"]
            ),
            _evaluation,
            step="evaluate",
            timeout_s=llm_timeout(ctx),
            json_mode=ctx.config.json_mode,
            max_tokens=ctx.config.llm_max_tokens,
            salvage=lambda reply: verdict_so_far(reply, plain_text),
        )
        # Unreadable twice: the rows are the best we have; show them plainly.
        verdict = parsed or Evaluation(answers_question=True, answer=plain_text)
    if not verdict.answers_question:
        feedback = verdict.feedback.strip() or "The rows do not answer the question."
        update: Update = {"llm_calls": calls} | attempt_failed(cypher, feedback, Stage.EVALUATE)
        kept = state.get("unconfirmed_rows")
        if kept is None or (rows and not kept.rows):
            # Kept in case no later attempt does better: a small evaluator often doubts right
            # rows, and the rows with a caveat beat "I couldn't answer". An empty result is
            # kept too, until an attempt finds rows: "nothing found" with a caveat beats "I
            # couldn't write a query" for a statement that ran (a playground trial: "which of
            # those does Oregon offer?" had none, and the evaluator turned the empty rows down).
            update["unconfirmed_rows"] = UnconfirmedRows(cypher, columns, rows, truncated)
        return update
    answer, ungrounded, rules = await _grounded(ctx, state, verdict.answer.strip())
    if state.get("tied") and rows:
        # Rows tied for first are said to tie, whatever the model made of them; the words
        # are the rows' own (after the guards, which would count "more than 10" as a claim).
        answer = tied_answer(columns, rows, more=truncated)
    attempt = state["attempt_count"]
    self_healed = attempt > 1
    if self_healed:
        await _hand_off(ctx, state["standalone_question"], cypher)
    return rules.trace() | {
        "llm_calls": calls,
        "answer": answer,
        "ungrounded": ungrounded,
        "outcome": "answered" if found_rows(rows) else "no_data",
        "self_healed": self_healed,
        "attempts": [Attempt(cypher=cypher, stage=Stage.OK, rows=len(rows))],
        "last_stage": Stage.OK,
    }


PLAIN_ROWS = 20
PLAIN_COLUMNS = 3
MANY_ROWS_NOTE = "; the person sees every row in a table: answer in one sentence, list none"


def plainly_answers(columns: list[str], rows: list[list[Any]], truncated: bool) -> bool:
    """Rows whose answer needs no model to judge or word: at least one row, at most 20 and
    three columns, not cut at the row limit. An empty result still goes to the evaluator (a
    wrong filter is its most common catch)."""
    return (
        bool(rows) and len(rows) <= PLAIN_ROWS and len(columns) <= PLAIN_COLUMNS and not truncated
    )


def found_rows(rows: Sequence[Sequence[Any]]) -> bool:
    """Whether the rows hold something: not none, nor the one row of nothing but nulls an
    OPTIONAL MATCH gives where nothing matched ("Which categories are under Drugs?" answered
    "ParentCategory: (none)", a trial on a drug-target graph)."""
    return bool(rows) and not (len(rows) == 1 and all(value is None for value in rows[0]))


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
    if not found_rows(rows):
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
