"""Rules of the execute step: notes for rows that cannot be the answer.

An empty result may be a true "nothing matches" or a filter the graph spells differently; rows
may count something other than what the question counts. The hints fail the attempt once per
question with a note the correction step shows the model; the rewrites (a literal the one
stored value completes, the rows tied with a `LIMIT 1`'s) read the statement again themselves.
"""

from __future__ import annotations

import json
import logging
import re
from collections.abc import AsyncIterator, Callable, Collection, Sequence
from dataclasses import dataclass, field
from typing import Any

from graph_agent.graphdb.errors import GraphError
from graph_agent.graphdb.lookup import MIN_SCORE, similarity
from graph_agent.graphdb.protocol import GraphSchema
from graph_agent.graphdb.schema import quote_name, quote_name_if_needed
from graph_agent.lint import (
    MapEntry,
    compared_node,
    filtered_node,
    literal_filters,
    pattern_map_entries,
    with_literal,
    with_property,
    with_two_properties,
    without_entries,
)
from graph_agent.question_fit import (
    counted_label_feedback,
    echoed_feedback,
    left_out_values_feedback,
    repeated_feedback,
)
from graph_agent.repair.edits import EACH, flag_for_value, walked_back
from graph_agent.repair.probes import Prober, matches_something, nothing_found
from graph_agent.repair.rule import Case, Fix, Kind, Phase, Trigger, rule
from graph_agent.result import Stage
from graph_agent.schema_check import arrow, check_schema, two_hop_paths
from graph_agent.schema_examples import literal
from graph_agent.state import UnconfirmedRows
from graph_agent.statement import (
    Statement,
    distinct_read,
    fresh_variable,
    label_places,
    without_order,
)
from graph_agent.superlatives import (
    TIE_ROWS,
    asks_order,
    null_group_read,
    nulls_last_read,
    tie_read,
    tied_rows,
)
from graph_agent.words import article, said
from guardrails import referenced_names, split_name, stem, tokenize

logger = logging.getLogger(__name__)

E = Phase.EXECUTE
VALUE = "value"
"""The once-group of the notes about a filtered value: one such correction per question."""
MAX_LITERAL_CHECKS = 3
MAX_NEXT_DOOR_READS = 8
"""Statements through a neighbour tried for one value-next-door note (one row each)."""
MAX_STORED_VALUES = 200
"""A property with more distinct values than this is not a list to offer whole (names, ids)."""
MAX_NAMES_READ = 2000
"""Of a property with more values than MAX_STORED_VALUES (a city's or a person's name), up to
this many are read for the ones close in spelling to a literal that matches nothing."""
STORED_VALUES_SHOWN = 30
"""Up to this many distinct values the note shows them all; of more, only the close ones."""
_WORD = re.compile(r"[^\W_]+")


@rule("walked-back", E, Trigger.EMPTY_RESULT, Kind.REWRITE)
async def walked_back_rule(case: Case) -> Fix | None:
    """No rows: `MATCH (t:Type {type: 'xl'})<-[:TYPE]-(m:Machine), (m)-[:TYPE]->(t2:Type)
    RETURN t2.ram` for "How much RAM does the xl machine type have?" (a dev statement): each
    machine has one TYPE relationship, which a MATCH binds once, so walking back over it to
    another type finds nothing. Where no node of the middle's label has two such
    relationships (one bounded read), the node the walk back reaches is read as the one it
    left (`RETURN t.ram`) and the statement read again; its rows are the answer. Not in a
    restricted channel (the reads would bypass its redaction)."""
    fixed = walked_back(case.cypher, case.question)
    if fixed is None or case.ctx.policy is not None:
        return None
    statement, detail, twice = fixed
    try:  # a middle node with two of them: the walk back may mean the others, and found none
        if await case.probe.rows(twice, None, 1):
            return None
    except GraphError:
        logger.debug("the walk-back probe failed", exc_info=True)
        return None
    if (kept := await _read_again(case, statement)) is None:
        return None
    return Fix(detail, cypher=statement, update=kept)


@rule("value-completed", E, Trigger.EMPTY_RESULT, Kind.REWRITE)
async def value_completed(case: Case) -> Fix | None:
    """No rows: `(t:Technology {name: 'Elastic'})` for "Which services depend on Elastic for
    search?" where the one stored name that starts with it is 'Elasticsearch' (a dev
    question: given the stored values, the model failed its last attempt). When a string
    property holds at most 200 distinct values and exactly one of them completes the literal
    (starts with it, or holds its words in a row: 'Heathrow' in 'London Heathrow'), or, where
    none does, exactly one is the literal in the other number ('elves' for 'elf'), the filter
    takes that value and the statement is read again; its rows are the answer, and the
    statement shown is the completed one. Not in a restricted channel (the reads would bypass
    its row redaction)."""
    if case.ctx.policy is not None:
        return None
    async for label, prop, value, stored in _unstored_strings(case, min_chars=3):
        longer = [v for v in stored if _completes(value, v)] or [
            v for v in stored if _other_number(value, v)
        ]
        fixed = (
            with_literal(case.cypher, label, prop, value, longer[0]) if len(longer) == 1 else None
        )
        if fixed is None or (kept := await _read_again(case, fixed)) is None:
            continue
        detail = f"{label}.{prop} {literal(value)} → {literal(longer[0])}, the one stored value that completes it"
        return Fix(detail, cypher=fixed, update=kept)
    return None


def _word_forms(word: str) -> set[str]:
    """A word's stem, and for a plural in -ves its singulars ("elves" → elf, "knives" → knife)."""
    forms = {stem(word)}
    if len(word) > 4 and word.endswith("ves"):
        forms |= {word[:-3] + "f", word[:-3] + "fe"}
    return forms


def _other_number(value: str, stored: str) -> bool:
    """Whether `stored` is `value` in the other number, word for word: "elf" for a stored
    "elves" (a trial on a co-occurrence graph: `{race: "elf"}` found nothing, and the 1.5B
    model, offered the races, wrote it back), "hobbit" for "hobbits", "man" for "men"."""
    words, held = _WORD.findall(value.casefold()), _WORD.findall(stored.casefold())
    return (
        value.casefold() != stored.casefold()
        and len(words) == len(held) > 0
        and all(_word_forms(a) & _word_forms(b) for a, b in zip(words, held, strict=True))
    )


