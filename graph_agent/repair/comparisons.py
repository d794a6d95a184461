"""A number the question bounds ("five or more", "more than 12,000") written as an equality.

`(a:Airport {runways: 5})` for "Which airports have five or more runways?" (a dev question,
on every run) keeps only the airports with exactly five. The question's words say which
comparison the number takes; the equality on that number becomes it: a map entry moves to a
WHERE (`WHERE a.runways >= 5`), a `WHERE x.p = 5` becomes `x.p >= 5`.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass

from graph_agent.graphdb.protocol import GraphSchema, LabelInfo, PropertyInfo
from graph_agent.graphdb.schema import DATE_TEXT, NUMBER_TYPES, quote_name, quote_name_if_needed
from graph_agent.lint import MapEntry, node_map_entries, property_at, without_entries
from graph_agent.statement import (
    Item,
    Statement,
    add_condition,
    clause_at,
    is_aggregate_call,
    where_edits,
)
from graph_agent.superlatives import read_property, sort_key_property
from graph_agent.words import NUMBER_WORDS, said
from guardrails import Token, referenced_names, tokenize

_N = r"(\d{1,3}(?:,\d{3})+(?:\.\d+)?|\d+(?:\.\d+)?|" + "|".join(NUMBER_WORDS) + r")"
_MORE = r"(?:more|greater|higher|larger|longer|bigger|taller|heavier|older|later)"
_LESS = r"(?:fewer|less|lower|smaller|shorter|lighter|younger|earlier)"
_BOUNDS = [
    (re.compile(rf"\b{_MORE}\s+than\s+{_N}\b"), ">"),
    (re.compile(rf"\b(?:over|above|exceeding|after)\s+{_N}\b"), ">"),
    (re.compile(rf"\b(?:at\s+least|no\s+fewer\s+than|no\s+less\s+than)\s+{_N}\b"), ">="),
    (re.compile(rf"\b{_N}\s+(?:\w+\s+)?or\s+(?:more|greater|higher|above|over)\b"), ">="),
    (re.compile(rf"\b{_LESS}\s+than\s+{_N}\b"), "<"),
    (re.compile(rf"\b(?:under|below|before)\s+{_N}\b"), "<"),
    (re.compile(rf"\b(?:at\s+most|no\s+more\s+than|up\s+to)\s+{_N}\b"), "<="),
    (re.compile(rf"\b{_N}\s+(?:\w+\s+)?or\s+(?:fewer|less|lower|under|below)\b"), "<="),
]


def question_bounds(question: str) -> dict[str, str]:
    """The numbers the question bounds, as written in Cypher, with their comparison:
    "five or more runways" → {"5": ">="}; "more than 12,000 feet" → {"12000": ">"}. A
    number bounded two ways is left out."""
    found: dict[str, set[str]] = {}
    text = question.casefold()
    for pattern, op in _BOUNDS:
        for match in pattern.finditer(text):
            word = match.group(1)
            number = (
                str(NUMBER_WORDS.index(word)) if word in NUMBER_WORDS else word.replace(",", "")
            )
            found.setdefault(number, set()).add(op)
    return {number: ops.pop() for number, ops in found.items() if len(ops) == 1}


def comparison_fix(cypher: str, question: str) -> tuple[str, str] | None:
    """The statement with each equality on a number the question bounds written as that
    bound, and what changed; None when there is none (or a map entry's node has no variable
    to compare in a WHERE)."""
    bounds = question_bounds(question)
    if not bounds:
        return None
    entries = node_map_entries(cypher)
    moved = {
        e: f"{e.variable}.{e.prop} {bounds[value]} {value}"
        for e in entries
        if (value := _number(e.text.split(":", 1)[1])) in bounds and e.variable
    }
    fixed = cypher
    if moved:
        placed = _entries_to_where(cypher, entries, moved)
        if placed is None:
            return None
        fixed, moved = placed
    fixed, changed = _equalities(fixed, bounds)
    changes = [f"{{{e.text}}} → {condition}" for e, condition in moved.items()] + changed
    if not changes:
        return None
    return fixed, "; ".join(changes) + " (the question bounds the number)"


def _number(text: str) -> str | None:
    """The number a map's value writes, quoted or not (`5`, `"1000"`: a number stored as
    text is written so); None for anything else."""
    value = text.strip()
    if len(value) > 2 and value[0] == value[-1] and value[0] in "'\"":
        value = value[1:-1]
    return value if re.fullmatch(r"\d+(?:\.\d+)?", value) else None


def _entries_to_where(
    cypher: str, entries: list[MapEntry], moved: dict[MapEntry, str]
) -> tuple[str, dict[MapEntry, str]] | None:
    """The statement with the `moved` map entries taken out and their conditions put in one
    WHERE, and the entries moved: those of the clause that holds the first (a later MATCH's
    variables are not bound yet there). None when no MATCH holds them."""
    statement = Statement(cypher)
    clause = clause_at(statement, next(iter(moved)).node)
    moved = {e: c for e, c in moved.items() if clause_at(statement, e.node) == clause}
    stripped = without_entries(cypher, entries, lambda e: e in moved)
    # The node's `(` comes before its map: its offset is the same after the entries go.
    placed = add_condition(stripped, next(iter(moved)).node, " AND ".join(moved.values()))
    return None if placed is None else (placed, moved)


def _equalities(cypher: str, bounds: dict[str, str]) -> tuple[str, list[str]]:
    """`x.p = 5` written with the question's bound on 5 (`x.p >= 5`)."""
    statement = Statement(cypher)
    tokens = statement.tokens
    edits: list[tuple[int, int, str]] = []
    changes: list[str] = []
    for i, tok in enumerate(tokens):
        if not tok.is_punct("=") or i < 3 or i + 1 >= len(tokens):
            continue
        after = tokens[i + 1]
        value = _number(after.text) if after.kind in ("number", "string") else None
        if value in bounds and tokens[i - 2].is_punct(".") and tokens[i - 1].is_name:
            op = bounds[value]
            edits.append((tok.position, tok.end, op))
            edits.append((after.position, after.end, value))
            changes.append(f"{tokens[i - 3].text}.{tokens[i - 1].text} = {after.text} → {op}")
    return statement.edited(edits), changes


