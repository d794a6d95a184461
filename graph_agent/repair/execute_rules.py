"""Rules of the execute step: notes for rows that cannot be the answer.

An empty result may be a true "nothing matches" or a filter the graph spells differently; rows
may count something other than what the question counts. Each rule here fails the attempt
once per question with a note the correction step shows the model.
"""

from __future__ import annotations

from graph_agent.lint import filtered_node, literal_filters
from graph_agent.question_fit import counted_label_feedback
from graph_agent.repair.probes import matches_something
from graph_agent.repair.rule import Case, Fix, Kind, Phase, Trigger, rule
from graph_agent.result import Stage
from graph_agent.schema_examples import literal
from graph_agent.state import UnconfirmedRows
from graph_agent.words import article
from guardrails import referenced_names

E = Phase.EXECUTE
VALUE = "value"
"""The once-group of the notes about a filtered value: one such correction per question."""
MAX_LITERAL_CHECKS = 3
MAX_NEXT_DOOR_READS = 4
"""Statements through a neighbour tried for one value-next-door note (one row each)."""


@rule("value-next-door", E, Trigger.EMPTY_RESULT, Kind.HINT, once=VALUE)
async def value_next_door(case: Case) -> Fix | None:
    """No rows: `(v:Version {name: 'Linux'})` where 'Linux' is an OS's name and OSes have
    versions. The value belongs to the node at the other end of a relationship; the note shows
    the statement with the filter moved there, trying each (one row) and showing one that
    matches. Not in a restricted channel (the reads would bypass its row redaction)."""
    if case.attempts_left <= 0 or case.ctx.policy is not None:
        return None
    for label, prop, value in literal_filters(case.cypher)[:MAX_LITERAL_CHECKS]:
        if case.ctx.schema.label(label) is None or not value.strip():
            continue
        if text := await _value_on_a_neighbour(case, label, prop, value):
            detail = f"{label}.{prop} held next door"
            return Fix(detail, note=text, stage=Stage.VALUE_NEXT_DOOR)
    return None


@rule("counted-label", E, Trigger.ROWS, Kind.HINT, once="counted_label")
def counted_label(case: Case) -> Fix | None:
    """Rows from a statement that never matches the label the question counts ("How many
    machines…" answered by counting racks): one correction naming the pattern; the rows are
    kept as unconfirmed, given with a caveat if no later attempt does better."""
    feedback = counted_label_feedback(case.cypher, case.question, case.ctx.schema)
    if feedback is None:
        return None
    update = {}
    if not case.state.get("unconfirmed_rows"):
        rows = [list(r) for r in case.rows]
        update["unconfirmed_rows"] = UnconfirmedRows(
            case.cypher, list(case.columns), rows, case.truncated
        )
    return Fix("the counted label is not matched", note=feedback, stage=Stage.COUNTED_LABEL,
               update=update)  # fmt: skip


async def _value_on_a_neighbour(case: Case, label: str, prop: str, value: str) -> str | None:
    cypher, schema = case.cypher, case.ctx.schema
    names = referenced_names(cypher)
    used = names.rel_types
    span = filtered_node(cypher, label, prop, value)
    var = span[2] if span else ""
    here = f"({var}:{label})"
    holders: list[str] = []
    links: list[tuple[bool, str]] = []
    same_node: list[str] = []
    for h_label, h_prop, held in case.hints:
        if h_label == label or held.casefold() != value.casefold():
            continue
        near = f"(:{h_label} {{{h_prop}: {literal(held)}}})"
        found = [
            (r.type in used, f"{here}<-[:{r.type}]-{near}" if r.start == h_label
             else f"{here}-[:{r.type}]->{near}")
            for r in schema.relationships
            if {r.start, r.end} == {label, h_label}
        ]  # fmt: skip
        own = next((v for v, bound in names.variables.items() if bound == h_label), None)
        if own is not None:
            # Through the relationship the statement already uses, the value is that node's
            # ("people who work from <city>": filter the person, not another person on the
            # same project); only a relationship it does not use yet leads to another node.
            fresh = [f for f in found if not f[0]]
            if found and not fresh:
                same_node.append(
                    f"{literal(held)} is {article(h_label)} {h_label}'s {h_prop}, and the "
                    f"statement already matches {own} ({h_label}): filter {own} on {h_prop} = "
                    f"{literal(held)} instead of the {label}"
                )
                continue
            found = fresh
        if found:
            holders.append(f"{article(h_label)} {h_label}'s {h_prop}")
            links.extend(found)
    if not links:
        if same_node:
            text = f"The query returned no rows: no {label} has {prop} {literal(value)}, but "
            return text + same_node[0] + "."
        return None
    # A relationship the statement does not use yet first: the one it uses led nowhere.
    patterns = list(dict.fromkeys(text for _used, text in sorted(links, key=lambda x: x[0])))
    statements: dict[str, str] = {}
    if span is not None:
        start, end, _var = span
        tried = {p: f"{cypher[:start]}{p}{cypher[end:]}" for p in patterns[:MAX_NEXT_DOOR_READS]}
        matching = {p: s for p, s in tried.items() if await matches_something(case.probe, s)}
        patterns = [*matching, *(p for p in patterns if p not in matching)]
        statements = matching
    text = (
        f"The query returned no rows: no {label} has {prop} {literal(value)}, but "
        f"{literal(value)} is {' and '.join(dict.fromkeys(holders))}. Reach the {label} from "
        f"that node: {' or '.join(patterns[:3])}"
    )
    if statements:
        text += f", e.g. {statements[patterns[0]]}"
    return " ".join(text.split()) + "."