def _completes(value: str, stored: str) -> bool:
    """Whether `stored` is `value` completed: it starts with it, or holds its words in a row
    (case aside), and is longer."""
    if len(stored) <= len(value):
        return False
    if stored.casefold().startswith(value.casefold()):
        return True
    words, held = _WORD.findall(value.casefold()), _WORD.findall(stored.casefold())
    return bool(words) and any(
        held[i : i + len(words)] == words for i in range(len(held) - len(words) + 1)
    )


@rule("value-property", E, Trigger.EMPTY_RESULT, Kind.REWRITE)
async def value_property(case: Case) -> Fix | None:
    """No rows: `WHERE r.rack = 'DC1-RCK-2-1'` for "What operating systems do the machines in
    rack DC1-RCK-2-1 run?" (a playground trial on the network graph), where `rack` is the
    rack's number and 'DC1-RCK-2-1' its name; or `(a:Airport {descr: 'LHR'})` where LHR is
    the airport's code. When the filtered property does not hold the literal and exactly one
    other string property of the same label does, the filter takes that property and the
    statement is read again: its rows answer, and it is the statement shown. Where none does
    and the literal's words are held split between the property and one other on one node,
    it is read as both: `{name: 'Mark Twain'}` as `{name: 'Mark', surname: 'Twain'}` ("Which
    books did Mark Twain write?", a trial on a graph of books that calls people by a name and
    a surname; the model wrote the whole name as the name on both attempts); that name held,
    the statement stands so even where it still finds nothing (the answer is then that nothing
    matches, not a stored value close to the name). Literals moved
    stay moved while the next is looked at (two cities written as airport names: the read
    finds rows only once both are moved). Not in a restricted channel (the reads would bypass
    its row redaction)."""
    if case.ctx.policy is not None:
        return None
    current, done, named_whole = case.cypher, [], False
    for label, prop, value in literal_filters(case.cypher)[:MAX_LITERAL_CHECKS]:
        info = case.ctx.schema.label(label)
        if info is None or not value.strip() or await _holds(case.probe, label, prop, value):
            continue
        others = [p.name for p in info.properties if p.name != prop and "STRING" in p.types]
        holding = [
            other
            for other in others[:MAX_PROPERTY_CHECKS]
            if await _holds(case.probe, label, other, value)
        ]
        if len(holding) == 1:
            fixed = with_property(current, label, prop, value, holding[0])
            moved = f"{label}.{holding[0]}, the property that holds it"
        elif not holding and (parts := await _held_in_two(case.probe, label, prop, value, others)):
            fixed = with_two_properties(
                current, label, prop, value, tuple((k, literal(v)) for k, v in parts)
            )
            moved = " and ".join(f"{label}.{k} {literal(v)}" for k, v in parts)
            moved += ", the two properties that hold it between them"
            named_whole = fixed is not None
        else:
            fixed = None
        if fixed is None:
            continue
        # Each literal moved stays moved: "from Inverness to Athens" wrote both cities as an
        # airport's `descr` (a dev statement), and neither alone finds a row.
        current = fixed
        done.append(f"{label}.{prop} {literal(value)} → {moved}")
        if (kept := await _read_again(case, current)) is not None:
            return Fix("; ".join(done), cypher=current, update=kept)
    if named_whole:
        # A node holds the whole name: the statement now names it as stored, and its empty
        # result is the answer. Read as a spelling, the name had been "chosen" as another
        # person's first name (a playground follow-up: 'Mark Twain' as 'Markus').
        return Fix("; ".join(done), cypher=current, update={"rows": [], "truncated": False})
    return None


_NUMBER = re.compile(r"-?\d+(?:\.\d+)?")


@rule("unsaid-number", E, Trigger.EMPTY_RESULT, Kind.REWRITE)
async def unsaid_number(case: Case) -> Fix | None:
    """No rows: `(d:DistributionCenter {city: 'Madrid'})-[:LINKED {distance: 0}]->(dc)` for
    "Which centers is Madrid linked to?" (a trial on a supply-chain graph nobody here wrote):
    the question says no number, and no link is 0 long. A pattern map's entry whose value is
    a number the question never says (as written or in words) goes, and the statement is read
    again: its rows answer, and it is the statement shown. Not in a restricted channel (the
    read would bypass its row redaction)."""
    if case.ctx.policy is not None:
        return None
    entries = pattern_map_entries(case.cypher)

    def unsaid(entry: MapEntry) -> bool:
        return bool(_NUMBER.fullmatch(entry.value)) and not said(entry.value, case.question)

    dropped = [e.text for e in entries if unsaid(e)]
    if not dropped:
        return None
    fixed = without_entries(case.cypher, entries, unsaid)
    if (kept := await _read_again(case, fixed)) is None:
        return None
    return Fix(f"dropped {', '.join(dropped)}: a number the question never says", cypher=fixed,
               update=kept)  # fmt: skip


@rule("value-label", E, Trigger.EMPTY_RESULT, Kind.REWRITE)
async def value_label(case: Case) -> Fix | None:
    """No rows: `(d:DestinationCenter {city: 'Madrid'})` for "Which centers is Madrid linked
    to?" (a trial on a supply-chain graph nobody here wrote), where Madrid is the city of a
    DistributionCenter, a label alike in all but one word. When no node of the filtered label
    holds the literal and exactly one other label with that property and the same last word
    (Center) does (a Service's name held by a Team is value-moved's: the team's services),
    the statement takes that label where it wrote the first (each place alone, then every
    place: the model that wrote one wrong label for Madrid wrote it for Madrid's neighbours
    too), where it then fits the schema, and is read again; the first that finds rows
    answers and is the statement shown. Not in a restricted channel (the reads would bypass
    its row redaction). misfit-value-label does the same for a statement the schema check
    refused."""
    found = await relabelled_read(case)
    return Fix(found[1], cypher=found[0], update=found[2]) if found else None


