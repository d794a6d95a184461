"""Statement helpers for the repair rules: the string filters a statement makes, the node
pattern that holds one, and the entries of node patterns' property maps."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from graph_agent.graphdb.schema import quote_name_if_needed
from graph_agent.statement import add_condition
from guardrails import Token, enclosing, matching_close, split_top_level, tokenize

_CASE_FUNCTIONS = frozenset({"TOLOWER", "TOUPPER", "LOWER", "UPPER"})
_CALLS = ("COLLECT", "COUNT", "EXISTS", "ANY", "ALL", "NONE", "SINGLE", "SHORTEST")


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
    key: tuple[int, int] = (0, 0)
    """Span of the property's name (the map key, or the name after `x.`)."""


def literal_filters(cypher: str) -> list[tuple[str, str, str]]:
    """The string equalities of a statement on a labelled node, as (label, property, value):
    `(c:Country {code: 'Spain'})` and `c.code = 'Spain'` both give (Country, code, Spain)."""
    found = []
    for site in _sites(tokenize(cypher)):
        if site.label is not None and (site.label, site.prop, site.literal.value) not in found:
            found.append((site.label, site.prop, site.literal.value))
    return found


@dataclass(frozen=True)
class MapEntry:
    """One `key: value` of a node pattern's property map: `(p:Product {categoryName: 'X'})`."""

    variable: str | None
    """The node's variable (None for `(:Product {…})`)."""
    label: str | None
    """The label the pattern writes, else the one an earlier pattern bound the variable to."""
    prop: str
    text: str
    """The entry as written: `categoryName: 'X'`."""
    start: int
    end: int
    """The entry's span in the statement."""
    node: int
    """Offset of the node pattern's `(`."""
    braces: tuple[int, int]
    """Offsets of the map's `{` and just past its `}`."""

    @property
    def value(self) -> str:
        """The value as written: `'X'` of `categoryName: 'X'`."""
        return self.text.split(":", 1)[1].strip()


def node_map_entries(cypher: str) -> list[MapEntry]:
    """Every `key: value` in the property maps of node patterns, in the order written
    (relationship maps, map literals and map projections are not node patterns)."""
    return _map_entries(cypher, ("(",))


def pattern_map_entries(cypher: str) -> list[MapEntry]:
    """Every `key: value` of node and relationship pattern maps (`(u:User {…})`,
    `-[w:WATCHED {…}]->`); a relationship's entries have no variable or label."""
    return _map_entries(cypher, ("(", "["))


def _map_entries(cypher: str, brackets: tuple[str, ...]) -> list[MapEntry]:
    tokens = tokenize(cypher)
    bindings = _bindings(tokens)
    found: list[MapEntry] = []
    for i, tok in enumerate(tokens):
        prev = tokens[i - 1] if i else None
        if not (tok.is_punct("{") and prev is not None and (prev.is_name or prev.is_punct("("))):
            continue
        opener = next(enclosing(tokens, i), None)
        close = matching_close(tokens, i)
        if opener is None or close is None or not tokens[opener].is_punct(*brackets) or opener == 0:
            continue
        before = tokens[opener - 1]
        if before.kind == "identifier" or before.is_keyword(*_CALLS):
            continue  # a call's argument: `collect({…})`
        var = label = None
        if tokens[opener].is_punct("("):
            var = tokens[opener + 1].name if tokens[opener + 1].is_name and opener + 1 < i else None
            label = _map_label(tokens, i) or (bindings.get(var) if var else None)
        for first, stop in split_top_level(tokens, i + 1, close):
            if stop - first < 3 or not tokens[first].is_name or not tokens[first + 1].is_punct(":"):
                continue
            start, end = tokens[first].position, tokens[stop - 1].end
            found.append(
                MapEntry(
                    var, label, tokens[first].name, cypher[start:end], start, end,
                    tokens[opener].position, (tok.position, tokens[close].end),
                )
            )  # fmt: skip
    return found


TYPE_NAMES = frozenset(
    {"STRING", "INTEGER", "FLOAT", "BOOLEAN", "LIST", "MAP", "DATE", "DATETIME", "TIME",
     "LOCALDATETIME", "LOCALTIME", "DURATION", "POINT", "NUMBER"}
)  # fmt: skip
"""The type names the schema text writes after a property (`{watchCount: INTEGER}`)."""


def is_type_name(entry: MapEntry) -> bool:
    """Whether a map entry's value is a type name the schema text writes, not a value:
    `watchCount: INTEGER` copied from `(:User)-[:WATCHED {watchCount: INTEGER}]->(:Movie)`.
    An upper-case name only: a variable called `integer` is the statement's own."""
    return entry.value in TYPE_NAMES


