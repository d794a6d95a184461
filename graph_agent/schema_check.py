"""The schema check: labels, relationship types, properties and directions a statement names,
with the notes that say what the graph has instead; a direction written against the only one the
schema allows is flipped in place."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from graph_agent.graphdb.protocol import GraphSchema, LabelInfo, RelPattern
from graph_agent.lint import MapEntry, node_map_entries
from guardrails import (
    ReferencedNames,
    Token,
    matching_close,
    nesting,
    referenced_names,
    stem,
    tokenize,
)


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
    names: ReferencedNames,
    entries: list[MapEntry],
    known: set[str],
    schema: GraphSchema,
    chained: list[tuple[str, str]],
) -> list[str]:
    """`a.name` where `a` is an Airport and only City and Region have `name`: a read that can
    only give nulls (a 1.5B model's rows of nulls looked like answers). The same in a pattern's
    map, `(p:Product {categoryName: 'Seafood'})` where only Category has it, matches nothing
    (a real playground question answered "nothing matches"), and at the head of a chain,
    `r.type.cpu` of a Rack where only Type has `type` (every rack summed 0 CPUs in a playground
    trial). Properties no label has are reported as unknown already; labels without sampled
    properties are not judged."""
    wrong: dict[str, tuple[LabelInfo, list[str]]] = {}
    written = [(names.variables.get(var, ""), prop) for var, prop in [*names.accesses, *chained]]
    written += [(e.label or "", e.prop) for e in entries]
    for label_name, prop in written:
        label = schema.label(label_name)
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


def _misread_relationships(
    names: ReferencedNames, known: set[str], schema: GraphSchema
) -> list[str]:
    """`r.year` where `r` is a PARTICIPATED_IN relationship, which holds no year, and the
    Tournament at its end does: a read that only gives nulls (a trial on a graph of football
    tournaments answered "when did England first take part" with "(none)"). Properties no
    label or relationship has are reported as unknown already."""
    wrong: dict[str, list[str]] = {}
    for var, prop in names.accesses:
        rel_type = names.rel_variables.get(var)
        if rel_type is None or var in names.variables or prop not in known:
            continue
        patterns = [r for r in schema.relationships if r.type == rel_type]
        if not patterns or any(p.name == prop for r in patterns for p in r.properties):
            continue
        if prop not in (props := wrong.setdefault(rel_type, [])):
            props.append(prop)
    problems = []
    for rel_type, props in wrong.items():
        patterns = [r for r in schema.relationships if r.type == rel_type]
        held = sorted({p.name for r in patterns for p in r.properties})
        text = f"{rel_type} relationships have no propert(y/ies) {', '.join(props)}; " + (
            f"they have: {', '.join(held)}" if held else "they have none"
        )
        for prop in props:
            ends = sorted(
                {
                    end
                    for r in patterns
                    for end in (r.start, r.end)
                    if has_property(schema.label(end), prop)
                }
            )
            if ends:
                text += f". {prop} is a property of the {' or the '.join(ends)} at its end"
        problems.append(text)
    return problems


def chain_starts(tokens: Sequence[Token]) -> list[int]:
    """Where each `v.a.b` chain of property reads starts: the index of `v` (not of a link
    further along a chain)."""
    return [
        k
        for k in range(len(tokens) - 4)
        if tokens[k].is_name
        and tokens[k + 1].is_punct(".")
        and tokens[k + 2].is_name
        and tokens[k + 3].is_punct(".")
        and tokens[k + 4].is_name
        and not (k and tokens[k - 1].is_punct("."))
    ]


def _chain_heads(cypher: str) -> list[tuple[str, str]]:
    """(variable, property) at the head of each `v.a.b` the statement reads."""
    tokens = tokenize(cypher)
    return [(tokens[k].name, tokens[k + 2].name) for k in chain_starts(tokens)]


TEMPORAL_FIELDS = frozenset(
    {"year", "quarter", "month", "week", "day", "dayOfWeek", "dayOfYear", "hour", "minute",
     "second", "millisecond", "epochSeconds", "epochMillis"}
)  # fmt: skip
"""What `d.year` reads of a date or a date and time (Cypher's temporal accessors)."""


def _temporal_fields(
    tokens: Sequence[Token], names: ReferencedNames, schema: GraphSchema
) -> set[str]:
    """The accessors read at the end of `v.d.year` where d is a date property of v's label
    (`o.orderDate.year`): parts of the value, not properties the schema should have."""
    found = set()
    for k in chain_starts(tokens):
        head, tail = tokens[k + 2].name, tokens[k + 4].name
        label = schema.label(names.variables.get(tokens[k].name, ""))
        info = next((p for p in label.properties if p.name == head), None) if label else None
        temporal = info is not None and {"DATE", "DATETIME"} & set(info.types)
        if temporal and tail in TEMPORAL_FIELDS:
            found.add(tail)
    return found


def _related_instead(label: str, prop: str, schema: GraphSchema) -> str:
    """`m.type` on a Machine that has `(:Machine)-[:TYPE]->(:Type)`: the value is a related
    node, not a property; or a relationship's property, or a neighbour's. A 1.5B model given only "Machine has: id, name" wrote `m.type` three
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
    for rel in schema.relationships:
        # `m.watchCount` where `(:User)-[:WATCHED {watchCount}]->(:Movie)` holds it (a trial on
        # a movie graph nobody here wrote: "the five most watched horror movies" was sorted on
        # `m.watchCount` twice, told only what a Movie has).
        if label in (rel.start, rel.end) and any(p.name == prop for p in rel.properties):
            return (
                f". {prop} is a property of the {rel.type} relationship: match "
                f"(:{rel.start})-[r:{rel.type}]->(:{rel.end}) and use r.{prop} (sum(r.{prop}) "
                f"for a total per {label})"
            )
    for rel in neighbours_with(label, prop, schema)[:1]:
        # `m.ram` where the Machine's Type has `ram`: one hop away.
        other = rel.end if rel.start == label else rel.start
        return (
            f". {prop} is a property of the related {other}: match "
            f"(:{rel.start})-[:{rel.type}]->(:{rel.end}) and use the {other}'s {prop}"
        )
    return ""


def neighbours_with(label: str, prop: str, schema: GraphSchema) -> list[RelPattern]:
    """The relationships from `label` to another label that has `prop`."""
    return [
        rel
        for rel in schema.relationships
        if label in (rel.start, rel.end)
        and rel.start != rel.end
        and has_property(schema.label(rel.end if rel.start == label else rel.start), prop)
    ]


def arrow(side: str, rel: RelPattern) -> str:
    """`rel` written from its `side` label's end: `-[:T]->` or `<-[:T]-`."""
    return f"-[:{rel.type}]->" if rel.start == side else f"<-[:{rel.type}]-"


def two_hop_paths(schema: GraphSchema, start: str, end: str) -> list[tuple[str, set[str]]]:
    """Every path `start … end` through a third label, as pattern text from `start`'s side
    (`<-[:MEMBER_OF]-(:Person)-[:WORKS_ON]->`) with the two types it uses, in the schema's
    order."""

    def hops(label: str) -> list[tuple[RelPattern, str]]:
        """The relationships at `label`, leaving it first, with the label at the other end."""
        rels = schema.relationships
        return [(r, r.end) for r in rels if r.start == label] + [
            (r, r.start) for r in rels if r.end == label
        ]

    found: dict[str, set[str]] = {}
    for one, middle in hops(start):
        if middle in (start, end):
            continue
        for two, other in hops(middle):
            if other == end:
                text = f"{arrow(start, one)}(:{middle}){arrow(middle, two)}"
                found.setdefault(text, {one.type, two.type})
    return list(found.items())


def _routes(schema: GraphSchema, start: str, end: str, rel_type: str, limit: int = 2) -> list[str]:
    """Two-hop paths from `start` to `end` as the schema has them, those using `rel_type`
    first: `(:Machine)-[:RUNS]->(:Application)-[:LISTENS]->(:Port)` for a `Machine-LISTENS->Port`
    the graph lacks (the machine's processes listen, not the machine)."""
    paths = sorted(two_hop_paths(schema, start, end), key=lambda p: rel_type not in p[1])
    return [f"(:{start}){text}(:{end})" for text, _types in paths[:limit]]


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
    has `runways`) or of a relationship (`(:Rating)` where `(:User)-[:RATED {rating}]->
    (:Movie)`): label → what to write instead. Such a name is not data the graph lacks."""
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
            continue
        on_rels = [
            (rel, prop.name)
            for rel in schema.relationships
            for prop in rel.properties
            if stem(prop.name) == stem(name)
        ]
        if on_rels:
            rel, prop = on_rels[0]
            found[name] = (
                f"{name} is not a node label but a property of the relationship {rel.type}: "
                f"write (a:{rel.start})-[r:{rel.type}]->(b:{rel.end}) and use r.{prop}"
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
    props |= _temporal_fields(tokenize(cypher), names, schema)
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
    check.problems.extend(
        _misplaced_properties(names, node_map_entries(cypher), props, schema, _chain_heads(cypher))
    )
    check.problems.extend(_misread_relationships(names, props, schema))

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
        k = matching_close(tokens, i)
        if k is None or k + 1 >= len(tokens) or not tokens[k + 1].is_punct("-"):
            continue
        rel_types = [
            tokens[j + 1].value
            for j, tok, depth in nesting(tokens, i + 1, k)
            if depth == 0 and tok.is_punct(":", "|") and tokens[j + 1].is_name
        ]
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


def has_property(label: LabelInfo | None, prop: str) -> bool:
    """Whether the label is known and has that property."""
    return label is not None and any(p.name == prop for p in label.properties)
