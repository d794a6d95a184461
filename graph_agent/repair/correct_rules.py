"""Rules of the correct step: what to do with a corrected reply before it is validated."""

from __future__ import annotations

from graph_agent import prompts
from graph_agent.lint import literal_filters
from graph_agent.repair.rule import Case, Fix, Kind, Phase, Trigger, rule
from graph_agent.result import Stage
from guardrails.extract import extract_cypher

C = Phase.CORRECT

FAILS_AGAIN_UNCHANGED = frozenset(
    {Stage.SCHEMA, Stage.VALIDATE, Stage.EXECUTE, Stage.VALUE_NEXT_DOOR}
)
"""Stages whose failure the same statement meets again and another statement may avoid. Not
`missed_value` or `evaluate`: a repeat there is the model saying the value or the rows are what
the graph has, which those steps then accept once; not `policy`: a statement that keeps reading
what the channel may not see or keeps writing is refused whatever it is asked. But
`value_next_door` is: no node of that label holds the value, a node next to it does."""


@rule("run-the-shown-statement", C, Trigger.REPLY, Kind.REWRITE)
def run_shown(case: Case) -> Fix | None:
    """The value-next-door note showed the statement through the neighbour, and the correction
    still filters that label on that value (sent back unchanged, or changed elsewhere): the
    statement the note showed is run instead."""
    shown = case.state.get("next_door")
    if shown is None or case.state.get("last_stage") != Stage.VALUE_NEXT_DOOR:
        return None
    filters = {
        (label, prop, value.casefold()) for label, prop, value in literal_filters(case.cypher)
    }
    if (shown.label, shown.prop, shown.value.casefold()) not in filters:
        return None
    return Fix("the statement the note showed", cypher=shown.cypher)


def _same(cypher: str) -> str:
    return " ".join(cypher.split()).rstrip(";").strip()


@rule("reask-repeated-statement", C, Trigger.REPLY, Kind.HINT, once="reask")
def reask_repeated(case: Case) -> Fix | None:
    """At temperature 0 a small model that repeats a failed statement repeats it on every
    attempt: asked once more in the same attempt, saying so, at a higher temperature. Not when
    the statement names a word of the question the graph lacks (repeating that is the sign the
    graph has no data on it), and only after a failure another statement may avoid."""
    state = case.state
    if state.get("missing_data") or state.get("last_stage") not in FAILS_AGAIN_UNCHANGED:
        return None
    statement = _same(case.cypher)
    if not statement:
        return None
    tried = {_same(a.cypher) for a in state.get("attempts") or [] if a.error}
    tried.add(_same(extract_cypher(state.get("draft", ""))))
    if statement not in tried:
        return None
    return Fix("repeated a failed statement", note=prompts.REPEATED_STATEMENT)