_BOUNDED_AGGREGATES = frozenset({"COUNT", "SUM", "AVG", "MIN", "MAX"})


def aggregate_bound_fix(cypher: str, question: str) -> tuple[str, str] | None:
    """ "Which racks hold more than 40 machines?" answered by `… RETURN r.name AS rack,
    count(m) AS machines ORDER BY machines DESC LIMIT 5`: every rack is counted and none is
    left out for the bound. When the question bounds one number, the statement never writes
    it, and it computes one aggregate (count, sum, avg, min, max), the bound is put on that
    aggregate: after its WITH (`WITH r, count(m) AS machines WHERE machines > 40`), or, from a
    final RETURN, through a WITH of the same columns. A final LIMIT whose number the question
    does not say goes (the question asks for every one that passes). None otherwise, and when
    the sort reads something the columns do not hold."""
    bounds = question_bounds(question)
    if len(bounds) != 1:
        return None
    ((number, op),) = bounds.items()
    statement = Statement(cypher)
    tokens = statement.tokens
    limits = {
        i
        for at in statement.clauses
        if statement.keyword_at(at) in ("LIMIT", "SKIP")
        for i in range(at, statement.clause_end(at))
    }
    if statement.has_union or any(
        t.text == number for i, t in enumerate(tokens) if i not in limits
    ):
        return None
    found = [
        (at, item)
        for at in statement.clauses
        if statement.keyword_at(at) in ("WITH", "RETURN")
        for item in statement.projection(at)
        if any(
            is_aggregate_call(tokens, i) and tokens[i].text.upper() in _BOUNDED_AGGREGATES
            for i in range(item.first, item.end)
        )
    ]
    if len(found) != 1:
        return None
    at, measured = found[0]
    if len(statement.projection(at)) < 2:  # one total: nothing is grouped to leave out
        return None
    edits: list[tuple[int, int, str]] = []
    if limit := _unasked_limit(statement, question, number):
        edits.append(limit)
    if statement.keyword_at(at) == "WITH":
        after = statement.clause_end(at)
        if measured.alias is None or (
            after < len(tokens) and statement.keyword_at(after) in ("ORDER", "SKIP", "LIMIT")
        ):
            return None
        condition = f"{quote_name_if_needed(measured.alias)} {op} {number}"
        where = where_edits(statement, at, condition)
        if where is None:
            return None
        edits.extend(where)
    else:
        moved = _return_through_with(statement, at, measured, f"{op} {number}")
        if moved is None:
            return None
        edits.extend(moved[0])
        condition = moved[1]
    detail = f"WHERE {condition} (the question bounds the {_what(statement, measured)})"
    if limit:
        detail += "; the LIMIT the question does not ask for dropped"
    return statement.edited(edits), detail


