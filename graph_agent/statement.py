"""Checks and small rewrites of one Cypher statement: schema names, directions, the row cap."""

from __future__ import annotations

import re
from collections.abc import Collection, Iterable, Sequence
from dataclasses import dataclass, field

from graph_agent.graphdb.protocol import GraphSchema, LabelInfo, RelPattern
from guardrails.cypher_tokens import ReferencedNames, Token, referenced_names, tokenize
from guardrails.words import stem

AGGREGATES = frozenset(
    {"COUNT", "SUM", "AVG", "MIN", "MAX", "COLLECT", "STDEV", "STDEVP", "PERCENTILECONT",
     "PERCENTILEDISC"}
)  # fmt: skip


def is_aggregate_call(tokens: Sequence[Token], i: int) -> bool:
    """Whether the token at `i` starts an aggregate call: `count(`, `sum(`… (not `t.count`)."""
    return (
        tokens[i].is_name
        and tokens[i].text.upper() in AGGREGATES
        and i + 1 < len(tokens)
        and tokens[i + 1].is_punct("(")
        and not (i and tokens[i - 1].is_punct("."))
    )


CLAUSE_KEYWORDS = (
    "WITH", "RETURN", "MATCH", "OPTIONAL", "UNWIND", "CALL", "WHERE", "UNION", "ORDER", "SKIP",
    "LIMIT", "CREATE", "MERGE", "SET", "DELETE", "DETACH", "REMOVE", "FOREACH",
)  # fmt: skip


def top_level_clauses(tokens: Sequence[Token]) -> list[int]:
    """Indexes of the top-level clause keywords (not `STARTS WITH`, nothing in brackets)."""
    found, depth = [], 0
    for i, tok in enumerate(tokens):
        if tok.is_punct("(", "[", "{"):
            depth += 1
        elif tok.is_punct(")", "]", "}"):
            depth = max(depth - 1, 0)
        elif depth == 0 and tok.is_keyword(*CLAUSE_KEYWORDS):
            if tok.is_keyword("WITH") and i and tokens[i - 1].is_keyword("STARTS", "ENDS"):
                continue
            found.append(i)
    return found


def fresh_variable(label: str, taken: Collection[str]) -> str:
    """A variable for a node of `label` that `taken` does not hold: `m`, `m2`, …"""
    base = label[:1].lower() or "n"
    candidates = [base, *(f"{base}{i}" for i in range(2, 99))]
    return next((c for c in candidates if c not in taken), "node")


@dataclass
class SchemaCheck:
    """The verdict of `check_schema`: the (possibly direction-corrected) statement and problems."""

    cypher: str
    problems: list[str] = field(default_factory=list)
    """Why the statement cannot run on this schema; empty when it can."""
    corrections: list[str] = field(default_factory=list)
    """What was fixed automatically (relationship directions)."""
    unknown: list[str] = field(default_factory=list)
    """Labels, relationship types and properties the statement names that the schema lacks."""


def _misplaced_properties(
    names: ReferencedNames, known: set[str], schema: GraphSchema
) -> list[str]:
    """`a.name` where `a` is an Airport and only City and Region have `name`: a read that can
    only give nulls (a 1.5B model's rows of nulls looked like answers). Properties no label has
    are reported as unknown already; labels without sampled properties are not judged."""
    wrong: dict[str, tuple[LabelInfo, list[str]]] = {}
    for var, prop in names.accesses:
        label = schema.label(names.variables.get(var, ""))
        if label is None or not label.properties or prop not in known:
            continue
        if all(p.name != prop for p in label.properties):
            props = wrong.setdefault(label.name, (label, []))[1]
            if prop not in props:
                props.append(prop)
    return [
        f"{label.name} has no propert(y/ies) {', '.join(props)}; {label.name} has: "
        + ", ".join(p.name for p in label.properties[:12])
        + "".join(_related_instead(label.name, prop, schema) for prop in props)
        for label, props in wrong.values()
    ]


