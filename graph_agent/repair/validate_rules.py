"""Rules of the validate step: rewrites that make a statement fit, notes for the correction.

Each docstring names the failure it answers with a general example.
"""

from __future__ import annotations

from typing import Any

from graph_agent.graphdb.schema import schema_vocabulary
from graph_agent.lint import lint_cypher, relabel_for_value, value_on_another_label
from graph_agent.question_fit import aggregate_in_where, aggregate_in_where_guidance
from graph_agent.repair.rule import Case, Fix, Kind, Phase, Trigger, rule
from graph_agent.result import Stage
from graph_agent.schema_examples import question_focus
from graph_agent.statement import (
    bind_unbound_variable,
    order_by_aggregate_guidance,
    property_through_neighbour,
    unbound_variable_guidance,
    with_limit,
)
from guardrails.relevance import content_words, name_words
from guardrails.words import stem

V, S = Phase.VALIDATE, Trigger.STATEMENT


def _lint(case: Case, name: str) -> Fix | None:
    linted = lint_cypher(case.cypher, case.hints, only=(name,))
    return Fix("; ".join(linted.fixes), cypher=linted.cypher) if linted.fixes else None


@rule("stored-value-literal", V, S, Kind.REWRITE)
def stored_value_literal(case: Case) -> Fix | None:
    """A string compared in a form the graph never stores: `p.name = 'ada lovelace'` or
    `toLower(p.name) = toLower('Ada Lovelace')` where a value hint stores 'Ada Lovelace' gets
    the stored form; `{name: toLower('x')}` inside a pattern map gets the literal as written."""
    return _lint(case, "stored_value")


@rule("string-alias", V, S, Kind.REWRITE)
def string_alias(case: Case) -> Fix | None:
    """`RETURN count(p) AS 'people'`: a column alias written as a string is a name instead."""
    return _lint(case, "string_alias")


@rule("nulls-last", V, S, Kind.REWRITE)
def nulls_last(case: Case) -> Fix | None:
    """`ORDER BY t.size DESC LIMIT 1` put nodes without the property first (nulls sort high):
    the sort puts them last."""
    return _lint(case, "nulls_last")


@rule("final-with-returns", V, S, Kind.REWRITE)
def final_with(case: Case) -> Fix | None:
    """A statement that ends with `WITH a, count(b) AS n` returns instead."""
    return _lint(case, "final_with")


@rule("recount-grouped", V, S, Kind.REWRITE)
def recount_grouped(case: Case) -> Fix | None:
    """`WITH t, count(m) AS n RETURN t, count(*) AS n` counted the grouped rows again ("1 of
    each"): the `WITH`'s count is returned."""
    return _lint(case, "recount")


@rule("relabel-for-value", V, Trigger.SCHEMA_PROBLEM, Kind.REWRITE)
def relabel(case: Case) -> Fix | None:
    """`(:A {name: 'x'})-[:R]->…` where A never has R, and a value hint says 'x' is a B's name
    and B has R: the node becomes `(:B {name: 'x'})`, only when that one change makes the
    statement fit the schema."""
    if done := relabel_for_value(case.cypher, case.ctx.schema, case.hints):
        return Fix(f"{done[1]}, the label that holds the value", cypher=done[0])
    return None


@rule("property-through-neighbour", V, Trigger.SCHEMA_PROBLEM, Kind.REWRITE)
def property_from_neighbour(case: Case) -> Fix | None:
    """`m.kind` where m's label lacks `kind` and its one neighbouring label has it: read it
    from that neighbour (`, (m)-[:OF_KIND]->(k:Kind)` and `k.kind`), only when that alone
    makes the statement fit the schema."""
    if moved := property_through_neighbour(case.cypher, case.ctx.schema):
        return Fix(moved[1], cypher=moved[0])
    return None


@rule("value-on-another-label", V, Trigger.SCHEMA_PROBLEM, Kind.HINT)
def value_elsewhere(case: Case) -> Fix | None:
    """A filter on a label that cannot be used as written, on a value a hint says another
    label holds: the note says which label holds it, first (a long list of patterns buried it)."""
    if text := value_on_another_label(case.cypher, case.ctx.schema, case.hints):
        return Fix("named the label that holds the value", note=text)
    return None


