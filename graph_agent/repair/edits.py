"""Statement edits behind the validate rules: a property read through the one neighbour that has
it, an unbound variable matched through the one relationship that reaches it."""

from __future__ import annotations

import re
from collections.abc import Iterable

from graph_agent.graphdb.protocol import GraphSchema
from graph_agent.schema_check import check_schema, has_property, neighbours_with
from graph_agent.statement import fresh_variable, top_level_clauses
from guardrails import ReferencedNames, Token, referenced_names, tokenize

_UNBOUND = re.compile(r"""(?:Variable\s+)?[`'"](\w+)[`'"]\s+not defined""", re.IGNORECASE)


def _unbound(
    error: str, cypher: str, asked_labels: Iterable[str]
) -> tuple[str, ReferencedNames, list[str]] | None:
    """For an engine's "'m' not defined": the variable, the statement's names, and the labels
    the question names that the statement does not match; None for another error."""
    found = _UNBOUND.search(error)
    if found is None:
        return None
    names = referenced_names(cypher)
    return found.group(1), names, sorted(set(asked_labels) - set(names.variables.values()))


def property_through_neighbour(cypher: str, schema: GraphSchema) -> tuple[str, str] | None:
    """The statement reading a property its node lacks from the one neighbouring label that
    has it, and what was changed; None when no such single change makes it fit the schema.

    `MATCH (m:Machine) RETURN m.type AS type, count(*)` on a graph with
    `(:Machine)-[:TYPE]->(:Type)` and `Type.type`: the MATCH gets `, (m)-[:TYPE]->(t:Type)`
    and `m.type` becomes `t.type`. A 1.5B model told exactly that pattern sent `m.type` back
    on every attempt, in two runs of three. Only when one relationship type links the label to
    a label with that property, the variable is bound in a MATCH, and the result passes the
    schema check.
    """
    names = referenced_names(cypher)
    tokens = tokenize(cypher)
    for var, prop in names.accesses:
        label = schema.label(names.variables.get(var, ""))
        if label is None or not label.properties or has_property(label, prop):
            continue
        hops = {(rel.start, rel.type, rel.end) for rel in neighbours_with(label.name, prop, schema)}
        if len(hops) != 1:
            continue
        start, rel_type, end = hops.pop()
        other = end if start == label.name else start
        moved = {
            p
            for v, p in names.accesses
            if v == var and not has_property(label, p) and has_property(schema.label(other), p)
        }
        changed = _add_hop(cypher, tokens, var, label.name, other, start, rel_type, names, moved)
        if changed is None or check_schema(changed, schema).problems:
            continue
        return (
            changed,
            f"{var}.{prop} read from the related {other} (:{start})-[:{rel_type}]->(:{end})",
        )
    return None


def _add_hop(
    cypher: str,
    tokens: list[Token],
    var: str,
    label: str,
    other: str,
    start: str,
    rel_type: str,
    names: ReferencedNames,
    moved: set[str],
    new: str | None = None,
) -> str | None:
    """`cypher` with `(var)-[:REL]->(x:Other)` added to the MATCH that binds `var`, and its
    properties in `moved` read from `x` (`new`, else a fresh variable). None when `var` is not
    bound in a MATCH."""
    end = _match_end(tokens, var)
    if end is None:
        return None
    end = min(end, len(cypher))
    if new is None:
        new = fresh_variable(other, set(names.variables) | {t.name for t in tokens if t.is_name})
    arrow = f"-[:{rel_type}]->" if start == label else f"<-[:{rel_type}]-"
    edits = [(end, end, f", ({var}){arrow}({new}:{other})" + (" " if end < len(cypher) else ""))]
    for k in range(len(tokens) - 2):
        if (
            tokens[k].is_name
            and tokens[k].name == var
            and tokens[k + 1].is_punct(".")
            and tokens[k + 2].name in moved
            and not (k and tokens[k - 1].is_punct("."))
        ):
            edits.append((tokens[k].position, tokens[k].end, new))
    text = cypher
    for left, right, replacement in sorted(edits, reverse=True):
        head = text[:left].rstrip() if left == right else text[:left]
        text = head + replacement + text[right:]
    return text


def _match_end(tokens: list[Token], var: str) -> int | None:
    """Where the MATCH clause that first binds `var` (`(var:Label`) ends: the offset of the
    next clause keyword, or a large number at the end; None when no MATCH binds it."""
    binding = next(
        (
            k
            for k in range(len(tokens) - 2)
            if tokens[k].is_punct("(") and tokens[k + 1].name == var and tokens[k + 2].is_punct(":")
        ),
        None,
    )
    if binding is None:
        return None
    clauses = top_level_clauses(tokens)
    before = [k for k in clauses if k < binding]
    if not before or not tokens[before[-1]].is_keyword("MATCH"):
        return None
    after = [k for k in clauses if k > binding]
    return tokens[after[0]].position if after else 1 << 30


def bind_unbound_variable(
    error: str, cypher: str, schema: GraphSchema, asked_labels: Iterable[str]
) -> tuple[str, str] | None:
    """The statement with an unbound variable matched, and what was added; None unless that is
    unambiguous. `MATCH (r:Rack {name: 'R'}) RETURN count(DISTINCT m)` on "How many machines
    are in rack R?": the question names one label the statement does not match (Machine), one
    relationship links it to a matched one (`(:Rack)-[:HOLDS]->(:Machine)`), so the MATCH gets
    `, (r)-[:HOLDS]->(m:Machine)`. A 1.5B model told exactly that pattern sent the statement
    back unchanged three times, in two runs of seven."""
    unbound = _unbound(error, cypher, asked_labels)
    if unbound is None:
        return None
    var, names, wanted = unbound
    if var in names.variables or len(wanted) != 1:
        return None  # matched, then dropped by a WITH; or which label it is stays open
    links = [
        (v, r)
        for v, bound in names.variables.items()
        for r in schema.relationships
        if r.start != r.end and {r.start, r.end} == {bound, wanted[0]}
    ]
    if len(links) != 1:
        return None
    own, rel = links[0]
    mine = names.variables[own]
    tokens = tokenize(cypher)
    changed = _add_hop(cypher, tokens, own, mine, wanted[0], rel.start, rel.type, names, set(), var)
    if changed is None or check_schema(changed, schema).problems:
        return None
    return changed, f"bound {var} through (:{rel.start})-[:{rel.type}]->(:{rel.end})"