async def relabelled_read(case: Case) -> tuple[str, str, dict[str, Any]] | None:
    """value-label's and misfit-value-label's work: the statement with the one other label
    that holds a filtered literal, what changed and its rows (see value_label). Only labels
    that share the filtered label's last word, and whose statement would fit the schema,
    are read for the literal."""
    if case.ctx.policy is not None:
        return None
    schema = case.ctx.schema
    for label, prop, value in literal_filters(case.cypher)[:MAX_LITERAL_CHECKS]:
        if not value.strip():
            continue
        spots = label_places(tokenize(case.cypher), [label])
        if not 0 < len(spots) <= MAX_LABEL_SPOTS:
            continue
        tries = [[spot] for spot in spots] + ([spots] if len(spots) > 1 else [])
        fitting: dict[str, list[tuple[str, int | None]]] = {}
        head = split_name(label)[-1].lower()
        for info in schema.labels:
            if info.name == label or all(p.name != prop for p in info.properties):
                continue
            if split_name(info.name)[-1].lower() != head:
                continue  # a label alike but for a word: a Service's name is no Team's
            new = quote_name_if_needed(info.name)
            for chosen in tries:
                fixed = Statement(case.cypher).edited([(t.position, t.end, new) for t in chosen])
                if not check_schema(fixed, schema).problems:
                    place = None if len(chosen) == len(spots) else spots.index(chosen[0]) + 1
                    fitting.setdefault(info.name, []).append((fixed, place))
        if not fitting or await _holds(case.probe, label, prop, value):
            continue
        holding = [
            other
            for other in list(fitting)[:MAX_PROPERTY_CHECKS]
            if await _holds(case.probe, other, prop, value)
        ]
        if len(holding) != 1:
            continue
        for fixed, place in fitting[holding[0]]:
            if (kept := await _read_again(case, fixed)) is not None:
                where = "" if place is None else f" (place {place})"
                moved = f"{label}.{prop} {literal(value)} → {holding[0]}{where}"
                return fixed, f"{moved}, the label that holds it", kept
    return None


MAX_LABEL_SPOTS = 3
"""Places a label is written at most for value-label to try each (and then all)."""


MAX_PROPERTY_CHECKS = 8
"""Other string properties of a label looked at for one literal (one one-row read each)."""


async def _held_in_two(
    prober: Prober, label: str, prop: str, value: str, others: list[str]
) -> tuple[tuple[str, str], tuple[str, str]] | None:
    """The one way a `label` node holds `value`'s words split between `prop` and another
    string property, as ((property, part), (property, part)) in the order written: "Mark
    Twain" as name 'Mark' and surname 'Twain'. None when no split or more than one holds."""
    words = value.split()
    found = []
    for cut in range(1, min(len(words), 4)):
        first, rest = " ".join(words[:cut]), " ".join(words[cut:])
        for mine, theirs in ((first, rest), (rest, first)):
            if not await _holds(prober, label, prop, mine):
                continue
            for other in others[:MAX_PROPERTY_CHECKS]:
                statement = (
                    f"MATCH (n:{quote_name(label)}) WHERE n.{quote_name(prop)} = $a"
                    f" AND n.{quote_name(other)} = $b RETURN 1 LIMIT 1"
                )
                try:
                    rows = await prober.rows(statement, {"a": mine, "b": theirs}, 1)
                except GraphError:
                    logger.debug("a probe failed", exc_info=True)
                    continue
                if rows:
                    pair = ((prop, mine), (other, theirs))
                    found.append(pair if mine == first else pair[::-1])
    return found[0] if len(found) == 1 else None


async def _holds(prober: Prober, label: str, prop: str, value: str) -> bool:
    """Whether some `label` node has `prop` equal to `value` (a failed read: no)."""
    statement = (
        f"MATCH (n:{quote_name(label)}) WHERE n.{quote_name(prop)} = $value RETURN 1 LIMIT 1"
    )
    try:
        return bool(await prober.rows(statement, {"value": value}, 1))
    except GraphError:
        logger.debug("a probe failed", exc_info=True)
        return False


@rule("value-chosen", E, Trigger.EMPTY_RESULT, Kind.REWRITE, once=VALUE)
async def value_chosen(case: Case) -> Fix | None:
    """No rows: `c.categoryName = 'Drinks'` for "Which drinks do we sell?" where the
    categories are 'Beverages', 'Condiments', …, or `{code: 'ISL'}` where Iceland's code is
    stored as 'IS'. Given those values in a correction note, the small model sent its statement
    back unchanged on most dev runs; asked only "which of these numbered values does the
    question mean by 'Drinks'?" and then "does the user mean 'Beverages'?" (two short calls to
    the fast model, `repair/choices.py`), it picks, and turns down a pick when none is meant.
    The values offered are
    stored-values' (all of them when few, else the close ones, of up to 2,000 read: "Lisboa"
    where a city is 'Lisbon', a dev question; every code where codes are stored and the literal
    is a name: 'Spain' where a country is 'ES', a dev statement; none for a name the user
    capitalises that nothing is close to); a picked value takes the literal's place and the
    statement is read again: its rows answer, and it is the statement shown. "None of them"
    is the answer that nothing matches (no correction is spent on the spelling). Not when a
    value hint holds the literal (value-next-door's case), nor in a restricted channel (the
    values and the reads would bypass its redaction)."""
    if case.ctx.policy is not None:
        return None
    async for label, prop, value, stored in _unstored_strings(
        case, skip_hinted=True, most=MAX_NAMES_READ
    ):
        offered = _offered(value, stored, case.question)
        if offered is None:
            continue
        picked, calls = await case.choose.choose(case.question, label, prop, value, offered[0])
        spent = {"llm_calls": calls}
        if picked is None:
            if not calls:
                continue  # no model to ask: stored-values' note is the way left
            return Fix(f"{label}.{prop} {literal(value)}: none of the stored values", update=spent)
        fixed = with_literal(case.cypher, label, prop, value, picked)
        if fixed is None:
            continue
        detail = f"{label}.{prop} {literal(value)} → {literal(picked)}, the stored value chosen"
        if (kept := await _read_again(case, fixed)) is None:
            return Fix(detail + "; nothing read with it", update=spent)
        return Fix(detail, cypher=fixed, update=spent | kept)
    return None


