"""Fixes for the mistakes small models make (string literals, a final WITH, a count of counted
rows), and feedback when a value was missed."""

from __future__ import annotations

import re
from collections.abc import Collection, Sequence
from dataclasses import dataclass, field

from graph_agent.graphdb.protocol import GraphSchema
from graph_agent.graphdb.schema import quote_name
from graph_agent.statement import check_schema, is_aggregate_call, top_level_clauses
from guardrails.cypher_tokens import Token, referenced_names, tokenize

Hint = tuple[str, str, str]
"""A value hint: (label, property, stored value)."""

_CASE_FUNCTIONS = frozenset({"TOLOWER", "TOUPPER", "LOWER", "UPPER"})
MAX_FEEDBACK_HINTS = 3
LINT_FIXES = ("stored_value", "string_alias", "nulls_last", "final_with", "recount")
"""The fixes `lint_cypher` makes, by name."""
_CALLS = ("COLLECT", "COUNT", "EXISTS", "ANY", "ALL", "NONE", "SINGLE", "SHORTEST")


@dataclass
class Lint:
    """The statement after the unambiguous fixes, and what was fixed (for the log)."""

    cypher: str
    fixes: list[str] = field(default_factory=list)


@dataclass(frozen=True)
class _Site:
    """A string literal in an equality on a known property (pattern map or `x.prop =`)."""

    start: int
    end: int
    """Span to replace: the literal, or the whole `toLower('…')` call around it."""
    literal: Token
    label: str | None
    prop: str
    wrapped: bool
    in_map: bool


def lint_cypher(
    cypher: str, hints: Sequence[Hint] = (), only: Collection[str] = LINT_FIXES
) -> Lint:
    """Fix string equalities that can never match what the graph stores.

    - `toLower("Keanu Reeves")`/`toUpper(…)` around a literal, inside a pattern map or compared
      to a property: the stored form when a hint holds the value (any case); inside a map,
      else the literal as written (a case function there is never what was meant).
    - `{name: "keanu reeves"}` or `p.name = "keanu reeves"` when a hint stores exactly one
      value with that spelling in another case: the stored form.

    Also: a column alias written as a string gets a name, `ORDER BY x DESC` puts nulls last,
    a final `WITH` returns, and `count(*)` over rows a `WITH` already grouped is its count.
    `only` names the fixes to make (see `LINT_FIXES`): the repair catalogue asks one at a time.

    Anything ambiguous is left alone; the statement is otherwise untouched.
    """
    tokens = tokenize(cypher)
    result = Lint(cypher=cypher)
    edits: list[tuple[int, int, str]] = []
    for site in _sites(tokens) if "stored_value" in only else ():
        stored = _stored_form(site.literal.value, site.label, site.prop, hints)
        where = f"{site.label or '?'}.{site.prop}"
        if stored is not None and (site.wrapped or stored != site.literal.value):
            edits.append((site.start, site.end, _quote(stored, site.literal.text[0])))
            result.fixes.append(f"{cypher[site.start : site.end]} → the stored value ({where})")
        elif site.wrapped and site.in_map:
            edits.append((site.start, site.end, site.literal.text))
            result.fixes.append(f"unwrapped {cypher[site.start : site.end]} in a pattern map")
    for start, end, alias in _string_aliases(tokens) if "string_alias" in only else ():
        edits.append((start, end, alias))
        result.fixes.append(f"column alias {cypher[start:end][:40]} → {alias}")
    for position, expression in _descending_nullable(tokens) if "nulls_last" in only else ():
        edits.append((position, position, f"{expression} IS NULL, "))
        result.fixes.append(f"nulls last for ORDER BY {expression} DESC")
    if "final_with" in only and (last := _final_with(tokens)) is not None:
        edits.append((last.position, last.end, "RETURN"))
        result.fixes.append("the statement ended with WITH: RETURN instead")
    for start, end, alias in _recounts(tokens) if "recount" in only else ():
        edits.append((start, end, alias))
        result.fixes.append(f"count(…) AS {alias} counted the grouped rows again: {alias}")
    for start, end, text in sorted(edits, reverse=True):
        result.cypher = result.cypher[:start] + text + result.cypher[end:]
    return result