def _related_instead(label: str, prop: str, schema: GraphSchema) -> str:
    """`m.type` on a Machine that has `(:Machine)-[:TYPE]->(:Type)`: the value is a related
    node, not a property. A 1.5B model given only "Machine has: id, name" wrote `m.type` three
    times; naming the relationship is what it needed."""
    prop_stem = stem(prop)
    for rel in schema.relationships:
        if label not in (rel.start, rel.end):
            continue
        other = rel.end if rel.start == label else rel.start
        if prop_stem not in (stem(rel.type), stem(other)):
            continue
        info = schema.label(other)
        keys = ", ".join(p.name for p in info.properties[:6]) if info is not None else ""
        return (
            f". Its {prop} is a related node: match (:{rel.start})-[:{rel.type}]->(:{rel.end})"
            f" and return a property of the {other}" + (f" ({keys})" if keys else "")
        )
    for rel in _neighbours_with(label, prop, schema)[:1]:
        # `m.ram` where the Machine's Type has `ram`: one hop away.
        other = rel.end if rel.start == label else rel.start
        return (
            f". {prop} is a property of the related {other}: match "
            f"(:{rel.start})-[:{rel.type}]->(:{rel.end}) and use the {other}'s {prop}"
        )
    return ""


def _neighbours_with(label: str, prop: str, schema: GraphSchema) -> list[RelPattern]:
    """The relationships from `label` to another label that has `prop`."""
    return [
        rel
        for rel in schema.relationships
        if label in (rel.start, rel.end)
        and rel.start != rel.end
        and _has(schema.label(rel.end if rel.start == label else rel.start), prop)
    ]


def _routes(schema: GraphSchema, start: str, end: str, rel_type: str, limit: int = 2) -> list[str]:
    """Two-hop paths from `start` to `end` as the schema has them, those using `rel_type`
    first: `(:Machine)-[:RUNS]->(:Application)-[:LISTENS]->(:Port)` for a `Machine-LISTENS->Port`
    the graph lacks (the machine's processes listen, not the machine)."""

    def hops(label: str) -> list[tuple[str, str]]:
        """(pattern text from `label`'s side, the label at the other end)."""
        out = [
            (f"-[:{r.type}]->(:{r.end})", r.end) for r in schema.relationships if r.start == label
        ]
        out += [
            (f"<-[:{r.type}]-(:{r.start})", r.start) for r in schema.relationships if r.end == label
        ]
        return out

    found: list[tuple[bool, str]] = []
    for first, middle in hops(start):
        if middle in (start, end):
            continue
        for second, other in hops(middle):
            if other == end:
                text = f"(:{start}){first}{second}"
                found.append((f"[:{rel_type}]" not in text, text))
    found.sort(key=lambda item: item[0])  # stable: the schema's order within each group
    return [text for _rank, text in found[:limit]]


def _property_guidance(unknown: list[str], used: set[str], schema: GraphSchema) -> str:
    """What to write instead of unknown properties, for the correct step: a property named
    like a label is reached through a relationship (`a.country` on a graph with `(:Country)`),
    else the properties the statement's labels do have. A bare "unknown property country" made
    a 1.5B model write `a.country` three times."""
    hints: list[str] = []
    by_stem = {stem(label.name): label for label in schema.labels}
    for prop in unknown:
        label = by_stem.get(stem(prop))
        if label is None:
            continue
        paths = [
            f"(:{r.start})-[:{r.type}]->(:{r.end})"
            for r in schema.relationships
            if label.name in (r.start, r.end) and (not used or {r.start, r.end} & used)
        ][:3]
        keys = ", ".join(p.name for p in label.properties[:6])
        via = f" through {' or '.join(paths)}" if paths else " through a relationship"
        hints.append(
            f"{prop} is the node label {label.name}: reach it{via} and return its "
            f"properties ({keys})"
        )
    if not hints:
        for name in sorted(used)[:3]:
            label = schema.label(name)
            if label is not None and label.properties:
                keys = ", ".join(p.name for p in label.properties[:12])
                hints.append(f"{name} has: {keys}")
    return f" ({'; '.join(hints)})" if hints else ""