@rule("value-is-a-flag", E, Trigger.EMPTY_RESULT, Kind.REWRITE, once=VALUE)
async def value_is_a_flag(case: Case) -> Fix | None:
    """No rows: "Which stores have a coffee bar?" written `(st:StoreType {name: 'Coffee
    Bar'})` (a foodmart trial), where no store type is called so and a store's `coffee_bar`
    is true or false; value-chosen then offered the store types and the model wrote the same
    filter back. When a string filter holds none of its property's stored values and one node
    of the statement has a true/false property whose name says the value's words, the filter
    becomes that property being true, and the statement is read again: its rows answer, and it
    is the statement shown. Not in a restricted channel (the read would bypass its
    redaction)."""
    if case.ctx.policy is not None:
        return None
    flags = {
        written: found
        for written in literal_filters(case.cypher)[:MAX_LITERAL_CHECKS]
        if (found := flag_for_value(case.cypher, *written, case.ctx.schema)) is not None
    }
    if not flags:
        return None  # no flag named: no stored values read
    async for label, prop, value, _stored in _unstored_strings(case, only=flags):
        statement, detail = flags[(label, prop, value)]
        if (kept := await _read_again(case, statement)) is None:
            continue
        return Fix(detail, cypher=statement, update=kept)
    return None


@rule("value-moved", E, Trigger.EMPTY_RESULT, Kind.REWRITE, once=VALUE)
async def value_moved(case: Case) -> Fix | None:
    """No rows: `(m:Machine {name: 'DC1-RCK-2-1'})` for "What operating systems do the
    machines in rack DC1-RCK-2-1 run?" (a network trial question, now a dev item), where
    'DC1-RCK-2-1' is a Rack's name and racks hold machines. When the value lookup places the
    literal on a node next door, and of the statements with the filter moved there (every one
    read, one row each) exactly one finds rows, that statement is read: its rows answer, and
    it is the statement shown, with no correction spent. When several do, or none,
    value-next-door's note gives them to the model; several that read the same rows are one
    answer (one node with two labels holds the value). Not in a restricted channel (the reads
    would bypass its row redaction)."""
    if case.ctx.policy is not None:
        return None
    for label, prop, value in literal_filters(case.cypher)[:MAX_LITERAL_CHECKS]:
        if case.ctx.schema.label(label) is None or not value.strip():
            continue
        found = await _next_door(case, label, prop, value)
        if not found.statements or found.tried < len(found.patterns):
            continue
        pattern, statement = next(iter(found.statements.items()))
        if (kept := await _read_again(case, statement)) is None:
            continue
        if len(found.statements) > 1 and not await _all_read_the_same(
            case, list(found.statements.values())[1:], kept
        ):
            continue
        detail = f"{label}.{prop} {literal(value)} is {' and '.join(found.holders)}: {pattern}"
        return Fix(detail, cypher=statement, update=kept)
    return None


async def _all_read_the_same(case: Case, statements: list[str], kept: dict[str, Any]) -> bool:
    """Whether every statement reads the rows `kept` holds: one node with two labels holds
    the value ('postgres' is a Service's name and a Software's, one node; "Which software
    depends on postgres?", a dev item), so the roads through each are one answer."""
    for statement in statements:
        other = await _read_again(case, statement)
        if other is None or _row_set(other["rows"]) != _row_set(kept["rows"]):
            return False
    return True


def _row_set(rows: Sequence[Sequence[Any]]) -> set[str]:
    return {json.dumps(list(row), default=str, sort_keys=True) for row in rows}


@rule("value-next-door", E, Trigger.EMPTY_RESULT, Kind.HINT, once=VALUE)
async def value_next_door(case: Case) -> Fix | None:
    """No rows: `(v:Version {name: 'Linux'})` where 'Linux' is an OS's name and OSes have
    versions. The value belongs to the node at the other end of a relationship; the note shows
    the statement with the filter moved there, trying each (one row) and showing one that
    matches. Not in a restricted channel (the reads would bypass its row redaction), nor for a
    filter whose own property the value lookup finds the value in: "How many customers in
    Canada own more than 4 cars?" (a foodmart trial; none do) was told that a region's
    country holds 'Canada', and the rewrite dropped the cars."""
    if case.attempts_left <= 0 or case.ctx.policy is not None:
        return None
    held = {(h_label, h_prop, value.casefold()) for h_label, h_prop, value in case.hints}
    for label, prop, value in literal_filters(case.cypher)[:MAX_LITERAL_CHECKS]:
        if case.ctx.schema.label(label) is None or not value.strip():
            continue
        if (label, prop, value.casefold()) in held:
            continue  # the filter is right where it is: the rows are missing for another reason
        if text := await _value_on_a_neighbour(case, label, prop, value):
            detail = f"{label}.{prop} held next door"
            return Fix(detail, note=text, stage=Stage.VALUE_NEXT_DOOR)
    return None


@rule("stored-values", E, Trigger.EMPTY_RESULT, Kind.HINT, once=VALUE)
async def stored_values(case: Case) -> Fix | None:
    """No rows: `(g:Genre {name: 'Sci-Fi'})` where the graph stores 'Science Fiction', or
    `c.name = 'Drinks'` for "which drinks…" where the categories are 'Beverages', 'Condiments',
    …: the user's word is not the stored one. When the property holds at most 2,000 distinct
    values and none is the literal (case aside), the note gives the close ones (by the value
    lookup's similarity), and all of them when there are at most 30 and the question says the
    literal in everyday words; the model chooses one or finds that nothing matches. A name the
    user capitalises ("the Atlantis team") with no stored value close to it gets no note: its
    absence is the answer. One bounded read per literal, three at most. Not when a value hint
    holds the literal (it is stored, elsewhere: value-next-door's case), nor in a restricted
    channel (the values would bypass its row redaction)."""
    if case.attempts_left <= 0 or case.ctx.policy is not None:
        return None
    async for label, prop, value, stored in _unstored_strings(
        case, skip_hinted=True, most=MAX_NAMES_READ
    ):
        text = _stored_values_text(label, prop, value, stored, case.question)
        if text is None:
            continue
        return Fix(f"{label}.{prop} stored values", note=text, stage=Stage.MISSED_VALUE)
    return None


