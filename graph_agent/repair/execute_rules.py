"""Rules of the execute step: notes for rows that cannot be the answer.

An empty result may be a true "nothing matches" or a filter the graph spells differently; rows
may count something other than what the question counts. Each rule here fails the attempt
once per question with a note the correction step shows the model.
"""

from __future__ import annotations

from graph_agent.graphdb.schema import quote_name
from graph_agent.lint import empty_result_feedback, filtered_node, literal_filters
from graph_agent.question_fit import counted_label_feedback
from graph_agent.repair.probes import Prober, matches_something
from graph_agent.repair.rule import Case, Fix, Kind, Phase, Trigger, rule
from graph_agent.result import Stage
from graph_agent.schema_examples import literal
from graph_agent.state import NextDoor, UnconfirmedRows
from graph_agent.words import article
from guardrails.cypher_tokens import referenced_names

E = Phase.EXECUTE
VALUE = "value"
"""The once-group of the notes about a filtered value: one such correction per question."""
MAX_LITERAL_CHECKS = 3
SAMPLE_VALUES_SHOWN = 5
MAX_NEXT_DOOR_READS = 4
"""Statements through a neighbour tried for one value-next-door note (one row each)."""


@rule("missed-value", E, Trigger.EMPTY_RESULT, Kind.HINT, once=VALUE)
def missed_value(case: Case) -> Fix | None:
    """No rows, and the statement used none of the stored values the question names (a hint
    stores 'Ada Lovelace'; the statement filtered 'Lovelace, Ada'): the note gives the stored
    values. Only while an attempt remains, so a true "nothing matches" still gets its answer."""
    if case.attempts_left <= 0:
        return None
    feedback = empty_result_feedback(case.cypher, case.hints)
    return Fix("the stored values", note=feedback, stage=Stage.MISSED_VALUE) if feedback else None


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
        if linked := await _value_on_a_neighbour(case, label, prop, value):
            text, shown = linked
            update = {"next_door": shown} if shown is not None else {}
            return Fix(f"{label}.{prop} held next door", note=text, stage=Stage.VALUE_NEXT_DOOR,
                       update=update)  # fmt: skip
    return None


@rule("value-spelling", E, Trigger.EMPTY_RESULT, Kind.HINT, once=VALUE)
async def value_spelling(case: Case) -> Fix | None:
    """No rows, and no node of the label has that value at all: it is on another property (no
    Airport has city 'Heathrow', one has descr 'Heathrow'), or it is written unlike the stored
    values (no Country has code 'Spain'; codes look like 'AT', 'BE'). A few short reads; a
    failing read skips the check. Not in a restricted channel."""
    if case.attempts_left <= 0 or case.ctx.policy is not None:
        return None
    for label, prop, value in literal_filters(case.cypher)[:MAX_LITERAL_CHECKS]:
        info = case.ctx.schema.label(label)
        if info is None or not value.strip():
            continue
        others = [o.name for o in info.properties if o.name != prop and "STRING" in o.types]
        try:
            feedback = await _literal_feedback(case.probe, label, prop, value, others[:12])
        except Exception:  # a failing probe skips the check; the attempt's rows stand
            return None
        if feedback is not None:
            return Fix(f"no {label} has {prop} {literal(value)}", note=feedback,
                       stage=Stage.MISSED_VALUE)  # fmt: skip
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


async def _value_on_a_neighbour(
    case: Case, label: str, prop: str, value: str
) -> tuple[str, NextDoor | None] | None:
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
            return text + same_node[0] + ".", None
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
    shown = None
    if statements:
        statement = statements[patterns[0]]
        text += f", e.g. {statement}"
        shown = NextDoor(label, prop, value, statement)
    return " ".join(text.split()) + ".", shown


def _written_as(text: str) -> tuple[str, bool]:
    case = (
        "upper"
        if text.isupper()
        else "lower"
        if text.islower()
        else "title"
        if text.istitle()
        else "mixed"
    )
    return case, len(text) <= 4


def written_alike(value: str, stored: list[str]) -> bool:
    """Whether `value` is written like the stored values (same case pattern, both short codes
    or both longer): then no node holding it means there is none ("Atlantis" among team names),
    not that it was written wrong ("Spain" among country codes like "ES")."""
    return _written_as(value) in {_written_as(v) for v in stored}


async def _literal_feedback(
    prober: Prober, label: str, prop: str, value: str, others: list[str]
) -> str | None:
    params = {"v": value}
    node, key = f"(n:{quote_name(label)})", f"n.{quote_name(prop)}"
    if (await prober.rows(f"MATCH {node} WHERE {key} = $v RETURN count(n)", params, 1))[0][0]:
        return None
    if others:
        holds = " OR ".join(f"toLower(n.{quote_name(o)}) = toLower($v)" for o in others)
        shown = ", ".join(f"n.{quote_name(o)}" for o in others)
        rows = await prober.rows(
            f"MATCH {node} WHERE {holds} RETURN {key}, {shown} LIMIT 1", params, 1
        )
        found = dict(zip(others, rows[0][1:], strict=False)) if rows else {}
        for where, held in found.items():
            if isinstance(held, str) and held.casefold() == value.casefold():
                own = rows[0][0]
                also = f" or {prop} = {literal(own)}" if own is not None else ""
                return (
                    f"The query returned no rows: no {label} has {prop} {literal(value)}, "
                    f"but {literal(held)} is {article(label)} {label}'s {where}. "
                    f"Filter on {where} = {literal(held)}{also} instead."
                )
    samples = await prober.rows(
        f"MATCH {node} WHERE {key} IS NOT NULL RETURN DISTINCT {key} LIMIT {SAMPLE_VALUES_SHOWN}",
        params,
        SAMPLE_VALUES_SHOWN,
    )
    stored = [str(r[0]) for r in samples]
    if not stored or written_alike(value, stored):
        return None
    return (
        f"The query returned no rows: no {label} has {prop} {literal(value)}. "
        f"{label}.{prop} holds values like {', '.join(literal(v) for v in stored)}: write the "
        "value the way the graph stores it (a code, an abbreviation), or filter on another "
        "property."
    )
