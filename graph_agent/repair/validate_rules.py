"""Rules of the validate step: rewrites that make a statement fit, notes for the correction.

Each docstring names the failure it answers with a general example.
"""

from __future__ import annotations

import re
from typing import Any

from graph_agent.graphdb.schema import schema_vocabulary
from graph_agent.lint import MapEntry, node_map_entries, without_entries
from graph_agent.question_fit import any_depth_fix
from graph_agent.repair.edits import bind_unbound_variable, property_through_neighbour
from graph_agent.repair.rule import Case, Fix, Kind, Phase, Trigger, rule
from graph_agent.result import Stage
from graph_agent.schema_check import check_schema
from graph_agent.schema_examples import question_focus
from graph_agent.statement import with_limit
from graph_agent.superlatives import (
    age_property_fix,
    identify_fix,
    one_row_fix,
    return_fix,
    sort_direction_fix,
)
from guardrails import content_words, name_words, stem

V, S = Phase.VALIDATE, Trigger.STATEMENT


@rule("missing-return", V, S, Kind.REWRITE)
def missing_return(case: Case) -> Fix | None:
    """`MATCH (s:Service) ORDER BY s.created DESC LIMIT 3` for "Which three services were
    created most recently?": the model stopped before the RETURN and the engine rejects the
    statement (on four dev runs, three ordering questions, each time). The node the sort reads
    is returned by what it is called and the sort key (`RETURN s.name AS name, s.created AS
    created ORDER BY created DESC LIMIT 3`)."""
    fixed = return_fix(case.cypher, case.ctx.schema)
    return Fix(fixed[1], cypher=fixed[0]) if fixed else None


@rule("map-as-value", V, S, Kind.REWRITE)
def map_as_value(case: Case) -> Fix | None:
    """`(p:Project {due_date: {due_date: 'Oldest'}})` for "Which project has the earliest due
    date?": a property never holds a map, so that filter matches nothing whatever the graph
    holds. It goes, and the rest of the statement (here its sort) is the model's answer; but
    `(a:Airport {runways: {runways: 5}})` for "airports with five runways" keeps the value
    inside, `{runways: 5}`, when the question says it (as written, or a number in words) and
    it is of the property's type."""
    entries = node_map_entries(case.cypher)
    bad = [e for e in entries if e.text.split(":", 1)[1].lstrip().startswith("{")]
    if not bad:
        return None

    def inner(entry: MapEntry) -> str | None:
        found = _SAME_KEY_MAP.fullmatch(entry.text.split(":", 1)[1].strip())
        if found is None or found.group(1) != entry.prop:
            return None
        value = found.group(2)
        label = case.ctx.schema.label(entry.label or "")
        prop = next((p for p in label.properties if p.name == entry.prop), None) if label else None
        wanted = {"STRING"} if value[0] in "'\"" else {"INTEGER", "FLOAT"}
        if prop is None or not wanted & set(prop.types):
            return None  # 'Earliest' for a year: a word of the question, not a value
        return f"{entry.prop}: {value}" if _said(value.strip("'\""), case.question) else None

    unwrapped = {e: inner(e) for e in bad}
    fixed = without_entries(case.cypher, entries, lambda e: e in unwrapped, unwrapped.get)
    kept = [e.prop for e, text in unwrapped.items() if text is not None]
    gone = [e.prop for e, text in unwrapped.items() if text is None]
    detail = "; ".join(
        [f"{', '.join(kept)}: the value inside the map kept"] * bool(kept)
        + [f"dropped the map compared with {', '.join(gone)}"] * bool(gone)
    )
    return Fix(f"{detail} (a property never holds a map)", cypher=fixed)


_SAME_KEY_MAP = re.compile(r"\{\s*(\w+)\s*:\s*(-?\d+(?:\.\d+)?|'[^'\n]*'|\"[^\"\n]*\")\s*\}")
_NUMBER_WORDS = (
    "zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten",
    "eleven", "twelve", "thirteen", "fourteen", "fifteen", "sixteen", "seventeen", "eighteen",
    "nineteen", "twenty",
)  # fmt: skip


def _said(value: str, question: str) -> bool:
    """Whether the question says `value`: as written (case aside, whole words), or a whole
    number up to twenty in words ("five runways" for 5)."""
    text = question.casefold()
    if re.search(rf"(?<!\w){re.escape(value.casefold())}(?!\w)", text):
        return True
    if value.isdigit() and int(value) < len(_NUMBER_WORDS):
        return re.search(rf"\b{_NUMBER_WORDS[int(value)]}\b", text) is not None
    return False