@rule("counted-label", E, Trigger.ROWS, Kind.HINT, once="rows-note")
def counted_label(case: Case) -> Fix | None:
    """Rows from a statement that never matches the label the question counts ("How many
    machines…" answered by counting racks): one correction naming the pattern; the rows are
    kept as unconfirmed, given with a caveat if no later attempt does better."""
    feedback = counted_label_feedback(case.cypher, case.question, case.ctx.schema)
    if feedback is None:
        return None
    return Fix("the counted label is not matched", note=feedback, stage=Stage.COUNTED_LABEL,
               update=_kept_unconfirmed(case))  # fmt: skip


@rule("value-left-out", E, Trigger.ROWS, Kind.HINT, once="rows-note")
def value_left_out(case: Case) -> Fix | None:
    """Rows from a statement that never uses a stored value the question says word for word
    ("Which questions tagged python did cybersam answer?" written without the python tag, a
    trial on a graph nobody here wrote; "Who reports to the manager of the Search team?"
    without the team, a dev item): one correction naming the node to match (`(t:Tag {name:
    'python'})`), the rows kept as unconfirmed like counted-label's; one of the two notes per
    question."""
    feedback = left_out_values_feedback(case.cypher, case.question, case.hints, case.ctx.schema)
    if feedback is None:
        return None
    return Fix("a value the question names is left out", note=feedback,
               stage=Stage.LEFT_OUT_VALUE, update=_kept_unconfirmed(case))  # fmt: skip


@rule("named-echo", E, Trigger.ROWS, Kind.HINT, once="rows-note")
def named_echo(case: Case) -> Fix | None:
    """Rows that only repeat what a "who"/"which" question names: "Who works under Andrew
    Fuller, directly or indirectly?" answered with Andrew Fuller (a dev item; the statement
    matched him alone and returned his name, and no evaluation doubted it). One correction
    naming the relationships of the named node's label; the rows kept as unconfirmed like
    counted-label's; one of the rows notes per question."""
    feedback = echoed_feedback(case.cypher, case.question, case.rows, case.ctx.schema)
    if feedback is None:
        return None
    return Fix("the rows repeat what the question names", note=feedback,
               stage=Stage.NAMED_ECHO, update=_kept_unconfirmed(case))  # fmt: skip


@rule("previous-statement-again", E, Trigger.ROWS, Kind.HINT, once="rows-note")
def previous_statement_again(case: Case) -> Fix | None:
    """A follow-up answered by the very statement that answered the turn before: "what do
    they eat?" after "Which animals live in beaver ponds?" (a playground thread on a
    Yellowstone food web) listed the same animals again. One correction saying the question
    asks something else; the rows kept as unconfirmed like named-echo's; one of the rows
    notes per question."""
    history = case.state.get("history") or []
    if not history:
        return None
    last = history[-1]
    feedback = repeated_feedback(
        case.cypher, case.question, last.standalone_question or last.question, last.cypher
    )
    if feedback is None:
        return None
    return Fix("the statement of the turn before, again", note=feedback,
               stage=Stage.PREVIOUS_AGAIN, update=_kept_unconfirmed(case))  # fmt: skip


def _kept_unconfirmed(case: Case) -> dict[str, Any]:
    """The rows kept as unconfirmed (unless an earlier attempt's are), for a caveat."""
    if case.state.get("unconfirmed_rows"):
        return {}
    rows = [list(r) for r in case.rows]
    return {
        "unconfirmed_rows": UnconfirmedRows(case.cypher, list(case.columns), rows, case.truncated)
    }


@dataclass
class _NextDoor:
    """Where a literal no node of its label holds is held instead, next door."""

    holders: list[str] = field(default_factory=list)
    """"a Rack's name", … (each label and property that holds it)."""
    patterns: list[str] = field(default_factory=list)
    """The filtered node's pattern reaching each holder, one the statement does not use first."""
    statements: dict[str, str] = field(default_factory=dict)
    """Pattern → the statement with it, for the patterns whose statement finds a row."""
    tried: int = 0
    """How many of the patterns were read (at most MAX_NEXT_DOOR_READS)."""
    same_node: str | None = None
    """Why the value is the statement's own node's, when it is (filter that node instead)."""


async def _next_door(case: Case, label: str, prop: str, value: str) -> _NextDoor:
    cypher, schema = case.cypher, case.ctx.schema
    names = referenced_names(cypher)
    used = names.rel_types
    span = filtered_node(cypher, label, prop, value)
    # A filter in a WHERE (`os.name = 'Ubuntu'`) is moved onto the holder by its variable.
    compared = None if span else compared_node(cypher, label, prop, value)
    here = f"({(span or compared or ('', '', ''))[2]}:{label})"
    found_here = _NextDoor()
    links: list[tuple[bool, str]] = []
    roads: dict[str, tuple[str, str, str]] = {}  # pattern → (road, holder's label, property)
    for h_label, h_prop, held in case.hints:
        if h_label == label or held.casefold() != value.casefold():
            continue
        near = f"(:{h_label} {{{h_prop}: {literal(held)}}})"
        ways = [
            (r.type in used, arrow(label, r))
            for r in schema.relationships
            if {r.start, r.end} == {label, h_label}
        ]
        ways = ways or [(False, road) for road in _two_hops(label, h_label, schema)]
        found = [(in_use, f"{here}{road}{near}") for in_use, road in ways]
        roads |= {f"{here}{road}{near}": (road, h_label, h_prop) for _in_use, road in ways}
        own = next((v for v, bound in names.variables.items() if bound == h_label), None)
        if own is not None:
            # Through the relationship the statement already uses, the value is that node's
            # ("people who work from <city>": filter the person, not another person on the
            # same project); only a relationship it does not use yet leads to another node.
            fresh = [f for f in found if not f[0]]
            if found and not fresh:
                found_here.same_node = found_here.same_node or (
                    f"{literal(held)} is {article(h_label)} {h_label}'s {h_prop}, and the "
                    f"statement already matches {own} ({h_label}): filter {own} on {h_prop} = "
                    f"{literal(held)} instead of the {label}"
                )
                continue
            found = fresh
        if found:
            found_here.holders.append(f"{article(h_label)} {h_label}'s {h_prop}")
            links.extend(found)
    # A relationship the statement does not use yet first: the one it uses led nowhere.
    patterns = list(dict.fromkeys(text for _used, text in sorted(links, key=lambda x: x[0])))
    found_here.patterns = patterns
    if (span is not None or compared is not None) and patterns:
        moved = {
            p: _moved(cypher, span, label, p[len(here) :])
            if span is not None
            else _moved_compared(cypher, compared, *roads[p])
            for p in patterns
        }
        tried = {p: s for p, s in list(moved.items())[:MAX_NEXT_DOOR_READS] if s is not None}
        matching = {p: s for p, s in tried.items() if await matches_something(case.probe, s)}
        found_here.patterns = [*matching, *(p for p in patterns if p not in matching)]
        found_here.statements = matching
        found_here.tried = len(tried)
    return found_here