def _final_with(tokens: list[Token]) -> Token | None:
    """`MATCH (d:DataCenter) WITH d, count(*) AS racks ORDER BY racks DESC LIMIT 1`: a query
    cannot end with WITH, and a 1.5B model told so by the engine sent it back three times.
    The last WITH, when only ORDER BY / SKIP / LIMIT follow it, becomes RETURN."""
    clauses = [tokens[i] for i in top_level_clauses(tokens)]
    main = [t for t in clauses if not t.is_keyword("ORDER", "SKIP", "LIMIT")]
    if main and main[-1].is_keyword("WITH") and not any(t.is_keyword("RETURN") for t in main):
        return main[-1]
    return None


def _items(tokens: list[Token], start: int, end: int) -> list[list[Token]]:
    items: list[list[Token]] = [[]]
    depth = 0
    for tok in tokens[start:end]:
        if tok.is_punct("(", "[", "{"):
            depth += 1
        elif tok.is_punct(")", "]", "}"):
            depth -= 1
        if depth == 0 and tok.is_punct(","):
            items.append([])
        else:
            items[-1].append(tok)
    return [item for item in items if item]


def _alias(item: list[Token]) -> str | None:
    if len(item) >= 3 and item[-2].is_keyword("AS") and item[-1].is_name:
        return item[-1].name
    return None


def _recounts(tokens: list[Token]) -> list[tuple[int, int, str]]:
    """`WITH t.type AS type, count(*) AS n RETURN type, count(*) AS n`: the RETURN groups by
    exactly the WITH's keys, so each group is one row and every count is 1 ("1 machine of
    each type" was a real 1.5B answer). The second `count(…) AS n` becomes `n`. Returns
    (start, end, alias) spans of the expressions to replace."""
    found: list[tuple[int, int, str]] = []
    clauses = [*top_level_clauses(tokens), len(tokens)]
    for here, after, until in zip(clauses, clauses[1:], clauses[2:], strict=False):
        if not (tokens[here].is_keyword("WITH") and tokens[after].is_keyword("WITH", "RETURN")):
            continue
        before = _items(tokens, here + 1, after)
        keys = {_alias(i) or _text(i) for i in before if not _is_aggregate(i)}
        counted = {a for i in before if _is_aggregate(i) and (a := _alias(i)) is not None}
        following = _items(tokens, after + 1, until)
        grouped = {_text(i) for i in following if not _is_aggregate(i)}
        if not counted or grouped != keys:
            continue
        for item in following:
            alias = _alias(item)
            if alias is not None and alias in counted and item[0].is_keyword("COUNT"):
                found.append((item[0].position, item[-3].end, alias))
    return found


def _is_aggregate(item: list[Token]) -> bool:
    return is_aggregate_call(item, 0)


_ALIAS_WORD = re.compile(r"[^0-9a-z]+")


def _string_aliases(tokens: list[Token]) -> list[tuple[int, int, str]]:
    """`RETURN b.city AS "Where can I fly from Edinburgh?"`: a small model names a column
    with a string (often the question), which Cypher refuses (aliases are names). Each becomes
    a name: the property it returns (`city`), else the string's first words in snake_case.
    Returns (start, end, new alias) spans."""
    found: list[tuple[int, int, str]] = []
    taken = {
        tokens[j + 1].value
        for j in range(len(tokens) - 1)
        if tokens[j].is_keyword("AS") and tokens[j + 1].kind in ("identifier", "quoted_identifier")
    }
    for i in range(1, len(tokens) - 1):
        if not (tokens[i].is_keyword("AS") and tokens[i + 1].kind == "string"):
            continue
        before = tokens[i - 1]
        if before.kind == "identifier" and i >= 2 and tokens[i - 2].is_punct("."):
            alias = before.value
        else:
            words = _ALIAS_WORD.sub(" ", tokens[i + 1].value.casefold()).split()
            alias = "_".join(words[:4]) or "value"
        if alias[0].isdigit():
            alias = f"v_{alias}"
        unique, n = alias, 2
        while unique in taken:
            unique, n = f"{alias}_{n}", n + 1
        taken.add(unique)
        found.append((tokens[i + 1].position, tokens[i + 1].end, unique))
    return found