def _what(statement: Statement, item: Item) -> str:
    """What the aggregate is called in words: count, sum, average, minimum, maximum."""
    name = next(
        t.text.lower()
        for i, t in enumerate(statement.tokens[item.first : item.end], item.first)
        if is_aggregate_call(statement.tokens, i)
    )
    words = {"avg": "average", "min": "minimum", "max": "maximum"}
    return words.get(name, name)


def _unasked_limit(statement: Statement, question: str, bound: str) -> tuple[int, int, str] | None:
    """The edit that drops the final LIMIT (and its number) when the question does not say
    the number, or says it only as the bound; None when there is none to drop."""
    limit = statement.last("LIMIT")
    if limit is None or limit < max(statement.clauses):
        return None
    written = statement.tokens[limit + 1 : statement.clause_end(limit)]
    if len(written) != 1 or not written[0].text.isdigit():
        return None
    if written[0].text != bound and said(written[0].text, question):
        return None
    start = statement.tokens[limit - 1].end if limit else statement.tokens[limit].position
    return start, written[0].end, ""


def _return_through_with(
    statement: Statement, at: int, measured: Item, bound: str
) -> tuple[list[tuple[int, int, str]], str] | None:
    """The edits that make the final RETURN at `at` a WITH of the same columns, filtered on
    the measured item, followed by a RETURN of those columns; and the condition written."""
    tokens = statement.tokens
    items = statement.projection(at)
    names: list[str] = []
    by_source: dict[str, str] = {}
    for item in items:
        source = statement.source(item.first, item.end)
        if item.alias is not None:
            name = quote_name_if_needed(item.alias)
        elif item.end - item.first == 1 and tokens[item.first].is_name:
            name = source
        else:
            name = quote_name(source)
        names.append(name)
        by_source[source] = name
    measured_name = names[items.index(measured)]
    edits: list[tuple[int, int, str]] = [(tokens[at].position, tokens[at].end, "WITH")]
    for item, name in zip(items, names, strict=True):
        if item.alias is None and name != statement.source(item.first, item.end):
            stop = tokens[item.end - 1].end
            edits.append((stop, stop, f" AS {name}"))
    end = statement.clause_end(at)
    order = statement.last("ORDER")
    if order is not None and order > at:
        for key in statement.order_keys():
            source = statement.source(key.first, key.end)
            if source in by_source and source != by_source[source]:
                edits.append(
                    (tokens[key.first].position, tokens[key.end - 1].end, by_source[source])
                )
            elif source not in by_source and source not in names:
                return None
    condition = f"{measured_name} {bound}"
    last = tokens[end - 1].end
    edits.append((last, last, f" WHERE {condition} RETURN {', '.join(names)}"))
    return edits, condition


_VALUE = r"""(?:'[^'\n]*'|"[^"\n]*"|-?\d+(?:\.\d+)?)"""
_OR_MAP = re.compile(
    rf"\{{\s*(\w+)\s*:\s*({_VALUE}(?:\s+OR\s+\1\s*:\s*{_VALUE})+)\s*\}}", re.IGNORECASE
)
_NODE_HEAD = re.compile(r"\(\s*(\w+)\s*:\s*[\w`]+\s*$")


def or_map_fix(cypher: str) -> tuple[str, str] | None:
    """`(i:Incident {severity: 'SEV1' OR severity: 'SEV2'})` for "Which SEV1 or SEV2
    incidents…" (a dev question, on both attempts): a map holds one value per key, and the
    engine rejects the OR. The map goes and the MATCH's WHERE gets `i.severity IN ['SEV1',
    'SEV2']`. Only for a node with a variable and a label; the first such map."""
    found = _OR_MAP.search(cypher)
    if found is None:
        return None
    head = _NODE_HEAD.search(cypher[: found.start()])
    if head is None:
        return None
    prop, var = found.group(1), head.group(1)
    values = re.findall(_VALUE, re.sub(rf"\b{re.escape(prop)}\s*:", "", found.group(2)))
    stripped = cypher[: found.start()].rstrip() + cypher[found.end() :]
    condition = f"{var}.{prop} IN [{', '.join(values)}]"
    placed = add_condition(stripped, head.start(), condition)
    if placed is None:
        return None
    return placed, f"{{{prop}: … OR {prop}: …}} → WHERE {condition} (a map holds one value)"


_COMPARISONS = frozenset({"=", "<>", "<", ">", "<=", ">="})
_ISO_DATE = re.compile(r"\d{4}-\d{2}-\d{2}")
_ISO_DATETIME = re.compile(r"\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}(?::\d{2}(?:\.\d+)?)?Z?")
_YEAR = re.compile(r"1\d{3}|2\d{3}")


