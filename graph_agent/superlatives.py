"""Superlative and "which X" questions checked against the statement, from English and the schema.

Three mistakes a small model makes on every graph, whatever its labels:
- the sort goes the wrong way: "the oldest employee" sorted by birth date descending;
- a "which X" question gets only the measure: "Which data center has the most racks?"
  answered by `RETURN count(*) AS racks ORDER BY racks DESC LIMIT 1`;
- "the X with the most …" returns five rows;
- and the other way: `LIMIT 1` keeps one of two tied for first ("the supplier with the most
  products" when two have five), so the tied rows are read too.

Each check here reads only the question's words, the statement and the schema's names and
types; the rules in graph_agent/repair/validate_rules.py turn them into rewrites.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any, Literal

from graph_agent.graphdb.protocol import GraphSchema, LabelInfo, PropertyInfo
from graph_agent.graphdb.schema import NUMBER_TYPES, display_property, quote_name_if_needed
from graph_agent.pruning import name_words, question_words
from graph_agent.statement import (
    Item,
    Statement,
    add_condition,
    binding,
    is_aggregate_call,
    node_has_more,
    without_order,
)
from graph_agent.words import (
    ASKS_WHO,
    ASKS_WHO_OR_WHICH,
    EACH_WORDS,
    SUPERLATIVE_EST,
    label_said,
    said,
)
from guardrails import ReferencedNames, referenced_names, split_name, stem

Kind = Literal["time", "span"]

# Words of a property's name that make it a point in time (sorted: smallest = oldest) or an
# age (sorted: largest = oldest). Stems, as name_words gives them.
_TIME_WORDS = frozenset(
    stem(w)
    for w in (
        "date", "year", "time", "created", "born", "birth", "founded", "start", "since",
        "hired", "opened", "built", "updated", "modified", "released", "established", "at",
    )
)  # fmt: skip
_SPAN_WORDS = frozenset(stem(w) for w in ("age", "tenure", "seniority"))
_TEMPORAL_TYPES = frozenset({"DATE", "DATETIME", "LOCALDATETIME", "TIME", "LOCALTIME"})

# "the longest"/"the shortest" ending a clause, over a point in time, is how long since it
# ("Who has been with the company the longest?" on a start date: the earliest first); over a
# tenure, the longest first. "The longest film" is about a length, not a time: no cue.
_SINCE = r"(?:{0}(?=\s*(?:[?.!,;]|$))|{0}[-\s]serving)"
_OLDEST = re.compile(
    rf"\b(?:oldest|earliest|{_SINCE.format('longest')}|least\s+recent(?:ly)?)\b", re.IGNORECASE
)
_NEWEST = re.compile(
    rf"\b(?:youngest|newest|latest|{_SINCE.format('shortest')}|most\s+recent(?:ly)?)\b",
    re.IGNORECASE,
)


def property_kind(prop: PropertyInfo) -> Kind | None:
    """ "time" for a point in time (a date, a year, `created_at`, ISO dates stored as text:
    a foodmart trial's `birthdate` "1961-08-26"), "span" for an age or a tenure, None
    otherwise (a duration is "longest", not "oldest": no cue applies)."""
    words = name_words(prop.name)
    if words & _SPAN_WORDS:
        return "span"
    if set(prop.types) & _TEMPORAL_TYPES or prop.iso_dates or words & _TIME_WORDS:
        return "time"
    return None


def wants_descending(question: str, kind: Kind) -> bool | None:
    """Which way the question's superlative sorts a property of `kind`: "oldest" puts the
    smallest date first and the largest age first; None for no (or a contradictory) cue."""
    oldest, newest = bool(_OLDEST.search(question)), bool(_NEWEST.search(question))
    if oldest == newest:
        return None
    return newest if kind == "time" else oldest


def sort_key_property(statement: Statement, key: Item, schema: GraphSchema) -> PropertyInfo | None:
    """The schema property an ORDER BY key sorts on: `v.prop`, or a returned `v.prop AS x`."""
    words = statement.words(key)
    if len(words) == 1:
        returned = statement.final_return()
        source = (
            next((item for item in returned[1] if item.alias == words[0]), None)
            if returned
            else None
        )
        if source is None:
            return None
        words = statement.words(source)
    if len(words) != 3 or words[1] != ".":
        return None
    names = referenced_names(statement.text)
    label = schema.label(names.variables.get(words[0], ""))
    if label is None:
        return None
    return next((p for p in label.properties if p.name == words[2]), None)


def read_property(
    schema: GraphSchema, names: ReferencedNames, var: str, prop: str
) -> PropertyInfo | None:
    """The schema property `var.prop` reads: of the node's label, or of the relationship's
    type; None when the schema has no such property."""
    if var in names.variables:
        label = schema.label(names.variables[var])
        props: tuple[PropertyInfo, ...] = label.properties if label else ()
    else:
        rel_type = names.rel_variables.get(var)
        props = tuple(p for r in schema.relationships if r.type == rel_type for p in r.properties)
    return next((p for p in props if p.name == prop), None)


def sort_direction_fix(cypher: str, question: str, schema: GraphSchema) -> tuple[str, str] | None:
    """The statement with its sort turned the way the question's superlative needs, and what
    changed; None when it already goes that way or the key is not a time or age property.

    Only the first key that is not a null check is looked at ("ORDER BY x IS NULL, x DESC").
    """
    statement = Statement(cypher)
    keys = [
        k for k in statement.order_keys() if "IS" not in (w.upper() for w in statement.words(k))
    ]
    if not keys or statement.has_union:
        return None
    key = keys[0]
    prop = sort_key_property(statement, key, schema)
    kind = property_kind(prop) if prop is not None else None
    if prop is None or kind is None:
        return None
    wanted = wants_descending(question, kind)
    if wanted is None or wanted == key.descending:
        return None
    word = "DESC" if wanted else "ASC"
    end = statement.tokens[key.end - 1].end
    if key.direction is not None:
        token = statement.tokens[key.direction]
        edit = (token.position, token.end, word)
    else:
        edit = (end, end, f" {word}")
    detail = f"sorted {prop.name} {'descending' if wanted else 'ascending'} for the superlative"
    return statement.edited([edit]), detail


_AGE_WORDS = re.compile(r"\b(?:oldest|youngest)\b", re.IGNORECASE)
_BIRTH_WORDS = frozenset(stem(w) for w in ("birth", "born", "dob", "birthday"))


def birth_property(label: LabelInfo) -> PropertyInfo | None:
    """The label's birth date or year (`birthDate`, `born`, `date_of_birth`), if it has one."""
    return next((p for p in label.properties if name_words(p.name) & _BIRTH_WORDS), None)


def age_property_fix(cypher: str, question: str, schema: GraphSchema) -> tuple[str, str] | None:
    """ "Who is our oldest employee?" sorted on `e.hireDate` where employees have a
    `birthDate`: oldest and youngest are about age, so the sort (and the column it returns)
    reads the birth property instead. Only for a time property that is not a birth one;
    earliest, newest or latest keep the model's date.
    Where the sorted node has no birth property and one other node of the statement has,
    the age is that node's: "Who is the youngest director?" sorted on the films' `m.released`
    (a Movies trial) and "Who is the youngest coach?" on a tournament's year (a World Cup
    trial) read the person's birth. Not where the words after the superlative name the
    sorted node's label ("the oldest movie Tom Hanks acted in" is a film's age)."""
    if not _AGE_WORDS.search(question):
        return None
    statement = Statement(cypher)
    keys = [
        k for k in statement.order_keys() if "IS" not in (w.upper() for w in statement.words(k))
    ]
    if not keys or statement.has_union:
        return None
    prop = sort_key_property(statement, keys[0], schema)
    if prop is None or property_kind(prop) != "time" or name_words(prop.name) & _BIRTH_WORDS:
        return None
    names = referenced_names(cypher)
    owners = {v for v, p in names.accesses if p == prop.name}
    labels = {schema.label(names.variables.get(v, "")) for v in owners}
    if len(labels) != 1 or (label := labels.pop()) is None:
        return None
    aged: str | None = None  # the variable the age moves to, when not the sorted one
    birth = birth_property(label)
    if birth is None:
        if _age_of_label(question, label, schema):
            return None
        others = {
            v: found
            for v, name in names.variables.items()
            if v not in owners
            and (other := schema.label(name)) is not None
            and (found := birth_property(other)) is not None
        }
        if len(others) != 1:
            return None
        aged, birth = others.popitem()
    tokens = statement.tokens
    edits = [
        (
            tokens[i].position if aged else tokens[i + 2].position,
            tokens[i + 2].end,
            f"{aged}.{birth.name}" if aged else birth.name,
        )
        for i in range(len(tokens) - 2)
        if tokens[i].name in owners
        and tokens[i + 1].is_punct(".")
        and tokens[i + 2].name == prop.name
    ]
    edits += [
        (tok.position, tok.end, birth.name)
        for i, tok in enumerate(tokens)
        if tok.name == prop.name and tok.kind == "identifier" and not tokens[i - 1].is_punct(".")
    ]  # the alias the statement gave it (`AS hireDate`, `ORDER BY hireDate`)
    moved = f"{aged}.{birth.name}" if aged else birth.name
    return statement.edited(edits), f"{prop.name} → {moved} (oldest/youngest: by age)"


def _age_of_label(question: str, label: LabelInfo, schema: GraphSchema) -> bool:
    """Whether the words right after "oldest"/"youngest" name `label` ("the oldest movie")."""
    found = _AGE_WORDS.search(question)
    if found is None:
        return False
    said = label_said(re.findall(r"[A-Za-z][\w-]*", question[found.end() :])[:3], schema)
    return said is not None and said.label.name == label.name


_WHICH = re.compile(
    r"^\s*(?:in\s+)?(which|what)\s+([A-Za-z][\w-]*(?:\s+[A-Za-z][\w-]*){0,2})", re.I
)
_MOST = re.compile(
    r"\b(?:the\s+)?(?:most|fewest|least|highest|lowest|largest|smallest|biggest|greatest|"
    r"longest|shortest|oldest|newest|youngest|earliest|latest|cheapest|best|worst|top|"
    rf"{SUPERLATIVE_EST})\b",
    re.IGNORECASE,
)
_ORDER_WORDS = re.compile(
    r"\b(?:in\s+(?:\w+\s+)?order|order(?:ed)?\s+by|sort(?:ed)?|rank(?:ed|ing)?|"
    r"alphabetical(?:ly)?|chronological(?:ly)?|first|last)\b",
    re.IGNORECASE,
)


def asks_order(question: str) -> bool:
    """Whether the question asks for an order: a superlative ("the most", "the tallest"),
    "in order of", "sorted", "ranked", "first", "last"."""
    return bool(_MOST.search(question) or _ORDER_WORDS.search(question))


_COUNTED = re.compile(
    r"\b(?:top|first)\s+\d+|\b(?:two|three|four|five|six|seven|eight|nine|ten|\d+)\b", re.IGNORECASE
)


def asked_label(question: str, schema: GraphSchema) -> tuple[LabelInfo, bool] | None:
    """The label a "which/what <label>…" question asks for, and whether it is named in the
    singular ("Which data center" → DataCenter, True)."""
    found = _WHICH.match(question)
    said = label_said(found.group(2).split(), schema) if found else None
    return (said.label, said.singular) if said else None


def name_properties(label: LabelInfo) -> list[str]:
    """The properties a node of `label` is called by: its identifying property, or first and
    last name together where it has both."""
    strings = {p.name.lower(): p.name for p in label.properties if "STRING" in p.types}
    first = next(
        (strings[n] for n in ("firstname", "first_name", "givenname") if n in strings), None
    )
    last = next(
        (strings[n] for n in ("lastname", "last_name", "surname", "familyname") if n in strings),
        None,
    )
    if last and not first and "name" in strings:
        # A surname beside a plain name: the name is the given one (a trial on the POLE graph:
        # people and officers by name "Todd" and surname "Hamilton"; "the officer who
        # investigated the most crimes" counted every officer called Hillard as one).
        first = strings["name"]
    if first and last:
        return [first, last]
    # No name by its name: a key the sample found on every node, never twice (a vehicle's
    # `reg`; a POLE trial: "What is the oldest vehicle?" answered with a year alone).
    display = display_property(label) or next((p.name for p in label.properties if p.unique), None)
    return [display] if display else []


def has_name(label: LabelInfo) -> bool:
    """Whether what `label`'s nodes are called by is a name (`name`, `productName`, first and
    last name), not a title, key or code."""
    called = name_properties(label)
    return bool(called) and all(prop.lower().endswith("name") for prop in called)


def who_unreturned_fix(cypher: str, question: str, schema: GraphSchema) -> tuple[str, str] | None:
    """For a "who" question whose statement returns only other nodes' properties (no
    aggregate): the name of the one matched node that has a name and is neither returned nor
    filtered, added in front. "Who has the largest unsecured loan?" written `MATCH
    (ah:AccountHolder)-[:HAS_UNSECUREDLOAN]->(ul:UnsecuredLoan) RETURN ul.AccountNumber,
    ul.LoanAmount ORDER BY ul.LoanAmount DESC LIMIT 1` (a trial on a bank-fraud graph): the
    loan came back, not its holder. None when a node with a name is returned already, a WITH
    or UNION may hide the node, or no node, or more than one, fits."""
    if not ASKS_WHO.match(question):
        return None
    statement = Statement(cypher)
    returned = statement.sole_return()
    if returned is None:
        return None
    _at, items = returned
    if not items or any(statement.aggregates(item) for item in items):
        return None
    names = referenced_names(cypher)
    used = {t.name for item in items for t in statement.tokens[item.first : item.end] if t.is_name}
    if any((info := schema.label(names.variables.get(v, ""))) and has_name(info) for v in used):
        return None  # a node with a name is returned already ("Who is on Erin's team?")
    filtered = {var for var, _prop in names.accesses if var not in used}
    candidates = [
        var
        for var, label in names.variables.items()
        if var not in used
        and var not in filtered
        and (info := schema.label(label)) is not None
        and has_name(info)
        and not node_has_more(statement.tokens, var)
    ]
    if len(candidates) != 1:
        return None
    var = candidates[0]
    label = schema.label(names.variables[var])
    assert label is not None
    props = name_properties(label)
    if {p.casefold() for p in props} & {(item.alias or "").casefold() for item in items}:
        return None  # a column of that name already: the two would clash
    added = ", ".join(f"{var}.{p} AS {p}" for p in props)
    first = statement.tokens[items[0].first]
    fixed = statement.edited([(first.position, first.position, f"{added}, ")])
    return fixed, f"returned {added}: the {label.name} the question asks who is"


_NAME_WORDS = frozenset({"name", "surname"})


def _read(
    statement: Statement, item: Item, names: ReferencedNames, schema: GraphSchema
) -> tuple[str, str, LabelInfo] | None:
    """An item that is `v.prop` on a labelled node: (v, prop, its label); else None."""
    words = statement.words(item)
    if len(words) != 3 or words[1] != ".":
        return None
    label = schema.label(names.variables.get(words[0], ""))
    return (words[0], words[2], label) if label is not None else None


def name_property_fix(cypher: str, schema: GraphSchema) -> tuple[str, str] | None:
    """The statement returning what its nodes are called by instead of name properties their
    label lacks, and what changed; None when nothing like that is returned.

    `RETURN s.firstName AS firstName, s.lastName AS lastName` for "Who supplies Tofu?" where a
    Supplier is called by its `companyName`: `RETURN s.companyName AS companyName` (the sort on
    the old columns follows). Only for properties whose name says name (`firstName`, `name`,
    `surname`), returned in the final RETURN and read nowhere before it (a filter on a name
    the label lacks is the model's to change), on a label that has a name property."""
    statement = Statement(cypher)
    returned = statement.final_return()
    if returned is None or statement.has_union:
        return None
    at, items = returned
    names = referenced_names(cypher)
    tokens = statement.tokens

    def wrong(item: Item) -> tuple[str, str] | None:
        read = _read(statement, item, names, schema)
        if read is None or not read[2].properties:
            return None
        var, prop, label = read
        if any(p.name == prop for p in label.properties) or not name_properties(label):
            return None
        return (var, prop) if {w.lower() for w in name_words(prop)} & _NAME_WORDS else None

    found = {i: w for i, item in enumerate(items) if (w := wrong(item)) is not None}
    read_before = {
        (tokens[k].name, tokens[k + 2].name)
        for k in range(at - 2)
        if tokens[k].is_name and tokens[k + 1].is_punct(".") and tokens[k + 2].is_name
    }
    if not found or set(found.values()) & read_before:
        return None
    texts, done, renamed = [], set(), {}
    for i, item in enumerate(items):
        end = item.end + 2 if item.alias else item.end
        if i not in found:
            texts.append(statement.source(item.first, end))
            continue
        var, prop = found[i]
        label = schema.label(names.variables[var])
        props = name_properties(label) if label is not None else []
        renamed[item.alias or f"{var}.{prop}"] = props[0]
        if var not in done:
            done.add(var)
            texts.append(", ".join(f"{var}.{p} AS {p}" for p in props))
    last = items[-1]
    span = (
        tokens[items[0].first].position,
        tokens[(last.end + 2 if last.alias else last.end) - 1].end,
    )
    edits = [(span[0], span[1], ", ".join(texts))]
    for k in range(statement.clause_end(at), len(tokens)):
        old = tokens[k].name
        if tokens[k].is_name and old in renamed and not tokens[k - 1].is_punct("."):
            edits.append((tokens[k].position, tokens[k].end, renamed[old]))
        elif (
            k + 2 < len(tokens)
            and tokens[k + 1].is_punct(".")
            and f"{old}.{tokens[k + 2].name}" in renamed
        ):
            edits.append(
                (tokens[k].position, tokens[k + 2].end, renamed[f"{old}.{tokens[k + 2].name}"])
            )
    gone = ", ".join(f"{v}.{p}" for v, p in dict.fromkeys(found.values()))
    return statement.edited(
        edits
    ), f"{gone} → what the node is called by ({', '.join(dict.fromkeys(renamed.values()))})"


def name_parts_fix(cypher: str, schema: GraphSchema) -> tuple[str, str] | None:
    """The statement returning both parts of a name where it returns one: `RETURN e.lastName`
    for "Who reports directly to Andrew Fuller?" on a label with first and last names gets
    `e.firstName AS firstName` before it (the last name after a first name). None when no
    returned property is one part of such a pair, or the other part is returned too."""
    statement = Statement(cypher)
    returned = statement.final_return()
    if returned is None or statement.has_union:
        return None
    names = referenced_names(cypher)
    written = {tuple(statement.words(item)) for item in returned[1]}
    tokens = statement.tokens
    edits, added = [], []
    for item in returned[1]:
        read = _read(statement, item, names, schema)
        parts = name_properties(read[2]) if read is not None else []
        if read is None or len(parts) != 2 or read[1] not in parts:
            continue
        var, prop, _label = read
        other = parts[1 - parts.index(prop)]
        if (var, ".", other) in written:
            continue
        written.add((var, ".", other))
        extra = f"{var}.{other} AS {other}"
        if other == parts[0]:
            at = tokens[item.first].position
            edits.append((at, at, f"{extra}, "))
        else:
            at = tokens[item.end + 1].end if item.alias else tokens[item.end - 1].end
            edits.append((at, at, f", {extra}"))
        added.append(f"{var}.{other}")
    if not edits:
        return None
    return statement.edited(edits), f"returned {', '.join(added)} too (a name in two parts)"


_EACH = re.compile(rf"\b{EACH_WORDS}\s+([A-Za-z][\w-]*(?:\s+[A-Za-z][\w-]*){{0,2}})", re.I)


def each_label(question: str, schema: GraphSchema) -> LabelInfo | None:
    """The label a question asks a measure of "each", "every" or "per" node of: "How many
    systems does each truck have?" → Truck; None when the words after it name no label."""
    for found in _EACH.finditer(question):
        said_here = label_said(found.group(1).split(), schema)
        if said_here is not None:
            return said_here.label
    return None


def identify_fix(cypher: str, question: str, schema: GraphSchema) -> tuple[str, str] | None:
    """For a "which <label>" (or "who") question whose statement returns only measures (an
    aggregate, with nothing naming the asked node): the node's identifying property added to
    the RETURN, which also groups the measure per node. So too for a measure of "each
    <label>" ("How many systems does each truck have?" written `RETURN count(DISTINCT s)`, a
    trial on a supply-chain graph, gave one total). None when the statement names it
    already, has a WITH or UNION (the node may be out of scope), or the node is not matched.
    """
    statement = Statement(cypher)
    returned = statement.sole_return()
    if returned is None:
        return None
    _at, items = returned
    if not items or not all(statement.aggregates(item) for item in items):
        return None
    names = referenced_names(cypher)
    # The asked node is not the one counted: `count(b)` measures b, so b is not the answer.
    used = {t.text for item in items for t in statement.tokens[item.first : item.end]}
    free = [v for v in names.variables if v not in used]
    asked = asked_label(question, schema)
    if asked is not None:
        candidates = [v for v in free if names.variables[v] == asked[0].name]
    elif ASKS_WHO.match(question):
        candidates = free
    elif (each := each_label(question, schema)) is not None:
        candidates = [v for v in free if names.variables[v] == each.name]
    else:
        return None
    if len(candidates) != 1:
        return None
    var = candidates[0]
    label = schema.label(names.variables[var])
    props = name_properties(label) if label is not None else []
    if not props:
        return None
    first = statement.tokens[items[0].first]
    added = ", ".join(f"{var}.{p} AS {p}" for p in props)
    fixed = statement.edited([(first.position, first.position, f"{added}, ")])
    return fixed, f"returned {added} with the measure"


def named_by_fix(cypher: str, question: str, schema: GraphSchema) -> tuple[str, str] | None:
    """For a "which/what <label>" question whose statement returns only other properties of
    the asked node (none it is called by, none the question says), where the node has a name
    (a property whose name says so): that name added in front. "Which posologies does
    Famotidine have?" written `RETURN p.code AS code` (a trial on a drug classification;
    posologies have a code and a name) answered 'A01486'. None when the statement returns
    anything else, aggregates, or has a UNION."""
    asked = asked_label(question, schema)
    statement = Statement(cypher)
    returned = statement.final_return()
    if asked is None or returned is None or statement.has_union:
        return None
    _at, items = returned
    names = referenced_names(cypher)
    reads = [_read(statement, item, names, schema) for item in items]
    if not reads or any(r is None or r[2].name != asked[0].name for r in reads):
        return None
    variables = {r[0] for r in reads if r is not None}
    props = [r[1] for r in reads if r is not None]
    called = name_properties(asked[0])
    said_words = question_words(question)
    if len(variables) != 1 or not has_name(asked[0]) or set(called) & set(props):
        return None  # an incident's `key` names it as well as its `title`: no name to add
    if any(name_words(prop) & said_words for prop in props):
        return None  # "Which posologies have the code A01486?" asks for the code
    var = variables.pop()
    added = ", ".join(f"{var}.{p} AS {p}" for p in called)
    first = statement.tokens[items[0].first]
    fixed = statement.edited([(first.position, first.position, f"{added}, ")])
    return fixed, f"returned {added}: what the asked {asked[0].name} is called by"


_WHAT_IS = re.compile(r"^\W*(?:what|which)\s+(?:is|was|are|were)\b", re.IGNORECASE)


def superlative_label(question: str, schema: GraphSchema) -> LabelInfo | None:
    """The label the question's superlative is about: "the earliest movie Tom Hanks acted in"
    → Movie, "the most recent order" → Order; None when the words after it name no label."""
    found = _MOST.search(question)
    if found is None:
        return None
    words = re.findall(r"[A-Za-z][\w-]*", question[found.end() :])
    said = label_said(words[:3], schema) or label_said(words[1:4], schema)  # "most recent …"
    return said.label if said else _by_last_word(words[:4], schema)


_PHRASE_END_TEXT = (
    "a an the of in on at by for from to with that which who whose than is are was were"
)
_PHRASE_ENDS = frozenset(_PHRASE_END_TEXT.split())
"""Words that end the noun phrase after a superlative."""

_KIND_WORDS = frozenset({"type", "kind", "sort"})
"""Last words of a label's name that say it is a kind of thing (`EC2InstanceType`)."""


def _by_last_word(words: Sequence[str], schema: GraphSchema) -> LabelInfo | None:
    """The label the first of `words` that ends a label's name (before a word like "type")
    names, where it ends only one: "the most expensive instance" → EC2InstanceType (a trial
    on an AWS infrastructure graph, whose users say "instance", not "EC2 instance type")."""

    def head(label: LabelInfo) -> str:
        parts = [p.lower() for p in split_name(label.name)]
        while len(parts) > 1 and parts[-1] in _KIND_WORDS:
            parts.pop()
        return stem(parts[-1])

    heads = [(head(label), label) for label in schema.labels]
    for word in words:
        if word.lower() in _PHRASE_ENDS:
            return None  # "the highest rating a critic gave": the rating is asked, not the critic
        found = [label for said, label in heads if said == stem(word.lower())]
        if found:
            return found[0] if len(found) == 1 else None
    return None


def thing_of_measure_fix(cypher: str, question: str, schema: GraphSchema) -> tuple[str, str] | None:
    """ "What is the earliest movie Tom Hanks acted in?" answered by `RETURN m.released AS
    earliest_movie ORDER BY m.released ASC LIMIT 1` (a Movies trial): the year came back, not
    the film. Where a "what is the <superlative> <label>" question's RETURN reads only
    properties of one node of that label, none of them a string (what it is called by, or a
    key), the properties it is called by are added. So too for "which <label> … <superlative>"
    (a FinCEN trial: "Which filing has the largest amount?" and "Which filing began most
    recently?" came back as an amount and a date)."""
    if _WHAT_IS.match(question):
        label = superlative_label(question, schema)
    else:
        asked = asked_label(question, schema) if _MOST.search(question) else None
        which = _WHICH.match(question) if _MOST.search(question) else None
        label = asked[0] if asked else which and _by_last_word(which.group(2).split(), schema)
    statement = Statement(cypher)
    returned = statement.final_return()
    if label is None or returned is None or statement.has_union:
        return None
    _at, items = returned
    read = [statement.words(item) for item in items if not statement.aggregates(item)]
    if not items or len(read) != len(items) or any(len(w) != 3 or w[1] != "." for w in read):
        return None
    owners = {w[0] for w in read}
    props = name_properties(label)
    var = owners.pop() if len(owners) == 1 else None
    bound = referenced_names(cypher).variables
    of_label = [v for v, name in bound.items() if name == label.name]
    if var is not None and bound.get(var) != label.name and len(of_label) == 1:
        # "What is the most expensive instance in N. California?" read the price of a Price
        # node (a trial on an AWS infrastructure graph): the one instance matched is named.
        var = of_label[0]
    if var is None or bound.get(var) != label.name or not props:
        return None
    strings = {
        p.name
        for p in label.properties
        if "STRING" in p.types and not p.numbers_as_text and not p.date_format and not p.iso_dates
    }
    if any(w[2] in props or w[2] in strings for w in read):
        return None  # named already, by its name or another string (an incident's key)
    first = statement.tokens[items[0].first]
    added = ", ".join(f"{var}.{p} AS {p}" for p in props)
    return statement.edited([(first.position, first.position, f"{added}, ")]), f"returned {added}"


def sort_key_returned_fix(
    cypher: str, question: str, schema: GraphSchema
) -> tuple[str, str] | None:
    """For a question that asks for a ranking ("the highest", "sorted by"), the statement
    returning the measure it sorts by beside what it returns, and what was added; None when
    it returns it already (or the node whole), aggregates, or sorts by text.

    "Which German airport is closest to sea level?" written `RETURN a.descr AS descr ORDER BY
    a.altitude LIMIT 1` (a dev item) named the airport without the height that put it first.
    A first sort key `v.prop` on a number or a date (or one stored as text) of a node or a
    relationship is returned too, `v.prop AS prop`. A filter ("higher than 2,500 feet") is no
    ranking: whether its value is wanted beside the names is the question's to say."""
    if not asks_order(question):
        return None
    statement = Statement(cypher)
    returned = statement.final_return()
    keys = statement.order_keys()
    order = statement.last("ORDER")
    if returned is None or not keys or statement.has_union or order is None or order < returned[0]:
        return None
    _at, items = returned
    words = statement.words(keys[0])
    if (
        not items
        or len(words) != 3
        or words[1] != "."
        or any(statement.aggregates(i) for i in items)
    ):
        return None
    names = referenced_names(cypher)
    prop = read_property(schema, names, words[0], words[2])
    if prop is None or not (
        set(prop.types) & (NUMBER_TYPES | _TEMPORAL_TYPES)
        or prop.numbers_as_text
        or prop.date_format
        or prop.iso_dates
    ):
        return None
    var = words[0]
    written = [statement.words(i) for i in items]
    if any(w[:3] == words or w == [var] for w in written):
        return None
    aliases = {i.alias for i in items}
    alias = (
        prop.name
        if prop.name not in aliases and prop.name not in names.variables
        else f"{var}_{prop.name}"
    )
    end = statement.tokens[order - 1].end  # the last item's alias, if it has one
    added = f"{var}.{prop.name} AS {alias}"
    return statement.edited(
        [(end, end, f", {added}")]
    ), f"returned {added}, the measure it sorts by"


def unknown_sort_fix(cypher: str, question: str, schema: GraphSchema) -> tuple[str, str] | None:
    """The statement without the final sort keys that read a property the node's label (or
    the relationship's type) lacks, for a question that asks for no order; None when there
    is none, or the question asks for an order or says the property.

    "Which books take place in London?" written `… RETURN b.title ORDER BY b2.year DESC` (a
    trial on a graph of books, where nothing but a Time node has a year; four questions of
    twenty, each sent back unchanged after the schema check's note): a sort nobody asked for,
    on a value no such node holds, orders nothing. The keys go (the whole ORDER BY when none
    is left); the node they read stays for unasked-hop to judge."""
    if asks_order(question):
        return None
    statement = Statement(cypher)
    returned, order = statement.final_return(), statement.last("ORDER")
    if returned is None or order is None or order < returned[0] or statement.has_union:
        return None
    names = referenced_names(cypher)
    asked = {stem(w) for w in re.findall(r"[A-Za-z]+", question)}
    keys, dropped = statement.order_keys(), []
    for key in keys:
        words = statement.words(key)
        if len(words) != 3 or words[1] != ".":
            continue
        var, prop = words[0], words[2]
        if var in names.variables:
            known = schema.label(names.variables[var]) is not None
        else:
            known = names.rel_variables.get(var) in {r.type for r in schema.relationships}
        if not known or read_property(schema, names, var, prop) is not None:
            continue
        if name_words(prop) & asked:
            continue
        dropped.append(key)
    if not dropped:
        return None
    shown = ", ".join(f"{statement.words(k)[0]}.{statement.words(k)[2]}" for k in dropped)
    detail = (
        f"dropped the sort on {shown}: the question asks for no order, and no such value is stored"
    )
    if len(dropped) == len(keys):
        fixed = without_order(cypher)
        return (fixed, detail) if fixed is not None else None
    kept = [
        statement.source(k.first, k.end if k.direction is None else k.direction + 1)
        for k in keys
        if k not in dropped
    ]
    start = statement.tokens[order].position
    end = statement.tokens[statement.clause_end(order) - 1].end
    return statement.edited([(start, end, "ORDER BY " + ", ".join(kept))]), detail


_WHO_SINGULAR = re.compile(r"^\W*who\s+(?!are\b|were\b|have\b)\w+", re.IGNORECASE)
"""A "who" question with a verb in the singular: "Who watched the most horror movies?",
"Who is our oldest employee?"; not "Who are the top sellers?"."""


def one_row_fix(cypher: str, question: str, schema: GraphSchema) -> tuple[str, str] | None:
    """ "Which <label> has the most …" in the singular, or "Who <verb> the most …" (a trial on a
    movie graph: "Who watched the most horror movies?" listed a hundred users in order),
    sorted, with a LIMIT above 1 (or none): LIMIT 1, ties-shown reading the rows tied with it.
    Not when the question asks for a number of them ("the three largest")."""
    asked = asked_label(question, schema)
    singular = asked[1] if asked is not None else bool(_WHO_SINGULAR.match(question))
    if not singular or not _MOST.search(question) or _COUNTED.search(question):
        return None
    return _limit_one(cypher, 2, "one is asked for")


def _limit_one(cypher: str, above: int, why: str) -> tuple[str, str] | None:
    """The sorted statement with `LIMIT 1` in place of a final LIMIT of at least `above`, or
    added where the final sort has none; None when it is not sorted, or its LIMIT is smaller."""
    statement = Statement(cypher)
    if statement.has_union or not statement.order_keys():
        return None
    limit = statement.last("LIMIT")
    order = statement.last("ORDER")
    if order is None:
        return None
    if limit is None or limit < order:  # a LIMIT before the final sort is not the answer's
        end = statement.tokens[-1].end
        return statement.edited([(end, end, "\nLIMIT 1")]), f"LIMIT 1 ({why})"
    written = statement.tokens[limit + 1 : statement.clause_end(limit)]
    if len(written) != 1 or not written[0].text.isdigit() or int(written[0].text) < above:
        return None
    edit = (written[0].position, written[0].end, "1")
    return statement.edited([edit]), f"LIMIT {written[0].text} → 1 ({why})"


ALL_ROWS_LIMIT = 100
"""A LIMIT this large or larger lists every row rather than the top ones."""


def top_rows_fix(cypher: str, question: str, schema: GraphSchema) -> tuple[str, str] | None:
    """ "Which racks hold the most machines?" (a plural, no number asked) sorted with no LIMIT
    or one of at least 100: every rack listed in order, not the ones that hold the most.
    LIMIT 1, so that ties-shown gives the rows tied for first. A LIMIT below 100 is a top
    list the model chose and stays."""
    asked = asked_label(question, schema)
    if asked is None or asked[1] or not _MOST.search(question) or _COUNTED.search(question):
        return None
    return _limit_one(cypher, ALL_ROWS_LIMIT, "the most is asked for")


# Words that ask for one row, or a number of them, without a superlative.
_ONE_ASKED = re.compile(
    r"\b(?:first|last|one|single|only|any|next|previous|example|sample|top|random)\b"
    r"|\b(?:name|give|show|pick|find|tell)\s+(?:me\s+|us\s+)?an?\b|\d",
    re.IGNORECASE,
)


def unasked_limit_fix(cypher: str, question: str) -> tuple[str, str] | None:
    """ "Who directed The Matrix?" written `… ORDER BY p.born DESC LIMIT 1` (a Movies trial):
    the answer named one of its two directors. A final `LIMIT 1` of a "who" or "which"
    question that asks for no superlative, no number and no one thing ("first", "only",
    "name a …") is dropped, so that every row the question asks for comes back. Not for "how
    much", "what is" or "when": one value, which a LIMIT 1 may read once of many rows."""
    if not ASKS_WHO_OR_WHICH.match(question):
        return None
    if _MOST.search(question) or _ONE_ASKED.search(question) or _COUNTED.search(question):
        return None
    statement = Statement(cypher)
    returned = statement.final_return()
    limit = statement.last("LIMIT")
    if statement.has_union or returned is None or limit is None or limit < returned[0]:
        return None
    tokens = statement.tokens
    if statement.clause_end(limit) != len(tokens) or limit + 2 != len(tokens):
        return None
    if tokens[limit + 1].text != "1":
        return None
    dropped = cypher[: tokens[limit - 1].end] + cypher[tokens[limit + 1].end :]
    return dropped, "LIMIT 1 dropped (the question asks for no one row)"


_MOST_OF = re.compile(
    r"\b(?:most|fewest|least|highest\s+number\s+of|lowest\s+number\s+of)\s+([A-Za-z][\w-]*)",
    re.IGNORECASE,
)
_LONE_NODE_CLAUSES = frozenset({"MATCH", "WHERE", "RETURN", "ORDER", "SKIP", "LIMIT"})


def _names_a_thing(word: str, schema: GraphSchema) -> bool:
    """Whether a (stemmed) word is in a label's or a relationship type's name: "the most books"
    may then be a count of them, not a number property."""
    names = [lb.name for lb in schema.labels] + [rel.type for rel in schema.relationships]
    return any(word in name_words(name) for name in names)


def _count_call(statement: Statement, item: Item) -> bool:
    """Whether the item is one `count(…)` call and nothing else."""
    tokens = statement.tokens[item.first : item.end]
    return (
        len(tokens) >= 3
        and tokens[0].text.lower() == "count"
        and tokens[1].is_punct("(")
        and tokens[-1].is_punct(")")
        and is_aggregate_call(statement.tokens, item.first)
        and statement.depths[item.end - 1] == statement.depths[item.first]
    )


def counted_property_fix(cypher: str, question: str, schema: GraphSchema) -> tuple[str, str] | None:
    """ "Which machine type has the most CPUs?" answered by `MATCH (t:Type) RETURN t.name AS
    name, count(*) AS count ORDER BY count DESC`: counting the rows of one lone node gives 1
    per node, while the type holds its CPUs in a number, `t.cpu`. The count becomes the sum of
    that property (the property itself for one node per row), named after it.

    Only where the question's "most <word>" (fewest, least, highest number of) names exactly
    one number property of the one node the statement matches, with no relationship in the
    statement, and the word names no label or relationship type (then counting them may be
    right: "the most books"). Where the word is in several properties' names, the one whose
    every word the question says ("units in stock": `unitsInStock`, not `unitsOnOrder`)."""
    found = _MOST_OF.search(question)
    if found is None:
        return None
    word = stem(found.group(1))
    statement = Statement(cypher)
    if any(statement.keyword_at(c) not in _LONE_NODE_CLAUSES for c in statement.clauses):
        return None
    names = referenced_names(cypher)
    if names.rel_types or names.patterns or len(names.variables) != 1:
        return None
    var, label_name = next(iter(names.variables.items()))
    label = schema.label(label_name)
    if label is None or _names_a_thing(word, schema):
        return None
    matching = [
        p for p in label.properties if set(p.types) & NUMBER_TYPES and word in name_words(p.name)
    ]
    if len(matching) > 1:  # "the most units in stock": unitsInStock, not unitsOnOrder
        said = {stem(w) for w in re.findall(r"[A-Za-z]+", question)}
        matching = [p for p in matching if name_words(p.name) <= said]
    returned = statement.final_return()
    if len(matching) != 1 or returned is None:
        return None
    prop = matching[0].name
    counts = [item for item in returned[1] if _count_call(statement, item)]
    if len(counts) != 1:
        return None
    item = counts[0]
    if any(other.alias == prop for other in returned[1] if other is not item):
        return None
    tokens = statement.tokens
    start, stop = tokens[item.first].position, tokens[item.end - 1].end
    written = statement.source(item.first, item.end)
    edits = [(start, stop, f"sum({var}.{prop})" + ("" if item.alias else f" AS {prop}"))]
    if item.alias:  # `AS count` and every later read of it (the sort) take the property's name
        edits += [
            (tok.position, tok.end, prop)
            for i, tok in enumerate(tokens)
            if i > item.end and tok.name == item.alias and not tokens[i - 1].is_punct(".")
        ]
    else:  # `ORDER BY count(*) DESC` sorts on the new column
        edits += [
            (tokens[key.first].position, tokens[key.end - 1].end, prop)
            for key in statement.order_keys()
            if statement.source(key.first, key.end) == written
        ]
    return statement.edited(edits), f'{written} → sum({var}.{prop}) ("most {found.group(1)}")'


_HOW_MANY = re.compile(
    r"\b(?:how\s+many|total\s+(?:number\s+of\s+)?|number\s+of)\s+([A-Za-z][\w-]*)", re.IGNORECASE
)


def summed_property_fix(cypher: str, question: str, schema: GraphSchema) -> tuple[str, str] | None:
    """ "How many runways do the airports in Spain have in total?" answered by
    `count(a.runways)`: that counts the airports that have a number of runways, not the
    runways. Where "how many <word>" (or "total <word>") names a number property `v.p` that the
    statement counts (`count(v.p)`, not DISTINCT), and the word names no label or relationship
    type, the count becomes `sum(v.p)`."""
    found = _HOW_MANY.search(question)
    if found is None:
        return None
    word = stem(found.group(1))
    if _names_a_thing(word, schema):
        return None
    statement = Statement(cypher)
    returned = statement.final_return()
    if returned is None or statement.has_union:
        return None
    names = referenced_names(cypher)
    tokens = statement.tokens
    for item in returned[1]:
        words = statement.words(item)
        if [w.lower() for w in words[:2]] != ["count", "("] or len(words) != 6:
            continue
        var, dot, prop = words[2:5]
        label = schema.label(names.variables.get(var, ""))
        info = next((p for p in label.properties if p.name == prop), None) if label else None
        if (
            dot != "."
            or info is None
            or not set(info.types) & NUMBER_TYPES
            or word not in name_words(prop)
        ):
            continue
        count = tokens[item.first]
        fixed = statement.edited([(count.position, count.end, "sum")])
        return fixed, f'count({var}.{prop}) → sum({var}.{prop}) ("{found.group(0).strip()}")'
    return None


def return_fix(cypher: str, schema: GraphSchema, question: str = "") -> tuple[str, str] | None:
    """`MATCH (p:Project) WHERE p.due_date IS NOT NULL ORDER BY p.due_date LIMIT 1`: the
    model stopped before the RETURN, and the engine rejects the statement. The node the sort
    reads is returned by what it is called (first and last name where it has both) with the
    sort key, `RETURN p.name AS name, p.due_date AS due_date ORDER BY due_date LIMIT 1`. Only
    for a statement with no RETURN, no UNION or CALL, whose first sort key is `v.prop` on a
    labelled node, or a function of it, kept as the sort (`ORDER BY size(e.name)`, "Which
    event has the longest title?", a conference-schedule trial). A property of that node the
    question says comes first ("What make is the newest vehicle?", a POLE trial, had been
    answered by its registration and year)."""
    statement = Statement(cypher)
    order = statement.last("ORDER")
    if order is None or any(
        statement.keyword_at(c) in ("RETURN", "UNION", "CALL", "WITH") for c in statement.clauses
    ):
        return None
    keys = statement.order_keys()
    words = statement.words(keys[0]) if keys else []
    measured = len(words) == 6 and words[1] == "(" and words[3] == "." and words[5] == ")"
    if measured:
        words = words[2:5]  # `size(e.name)`: the property read, the sort kept as written
    if len(words) != 3 or words[1] != ".":
        return None
    var, prop = words[0], words[2]
    label = schema.label(referenced_names(cypher).variables.get(var, ""))
    if label is None:
        return None
    asked = [p.name for p in label.properties if said(p.name, question)]
    shown = list(dict.fromkeys([*asked, *name_properties(label), prop]))
    shown = [p for p in shown if p != prop] + [prop]
    items = ", ".join(f"{var}.{p} AS {p}" for p in shown)
    first = statement.tokens[keys[0].first]
    edits = [
        (statement.tokens[order].position, statement.tokens[order].position, f"RETURN {items} ")
    ]
    if not measured:
        edits.append((first.position, statement.tokens[keys[0].end - 1].end, prop))
    return statement.edited(edits), f"returned {', '.join(shown)} (the statement had no RETURN)"


TIE_ROWS = 10
"""How many rows tied with the first one read reads besides it (more are "at least")."""


_DIRECTIONS = ("ASC", "ASCENDING", "DESC", "DESCENDING")


def direction_in_return_fix(cypher: str) -> tuple[str, str] | None:
    """The statement with a sort direction written inside its RETURN made an ORDER BY, and
    what changed; None when no RETURN item ends in one (or the statement sorts already).

    `MATCH (f:Filing) RETURN f.amount DESC LIMIT 1` (a FinCEN trial, on both attempts; a POLE,
    a Stack Overflow and an air-routes dev item before it): the engine rejects a direction
    after a projection. It moves to an ORDER BY on that item (by its alias where it has one),
    before the statement's SKIP or LIMIT: `RETURN f.amount ORDER BY f.amount DESC LIMIT 1`."""
    statement = Statement(cypher)
    returned = statement.final_return()
    if returned is None or statement.has_union:
        return None
    at, items = returned
    order = statement.last("ORDER")
    if order is not None and order > at:
        return None
    tokens = statement.tokens
    edits: list[tuple[int, int, str]] = []
    keys: list[str] = []
    for item in items:
        last = tokens[item.end - 1]
        if not last.is_keyword(*_DIRECTIONS) or item.end - item.first < 2:
            continue
        before = tokens[item.end - 2]
        named = item.end - item.first >= 4 and tokens[item.end - 3].is_keyword("AS")
        key = before.text if named else statement.source(item.first, item.end - 1)
        keys.append(f"{key} {last.text.upper()}")
        edits.append((before.end, last.end, ""))
    if not keys:
        return None
    end = statement.clause_end(at)
    sort = "ORDER BY " + ", ".join(keys)
    if end < len(tokens):
        edits.append((tokens[end].position, tokens[end].position, sort + " "))
    else:
        edits.append((tokens[-1].end, tokens[-1].end, " " + sort))
    return statement.edited(edits), f"the direction in the RETURN made `{sort}`"


def tie_read(cypher: str) -> tuple[str, int] | None:
    """For a statement whose final sort keeps one row (`… RETURN s.name AS supplier,
    count(p) AS products ORDER BY products DESC LIMIT 1`), the same read with room for the
    rows tied with it (`LIMIT 11`) and the column of the first sort key (or of the one
    returned column the key is computed from, `toFloat(p.SRP)`); None when the key is not a
    returned column (an expression the rows do not hold), or a SKIP or UNION makes the one
    row something else ("the second largest")."""
    statement = Statement(cypher)
    found = _final_sort(statement)
    if found is None:
        return None
    returned, limit = found
    written = statement.tokens[limit + 1 : statement.clause_end(limit)]
    if len(written) != 1 or written[0].text != "1":
        return None
    keys = [
        k for k in statement.order_keys() if "IS" not in (w.upper() for w in statement.words(k))
    ]
    if not keys:
        return None
    key = statement.source(keys[0].first, keys[0].end)
    column = _returned_column(statement, returned[1], key)
    if column is None and (read := _one_read(statement, keys[0])) is not None:
        column = _returned_column(statement, returned[1], read)
    if column is None:
        return None
    edit = (written[0].position, written[0].end, str(TIE_ROWS + 1))
    return statement.edited([edit]), column


def _final_sort(statement: Statement) -> tuple[tuple[int, list[Item]], int] | None:
    """The final RETURN and the LIMIT of a statement whose last ORDER BY sorts that RETURN's
    rows and is limited; None with a SKIP or a UNION (the rows are then something else)."""
    returned = statement.final_return()
    limit, order = statement.last("LIMIT"), statement.last("ORDER")
    if statement.has_union or statement.last("SKIP") is not None or returned is None:
        return None
    if limit is None or order is None or not returned[0] < order < limit:
        return None
    return returned, limit


# Functions that read a value as written in another form (text as a number or a date): rows
# alike in the key are alike in the value read, as near as a tie needs.
_READINGS = frozenset(
    [
        "tofloat",
        "tointeger",
        "tofloatornull",
        "tointegerornull",
        "trim",
        "ltrim",
        "rtrim",
        "replace",
        "split",
        "date",
        "datetime",
        "localdatetime",
    ]
)


def _one_read(statement: Statement, key: Item) -> str | None:
    """The one name or property read (`p.SRP`, `price`) a sort key computes its value from,
    through functions that read it in another form only (not `size`):
    `toFloat(replace(trim(p.SRP), ',', ''))`, numbers-as-text's reading of a price stored as
    text (a foodmart trial: five products tied at the top price). Rows alike in what it
    reads are alike in the key. None for anything else."""
    tokens = statement.tokens[key.first : key.end]
    reads: set[str] = set()
    for n, token in enumerate(tokens):
        after = tokens[n + 1] if n + 1 < len(tokens) else None
        if after is not None and after.is_punct("("):
            if token.text.casefold() not in _READINGS:
                return None  # `size(d.name)`: many values, one key
            continue
        if n and tokens[n - 1].is_punct("."):
            continue  # a property's name, read with its owner
        if token.kind == "keyword":
            return None  # CASE, IS NULL, …: not a plain reading
        if token.kind not in ("identifier", "quoted_identifier"):
            continue
        if after is not None and after.is_punct(".") and n + 2 < len(tokens):
            reads.add(statement.source(key.first + n, key.first + n + 3))
        else:
            reads.add(token.text)
    return reads.pop() if len(reads) == 1 else None


def _returned_column(statement: Statement, items: Sequence[Item], key: str) -> int | None:
    """The position of the returned item a sort key names, by alias or as written."""
    return next(
        (
            i
            for i, item in enumerate(items)
            if key in (item.alias, statement.source(item.first, item.end))
        ),
        None,
    )


def nulls_last_read(cypher: str) -> tuple[str, int] | None:
    """For a statement whose final sort is descending on a returned column and keeps few rows
    (`… RETURN u.name AS name, u.lastlogon AS lastlogon ORDER BY lastlogon DESC LIMIT 1`), the
    same read with the rows that hold no value last (`ORDER BY lastlogon IS NULL, lastlogon
    DESC`) and the column of that key: Cypher sorts null above every value in a descending
    sort, so a property some nodes lack answers "the most recent" with one of those. None when
    the key is not a returned column, the sort already puts nulls somewhere, or a SKIP or UNION
    makes the rows something else."""
    statement = Statement(cypher)
    found = _final_sort(statement)
    if found is None:
        return None
    returned = found[0]
    keys = statement.order_keys()
    if not keys or not keys[0].descending:
        return None
    if any("IS" in (w.upper() for w in statement.words(k)) for k in keys):
        return None
    key = statement.source(keys[0].first, keys[0].end)
    column = _returned_column(statement, returned[1], key)
    if column is None:
        return None
    at = statement.tokens[keys[0].first].position
    return statement.edited([(at, at, f"{key} IS NULL, ")]), column


def null_group_read(cypher: str) -> tuple[str, int] | None:
    """For a statement whose final RETURN ranks groups of a property (`MATCH (p:Person) RETURN
    p.culture AS culture, count(p) AS n ORDER BY n DESC LIMIT 1`: one read of a property
    beside aggregates, sorted and limited), the same read without the nodes that hold no value
    there (`WHERE p.culture IS NOT NULL` in the MATCH that binds `p`) and that read's column:
    the nodes lacking a property are grouped together, and where most lack it that group of
    nothing comes first. None for any other shape, or where `p` is not bound by a MATCH."""
    statement = Statement(cypher)
    found = _final_sort(statement)
    if found is None:
        return None
    items = found[0][1]
    tokens = statement.tokens
    groups = [n for n, item in enumerate(items) if not statement.aggregates(item)]
    if len(groups) != 1 or len(groups) == len(items):
        return None
    words = statement.words(items[groups[0]])
    if len(words) != 3 or words[1] != "." or not tokens[items[groups[0]].first].is_name:
        return None
    bound = binding(tokens, words[0])
    if bound is None:
        return None
    read = add_condition(cypher, tokens[bound].position, f"{words[0]}.{words[2]} IS NOT NULL")
    return None if read is None else (read, groups[0])


def tied_rows(rows: list[list[Any]], column: int) -> list[list[Any]]:
    """The rows whose `column` equals the first row's (the first row alone when none ties,
    or when the first is null: nulls are not a shared top value)."""
    if not rows:
        return []
    top = rows[0][column]
    if top is None:
        return rows[:1]
    return [row for row in rows if row[column] == top and type(row[column]) is type(top)]


def asked_not_counted_fix(
    cypher: str, question: str, schema: GraphSchema
) -> tuple[str, str] | None:
    """ "Which film has the most planets?" answered by `MATCH (f:Film)<-[:APPEARED_IN]-
    (p:Planet) RETURN p.name AS planet, count(*) AS count ORDER BY count DESC LIMIT 1` (a Star
    Wars trial): the rows were grouped by the counted thing, so the planet in the most films
    came back. Where a "which <label> … the most/fewest <other label>" question's RETURN is one
    count beside one read of the one node of the counted label, and one node of the asked
    label is matched, what the asked node is called by replaces that read (and the count is
    then per asked node). Not behind a WITH or UNION, nor where the sort reads the replaced
    column. So too for "How many <label> does each <other label> …?" ("How many destination
    centers does each distribution center supply?" grouped by the destination centers' type,
    a trial on a supply-chain graph)."""
    pair = _asked_and_counted(question, schema)
    if pair is None:
        return None
    asked_info, counted_info = pair
    statement = Statement(cypher)
    returned = statement.sole_return()
    if returned is None:
        return None
    items = returned[1]
    others = [item for item in items if not _count_call(statement, item)]
    if len(items) != 2 or len(others) != 1:
        return None
    item = others[0]
    words = statement.words(item)
    names = referenced_names(cypher)
    if len(words) != 3 or words[1] != "." or names.variables.get(words[0]) != counted_info.name:
        return None
    holders = [v for v, label in names.variables.items() if label == asked_info.name]
    props = name_properties(asked_info)
    if len(holders) != 1 or not props:
        return None
    fixed = read_instead(statement, item, holders[0], props)
    if fixed is None:
        return None
    text, read = fixed
    return text, f"returned {read}, the asked {asked_info.name}, not the counted {words[0]}"


def read_instead(
    statement: Statement, item: Item, var: str, props: Sequence[str]
) -> tuple[str, str] | None:
    """The statement with the returned `item` (and its alias) replaced by `var`'s `props`,
    each under its own name, and that new text; None where the sort reads the replaced
    column (it would sort on nothing)."""
    replaced = {statement.source(item.first, item.end), item.alias}
    if any(statement.source(k.first, k.end) in replaced for k in statement.order_keys()):
        return None
    tokens = statement.tokens
    stop = tokens[item.end + 1].end if item.alias else tokens[item.end - 1].end
    named = ", ".join(
        f"{var}.{quote_name_if_needed(p)} AS {quote_name_if_needed(p)}" for p in props
    )
    return statement.edited([(tokens[item.first].position, stop, named)]), named


def _asked_and_counted(question: str, schema: GraphSchema) -> tuple[LabelInfo, LabelInfo] | None:
    """The label a question asks for and the other label it counts: "Which film has the most
    planets?" → (Film, Planet); "How many planets does each film show?" → (Film, Planet)."""
    asked = asked_label(question, schema)
    found = _MOST_OF.search(question)
    if asked is None or found is None:
        each, found = each_label(question, schema), _HOW_MANY.search(question)
        if each is None or found is None:
            return None
        asked = (each, True)
    counted = label_said(re.findall(r"[A-Za-z][\w-]*", question[found.start(1) :])[:3], schema)
    if counted is None or counted.label.name == asked[0].name:
        return None
    return asked[0], counted.label