_SORT_ENDS = frozenset(
    {"SKIP", "LIMIT", "RETURN", "WITH", "MATCH", "OPTIONAL", "UNION", "WHERE", "UNWIND", "CALL"}
)


def _descending_nullable(tokens: list[Token]) -> list[tuple[int, str]]:
    """Sort items `x.prop DESC` / `alias DESC`: Cypher sorts null *first* in descending order,
    so "the five most expensive" came back as five products without a price. Each becomes
    `x.prop IS NULL, x.prop DESC` (nulls last, the order people mean). Returns (offset of the
    item, its expression) for items that are a name or a property access and not already
    guarded by an `IS NULL` item."""
    found: list[tuple[int, str]] = []
    never_null = _counted_aliases(tokens)
    i = 0
    while i < len(tokens) - 1:
        if not (tokens[i].is_keyword("ORDER") and tokens[i + 1].is_keyword("BY")):
            i += 1
            continue
        i += 2
        items: list[list[Token]] = [[]]
        depth = 0
        while i < len(tokens):
            token = tokens[i]
            if token.is_punct("(", "[", "{"):
                depth += 1
            elif token.is_punct(")", "]", "}"):
                if depth == 0:
                    break
                depth -= 1
            elif depth == 0 and (token.is_punct(";") or token.is_keyword(*_SORT_ENDS)):
                break
            if depth == 0 and token.is_punct(","):
                items.append([])
            else:
                items[-1].append(token)
            i += 1
        guarded = {_text(item[:-2]) for item in items if _ends_with(item, "IS", "NULL")}
        for item in items:
            if len(item) < 2 or not item[-1].is_keyword("DESC", "DESCENDING"):
                continue
            expression = item[:-1]
            text = _text(expression)
            if _is_name_or_property(expression) and text not in guarded | never_null:
                found.append((item[0].position, text))
    return found


def _counted_aliases(tokens: list[Token]) -> set[str]:
    """Aliases of `count(…)` and `size(…)`, which are never null (`count(p) AS people`)."""
    aliases: set[str] = set()
    for i, token in enumerate(tokens[:-1]):
        if not (token.is_keyword("COUNT", "SIZE") and tokens[i + 1].is_punct("(")):
            continue
        depth, j = 0, i + 1
        while j < len(tokens):
            if tokens[j].is_punct("("):
                depth += 1
            elif tokens[j].is_punct(")"):
                depth -= 1
                if depth == 0:
                    break
            j += 1
        if j + 2 < len(tokens) and tokens[j + 1].is_keyword("AS") and tokens[j + 2].is_name:
            aliases.add(tokens[j + 2].name)
    return aliases


def _ends_with(item: list[Token], *words: str) -> bool:
    tail = item[-len(words) :]
    return len(tail) == len(words) and all(
        t.is_keyword(w) for t, w in zip(tail, words, strict=True)
    )


def _is_name_or_property(expression: list[Token]) -> bool:
    if len(expression) == 1:
        return expression[0].is_name and not expression[0].is_keyword("NULL", "TRUE", "FALSE")
    return (
        len(expression) == 3
        and expression[0].is_name
        and expression[1].is_punct(".")
        and expression[2].is_name
    )


def _text(tokens: list[Token]) -> str:
    return "".join(t.text if not t.is_punct(".") else "." for t in tokens)