def _temporal(label: LabelInfo | None, prop: str) -> str | None:
    """DATE or DATETIME when every sampled value of `label`.`prop` is that type."""
    info = next((p for p in label.properties if p.name == prop), None) if label else None
    kinds = set(info.types) - {"NULL"} if info is not None else set()
    return next(iter(kinds)) if len(kinds) == 1 and kinds <= {"DATE", "DATETIME"} else None


def _as_temporal(kind: str, literal: Token) -> str | None:
    """A string literal written as the property's type (`date('1975-01-01')`); None when it
    is not an ISO date (or date and time)."""
    if literal.kind != "string":
        return None
    text = literal.value
    if kind == "DATE" and _ISO_DATE.fullmatch(text):
        return f"date('{text}')"
    if kind == "DATETIME" and (_ISO_DATE.fullmatch(text) or _ISO_DATETIME.fullmatch(text)):
        return f"datetime('{text.replace(' ', 'T')}')"
    return None


def date_literal_fix(cypher: str, schema: GraphSchema) -> tuple[str, str] | None:
    """The statement comparing each date property with a date, and what changed; None when it
    compares none with a string or a year.

    `WHERE p.dob < '1975-01-01'` for "Which players were born before 1975?" where `dob` holds
    dates (a trial on a graph nobody here wrote): a date never equals or orders with a string,
    so the read found nothing. The string becomes `date('1975-01-01')` (`datetime(…)` for a
    date-and-time property), in a WHERE or a node's map; a year, `p.dob < 1975` or `< '1975'`,
    is compared with the date's year (`p.dob.year < 1975`). Only where every sampled value of
    the property is of that one type."""
    statement = Statement(cypher)
    tokens = statement.tokens
    names = referenced_names(cypher)
    edits: list[tuple[int, int, str]] = []
    changes: list[str] = []

    def kind_of(var: Token, prop: Token) -> str | None:
        return _temporal(schema.label(names.variables.get(var.name, "")), prop.name)

    for i, tok in enumerate(tokens):
        if not (tok.kind == "punct" and tok.text in _COMPARISONS) or i + 1 >= len(tokens):
            continue
        read_left = i >= 3 and property_at(tokens, i - 3) is not None
        read_right = i + 3 < len(tokens) and property_at(tokens, i + 1) is not None
        if read_left and not read_right:
            var, prop, literal = tokens[i - 3], tokens[i - 1], tokens[i + 1]
        elif read_right and i >= 1:
            var, prop, literal = tokens[i + 1], tokens[i + 3], tokens[i - 1]
        else:
            continue
        if (kind := kind_of(var, prop)) is None:
            continue
        written = f"{var.text}.{prop.text}"
        compared = (
            f"{written} {tok.text} {literal.text}"
            if read_left
            else f"{literal.text} {tok.text} {written}"
        )
        if (as_date := _as_temporal(kind, literal)) is not None:
            edits.append((literal.position, literal.end, as_date))
            changes.append(f"{literal.text} → {as_date}")
        elif literal.kind in ("string", "number") and _YEAR.fullmatch(literal.value):
            edits.append((prop.end, prop.end, ".year"))
            if literal.kind == "string":
                edits.append((literal.position, literal.end, literal.value))
            changes.append(f"{compared}: the year of {written}")
    for entry in node_map_entries(cypher):
        label = schema.label(entry.label or "")
        value = tokenize(entry.text.split(":", 1)[1])
        if len(value) != 1 or (kind := _temporal(label, entry.prop)) is None:
            continue
        if (as_date := _as_temporal(kind, value[0])) is not None:
            edits.append((entry.start, entry.end, f"{quote_name_if_needed(entry.prop)}: {as_date}"))
            changes.append(f"{{{entry.text}}} → {as_date}")
    if not edits:
        return None
    what = "dates" if len(changes) > 1 else "a date"
    return statement.edited(edits), "; ".join(changes) + f" (the property holds {what})"


_NEW_YEAR = re.compile(r"(1\d{3}|2\d{3})-01-01(?:[T ]00:00(?::00(?:\.0+)?)?Z?)?")
_MONTH_SAID = re.compile(
    r"\b(?:jan(?:uary)?|new\s+year|1st|first\s+day|\d{4}-\d{2}|\d{1,2}/\d{1,2})\b", re.IGNORECASE
)