def _labels_held_as_properties(unknown: set[str], schema: GraphSchema) -> dict[str, str]:
    """Unknown labels that are a property of some label (`(:Runway)` on a graph whose Airport
    has `runways`): label → what to write instead. Such a name is not data the graph lacks."""
    found: dict[str, str] = {}
    for name in sorted(unknown):
        owners = [
            (label.name, prop.name)
            for label in schema.labels
            for prop in label.properties
            if stem(prop.name) == stem(name)
        ]
        if owners:
            where = "; ".join(f"{owner}.{prop}" for owner, prop in owners[:3])
            found[name] = (
                f"{name} is not a node label but a property ({where}): match the "
                f"{owners[0][0]} node and return its {owners[0][1]}"
            )
    return found


def _fits(want: str | None, have: str) -> bool:
    return want is None or want == have


def check_schema(cypher: str, schema: GraphSchema) -> SchemaCheck:
    """Unknown labels, relationship types and properties; directions the schema never has.

    A relationship written against the only direction the schema allows is flipped in place
    when every use of that type in the statement is reversed; otherwise it is a problem.
    """
    names = referenced_names(cypher)
    labels = {label.name for label in schema.labels}
    types = {rel.type for rel in schema.relationships}
    props = {p.name for label in schema.labels for p in label.properties}
    props |= {p.name for rel in schema.relationships for p in rel.properties}
    check = SchemaCheck(cypher=cypher)
    held_as_property = _labels_held_as_properties(names.labels - labels, schema)
    check.unknown = sorted(
        (names.labels - labels - set(held_as_property))
        | (names.rel_types - types)
        | (names.properties - props)
    )
    if unknown := sorted(names.labels - labels):
        check.problems.append(
            f"unknown label(s) {', '.join(unknown)}; labels are: {', '.join(sorted(labels))}"
            + "".join(f". {hint}" for hint in held_as_property.values())
        )
    if unknown := sorted(names.rel_types - types):
        check.problems.append(
            f"unknown relationship type(s) {', '.join(unknown)}; "
            f"types are: {', '.join(sorted(types))}"
        )
    if unknown := sorted(names.properties - props):
        check.problems.append(
            f"unknown propert(y/ies) {', '.join(unknown)}"
            + _property_guidance(unknown, names.labels & labels, schema)
        )
    check.problems.extend(_misplaced_properties(names, props, schema))

    reversed_types: set[str] = set()
    kept_types: set[str] = set()
    for left, rel_type, right, direction in names.patterns:
        if direction == "-" or rel_type not in types:
            continue
        start, end = (left, right) if direction == "->" else (right, left)
        known = [r for r in schema.relationships if r.type == rel_type]
        if any(_fits(start, r.start) and _fits(end, r.end) for r in known):
            kept_types.add(rel_type)
        elif any(_fits(end, r.start) and _fits(start, r.end) for r in known):
            reversed_types.add(rel_type)
        else:
            # The patterns nearest the one written first: same start, then same end.
            known.sort(key=lambda r: (r.start != start, r.end != end))
            allowed = ", ".join(f"(:{r.start})-[:{r.type}]->(:{r.end})" for r in known[:8])
            problem = (
                f"no ({':' + start if start else ''})-[:{rel_type}]->({':' + end if end else ''})"
                f" in the graph; it has {allowed}" + ("…" if len(known) > 8 else "")
            )
            # A route only when the start never has this relationship and no other one links
            # the two labels (`Machine-LISTENS->Port`: the machine's processes listen); else
            # the nearest patterns above are the better hint.
            linked = any({r.start, r.end} == {start, end} for r in schema.relationships)
            has_type = any(r.start == start for r in known)
            routes = (
                _routes(schema, start, end, rel_type)
                if start in labels and end in labels and not linked and not has_type
                else []
            )
            if routes:
                problem += f". {start} reaches {end} through {' or '.join(routes)}"
            check.problems.append(problem)
    for rel_type in sorted(reversed_types):
        known = [r for r in schema.relationships if r.type == rel_type]
        allowed = ", ".join(f"(:{r.start})-[:{r.type}]->(:{r.end})" for r in known)
        if rel_type in kept_types:
            check.problems.append(f"wrong direction for {rel_type}: the graph has {allowed}")
            continue
        check.cypher = flip_relationships(check.cypher, rel_type)
        check.corrections.append(f"reversed {rel_type} to match {allowed}")
    return check