def empty_result_feedback(cypher: str, hints: Sequence[Hint]) -> str | None:
    """What to tell the correct step when a statement found no rows although value hints
    matched words of the question and the statement used none of those stored values
    (in any case); None when the empty result is not explained by a missed value."""
    if not hints:
        return None
    used = {t.value.casefold() for t in tokenize(cypher) if t.kind == "string"}
    if any(value.casefold() in used for _label, _prop, value in hints):
        return None
    shown = "; ".join(
        f"'{value}' ({label}.{prop})" for label, prop, value in hints[:MAX_FEEDBACK_HINTS]
    )
    return (
        "The query returned no rows, and it does not use the values stored in the graph "
        f"that match words of the question. The stored value is exactly {shown}. Compare "
        "with that exact value (no toLower/toUpper around it), or drop the filter if the "
        "question does not mean it."
    )


def literal_filters(cypher: str) -> list[tuple[str, str, str]]:
    """The string equalities of a statement on a labelled node, as (label, property, value):
    `(c:Country {code: 'Spain'})` and `c.code = 'Spain'` both give (Country, code, Spain)."""
    found = []
    for site in _sites(tokenize(cypher)):
        if site.label is not None and (site.label, site.prop, site.literal.value) not in found:
            found.append((site.label, site.prop, site.literal.value))
    return found


def _stored_form(literal: str, label: str | None, prop: str, hints: Sequence[Hint]) -> str | None:
    """The one stored value spelt like `literal` (any case) for this property, or None."""
    folded = literal.casefold()
    found = {
        value
        for h_label, h_prop, value in hints
        if h_prop == prop and (label is None or h_label == label) and value.casefold() == folded
    }
    return found.pop() if len(found) == 1 else None


def _quote(value: str, quote: str) -> str:
    quote = quote if quote in ("'", '"') else '"'
    escaped = value.replace("\\", "\\\\").replace(quote, "\\" + quote)
    return f"{quote}{escaped}{quote}"


def _literal_at(tokens: list[Token], i: int) -> tuple[Token, int, bool] | None:
    """A string literal at `i`, bare or as `toLower('…')`: (literal, index after it, wrapped)."""
    if i >= len(tokens):
        return None
    tok = tokens[i]
    if tok.kind == "string":
        return tok, i + 1, False
    if (
        tok.is_word
        and tok.text.upper() in _CASE_FUNCTIONS
        and i + 3 < len(tokens)
        and tokens[i + 1].is_punct("(")
        and tokens[i + 2].kind == "string"
        and tokens[i + 3].is_punct(")")
    ):
        return tokens[i + 2], i + 4, True
    return None


def _property_at(tokens: list[Token], i: int) -> tuple[str, str] | None:
    """`var.prop` starting at `i` (not part of a longer chain or call): (var, prop)."""
    if i + 2 >= len(tokens) or i < 0:
        return None
    var, dot, prop = tokens[i], tokens[i + 1], tokens[i + 2]
    if not (var.is_name and dot.is_punct(".") and prop.is_name):
        return None
    if i > 0 and tokens[i - 1].is_punct("."):
        return None
    if i + 3 < len(tokens) and tokens[i + 3].is_punct(".", "("):
        return None
    return var.name, prop.name


def _bindings(tokens: list[Token]) -> dict[str, str]:
    """The first label written for each node variable: `(p:Person` binds p to Person."""
    found: dict[str, str] = {}
    for i in range(len(tokens) - 3):
        if (
            tokens[i].is_punct("(")
            and tokens[i + 1].is_name
            and tokens[i + 2].is_punct(":")
            and tokens[i + 3].is_name
        ):
            found.setdefault(tokens[i + 1].name, tokens[i + 3].name)
    return found


def _map_label(tokens: list[Token], brace: int) -> str | None:
    """The label of the node pattern a `{` belongs to: `(p:Person {` gives Person."""
    j = brace - 1
    while j >= 0 and not tokens[j].is_punct("(", "["):
        j -= 1
    for k in range(j + 1, brace - 1):
        if tokens[k].is_punct(":") and tokens[k + 1].is_name:
            return tokens[k + 1].name
    return None