def _two_hops(label: str, holder: str, schema: GraphSchema) -> list[str]:
    """The two-hop roads from `label` to `holder` through a third label, as pattern text
    (`-[:INSTANCE]->(:Version)<-[:VERSION]-`), each by two different relationship types: the
    OS process a machine runs is named by its version, and 'Ubuntu' is the name of the OS
    software with that version ("Which machines in rack DC1-RCK-2-2 run Ubuntu?", a trial on
    the network graph)."""
    return [text for text, types in two_hop_paths(schema, label, holder) if len(types) == 2]


def _moved(cypher: str, span: tuple[int, int, str], label: str, hop: str) -> str | None:
    """The statement with the node at `span` unfiltered and reached through `hop` from the
    node that holds the value, as one more pattern of its MATCH: `MATCH (m:Machine {name:
    'R1'})-[:RUNS]->(os:OS)` → `MATCH (m:Machine)-[:RUNS]->(os:OS), (m)<-[:HOLDS]-(:Rack
    {name: 'R1'})`, so the hops the statement had still start from the machine (a node nothing
    goes on from takes the hop in place). None when the node is not in a MATCH."""
    start, end, var = span
    if not cypher[end:].lstrip().startswith(("-", "<")):
        # Nothing goes on from the node: the hop is written right onto it.
        return f"{cypher[:start]}({var}:{quote_name_if_needed(label)}){hop}{cypher[end:]}"
    var = var or fresh_variable(label, referenced_names(cypher).variables)
    name = quote_name_if_needed(var)
    text = f"{cypher[:start]}({name}:{quote_name_if_needed(label)}){cypher[end:]}"
    statement = Statement(text)
    holding = next(
        (c for c in reversed(statement.clauses) if statement.tokens[c].position <= start), None
    )
    if holding is None or statement.keyword_at(holding) not in ("MATCH", "OPTIONAL"):
        return None
    last = statement.tokens[statement.clause_end(holding) - 1].end
    return f"{text[:last]}, ({name}){hop}{text[last:]}"


def _moved_compared(
    cypher: str, compared: tuple[int, int, str] | None, road: str, holder: str, prop: str
) -> str | None:
    """The statement comparing the value on the node that holds it (its `prop`), reached
    through `road` from the compared one: `MATCH (m)-[:RUNS]->(os:OS) WHERE os.name =
    'Ubuntu'` → `MATCH (m)-[:RUNS]->(os:OS), (os)-[:INSTANCE]->(:Version)<-[:VERSION]-
    (s:Software) WHERE s.name = 'Ubuntu'`. None when no MATCH before the comparison."""
    if compared is None:
        return None
    start, end, var = compared
    new = fresh_variable(holder, {t.name for t in tokenize(cypher) if t.is_name})
    read = f"{quote_name_if_needed(new)}.{quote_name_if_needed(prop)}"
    text = f"{cypher[:start]}{read}{cypher[end:]}"
    statement = Statement(text)
    holding = next(
        (
            c
            for c in reversed(statement.clauses)
            if statement.tokens[c].position < start
            and statement.keyword_at(c) in ("MATCH", "OPTIONAL")
        ),
        None,
    )
    if holding is None:
        return None
    last = statement.tokens[statement.clause_end(holding) - 1].end
    hop = f", ({quote_name_if_needed(var)}){road}({quote_name_if_needed(new)}:{holder})"
    return f"{text[:last]}{hop}{text[last:]}"


_NO_ROWS = "The query returned no rows: no {} it matches has {} {}"


async def _value_on_a_neighbour(case: Case, label: str, prop: str, value: str) -> str | None:
    found = await _next_door(case, label, prop, value)
    if not found.patterns:
        if found.same_node:
            return f"{_NO_ROWS.format(label, prop, literal(value))}, but {found.same_node}."
        return None
    text = (
        f"{_NO_ROWS.format(label, prop, literal(value))}, but "
        f"{literal(value)} is {' and '.join(dict.fromkeys(found.holders))}. Reach the {label} "
        f"from that node: {' or '.join(found.patterns[:3])}"
    )
    if found.statements:
        text += f", e.g. {found.statements[found.patterns[0]]}"
    return " ".join(text.split()) + "."


async def _distinct_values(
    prober: Prober, label: str, prop: str, most: int = MAX_STORED_VALUES
) -> list[str] | None:
    """The property's distinct string values, or None when there are more than `most` (or the
    read fails: then there is no note)."""
    statement = (
        f"MATCH (n:{quote_name(label)}) WHERE n.{quote_name(prop)} IS NOT NULL "
        f"RETURN DISTINCT n.{quote_name(prop)} LIMIT {most + 1}"
    )
    try:
        rows = await prober.rows(statement, None, most + 1)
    except GraphError:
        logger.debug("a probe failed", exc_info=True)
        return None
    if len(rows) > most:
        return None
    return [r[0] for r in rows if r and isinstance(r[0], str)]


