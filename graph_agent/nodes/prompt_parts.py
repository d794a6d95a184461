"""What generate and correct show the model: schema (pruned), ranked examples, value hints."""

from __future__ import annotations

import asyncio
import logging

from graph_agent import prompts
from graph_agent.context import Context
from graph_agent.graphdb.errors import (
    GraphError,
)
from graph_agent.graphdb.schema import schema_text
from graph_agent.pruning import relevant_labels
from graph_agent.schema_check import check_schema
from graph_agent.schema_examples import question_focus, rank_examples, retrieval_query
from graph_agent.schema_paths import path_patterns, unshadowed, with_data
from graph_agent.tool_routing import is_tool_note
from graph_agent.words import met_only_in_label_words
from guardrails import check_cypher, referenced_names
from memory.types import Example

logger = logging.getLogger(__name__)


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
        if is_tool_note(example.cypher):
            continue  # a taught graph tool answer: reused by its question, never shown as Cypher
        stale = not getattr(example, "verified_on_current", True)
        if stale and check_schema(example.cypher, ctx.schema).problems:
            continue
        if ctx.policy is not None and not check_cypher(example.cypher, ctx.policy).allowed:
            # A channel that may not see a label must not see it in an example either.
            continue
        kept.append(example)
    return kept


async def value_hints(ctx: Context, question: str) -> list[tuple[str, str, str]]:
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
    inside_labels = met_only_in_label_words([m.value for m in matches], question, ctx.schema)
    found = [
        (m.label, m.property, m.value)
        for m in matches
        if (m.label, m.property) in visible and m.value not in inside_labels
    ]
    return unshadowed(question, found)


async def _paths(ctx: Context, question: str, hints: list[tuple[str, str, str]]) -> list[str]:
    """Schema paths from the question's values to what it asks about that the data has."""
    if ctx.config.schema_paths <= 0 or not hints:
        return []
    candidates = path_patterns(question, ctx.schema, hints, 2 * ctx.config.schema_paths)

    def has_rows(cypher: str) -> bool | None:
        if not check_cypher(cypher, ctx.policy).allowed:
            return False
        try:
            return bool(ctx.db.run_read(cypher, None, timeout_s=2.0, max_rows=1).rows)
        except GraphError:
            return None

    return await asyncio.to_thread(with_data, candidates, has_rows, ctx.config.schema_paths)


async def prompt_parts(
    ctx: Context,
    question: str,
    known_hints: list[tuple[str, str, str]] | None = None,
    known_paths: list[str] | None = None,
) -> tuple[dict[str, str], list[int], list[tuple[str, str, str]], list[str]]:
    """Schema (pruned for large graphs), examples, value hints and schema paths for generate
    and correct; also the example ids, the structured hints (kept in the state for
    validate/execute) and the paths (kept so a correction does not probe them again).
    `known_hints` and `known_paths` are those already found for this very question."""
    if known_hints is None:
        candidates, hints = await asyncio.gather(
            _examples(ctx, question), value_hints(ctx, question)
        )
    else:
        candidates, hints = await _examples(ctx, question), known_hints
    paths = known_paths if known_paths is not None else await _paths(ctx, question, hints)
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
        "paths": prompts.render_paths(paths),
        "question": question,
    }
    return parts, [e.id for e in examples], hints, paths