def _rel_groups(tokens: list[Token]) -> list[tuple[list[str], list[Token], list[Token]]]:
    """Each `-[...]-` relationship: (types, arrow tokens on the left, arrow tokens on the right)."""
    groups = []
    for i, tok in enumerate(tokens):
        if not tok.is_punct("[") or i == 0 or not tokens[i - 1].is_punct("-"):
            continue
        left = [tokens[i - 1]]
        if i >= 2 and tokens[i - 2].is_punct("<"):
            left.insert(0, tokens[i - 2])
        elif not (i >= 2 and tokens[i - 2].is_punct(")")):
            continue
        depth, k, rel_types = 0, i, []
        while k < len(tokens):
            if tokens[k].is_punct("["):
                depth += 1
            elif tokens[k].is_punct("]"):
                depth -= 1
                if depth == 0:
                    break
            elif (
                tokens[k].is_punct(":", "|")
                and depth == 1
                and k + 1 < len(tokens)
                and tokens[k + 1].is_name
            ):
                rel_types.append(tokens[k + 1].value)
            k += 1
        if k + 1 >= len(tokens) or not tokens[k + 1].is_punct("-"):
            continue
        right = [tokens[k + 1]]
        if k + 2 < len(tokens) and tokens[k + 2].is_punct(">"):
            right.append(tokens[k + 2])
        groups.append((rel_types, left, right))
    return groups


def flip_relationships(cypher: str, rel_type: str) -> str:
    """Reverse the arrow of every directed `-[:rel_type]-` in the statement."""
    edits: list[tuple[int, int, str]] = []  # (start, end, replacement)
    for rel_types, left, right in _rel_groups(tokenize(cypher)):
        if rel_type not in rel_types:
            continue
        points_right = len(right) == 2
        points_left = len(left) == 2
        if points_right == points_left:
            continue
        if points_right:
            edits.append((left[0].position, left[0].position, "<"))
            edits.append((right[1].position, right[1].end, ""))
        else:
            edits.append((left[0].position, left[0].end, ""))
            edits.append((right[-1].end, right[-1].end, ">"))
    for start, end, text in sorted(edits, reverse=True):
        cypher = cypher[:start] + text + cypher[end:]
    return cypher


def needs_limit(cypher: str) -> bool:
    """True when the statement has no LIMIT, no UNION and its final RETURN does not aggregate."""
    tokens = tokenize(cypher)
    if any(t.is_keyword("LIMIT", "UNION") for t in tokens):
        return False
    returns = [i for i, t in enumerate(tokens) if t.is_keyword("RETURN")]
    if not returns:
        return False
    tail = tokens[returns[-1] + 1 :]
    return not any(is_aggregate_call(tail, i) for i in range(len(tail)))


def _branches(tokens: list[Token]) -> list[tuple[int, int]]:
    """(first, end) token ranges of the parts of a top-level UNION (one range without UNION)."""
    ranges: list[tuple[int, int]] = []
    depth = 0
    start = 0
    i = 0
    while i < len(tokens):
        tok = tokens[i]
        if tok.is_punct("(", "[", "{"):
            depth += 1
        elif tok.is_punct(")", "]", "}"):
            depth -= 1
        elif depth == 0 and tok.is_keyword("UNION"):
            ranges.append((start, i))
            if i + 1 < len(tokens) and tokens[i + 1].is_keyword("ALL"):
                i += 1
            start = i + 1
        i += 1
    ranges.append((start, len(tokens)))
    return ranges