def is_null_entry(entry: MapEntry) -> bool:
    """Whether a map entry's value is `null`: `{distance: NULL}` matches no node or
    relationship (a comparison with null is never true)."""
    return entry.value.upper() == "NULL"


def without_entries(
    cypher: str,
    entries: list[MapEntry],
    dropped: Callable[[MapEntry], bool],
    written: Callable[[MapEntry], str | None] = lambda e: None,
) -> str:
    """`cypher` without the map entries `dropped` picks (from `entries`, all of
    `node_map_entries(cypher)` or some of them), or with the text `written` gives for them
    instead; a map left empty goes with its braces."""
    edits: list[tuple[int, int, str]] = []
    for braces in dict.fromkeys(e.braces for e in entries if dropped(e)):
        in_map = [e for e in entries if e.braces == braces]
        kept = [
            text for e in in_map if (text := (written(e) if dropped(e) else e.text)) is not None
        ]
        left, right = braces
        if kept:
            edits.append((left, right, "{" + ", ".join(kept) + "}"))
        else:
            edits.append((left - 1 if cypher[left - 1 : left] == " " else left, right, ""))
    for left, right, replacement in sorted(edits, reverse=True):
        cypher = cypher[:left] + replacement + cypher[right:]
    return cypher


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


def property_at(tokens: list[Token], i: int) -> tuple[str, str] | None:
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
                key = (tok.position, tok.end)
                sites.append(_Site(start, end, literal, stack[-1][1], tok.name, wrapped, True, key))
        elif tok.is_punct("="):
            sites.extend(_comparison(tokens, i, bindings))
    return sites


def _enclosing_opener(tokens: list[Token], brace: int) -> bool:
    """True when the nearest unclosed bracket before `brace` opens a node pattern `(` (not a
    call such as `collect(`) or a relationship pattern `-[`."""
    j = next(enclosing(tokens, brace), None)
    if j is None:
        return False
    tok = tokens[j]
    before = tokens[j - 1] if j else None
    if tok.is_punct("["):
        return before is not None and before.is_punct("-")
    is_call = before is not None and (before.kind == "identifier" or before.is_keyword(*_CALLS))
    return tok.is_punct("(") and not is_call


def _comparison(tokens: list[Token], eq: int, bindings: dict[str, str]) -> list[_Site]:
    """`x.prop = <literal>` or `<literal> = x.prop` around the `=` at `eq`."""
    right = _literal_at(tokens, eq + 1)
    left_prop = property_at(tokens, eq - 3)
    if right is not None and left_prop is not None:
        literal, after, wrapped = right
        var, prop = left_prop
        start, end = tokens[eq + 1].position, tokens[after - 1].end
        key = (tokens[eq - 1].position, tokens[eq - 1].end)
        return [_Site(start, end, literal, bindings.get(var), prop, wrapped, False, key)]
    right_prop = property_at(tokens, eq + 1)
    if right_prop is None:
        return []
    for back in (1, 4):  # a bare literal, or toLower( 'x' )
        found = _literal_at(tokens, eq - back)
        if found is not None and found[1] == eq:
            literal, _after, wrapped = found
            var, prop = right_prop
            start, end = tokens[eq - back].position, tokens[eq - 1].end
            key = (tokens[eq + 3].position, tokens[eq + 3].end)
            return [_Site(start, end, literal, bindings.get(var), prop, wrapped, False, key)]
    return []


def with_literal(cypher: str, label: str, prop: str, value: str, new: str) -> str | None:
    """`cypher` with each equality of `label`.`prop` on the string `value` (in a node's map or
    a `x.prop =`) comparing with `new` instead; None when there is none, or one is wrapped in a
    case function (`toLower('x')`: the other side may be lowered too)."""
    sites = [
        site
        for site in _sites(tokenize(cypher))
        if site.label == label and site.prop == prop and site.literal.value == value
    ]
    if not sites or any(site.wrapped for site in sites):
        return None
    quoted = "'" + new.replace("\\", "\\\\").replace("'", "\\'") + "'"
    for site in sorted(sites, key=lambda s: s.start, reverse=True):
        cypher = cypher[: site.start] + quoted + cypher[site.end :]
    return cypher