def year_as_day_fix(cypher: str, question: str, schema: GraphSchema) -> tuple[str, str] | None:
    """The statement comparing a date property's year with the year the question names, where
    it had tested equality with that year's first day; None when it has no such test.

    "How many filings began in 2016?" written `WHERE f.begin = date('2016-01-01')` (a FinCEN
    trial) counted the one filing that began on New Year's Day. Where the question says the
    year and no month or day, `v.prop = date('YYYY-01-01')` (or the bare string, or
    `datetime(…)` at midnight) on a property holding dates becomes `v.prop.year = YYYY`."""
    if _MONTH_SAID.search(question):
        return None
    cypher, changes = _first_day_entries(cypher, question, schema)
    statement = Statement(cypher)
    tokens = statement.tokens
    names = referenced_names(cypher)
    edits: list[tuple[int, int, str]] = []
    for i, tok in enumerate(tokens):
        if not tok.is_punct("=") or i < 3 or property_at(tokens, i - 3) is None:
            continue
        var, prop = tokens[i - 3], tokens[i - 1]
        if _temporal(schema.label(names.variables.get(var.name, "")), prop.name) is None:
            continue
        right = tokens[i + 1 : i + 5]
        if (
            len(right) == 4
            and right[0].text.lower() in ("date", "datetime")
            and right[1].is_punct("(")
            and right[3].is_punct(")")
        ):
            literal, last = right[2], right[3]
        elif right:
            literal, last = right[0], right[0]
        else:
            continue
        found = _NEW_YEAR.fullmatch(literal.value) if literal.kind == "string" else None
        if found is None or not re.search(rf"\b{found[1]}\b", question):
            continue
        edits += [(prop.end, prop.end, ".year"), (right[0].position, last.end, found[1])]
        changes.append(f"{var.text}.{prop.text} = {found[1]}'s first day → its year")
    if not changes:
        return None
    return statement.edited(edits), "; ".join(changes) + " (the question names only the year)"


_FIRST_DAY_VALUE = re.compile(
    r"\s*(?:date(?:time)?\s*\(\s*)?(['\"])((1\d{3}|2\d{3})-01-01[^'\"]*)\1\s*\)?\s*", re.IGNORECASE
)


def _first_day_entries(cypher: str, question: str, schema: GraphSchema) -> tuple[str, list[str]]:
    """`(f:Filing {begin: date('2015-01-01')})` for "… in 2015" (the FinCEN playground):
    the map entry moved to the MATCH's WHERE as `f.begin.year = 2015`; the statement as it
    was where no entry of a named node does that."""
    entries = node_map_entries(cypher)
    moved: dict[MapEntry, str] = {}
    for entry in entries:
        value = _FIRST_DAY_VALUE.fullmatch(entry.text.split(":", 1)[1])
        label = schema.label(entry.label or "")
        if (
            value is None
            or not entry.variable
            or _temporal(label, entry.prop) is None
            or not _NEW_YEAR.fullmatch(value[2])
            or not re.search(rf"\b{value[3]}\b", question)
        ):
            continue
        moved[entry] = f"{entry.variable}.{quote_name_if_needed(entry.prop)}.year = {value[3]}"
    placed = _entries_to_where(cypher, entries, moved) if moved else None
    if placed is None:
        return cypher, []
    return placed[0], [f"{{{e.text}}} → {c}" for e, c in placed[1].items()]


_BOTH = re.compile(r"\bboth\b.+\band\b", re.IGNORECASE | re.DOTALL)


def both_values_fix(cypher: str, question: str) -> tuple[str, str] | None:
    """ "Which teams took part in both 2015 and 2019?" written `WHERE t.year IN [2015, 2019]`
    (a World Cup trial) keeps the teams of either year. Where a "both … and …" question's
    statement has one `v.p IN [a, b]` of two values the question says, and a RETURN that reads
    other variables than v, the rows are kept only for what meets both: `WITH x,
    count(DISTINCT v.p) AS matched_values WHERE matched_values = 2` before the RETURN. Not
    behind a WITH or a UNION."""
    if not _BOTH.search(question):
        return None
    statement = Statement(cypher)
    returned = statement.sole_return()
    if returned is None:
        return None
    tokens = statement.tokens
    lists = []
    for k in range(len(tokens) - 7):
        var, dot, prop, word, opened = tokens[k : k + 5]
        if not (
            var.is_name and dot.is_punct(".") and prop.is_name and word.is_keyword("IN")
            and opened.is_punct("[") and tokens[k + 6].is_punct(",") and tokens[k + 8 : k + 9]
            and tokens[k + 8].is_punct("]")
        ):  # fmt: skip
            continue
        values = [tokens[k + 5], tokens[k + 7]]
        if all(v.kind in ("string", "number") and said(v.value, question) for v in values):
            lists.append((var.name, prop.text, values))
    if len(lists) != 1:
        return None
    owner, key, values = lists[0]
    names = referenced_names(cypher)
    known = set(names.variables) | set(names.rel_variables)
    at = returned[0]
    carried = list(
        dict.fromkeys(
            t.name
            for i, t in enumerate(tokens[at:], start=at)
            if t.is_name and t.name in known and not tokens[i - 1].is_punct(".")
        )
    )
    if not carried or owner in carried:
        return None
    kept = (
        f"WITH {', '.join(carried)}, count(DISTINCT {owner}.{key}) AS matched_values "
        f"WHERE matched_values = {len(values)} "
    )
    position = tokens[at].position
    both = " and ".join(v.text for v in values)
    return cypher[:position] + kept + cypher[position:], f"kept what meets both {both}"