async def _unstored_strings(
    case: Case,
    *,
    min_chars: int = 1,
    skip_hinted: bool = False,
    most: int = MAX_STORED_VALUES,
    only: Collection[tuple[str, str, str]] | None = None,
) -> AsyncIterator[tuple[str, str, str, list[str]]]:
    """The statement's string filters (three at most) on a property of at most `most` values
    that holds none of them (case aside): (label, property, literal, the stored values).
    `skip_hinted`: not a literal a value hint holds (stored, elsewhere); `only`: just these
    filters (the others' values are not read)."""
    hinted = {held.casefold() for _label, _prop, held in case.hints} if skip_hinted else set()
    for label, prop, value in literal_filters(case.cypher)[:MAX_LITERAL_CHECKS]:
        if only is not None and (label, prop, value) not in only:
            continue
        info = case.ctx.schema.label(label)
        own = next((p for p in info.properties if p.name == prop), None) if info else None
        if own is None or "STRING" not in own.types or len(value.strip()) < min_chars:
            continue
        if value.casefold() in hinted:
            continue
        stored = await _distinct_values(case.probe, label, prop, most)
        if stored and value.casefold() not in {v.casefold() for v in stored}:
            yield label, prop, value, stored


async def _read_again(
    case: Case, statement: str, *, empty: Callable[[list[list[Any]]], bool] = nothing_found
) -> dict[str, Any] | None:
    """A rewritten statement's rows as the execute step keeps them (`rows`, `truncated`), or
    None when the read fails or finds nothing (`empty`: no rows, or an aggregate's 0/null)."""
    max_rows = case.ctx.config.max_rows
    try:
        rows = await case.probe.rows(statement, None, max_rows + 1)
    except GraphError:
        logger.debug("the rewritten statement's read failed", exc_info=True)
        return None
    if empty(rows):
        return None
    return {"rows": [list(r) for r in rows[:max_rows]], "truncated": len(rows) > max_rows}


def _offered(value: str, stored: list[str], question: str) -> tuple[list[str], bool] | None:
    """The stored values worth offering for `value`, close ones first, and whether they are
    all of them: every value when they are few and either one is close or the question says
    the literal in everyday words, else only the close ones; None when nothing is worth
    offering (a name the user capitalises, none close: its absence is the answer). Where the
    property stores codes and the literal is a name ('Spain' where countries are 'ES', 'FR',
    …), every code is offered: spelling is no guide from a name to its code, the model's
    knowledge is."""
    close = sorted(
        (v for v in stored if similarity(value, v) >= MIN_SCORE),
        key=lambda v: (-similarity(value, v), v),
    )
    if len(stored) <= STORED_VALUES_SHOWN and (close or _in_everyday_words(value, question)):
        return [*close, *sorted(v for v in stored if v not in close)], True
    if close:
        return close[:STORED_VALUES_SHOWN], False
    if len(stored) <= MAX_STORED_VALUES and _a_name_for_a_code(value, stored):
        return sorted(stored), True
    return None


MAX_CODE_CHARS = 6
"""A stored value this short, in capitals and without spaces, reads as a code ('ES', 'GB-ENG')."""


def _a_name_for_a_code(value: str, stored: list[str]) -> bool:
    """Whether every stored value is a code and `value` is a name, longer than any of them
    (`{code: 'Spain'}` for "the airports in Spain", a dev statement, where the codes are 'ES',
    'FR', …)."""
    codes = all(
        len(v) <= MAX_CODE_CHARS and v == v.upper() and not any(c.isspace() for c in v)
        for v in stored
    )
    return (
        bool(stored)
        and codes
        and value != value.upper()
        and len(value.strip()) > max(map(len, stored))
    )


def _stored_values_text(
    label: str, prop: str, value: str, stored: list[str], question: str
) -> str | None:
    """The note for `value` among `stored` (the values `_offered` picks); None when there is
    nothing worth showing."""
    offered = _offered(value, stored, question)
    if offered is None:
        return None
    shown, every = offered
    text = f"The query returned no rows: no {label} has {prop} {literal(value)}. "
    if every:
        text += f"The stored values of {label}.{prop} are: {', '.join(map(literal, shown))}"
        text += (
            f" (closest: {literal(shown[0])})" if similarity(value, shown[0]) >= MIN_SCORE else ""
        )
    else:
        text += (
            f"Of the {len(stored)} stored values of {label}.{prop}, the closest are: "
            f"{', '.join(map(literal, shown))}"
        )
    return text + (
        ". If one of them is what the question means, filter on it exactly as written here; "
        "if none is, nothing matches."
    )


@rule("ties-shown", E, Trigger.ROWS, Kind.REWRITE)
async def ties_shown(case: Case) -> Fix | None:
    """One row from `ORDER BY products DESC LIMIT 1` for "which supplier has the most
    products?", when two suppliers have five: the answer named one as if it were alone. The
    same read with room for ties (`LIMIT 11`, through the channel's policy); the rows tied
    with the first on the first sort key replace it. The read is DISTINCT where it can be:
    rows alike are one answer met through several nodes ("How much RAM does the xl machine
    type have?" read the type through each of its 31 machines, a dev item, and showed 256 ten
    times). Only when that key is a returned column; not in a restricted channel (its
    redaction may have changed the row that came back)."""
    if len(case.rows) != 1 or case.ctx.policy is not None:
        return None
    found = await _ties(case, case.cypher, list(case.rows[0]))
    if found is None:
        return None
    statement, kept = found
    detail = f"{'more than ' if kept['truncated'] else ''}{len(kept['rows'])} rows tied for first"
    return Fix(detail, cypher=statement, update=kept)


async def _ties(
    case: Case, cypher: str, first: list[Any] | None = None
) -> tuple[str, dict[str, Any]] | None:
    """The rows tied with a `LIMIT 1` statement's row (`first`, when it is known), read again
    with room for them: the statement read and the update (rows, truncated, tied), or None when
    it is not such a statement, the read fails, or nothing ties."""
    found = tie_read(cypher)
    if found is None:
        return None
    statement, column = found
    statement = distinct_read(statement) or statement
    try:
        rows = await case.probe.rows(statement, None, TIE_ROWS + 1)
    except GraphError:
        logger.debug("the tie read failed", exc_info=True)
        return None
    tied = _without_repeats(tied_rows(rows, column))
    if len(tied) < 2 or (first is not None and first not in tied):
        return None
    more = len(tied) > TIE_ROWS
    return statement, {"rows": tied[:TIE_ROWS], "truncated": more, "tied": True}


