"""Give up: an honest failure that says what went wrong and what to try."""

from __future__ import annotations

import logging

from langgraph.runtime import Runtime

from graph_agent.answer_offline import plain_answer
from graph_agent.context import Context
from graph_agent.errors import FAILURE_TEXT, LLMNotConfiguredError
from graph_agent.nodes.common import Update, step
from graph_agent.result import Stage
from graph_agent.state import AgentState, UnconfirmedRows
from guardrails import RESTRICTION_CATEGORIES, check_cypher

logger = logging.getLogger(__name__)


def _tried_to_write(state: AgentState) -> bool:
    """A statement of this run was refused by the read-only policy: something (the question,
    the data the model read) pushes towards a write, and the refusal is the answer."""
    return any(a.stage == Stage.POLICY for a in state.get("attempts", []))


def _unconfirmed(kept: UnconfirmedRows) -> Update:
    """Every attempt was doubted or failed, but one query did return rows: give those, saying
    they are unconfirmed (never the model's doubts, which may be wrong or made up). Where the
    queries that ran found nothing, say that, as unconfirmed."""
    if not kept.rows:
        logger.info("no attempt was confirmed; the query that ran found nothing")
        return {
            "outcome": "no_data",
            "unconfirmed": True,
            "error_kind": None,
            "cypher": kept.cypher,
            "columns": kept.columns,
            "rows": [],
            "truncated": False,
            "answer": "My query found nothing in the graph for this, but I couldn't confirm "
            "that it asks exactly what you mean (check its query). If you expected something, "
            "name the thing as it is written in the graph.",
        }
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


def _refused_as(state: AgentState, ctx: Context) -> str | None:
    """Why the policy refused the last statement (its category), or None if it did not."""
    if state.get("last_stage") != Stage.POLICY:
        return None
    verdict = check_cypher(state.get("cypher") or "", ctx.policy)
    return None if verdict.allowed else verdict.category


GIVE_UP_TEXT = {
    Stage.SCHEMA: "I couldn't match it to what the graph holds.",
    Stage.VALIDATE: "The database couldn't run the queries I wrote for it.",
    Stage.EXECUTE: "The database couldn't run the queries I wrote for it.",
    Stage.EVALUATE: "The results I got didn't answer it.",
    Stage.EXTRACT: "I didn't manage to write a query for it.",
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
        and state.get("last_stage") == Stage.SCHEMA
    ):
        return _no_such_data(state, runtime.context)
    kept = state.get("unconfirmed_rows")
    if kind is None and kept is not None and not _tried_to_write(state):
        return _unconfirmed(kept)
    if kind is None:
        costly = state.get("last_stage") in (Stage.TIMEOUT, Stage.RESOURCE)
        kind = "query_timeout" if costly else "attempts_exhausted"
    if kind == "llm_not_configured":
        answer = str(LLMNotConfiguredError())
    elif kind == "attempts_exhausted" and (
        _refused_as(state, runtime.context) in RESTRICTION_CATEGORIES
    ):
        answer = (
            "Part of what this needs is not available in this channel, so I didn't look it up. "
            "Ask for specific details by name (names, counts), or ask where that data is shared."
        )
    elif kind == "attempts_exhausted" and _refused_as(state, runtime.context) == "cost":
        answer = (
            "The queries I came up with for this would have made the database build huge "
            "lists or strings, so I refused them before they ran. Try asking for a smaller "
            "piece: a count, a top 10, or one thing by name."
        )
    elif kind == "attempts_exhausted" and state.get("last_stage") == Stage.POLICY:
        answer = (
            "I can only read the graph, never change it, and the queries I came up with for "
            "this would have changed it, so I refused them. If you meant to look something "
            "up, try asking about what is in the graph (who, which, how many…)."
        )
    elif kind == "attempts_exhausted":
        tried = len(state.get("attempts", []))
        stage = state.get("last_stage")
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
            f"{'s' if tried != 1 else ''}). {GIVE_UP_TEXT.get(stage, GIVE_UP_DEFAULT) if stage else GIVE_UP_DEFAULT}\n"
            "Try rephrasing it, or name the exact thing you mean, as it is written in the graph."
        )
    else:
        answer = FAILURE_TEXT[kind]
    return {"outcome": "failed", "error_kind": kind, "answer": answer}