def quoted_number_fix(cypher: str, schema: GraphSchema) -> tuple[str, str] | None:
    """The statement with a number written in quotes, where it is matched or compared with a
    property that holds numbers, written as a number, and what changed; None when there is
    none. `(r:Rack {zone: '2'})` where zones are integers (a dev item) matched nothing: a
    string never equals a number."""
    tokens = tokenize(cypher)
    names = referenced_names(cypher)

    def numeric(label: str | None, prop: str) -> bool:
        info = schema.label(label) if label else None
        found = next((p for p in info.properties if p.name == prop), None) if info else None
        return (
            found is not None
            and bool(set(found.types) & NUMBER_TYPES)
            and ("STRING" not in found.types)
        )

    edits: list[tuple[int, int, str]] = []
    for entry in node_map_entries(cypher):
        value = entry.value
        if value[:1] in "'\"" and (number := _number(value)) and numeric(entry.label, entry.prop):
            at = entry.end - len(value)
            edits.append((at, entry.end, number))
    for i, tok in enumerate(tokens):
        if not (tok.kind == "punct" and tok.text in _COMPARISONS):
            continue
        for read, other in ((i - 3, i + 1), (i + 1, i - 1)):
            found = property_at(tokens, read)
            if found is None or not 0 <= other < len(tokens) or tokens[other].kind != "string":
                continue
            number = _number(tokens[other].text)
            if number is not None and numeric(names.variables.get(found[0]), found[1]):
                edits.append((tokens[other].position, tokens[other].end, number))
    if not edits:
        return None
    fixed = cypher
    for start, stop, text in sorted(set(edits), reverse=True):
        fixed = fixed[:start] + text + fixed[stop:]
    written = ", ".join(dict.fromkeys(cypher[a:b] for a, b, _ in sorted(set(edits))))
    return fixed, f"{written} written as a number (the property holds numbers)"


_AS_NUMBER = "toFloat(replace(trim({}), ',', ''))"
_NUMBER_AGGREGATES = frozenset({"SUM", "AVG", "MIN", "MAX"})


def text_twin_fix(cypher: str, schema: GraphSchema) -> tuple[str, str] | None:
    """The statement reading each typed property where it read that property's copy kept as
    text, and what changed; None when it reads no such copy.

    "Which filings filed by JP Morgan Chase & Co. ended in 2016?" written `WHERE f.end_date =
    "2016"` (a FinCEN trial): the import kept `end_date` ("Apr 1, 2016") beside `end`, the
    date, and the text matched nothing; sorted, "Sep 8, 2015" came last of the year. A read
    `v.end_date` of a string the schema sample found writing `v.end` on every node
    (`PropertyInfo.text_of`) becomes `v.end`, wherever it is read; the date and number rules
    then compare it as what it is."""
    statement = Statement(cypher)
    tokens = statement.tokens
    names = referenced_names(cypher)
    edits: list[tuple[int, int, str]] = []
    changes: list[str] = []
    for i in range(len(tokens)):
        if (read := property_at(tokens, i)) is None:
            continue
        prop = read_property(schema, names, read[0], read[1])
        if prop is None or not prop.text_of:
            continue
        written = tokens[i + 2]
        edits.append((written.position, written.end, quote_name_if_needed(prop.text_of)))
        change = f"{read[0]}.{read[1]} → {read[0]}.{prop.text_of}"
        if change not in changes:
            changes.append(change)
    if not edits:
        return None
    return statement.edited(edits), "; ".join(
        changes
    ) + " (the typed property, not its copy as text)"