def with_condition(cypher: str, label: str, prop: str, value: str, condition: str) -> str | None:
    """`cypher` with each equality of `label`.`prop` on the string `value` written as
    `condition` instead: `st.name = 'Coffee Bar'` becomes the condition in place, a map entry
    `{name: 'Coffee Bar'}` goes and the condition joins the WHERE of the MATCH that holds it
    (one is added where there is none). None when there is none, or one is wrapped in a case
    function or written the other way round (`'x' = st.name`)."""
    tokens = tokenize(cypher)
    sites = [
        site
        for site in _sites(tokens)
        if site.label == label and site.prop == prop and site.literal.value == value
    ]
    if not sites or any(s.wrapped or (not s.in_map and s.key[0] > s.start) for s in sites):
        return None
    mapped = next((s for s in sites if s.in_map), None)
    if mapped is not None:  # one map at a time (offsets move), then the rest
        entries = node_map_entries(cypher)
        entry = next((e for e in entries if e.start <= mapped.start < e.end), None)
        if entry is None:
            return None
        added = add_condition(
            without_entries(cypher, entries, lambda e: e == entry), entry.node, condition
        )
        if added is None:
            return None
        return with_condition(added, label, prop, value, condition) or added
    for site in sorted(sites, key=lambda s: s.start, reverse=True):
        at = next(k for k, tok in enumerate(tokens) if tok.position == site.key[0])
        cypher = cypher[: tokens[at - 2].position] + condition + cypher[site.end :]
    return cypher


def with_property(cypher: str, label: str, prop: str, value: str, new: str) -> str | None:
    """`cypher` with each equality of `label`.`prop` on the string `value` comparing `new`
    (another property of the same node) instead; None when there is none."""
    sites = [
        site
        for site in _sites(tokenize(cypher))
        if site.label == label and site.prop == prop and site.literal.value == value
    ]
    if not sites:
        return None
    for site in sorted(sites, key=lambda s: s.key[0], reverse=True):
        start, end = site.key
        cypher = cypher[:start] + quote_name_if_needed(new) + cypher[end:]
    return cypher


def with_two_properties(
    cypher: str, label: str, prop: str, value: str, parts: tuple[tuple[str, str], ...]
) -> str | None:
    """`cypher` with each equality of `label`.`prop` on the string `value` written as the
    equalities of `parts` (property, Cypher literal) on the same node: `{name: 'Mark Twain'}` as
    `{name: 'Mark', surname: 'Twain'}`, `p.name = 'Mark Twain'` as `(p.name = 'Mark' AND
    p.surname = 'Twain')`; None when there is none, or one is wrapped in a case function or
    written the other way round (`'Mark Twain' = p.name`)."""
    tokens = tokenize(cypher)
    sites = [
        site
        for site in _sites(tokens)
        if site.label == label and site.prop == prop and site.literal.value == value
    ]
    if not sites or any(site.wrapped or site.key[0] > site.start for site in sites):
        return None
    edits = []
    for site in sites:
        if site.in_map:
            new = ", ".join(f"{quote_name_if_needed(k)}: {v}" for k, v in parts)
            edits.append((site.key[0], site.end, new))
            continue
        k = next(k for k, tok in enumerate(tokens) if tok.position == site.key[0])
        var = tokens[k - 2].text
        anded = " AND ".join(f"{var}.{quote_name_if_needed(p)} = {v}" for p, v in parts)
        edits.append((tokens[k - 2].position, site.end, f"({anded})"))
    for start, end, new in sorted(edits, reverse=True):
        cypher = cypher[:start] + new + cypher[end:]
    return cypher


def compared_node(cypher: str, label: str, prop: str, value: str) -> tuple[int, int, str] | None:
    """The property read of a comparison `x.prop = 'value'` on a `label` node, as (start,
    end, x): `WHERE os.name = 'Ubuntu'` gives the span of `os.name`. None when the filter is
    in a node's map, wrapped in a case function, or not there."""
    tokens = tokenize(cypher)
    for site in _sites(tokens):
        if site.in_map or site.wrapped or site.label != label or site.prop != prop:
            continue
        if site.literal.value != value:
            continue
        k = next(k for k, tok in enumerate(tokens) if tok.position == site.key[0])
        var = tokens[k - 2]
        return var.position, site.key[1], var.name
    return None


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
        open_at = next((k for k in enclosing(tokens, i) if tokens[k].is_punct("(")), None)
        close = None if open_at is None else matching_close(tokens, open_at)
        if open_at is None or close is None:
            return None
        var = tokens[open_at + 1]
        named = var.is_name and tokens[open_at + 2].is_punct(":")
        return tokens[open_at].position, tokens[close].end, var.name if named else ""
    return None