@rule("asked-but-missing", V, Trigger.SCHEMA_PROBLEM, Kind.GUARD)
def asked_but_missing(case: Case) -> Fix | None:
    """A word of the question the statement used as a label, type or property, which nothing
    in the graph is called ("salary" in `e.salary`): remembered; the second time, the run stops
    and says the graph has no data on it instead of trying a third statement."""
    asked = {stem(w): w.lower() for w in content_words(case.question)}
    vocabulary = schema_vocabulary(case.ctx.schema)
    found = [
        asked[stem(word)]
        for name in case.unknown
        for word in name_words(name)
        if stem(word) in asked and not vocabulary.knows(word)
    ]
    missing = list(dict.fromkeys(found))
    if not missing:
        return None
    before = set(case.state.get("missing_data") or [])
    update: dict[str, Any] = {"missing_data": sorted(before | set(missing))}
    if before & set(missing):
        update["fatal"] = True
    return Fix(f"the graph has no name for {', '.join(missing)}", update=update)


def _shape(cypher: str) -> str:
    return "".join(cypher.split()).casefold()


COSTLY_READ_HINT = (
    "Write a different, cheaper statement: filter early, aggregate (count, sum) instead of "
    "collecting, never combine every row with every other, and do not send this one again."
)


@rule("costly-read-repeated", V, Trigger.BEFORE_ENGINE, Kind.GUARD)
def costly_read_repeated(case: Case) -> Fix | None:
    """The statement (but for spacing and case) already ran out of time or memory in this
    question: it is not run again, which would only cost the same again."""
    max_rows = case.ctx.config.max_rows
    shape = _shape(with_limit(case.cypher, max_rows))
    for attempt in case.state.get("attempts", []):
        if attempt.stage in (Stage.TIMEOUT, Stage.RESOURCE) and _shape(attempt.cypher) == shape:
            note = (
                "This is the statement that already ran out of time or memory; it was not run "
                f"again. {COSTLY_READ_HINT}"
            )
            return Fix("not run again", note=note, stage=Stage.RESOURCE)
    return None


@rule("aggregate-in-where", V, Trigger.BEFORE_ENGINE, Kind.GUARD)
def aggregate_where(case: Case) -> Fix | None:
    """`WHERE count(x) > 8` (an engine may run it and return nothing): refused before the
    engine, naming the property the question compares or the `WITH … WHERE` form."""
    if not aggregate_in_where(case.cypher):
        return None
    guidance = aggregate_in_where_guidance(case.cypher, case.question, case.ctx.schema)
    return Fix("aggregate in WHERE", note=f"Not valid Cypher: {guidance}.", stage=Stage.VALIDATE)


def _asked(case: Case) -> frozenset[str]:
    return question_focus(case.question, case.ctx.schema).labels


@rule("bind-unbound-variable", V, Trigger.ENGINE_ERROR, Kind.REWRITE)
def bind_unbound(case: Case) -> Fix | None:
    """`MATCH (r:Rack {name: 'x'}) RETURN count(m)` with `m` never matched, where the question
    names one label the statement lacks and one relationship reaches it from a matched node:
    `, (r)-[:HOLDS]->(m:Machine)` is added (EXPLAINed again by the runner)."""
    bound = bind_unbound_variable(case.error, case.cypher, case.ctx.schema, _asked(case))
    return Fix(bound[1], cypher=bound[0]) if bound else None


@rule("unbound-variable-note", V, Trigger.ENGINE_ERROR, Kind.HINT)
def unbound_note(case: Case) -> Fix | None:
    """An undefined variable: the note says how to bind it with the statement's own variables,
    or to carry it on through the `WITH` that dropped it."""
    text = unbound_variable_guidance(case.error, case.cypher, case.ctx.schema, _asked(case))
    return Fix("how to bind the variable", note=text) if text else None


@rule("order-by-aggregate-note", V, Trigger.ENGINE_ERROR, Kind.HINT)
def order_by_aggregate(case: Case) -> Fix | None:
    """`ORDER BY count(x)` that the engine rejects: the note shows the aliased form."""
    text = order_by_aggregate_guidance(case.error)
    return Fix("aggregate in ORDER BY", note=text) if text else None