def numbers_as_text_fix(cypher: str, schema: GraphSchema) -> tuple[str, str] | None:
    """The statement reading each property that holds numbers as text as a number where it
    sorts, aggregates or compares it, and what changed; None when it does none of these.

    `ORDER BY c.height DESC LIMIT 1` for "Who is the tallest character?" where heights are
    stored as text ("172", and "unknown" for some: a CSV import with no types; a trial on a
    graph nobody here wrote) sorts "96" above "264" and "unknown" above both. The property is
    read as `toFloat(replace(trim(c.height), ',', ''))` (null for a placeholder): as a sort
    key (a descending one sorts the nulls last: `… IS NULL, … DESC`), inside `sum`, `avg`,
    `min` or `max`, and beside a comparison with anything but a string (a number in quotes
    that it is ordered against loses them: `s.length > '1000'`). A sort key may be the alias
    of a returned read (`c.mass AS mass … ORDER BY mass DESC`)."""
    fixed = _text_read_fix(cypher, schema, _NUMBERS)
    return (fixed[0], f"{fixed[1]} read as a number (stored as text)") if fixed else None


def dates_as_text_fix(cypher: str, schema: GraphSchema) -> tuple[str, str] | None:
    """The statement reading each property that holds dates as day/month/year text as a date
    where it sorts or compares it, and what changed; None when it does none of these.

    "What is the most recent crime?" written `ORDER BY c.date DESC LIMIT 1` where dates are
    stored as "24/08/2017" (a trial on the POLE graph) sorts "9/08/2017" above "31/08/2017";
    "crimes in August 2017" written `c.date >= '2017-08-01'` compares text with text. The
    property is read as the number `yyyymmdd` (null for anything else) as a sort key (nulls
    last when descending) and beside a comparison, whose date literal (ISO, or written as the
    property writes it) becomes that number too; `STARTS WITH '2017-08'` becomes the month's
    range. The date returned is left as stored."""
    fixed = _text_read_fix(cypher, schema, _DATES)
    return (
        (fixed[0], f"{fixed[1]} read as a date (stored as day/month/year text)") if fixed else None
    )


@dataclass(frozen=True)
class _TextReader:
    """How one kind of value stored as text is read: which properties, the expression that
    reads one, which aggregates need it, the literal a compared string becomes (None: the
    comparison is left as written), and whether `STARTS WITH` a year or a month is a range."""

    stored: Callable[[PropertyInfo], bool]
    read: Callable[[str, PropertyInfo], str]
    aggregates: frozenset[str]
    literal: Callable[[str, PropertyInfo, bool], str | None]
    month_prefix: bool = False


def _number_literal(text: str, _prop: PropertyInfo, ordered: bool) -> str | None:
    value = _number(text)
    return value if ordered and value is not None else None


_NUMBERS = _TextReader(
    stored=lambda p: p.numbers_as_text,
    read=lambda written, _p: _AS_NUMBER.format(written),
    aggregates=_NUMBER_AGGREGATES,
    literal=_number_literal,
)

_ISO_DATE = re.compile(r"(\d{4})-(\d{1,2})-(\d{1,2})")
_ISO_MONTH = re.compile(r"(\d{4})(?:-(\d{1,2}))?-?")


def _date_read(written: str, prop: PropertyInfo) -> str:
    sep = prop.date_format[1]
    part = {
        k: f"toInteger(split(trim({written}), '{sep}')[{i}])"
        for i, k in enumerate(prop.date_format[::2])
    }
    return f"({part['y']} * 10000 + {part['m']} * 100 + {part['d']})"


def _date_number(text: str, prop: PropertyInfo) -> int | None:
    """`yyyymmdd` of a literal written as an ISO date or as the property writes its dates."""
    value = text.strip()
    if len(value) > 2 and value[0] == value[-1] and value[0] in "'\"":
        value = value[1:-1].strip()
    if m := _ISO_DATE.fullmatch(value):
        y, mo, d = int(m[1]), int(m[2]), int(m[3])
    elif (m := DATE_TEXT.fullmatch(value)) and m[2] == prop.date_format[1]:
        first, second = int(m[1]), int(m[3])
        d, mo = (first, second) if prop.date_format[0] == "d" else (second, first)
        y = int(m[4])
    else:
        return None
    return y * 10000 + mo * 100 + d if 1 <= mo <= 12 and 1 <= d <= 31 else None


_DATES = _TextReader(
    stored=lambda p: bool(p.date_format),
    read=_date_read,
    aggregates=frozenset(),
    literal=lambda text, prop, _ordered: (
        str(n) if (n := _date_number(text, prop)) is not None else None
    ),
    month_prefix=True,
)