@rule("any-depth", V, S, Kind.REWRITE)
def any_depth(case: Case) -> Fix | None:
    """ "Who works under Andrew Fuller, directly or indirectly?" answered with one hop of
    `(e:Employee)-[:REPORTS_TO]->(:Employee {…})`: only the direct reports. A relationship
    that links a label to itself is followed up to a few hops (`-[:REPORTS_TO*1..8]->`), and a
    plain RETURN gets DISTINCT (a count counts distinct nodes)."""
    fixed = any_depth_fix(case.cypher, case.question, case.ctx.schema)
    return Fix(fixed[1], cypher=fixed[0]) if fixed else None


@rule("relationship-direction", V, S, Kind.REWRITE)
def relationship_direction(case: Case) -> Fix | None:
    """A relationship written against the only direction the schema has for it, and every use
    of that type in the statement reversed: `(b:Book)-[:WROTE]->(p:Person)` where the graph
    only has `(:Person)-[:WROTE]->(:Book)` is turned round. A statement that uses the type both
    ways is left to the schema check, which names the problem."""
    checked = check_schema(case.cypher, case.ctx.schema)
    if checked.cypher == case.cypher:
        return None
    return Fix(
        "; ".join(checked.corrections) or "turned a relationship round", cypher=checked.cypher
    )


@rule("property-through-neighbour", V, Trigger.SCHEMA_PROBLEM, Kind.REWRITE)
def property_from_neighbour(case: Case) -> Fix | None:
    """`m.kind` where m's label lacks `kind` and its one neighbouring label has it: read it
    from that neighbour (`, (m)-[:OF_KIND]->(k:Kind)` and `k.kind`), only when that alone
    makes the statement fit the schema."""
    if moved := property_through_neighbour(case.cypher, case.ctx.schema):
        return Fix(moved[1], cypher=moved[0])
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


def _asked(case: Case) -> frozenset[str]:
    return question_focus(case.question, case.ctx.schema).labels


@rule("bind-unbound-variable", V, Trigger.ENGINE_ERROR, Kind.REWRITE)
def bind_unbound(case: Case) -> Fix | None:
    """`MATCH (r:Rack {name: 'x'}) RETURN count(m)` with `m` never matched, where the question
    names one label the statement lacks and one relationship reaches it from a matched node:
    `, (r)-[:HOLDS]->(m:Machine)` is added (EXPLAINed again by the runner)."""
    bound = bind_unbound_variable(case.error, case.cypher, case.ctx.schema, _asked(case))
    return Fix(bound[1], cypher=bound[0]) if bound else None


@rule("which-names-the-thing", V, S, Kind.REWRITE)
def which_names_the_thing(case: Case) -> Fix | None:
    """ "Which data center has the most racks?" answered by `MATCH (d:DataCenter)-[:CONTAINS]->
    (r:Rack) RETURN count(*) AS racks ORDER BY racks DESC LIMIT 1`: only the measure comes
    back. The asked node's identifying property (first and last name where it has both) is
    added to the RETURN, which also groups the count per data center."""
    fixed = identify_fix(case.cypher, case.question, case.ctx.schema)
    return Fix(fixed[1], cypher=fixed[0]) if fixed else None


@rule("superlative-sort-direction", V, S, Kind.REWRITE)
def superlative_sort_direction(case: Case) -> Fix | None:
    """ "Who is the oldest employee?" sorted `ORDER BY e.birthDate DESC`: for a point in time
    (a date or year property) oldest/earliest put the smallest first and newest/latest/most
    recent the largest; for an age or a duration the other way round. The sort is turned.
    Sorted on `e.hireDate` where employees have a birth date: oldest and youngest are about
    age, so the birth date is sorted on (then turned as needed)."""
    cypher, done = case.cypher, []
    if aged := age_property_fix(cypher, case.question, case.ctx.schema):
        cypher, done = aged[0], [aged[1]]
    if turned := sort_direction_fix(cypher, case.question, case.ctx.schema):
        cypher, done = turned[0], [*done, turned[1]]
    return Fix("; ".join(done), cypher=cypher) if done else None


@rule("superlative-one-row", V, S, Kind.REWRITE)
def superlative_one_row(case: Case) -> Fix | None:
    """ "Which product has the highest price?" (one product, in the singular) sorted with
    `LIMIT 5` or no LIMIT: `LIMIT 1`. Not for "the three highest" or a plural ("Which
    products…")."""
    fixed = one_row_fix(case.cypher, case.question, case.ctx.schema)
    return Fix(fixed[1], cypher=fixed[0]) if fixed else None