@rule("nulls-last", E, Trigger.ROWS, Kind.REWRITE)
async def nulls_last(case: Case) -> Fix | None:
    """ "Who logged on most recently?" written `… ORDER BY lastlogon DESC LIMIT 1` (a trial on
    the cybersecurity graph, where one user has no `lastlogon`) answered with that user and
    "(none)": Cypher sorts null above every value in a descending sort. When the first row's
    sort value is null, the same read with `lastlogon IS NULL, lastlogon DESC` replaces it,
    the rows tied with its first when it keeps one, and it is the statement shown. Not when
    every row is null (nothing holds the value), nor in a restricted channel (its redaction
    may have emptied the value)."""
    if not case.rows or case.ctx.policy is not None:
        return None
    found = nulls_last_read(case.cypher)
    if found is None or case.rows[0][found[1]] is not None:
        return None
    return await _first_with_a_value(
        case, *found, f"rows without {_column_name(found[0], found[1])} sorted last"
    )


@rule("null-group", E, Trigger.ROWS, Kind.REWRITE)
async def null_group(case: Case) -> Fix | None:
    """ "Which culture do most characters belong to?" written `MATCH (p:Person) RETURN
    count(p) AS count, p.culture AS culture ORDER BY count DESC LIMIT 1` (a trial on a Game
    of Thrones graph nobody here wrote, where 1,389 of 2,134 people have no culture) answered
    "(none)": the nodes lacking the property are grouped too, and that group was the largest.
    For a question that ranks, when the first row's group is null, the same read without
    those nodes (`WHERE p.culture IS NOT NULL` in the MATCH binding `p`) replaces it, the rows
    tied with its first when it keeps one, and it is the statement shown. Not when every
    group is null, nor in a restricted channel (its redaction may have emptied the value)."""
    if not case.rows or case.ctx.policy is not None or not asks_order(case.question):
        return None
    found = null_group_read(case.cypher)
    if found is None or case.rows[0][found[1]] is not None:
        return None
    return await _first_with_a_value(
        case, *found, f"the group without {_column_name(found[0], found[1])} left out"
    )


async def _first_with_a_value(case: Case, statement: str, column: int, detail: str) -> Fix | None:
    """nulls-last's and null-group's read: `statement`'s rows when its first row holds a value
    in `column` (the rows tied with that first when it keeps one), as the statement shown."""
    kept = await _read_again(
        case, statement, empty=lambda rows: not rows or rows[0][column] is None
    )
    if kept is None:
        return None
    if (tied := await _ties(case, statement)) is not None:
        kept = tied[1]
        detail += f"; {len(kept['rows'])} tied for first"
    return Fix(detail, cypher=statement, update=kept | {"shown": True})


def _column_name(cypher: str, column: int) -> str:
    statement = Statement(cypher)
    returned = statement.final_return()
    if returned is None:
        return "a value"
    item = returned[1][column]
    return item.alias or statement.source(item.first, item.end)


def _without_repeats(rows: Sequence[Sequence[Any]]) -> list[list[Any]]:
    """The rows, each first time it comes (a read that could not be DISTINCT may repeat)."""
    seen: set[str] = set()
    kept = []
    for row in rows:
        key = json.dumps(list(row), default=str, sort_keys=True)
        if key not in seen:
            seen.add(key)
            kept.append(list(row))
    return kept


@rule("distinct-rows", E, Trigger.ROWS, Kind.REWRITE)
async def distinct_rows(case: Case) -> Fix | None:
    """`MATCH (a:Application)-[:LISTENS]->(:Port {port: 8080}) RETURN a.name LIMIT 5` for
    "Which applications listen on port 8080?" (a playground question on the network graph):
    one application on five machines came back five times and filled the LIMIT, so the
    other one never showed. A "which/what/who" question whose rows repeat, from a final
    RETURN of no aggregate and no DISTINCT, is read again with `RETURN DISTINCT`; its rows
    replace them, and it is the statement shown. Not when the question asks for each or
    every one of something (each row is then an answer), when a sort key is not a returned
    column (DISTINCT could not sort by it), nor in a restricted channel (its redaction may
    have made rows alike)."""
    if len(case.rows) < 2 or case.ctx.policy is not None:
        return None
    if not _WHICH.match(case.question) or EACH.search(case.question):
        return None
    if len(_without_repeats(case.rows)) == len(case.rows):
        return None
    statement = distinct_read(case.cypher)
    if statement is None and not asks_order(case.question):
        # A sort nobody asked for, on what the rows do not show (`ORDER BY f.created`), is all
        # that stops DISTINCT: the read goes without it.
        unsorted = without_order(case.cypher)
        statement = distinct_read(unsorted) if unsorted is not None else None
    if statement is None:
        return None
    kept = await _read_again(case, statement, empty=lambda rows: not rows)
    if kept is None:
        return None
    detail = f"{len(case.rows)} rows with repeats → {len(kept['rows'])} distinct"
    return Fix(detail, cypher=statement, update=kept | {"shown": True})


_WHICH = re.compile(
    r"\s*(?:(?:in|from|to|for|with|at|on|by)\s+)?(which|what|who|whom|where|list|name|show)\b",
    re.IGNORECASE,
)
"""A question asking for things: "Which …", "List …"; also after a preposition ("In which
countries are the banks of …", a FinCEN trial: each country came back once per filing)."""


def _in_everyday_words(value: str, question: str) -> bool:
    """Whether the question writes every word of `value` in lower case ("which drinks do we
    sell?" for 'Drinks', "sci-fi books" for 'Sci-Fi'): a kind of thing in the user's words,
    which the graph may call otherwise. Not a name the user capitalises, nor a word the
    question never says."""
    lower: dict[str, bool] = {}
    for word in _WORD.findall(question):
        key = stem(word)
        lower[key] = lower.get(key, True) and word == word.lower()
    words = [stem(w) for w in _WORD.findall(value)]
    return bool(words) and all(lower.get(w, False) for w in words)