def _text_read_fix(cypher: str, schema: GraphSchema, reader: _TextReader) -> tuple[str, str] | None:
    """The statement with every sort, aggregate and comparison of a property `reader` reads
    read through it, and the reads changed; None when there is none."""
    statement = Statement(cypher)
    tokens = statement.tokens
    names = referenced_names(cypher)

    def as_text(var: str, prop: str) -> PropertyInfo | None:
        info = read_property(schema, names, var, prop)
        return info if info is not None and reader.stored(info) else None

    def read_at(i: int) -> PropertyInfo | None:
        read = property_at(tokens, i)
        return as_text(*read) if read is not None else None

    edits: dict[int, tuple[int, int, str]] = {}
    changed: list[str] = []

    def convert(first: int, end: int, prop: PropertyInfo, descending: bool = False) -> None:
        start, stop = tokens[first].position, tokens[end - 1].end
        written = cypher[start:stop]
        number = reader.read(written, prop)
        edits[start] = (start, stop, f"{number} IS NULL, {number}" if descending else number)
        changed.append(written)

    def compared(other: int, ordered: bool, prop: PropertyInfo) -> bool:
        """Whether the read beside a comparison, with token `other` on its other side, is read
        through the reader: not beside a string, but beside one the reader turns into its
        kind of literal (a number in quotes in an ordering, `s.length > '1000'`; a date)."""
        if other >= len(tokens) or tokens[other].kind != "string":
            return True
        literal = reader.literal(tokens[other].text, prop, ordered)
        if literal is None:
            return False
        edits[tokens[other].position] = (tokens[other].position, tokens[other].end, literal)
        return True

    def month_range(at: int, prop: PropertyInfo) -> None:
        """`c.date STARTS WITH '2017-08'` (or `'2017'`): the month's (the year's) range."""
        literal = tokens[at + 2] if at + 2 < len(tokens) else None
        if not (tokens[at + 1].is_keyword("WITH") and literal and literal.kind == "string"):
            return
        if not (m := _ISO_MONTH.fullmatch(literal.value.strip())):
            return
        low = int(m[1]) * 10000 + (int(m[2]) * 100 if m[2] else 0)
        high = low + (100 if m[2] else 10000)
        start = tokens[at - 3].position
        number = reader.read(cypher[start : tokens[at - 1].end], prop)
        edits[start] = (start, literal.end, f"({number} >= {low} AND {number} < {high})")
        changed.append(cypher[start : tokens[at - 1].end])

    for i, tok in enumerate(tokens):
        if tok.kind == "punct" and tok.text in _COMPARISONS:
            ordered = tok.text not in ("=", "<>")
            if (prop := read_at(i - 3)) and compared(i + 1, ordered, prop):
                convert(i - 3, i, prop)
            if (prop := read_at(i + 1)) and compared(i - 1, ordered, prop):
                convert(i + 1, i + 4, prop)
        elif is_aggregate_call(tokens, i) and tok.text.upper() in reader.aggregates:
            distinct = i + 2 < len(tokens) and tokens[i + 2].is_keyword("DISTINCT")
            first = i + 3 if distinct else i + 2
            prop = read_at(first)
            if prop and tokens[first + 3 : first + 4] and tokens[first + 3].is_punct(")"):
                convert(first, first + 3, prop)
        elif reader.month_prefix and tok.is_keyword("STARTS") and (prop := read_at(i - 3)):
            month_range(i, prop)
    returned = statement.final_return()
    for key in statement.order_keys():
        words = statement.words(key)
        alias = sort_key_property(statement, key, schema) if len(words) == 1 else None
        prop = (
            read_at(key.first)
            if len(words) == 3
            else alias
            if alias and reader.stored(alias)
            else None
        )
        if prop is not None:
            convert(key.first, key.end, prop, key.descending)  # `v.prop`, or a returned one's alias
        elif len(words) == 1 and key.descending and returned is not None and reader.aggregates:
            # The alias of an aggregate of one (`avg(s.average_height) AS h`): a placeholder
            # made null, and a descending sort puts nulls first.
            item = next((it for it in returned[1] if it.alias == words[0]), None)
            if item is not None and any(read_at(k) for k in range(item.first, item.end)):
                at = statement.tokens[key.first]
                edits[at.position] = (at.position, at.position, f"{at.text} IS NULL, ")
    if not edits:
        return None
    return statement.edited(list(edits.values())), ", ".join(dict.fromkeys(changed))