def _sites(tokens: list[Token]) -> list[_Site]:
    bindings = _bindings(tokens)
    sites: list[_Site] = []
    # Pattern maps: `{` right after a node's variable/label, or after `(` / `[`.
    stack: list[tuple[bool, str | None]] = []  # (is a pattern map, its label)
    for i, tok in enumerate(tokens):
        prev = tokens[i - 1] if i else None
        if tok.is_punct("{"):
            pattern = prev is not None and (prev.is_name or prev.is_punct("(", "["))
            opener = _enclosing_opener(tokens, i)
            stack.append((pattern and opener, _map_label(tokens, i) if pattern else None))
        elif tok.is_punct("}") and stack:
            stack.pop()
        elif (
            stack
            and stack[-1][0]
            and tok.is_name
            and i + 1 < len(tokens)
            and tokens[i + 1].is_punct(":")
            and prev is not None
            and prev.is_punct("{", ",")
        ):
            found = _literal_at(tokens, i + 2)
            if found is not None:
                literal, after, wrapped = found
                start = tokens[i + 2].position
                end = tokens[after - 1].end
                sites.append(_Site(start, end, literal, stack[-1][1], tok.name, wrapped, True))
        elif tok.is_punct("="):
            sites.extend(_comparison(tokens, i, bindings))
    return sites


def _enclosing_opener(tokens: list[Token], brace: int) -> bool:
    """True when the nearest unclosed bracket before `brace` opens a node pattern `(` (not a
    call such as `collect(`) or a relationship pattern `-[`."""
    depth = 0
    for j in range(brace - 1, -1, -1):
        tok = tokens[j]
        if tok.is_punct(")", "]", "}"):
            depth += 1
        elif tok.is_punct("(", "[", "{"):
            if depth:
                depth -= 1
                continue
            before = tokens[j - 1] if j else None
            if tok.is_punct("["):
                return before is not None and before.is_punct("-")
            is_call = before is not None and (
                before.kind == "identifier" or before.is_keyword(*_CALLS)
            )
            return tok.is_punct("(") and not is_call
    return False


def _comparison(tokens: list[Token], eq: int, bindings: dict[str, str]) -> list[_Site]:
    """`x.prop = <literal>` or `<literal> = x.prop` around the `=` at `eq`."""
    right = _literal_at(tokens, eq + 1)
    left_prop = _property_at(tokens, eq - 3)
    if right is not None and left_prop is not None:
        literal, after, wrapped = right
        var, prop = left_prop
        start, end = tokens[eq + 1].position, tokens[after - 1].end
        return [_Site(start, end, literal, bindings.get(var), prop, wrapped, False)]
    right_prop = _property_at(tokens, eq + 1)
    if right_prop is None:
        return []
    for back in (1, 4):  # a bare literal, or toLower( 'x' )
        found = _literal_at(tokens, eq - back)
        if found is not None and found[1] == eq:
            literal, _after, wrapped = found
            var, prop = right_prop
            start, end = tokens[eq - back].position, tokens[eq - 1].end
            return [_Site(start, end, literal, bindings.get(var), prop, wrapped, False)]
    return []


def value_on_another_label(cypher: str, schema: GraphSchema, hints: Sequence[Hint]) -> str:
    """For a relationship the graph lacks whose far node is filtered on a value that a node of
    another label holds, the pattern that exists with that label: `(:Software)-[:DEPENDS_ON]->
    (:Process {name: 'java'})` on a graph where 'java' is also a Software's name and software
    depends on software. A 1.5B model kept the Process the value hint led it to on every
    attempt. Empty when there is no such pattern."""
    names = referenced_names(cypher)
    rels = {(r.start, r.type, r.end) for r in schema.relationships}
    said: list[str] = []
    for label, _prop, value in literal_filters(cypher):
        for left, rel_type, right, direction in names.patterns:
            if direction == "-" or None in (left, right):
                continue
            start, end = (left, right) if direction == "->" else (right, left)
            if (start, rel_type, end) in rels or label not in (start, end):
                continue
            for h_label, h_prop, h_value in hints:
                if h_label == label or h_value.casefold() != value.casefold():
                    continue
                pattern = (start, rel_type, h_label) if label == end else (h_label, rel_type, end)
                if pattern not in rels:
                    continue
                near = f"(:{h_label} {{{h_prop}: {_quote(h_value, chr(39))}}})"
                text = (
                    f"(:{start})-[:{rel_type}]->{near}"
                    if label == end
                    else f"{near}-[:{rel_type}]->(:{end})"
                )
                said.append(f"{_quote(h_value, chr(39))} is also a {h_label} {h_prop}: {text}")
    return "; ".join(dict.fromkeys(said))