def _single_row(items: list[Token]) -> bool:
    """True when every top-level item of a RETURN is one aggregate call (`count(x) AS n`)."""
    item: list[Token] = []
    groups: list[list[Token]] = []
    depth = 0
    for tok in items:
        if tok.is_punct("(", "[", "{"):
            depth += 1
        elif tok.is_punct(")", "]", "}"):
            depth -= 1
        if depth == 0 and tok.is_punct(","):
            groups.append(item)
            item = []
        else:
            item.append(tok)
    groups.append(item)
    for group in groups:
        if len(group) > 1 and group[0].is_keyword("DISTINCT"):
            group = group[1:]
        if len(group) < 3 or group[0].text.upper() not in AGGREGATES:
            return False
        if not group[1].is_punct("("):
            return False
        depth, close = 0, None
        for k, tok in enumerate(group[1:], start=1):
            depth += tok.is_punct("(", "[", "{") - tok.is_punct(")", "]", "}")
            if depth == 0:
                close = k
                break
        rest = group[close + 1 :] if close is not None else [group[0]]
        if rest and not (len(rest) == 2 and rest[0].is_keyword("AS") and rest[1].is_name):
            return False
    return True


def _cap_branch(
    tokens: list[Token], first: int, end: int, limit: int
) -> tuple[int, int, str] | None:
    """The edit that caps one UNION part's final RETURN at `limit` rows, or None when it is."""
    depth = 0
    final_return = None
    final_limit = None
    for i in range(first, end):
        tok = tokens[i]
        if tok.is_punct("(", "[", "{"):
            depth += 1
        elif tok.is_punct(")", "]", "}"):
            depth -= 1
        elif depth == 0 and tok.is_keyword("RETURN"):
            final_return, final_limit = i, None
        elif depth == 0 and tok.is_keyword("LIMIT") and final_return is not None:
            final_limit = i
        elif depth == 0 and tok.is_keyword("WITH", "UNWIND", "MATCH", "CALL", "OPTIONAL"):
            final_return = final_limit = None
    if final_return is None or end <= first:
        return None  # a standalone CALL: the adapters' row caps apply
    last = tokens[end - 1]
    if final_limit is None:
        stop = next(
            (i for i in range(final_return + 1, end) if tokens[i].is_keyword("ORDER", "SKIP")),
            end,
        )
        if _single_row(tokens[final_return + 1 : stop]):
            return None
        return last.end, last.end, f"\nLIMIT {limit}"
    written = tokens[final_limit + 1 : end]
    literal = len(written) == 1 and written[0].kind == "number" and written[0].text.isdigit()
    if literal and int(written[0].text) <= limit:
        return None
    # A larger literal, a parameter or an expression: the cap replaces it.
    return tokens[final_limit].position, last.end, f"LIMIT {limit}"


def with_limit(cypher: str, limit: int) -> str:
    """The statement with its outermost result capped at `limit` rows.

    Every part of a top-level UNION gets `LIMIT limit` on its final RETURN (in Cypher each
    part's LIMIT is its own); a LIMIT the statement already has stays when it is a literal
    no larger than `limit` and is replaced otherwise. A RETURN of aggregates only (one row)
    is left alone. Why always: a model's own `LIMIT 3000000`, or a UNION, used to switch
    the cap off, and the engine then built millions of rows the adapter threw away.
    """
    stripped = cypher.rstrip().rstrip(";").rstrip()
    tokens = tokenize(stripped)
    edits = [
        edit
        for first, end in _branches(tokens)
        if (edit := _cap_branch(tokens, first, end, limit)) is not None
    ]
    for start, stop, text in sorted(edits, reverse=True):
        stripped = stripped[:start] + text + stripped[stop:]
    return stripped


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
        if label is None or not label.properties or _has(label, prop):
            continue
        hops = {
            (rel.start, rel.type, rel.end) for rel in _neighbours_with(label.name, prop, schema)
        }
        if len(hops) != 1:
            continue
        start, rel_type, end = hops.pop()
        other = end if start == label.name else start
        moved = {
            p
            for v, p in names.accesses
            if v == var and not _has(label, p) and _has(schema.label(other), p)
        }
        changed = _add_hop(cypher, tokens, var, label.name, other, start, rel_type, names, moved)
        if changed is None or check_schema(changed, schema).problems:
            continue
        return (
            changed,
            f"{var}.{prop} read from the related {other} (:{start})-[:{rel_type}]->(:{end})",
        )
    return None


def _has(label: LabelInfo | None, prop: str) -> bool:
    return label is not None and any(p.name == prop for p in label.properties)


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