def relabel_for_value(
    cypher: str, schema: GraphSchema, hints: Sequence[Hint]
) -> tuple[str, str] | None:
    """The statement with one filtered node's label changed so that it fits the schema, and
    what was changed; None when no single change does.

    `(s:Software)-[:DEPENDS_ON]->(p:Process {name: 'java'})` on a graph where software depends
    on software and 'java' is also a Software's name: the pattern as written can match nothing,
    and `(p:Software {name: 'java'})` is the node the value hint found. A 1.5B model told that
    pattern still wrote the Process on every attempt and on the re-ask. Only a label whose
    nodes hold the filtered value (a value hint) is tried, and only a change after which the
    whole statement passes the schema check is made.
    """
    tokens = tokenize(cypher)
    for label, prop, value in literal_filters(cypher):
        holders = dict.fromkeys(
            h_label
            for h_label, h_prop, held in hints
            if h_label != label and h_prop == prop and held.casefold() == value.casefold()
        )
        for k in _node_label_tokens(tokens, label):
            for holder in holders:
                name = holder if holder.isidentifier() else quote_name(holder)
                changed = cypher[: tokens[k].position] + name + cypher[tokens[k].end :]
                if (holder, prop, value) not in literal_filters(changed):
                    continue  # another node of that label: not the filtered one
                if check_schema(changed, schema).problems:
                    continue
                return changed, f"(:{label} {{{prop}: {_quote(value, chr(39))}}}) → (:{holder})"
    return None


def _node_label_tokens(tokens: list[Token], label: str) -> list[int]:
    """Indexes of `label` written as a node pattern's label: `(:Label` or `(x:Label`."""
    found = []
    for k in range(2, len(tokens)):
        if not (tokens[k].is_name and tokens[k].name == label and tokens[k - 1].is_punct(":")):
            continue
        before = tokens[k - 2]
        if before.is_punct("(") or (before.is_name and k >= 3 and tokens[k - 3].is_punct("(")):
            found.append(k)
    return found


def filtered_node(cypher: str, label: str, prop: str, value: str) -> tuple[int, int, str] | None:
    """The node pattern that filters `label` on `prop` = `value` in its map, as (start, end,
    variable or ""): `(v:Version {name: 'Ubuntu'})` gives its span and "v". None when the
    filter is written elsewhere (a WHERE) or not at all."""
    tokens = tokenize(cypher)
    for site in _sites(tokens):
        if not (site.in_map and site.label == label and site.prop == prop):
            continue
        if site.literal.value != value:
            continue
        i = next(k for k, tok in enumerate(tokens) if tok.position == site.literal.position)
        depth, open_at = 0, None
        for k in range(i - 1, -1, -1):
            if tokens[k].is_punct(")", "}", "]"):
                depth += 1
            elif tokens[k].is_punct("(", "{", "["):
                if depth == 0 and tokens[k].is_punct("("):
                    open_at = k
                    break
                depth = max(depth - 1, 0)
        if open_at is None:
            return None
        depth = 0
        for k in range(open_at + 1, len(tokens)):
            if tokens[k].is_punct("(", "{", "["):
                depth += 1
            elif tokens[k].is_punct(")", "}", "]"):
                if depth == 0:
                    var = tokens[open_at + 1]
                    named = var.is_name and tokens[open_at + 2].is_punct(":")
                    return tokens[open_at].position, tokens[k].end, var.name if named else ""
                depth -= 1
        return None
    return None
