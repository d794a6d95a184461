"""Relationships written wrong, put right from the schema.

A relationship written between two labels the schema never links that way is put on the road
the schema has: the one relationship between them, or the one two-hop path that uses it.

`(t:Team)-[:WORKS_ON]->(p:Project)` on a graph where people work on projects and are members of
teams becomes `(t:Team)<-[:MEMBER_OF]-(:Person)-[:WORKS_ON]->(p:Project)`; and
`(s:Service)-[:DEPENDS_ON]->(t:Technology)` where services only depend on services and use
technologies becomes `(s:Service)-[:USES]->(t:Technology)`. The schema check already tells the
model both; a 1.5B model sent the same statement back on both attempts (dev records).

A property the relationship holds, read from one of its nodes (`b.distance` for a route's
distance), is read from the relationship.
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass

from graph_agent.graphdb.protocol import GraphSchema
from graph_agent.graphdb.schema import NUMBER_TYPES
from graph_agent.pruning import name_words as name_stems
from graph_agent.schema_check import arrow, check_schema, has_property, two_hop_paths
from graph_agent.schema_paths import schema_paths
from graph_agent.statement import (
    Statement,
    add_condition,
    binding,
    fresh_variable,
    match_end,
    property_reads,
)
from graph_agent.superlatives import name_properties
from graph_agent.words import SUPERLATIVE_EST
from guardrails import (
    ReferencedNames,
    Token,
    content_words,
    matching_close,
    matching_open,
    name_words,
    referenced_names,
    stem,
    tokenize,
)


@dataclass(frozen=True)
class Hop:
    """One written `-[:TYPE]->` between two node patterns."""

    first: int
    """Token index of the relationship's first arrow token (`<` or `-`)."""
    last: int
    """Token index of its last arrow token (`-` or `>`)."""
    left: str | None
    """Label of the node written before it (its own, or its variable's)."""
    right: str | None
    rel_type: str
    points_right: bool
    left_var: str | None = None
    right_var: str | None = None
    rel_var: str | None = None
    """The relationship's variable, when it has one."""
    colon_at: int = 0
    """Token index of the colon before the type (where a variable goes)."""


def _node_var(tokens: Sequence[Token]) -> str | None:
    return tokens[0].name if tokens and tokens[0].is_name else None


def _node_label(tokens: Sequence[Token], names: ReferencedNames) -> str | None:
    """The label of a node pattern's inside (`p:Person {…}`, `p`, `:Person`)."""
    if len(tokens) >= 2 and tokens[0].is_punct(":") and tokens[1].is_name:
        return tokens[1].name
    if tokens and tokens[0].is_name:
        if len(tokens) >= 3 and tokens[1].is_punct(":") and tokens[2].is_name:
            return tokens[2].name
        return names.variables.get(tokens[0].name)
    return None


def written_hops(tokens: list[Token], names: ReferencedNames) -> Iterator[Hop]:
    """Every directed one-hop relationship of one plain type (`[:T]` or `[r:T]`) between two
    node patterns; variable-length or filtered ones are left."""
    for i, tok in enumerate(tokens):
        if not tok.is_punct("[") or i < 2 or not tokens[i - 1].is_punct("-"):
            continue
        first = i - 2 if tokens[i - 2].is_punct("<") else i - 1
        close = matching_close(tokens, i)
        if first < 1 or close is None or close + 2 >= len(tokens):
            continue
        if not tokens[first - 1].is_punct(")") or not tokens[close + 1].is_punct("-"):
            continue
        last = close + 2 if tokens[close + 2].is_punct(">") else close + 1
        if last + 1 >= len(tokens) or not tokens[last + 1].is_punct("("):
            continue
        if tokens[first].is_punct("<") == tokens[last].is_punct(">"):
            continue  # undirected, or both ways
        inner = tokens[i + 1 : close]
        rel_var = inner[0].name if len(inner) == 3 and inner[0].is_name else None
        if rel_var is not None:
            inner = inner[1:]
        if len(inner) != 2 or not inner[0].is_punct(":") or not inner[1].is_name:
            continue
        opened = matching_open(tokens, first - 1)
        shut = matching_close(tokens, last + 1)
        if opened is None or shut is None:
            continue
        yield Hop(
            first,
            last,
            _node_label(tokens[opened + 1 : first - 1], names),
            _node_label(tokens[last + 2 : shut], names),
            inner[1].name,
            tokens[last].is_punct(">"),
            _node_var(tokens[opened + 1 : first - 1]),
            _node_var(tokens[last + 2 : shut]),
            rel_var,
            close - 2,
        )


_RECIPROCAL_WORDS = """know sibling married marry spouse friend partner related relative
    colleague neighbour neighbor cousin acquainted acquaintance twin interact connected similar
    peer teammate"""
_RECIPROCAL = frozenset(stem(w) for w in _RECIPROCAL_WORDS.split())
"""Stems of the words that name a relationship both ends have alike: who knows whom is one
fact, stored once, in whichever direction the import happened to write it."""


def reciprocal_fix(cypher: str, schema: GraphSchema) -> tuple[str, str] | None:
    """The statement with each directed relationship between two nodes of one label whose type
    names a reciprocal tie (`KNOWS`, `SIBLING_OF`, `MARRIED_TO`) read both ways, and what
    changed; None when there is none. Only where one end is named or read again (a filter, a
    returned or counted node): a count of every such tie would count each twice. Between two
    labels, a reciprocal tie the schema has both ways round is read both ways wherever it is
    written ("Which groups is Gimli related to?" found two of six on a co-occurrence graph
    that stores each pair once, in whichever direction its source listed it); a type that runs
    both ways but names no reciprocal tie (an application that depends on software, software
    on an application) keeps its direction."""
    tokens = tokenize(cypher)
    names = referenced_names(cypher)
    cuts: list[int] = []
    turned: list[str] = []
    for hop in written_hops(tokens, names):
        if hop.left is None or hop.right is None or not name_stems(hop.rel_type) & _RECIPROCAL:
            continue
        ways = {(r.start, r.end) for r in schema.relationships if r.type == hop.rel_type}
        if hop.left != hop.right:
            # Two labels the tie joins both ways round (a character related to a place, and
            # a place to a character): each pair is stored once, either way; both are read.
            if {(hop.left, hop.right), (hop.right, hop.left)} <= ways:
                cuts.append(tokens[hop.last if hop.points_right else hop.first].position)
                turned.append(hop.rel_type)
            continue
        if (hop.left, hop.left) not in ways:
            continue
        if not (_read_again(tokens, hop.left_var) or _read_again(tokens, hop.right_var)) and not (
            _has_map(tokens, hop.first - 1) or _has_map(tokens, hop.last + 1)
        ):
            continue
        cuts.append(tokens[hop.last if hop.points_right else hop.first].position)
        turned.append(hop.rel_type)
    if not cuts:
        return None
    fixed = cypher
    for at in sorted(cuts, reverse=True):
        fixed = fixed[:at] + fixed[at + 1 :]
    ties = ", ".join(dict.fromkeys(turned))
    return (
        fixed,
        f"{ties} read both ways (a tie both ends have alike is stored once, either way round)",
    )


_BOTH = re.compile(r"\bboth\b|\bin common\b|\bcommon to\b|\bshared by\b", re.IGNORECASE)


def both_chained_fix(cypher: str, question: str) -> tuple[str, str] | None:
    """For a question about what two named things both have, the statement whose chain runs
    from one through the other, `(a {A})-[:T]->(b {B})-[:T]->(x)`, with both pointing at the
    third, `(a {A})-[:T]->(x)<-[:T]-(b {B})`, and what changed; None when there is no such
    chain. Only two hops of one type and one direction between nodes of one label, the
    middle node and one end named by a property map."""
    if not _BOTH.search(question):
        return None
    tokens = tokenize(cypher)
    for one, two in itertools.pairwise(written_hops(tokens, referenced_names(cypher))):
        if two.first - 1 != matching_close(tokens, one.last + 1) or one.rel_type != two.rel_type:
            continue
        if one.points_right != two.points_right or not one.left == one.right == two.right:
            continue
        start, end = matching_open(tokens, one.first - 1), matching_close(tokens, two.last + 1)
        if start is None or end is None or not _has_map(tokens, one.last + 1):
            continue

        def text(a: int, b: int) -> str:
            return cypher[tokens[a].position : tokens[b].end]

        first, middle, last = (
            text(start, one.first - 1),
            text(one.last + 1, two.first - 1),
            text(two.last + 1, end),
        )
        ahead, behind = text(one.first, one.last), text(two.first, two.last)
        back = behind[:-1].replace("-", "<-", 1) if two.points_right else behind[1:] + ">"
        if _has_map(tokens, one.first - 1):  # (A)-(B)-(x): (A)-(x)-(B)
            chain, free = first + ahead + last + back + middle, last
        elif _has_map(tokens, two.last + 1):  # (x)-(B)-(A): (A)-(x)-(B)
            chain, free = last + back + first + ahead + middle, first
        else:
            continue
        fixed = cypher[: tokens[start].position] + chain + cypher[tokens[end].end :]
        return (
            fixed,
            f"{middle} and the other named node both linked to {free}, not one through the other",
        )
    return None


def _read_again(tokens: Sequence[Token], var: str | None) -> bool:
    """Whether a node's variable is used outside the pattern that binds it."""
    return var is not None and sum(1 for t in tokens if t.is_name and t.name == var) > 1


def _has_map(tokens: Sequence[Token], edge: int) -> bool:
    """Whether the node pattern whose parenthesis is at `edge` carries a property map."""
    closing = tokens[edge].is_punct(")")
    other = matching_open(tokens, edge) if closing else matching_close(tokens, edge)
    if other is None:
        return False
    start, end = (other, edge) if closing else (edge, other)
    return any(t.is_punct("{") for t in tokens[start:end])


def _roads(
    cypher: str, schema: GraphSchema, most: int, question: str = ""
) -> Iterator[list[tuple[str, str]]]:
    """For each written relationship the schema lacks between its two labels, the statements
    with it put on a road the schema has, and what changed: the one two-hop path through a
    third label that uses the written type where the `question` says that type and not the
    direct one, else the one relationship type that links the two labels directly, else the
    two-hop paths that use the written type (up to `most` of them; none when there are more);
    where nothing links the two within two hops, the one shortest road of three or four
    (`long_roads`; of those that use the written type, where any does). Only the roads that
    leave fewer schema problems than the statement had."""
    tokens = tokenize(cypher)
    names = referenced_names(cypher)
    before = len(check_schema(cypher, schema).problems)
    said = {stem(w) for w in content_words(question)}
    said -= {stem(w) for label in names.labels for w in name_words(label)}  # "version": a label
    for hop in written_hops(tokens, names):
        if hop.left is None or hop.right is None:
            continue
        if hop.rel_var is not None and any(t.name == hop.rel_var for t in tokens[hop.last :]):
            continue  # its variable is read further on: the road would lose it
        if schema.label(hop.left) is None or schema.label(hop.right) is None:
            continue
        ends = {hop.left, hop.right}
        links = [r for r in schema.relationships if {r.start, r.end} == ends]
        if any(r.type == hop.rel_type for r in links):
            continue
        start, end = (hop.left, hop.right) if hop.points_right else (hop.right, hop.left)
        missing = f"no (:{start})-[:{hop.rel_type}]->(:{end})"
        roads: list[tuple[str, str]] = []
        paths = two_hop_paths(schema, hop.left, hop.right)
        routes = [text for text, types in paths if hop.rel_type in types]
        direct_said = any(said & _stems(r.type) for r in links)
        if len(routes) == 1 and (not links or (said & _stems(hop.rel_type) and not direct_said)):
            # The written type the question says, through the third label it links, before
            # a direct link of another type the question never says: users answer questions
            # through their answers, while the one relationship from a user to a question is
            # ASKED (a trial on a graph nobody here wrote counted the questions each user
            # asked for "Which user has answered the most questions?").
            detail = f"{missing}: the one path that uses {hop.rel_type}, (:{hop.left}){routes[0]}(:{hop.right})"
            roads = [(routes[0], detail)]
        elif len({(r.start, r.type, r.end) for r in links}) == 1 and hop.left != hop.right:
            rel = links[0]
            detail = f"{missing}: the one relationship between them, (:{rel.start})-[:{rel.type}]->(:{rel.end})"
            roads = [(arrow(hop.left, rel), detail)]
        elif not links and not routes and hop.left != hop.right and len(paths) == 1:
            only = [text for text, _types in paths]
            # The written type is on no road between them, and one road links them: "Which
            # area has the most crimes?" written `(a:Area)-[:INVESTIGATED_BY]->(c:Crime)` (a
            # trial on the POLE graph; crimes occur at locations, which lie in areas), twice.
            detail = f"{missing}: the one path between them, (:{hop.left}){only[0]}(:{hop.right})"
            roads = [(only[0], detail)]
        elif not links and 1 < len(routes) <= most:
            roads = [
                (
                    road,
                    f"{missing}: of {len(routes)} paths that use {hop.rel_type}, (:{hop.left}){road}(:{hop.right})",
                )
                for road in routes
            ]
        elif not links and not paths and hop.left != hop.right:
            # Nothing within two hops: the one shortest road of three or four, of those using
            # the written type where any does ("Which anatomic functional area does Multaq 60
            # tablets belong to?" written `(a:AnatomicFunctionalArea)-[:HAS_ANATOMIC_FUNCTIONAL_
            # AREA]->(p:PharmaceuticalSpeciality)`, a trial on a drug classification, both
            # attempts: area, mechanism, ingredient, posology, speciality). Of several this
            # long, the one whose read finds rows is as likely a detour (a zone's racks reached
            # through switches' interfaces on the network graph, where each rack holds its
            # zone: property-for-label's), so none is chosen.
            longer = long_roads(schema, hop.left, hop.right)
            using = [text for text, types in longer if hop.rel_type in types]
            chosen = using or [text for text, _types in longer]
            if len(chosen) == 1:
                detail = (
                    f"{missing}: the one path between them, (:{hop.left}){chosen[0]}(:{hop.right})"
                )
                roads = [(chosen[0], detail)]
        at, to = tokens[hop.first].position, tokens[hop.last].end
        fitting = [
            (fixed, detail)
            for road, detail in roads
            for fixed in [cypher[:at] + road + cypher[to:]]
            if len(check_schema(fixed, schema).problems) < before
        ]
        if fitting:
            yield fitting


LONG_ROAD_HOPS = 4
"""The longest road put in place of a relationship the schema lacks (three or four hops)."""


def long_roads(schema: GraphSchema, left: str, right: str) -> list[tuple[str, set[str]]]:
    """The shortest paths of three to LONG_ROAD_HOPS hops from `left` to `right` through
    labels all different, as pattern text from `left`'s side with the types they use."""
    found: dict[str, set[str]] = {}
    shortest = LONG_ROAD_HOPS
    for path in schema_paths(schema, left, right, LONG_ROAD_HOPS):
        labels = path.labels
        if not 3 <= len(path.hops) <= shortest or len(set(labels)) < len(labels):
            continue
        shortest = len(path.hops)  # shortest first: none longer is a rival
        text = "".join(
            arrow(label, hop.rel) + (f"(:{hop.target})" if n < shortest - 1 else "")
            for n, (label, hop) in enumerate(zip(labels, path.hops, strict=False))
        )
        found.setdefault(text, {hop.rel.type for hop in path.hops})
    return list(found.items())


def reroute_relationship(
    cypher: str, schema: GraphSchema, question: str = ""
) -> tuple[str, str] | None:
    """The statement with one relationship the schema lacks between its two labels replaced by
    the schema's road between them, and what was changed; None when no road is the only one
    or the change leaves as many schema problems as before.

    The road: the one two-hop path through a third label that uses the written type, where the
    question says that type and not the one relationship that links the two labels directly
    ("Which user has answered the most questions?" written `(u:User)-[:ANSWERED]->
    (q:Question)`: `-[:PROVIDED]->(:Answer)-[:ANSWERED]->`, not ASKED); else the one
    relationship type that links the two labels directly (its direction from the schema; a type
    the graph lacks altogether is replaced the same way; never between a label and itself, where
    `MANAGES` for `REPORTS_TO` would turn the meaning round); else, when nothing links them
    directly, the one two-hop path that uses the written type; else, when nothing links them
    within two hops, the one shortest road of three or four (of those using the written type,
    where any does). A type the schema has between
    the two labels the other way round is the relationship-direction rule's."""
    return next(
        (roads[0] for roads in _roads(cypher, schema, 1, question) if len(roads) == 1), None
    )


ROADS_TO_TRY = 6
"""At most this many two-hop roads are read to find the one the data has."""


def several_roads(cypher: str, schema: GraphSchema) -> list[tuple[str, str]]:
    """Where no written relationship has one road, the first one with two to `ROADS_TO_TRY`
    two-hop paths that use its type: the statement on each (for the data to choose)."""
    return next((roads for roads in _roads(cypher, schema, ROADS_TO_TRY) if len(roads) > 1), [])


def relationship_property(cypher: str, schema: GraphSchema) -> tuple[str, str] | None:
    """The statement reading from its relationship a property a node was asked for, and what
    was changed; None when that is not the one change that makes the statement fit.

    `MATCH (a:Airport {iata: 'LHR'})-[:HAS_ROUTE]->(b:Airport {iata: 'CDG'}) RETURN b.distance`
    where routes, not airports, have a distance: the relationship gets a variable (`[r:HAS_ROUTE]`,
    or the one it has) and `b.distance` becomes `r.distance`. Only when exactly one relationship
    written next to the node has that property in the schema.
    Where the node is matched with no relationship, and exactly one relationship of its label
    in the schema has the property ("What is the average rating of The Replacements?" written `MATCH (m:Movie
    {title: 'The Replacements'}) RETURN avg(m.rating)`, a Movies trial, where reviews hold the
    rating), that relationship is matched from the node and read: `, (m)<-[r:REVIEWED]-
    (:Person) RETURN avg(r.rating)`."""
    tokens = tokenize(cypher)
    names = referenced_names(cypher)
    before = len(check_schema(cypher, schema).problems)
    hops = list(written_hops(tokens, names))
    taken = {t.name for t in tokens if t.is_name}
    for var, prop in dict.fromkeys(names.accesses):
        if has_property(schema.label(names.variables.get(var, "")), prop):
            continue
        holders = [
            hop
            for hop in hops
            if var in (hop.left_var, hop.right_var)
            and any(
                r.type == hop.rel_type and any(p.name == prop for p in r.properties)
                for r in schema.relationships
            )
        ]
        if not any(var in (hop.left_var, hop.right_var) for hop in hops):
            added = _property_hop(cypher, tokens, names, var, prop, schema)
            if added is not None and len(check_schema(added[0], schema).problems) < before:
                return added
            continue
        if len(holders) != 1:
            continue
        hop = holders[0]
        rel_var = hop.rel_var or fresh_variable(hop.rel_type, taken)
        at = tokens[hop.colon_at].position
        edits = [] if hop.rel_var else [(at, at, rel_var)]
        edits += [
            (tokens[k].position, tokens[k].end, rel_var)
            for k in property_reads(tokens, var, {prop})
        ]
        fixed = cypher
        for start, end, text in sorted(edits, reverse=True):
            fixed = fixed[:start] + text + fixed[end:]
        if len(check_schema(fixed, schema).problems) < before:
            return fixed, f"{var}.{prop} read from the relationship (:{hop.rel_type} has {prop})"
    return None


def _property_hop(
    cypher: str,
    tokens: list[Token],
    names: ReferencedNames,
    var: str,
    prop: str,
    schema: GraphSchema,
) -> tuple[str, str] | None:
    """`cypher` with the one relationship of `var`'s label that holds `prop` matched from
    `var` in the MATCH that binds it, and `var.prop` read from it; None unless there is
    exactly one such relationship in the schema (and it links two different labels)."""
    label = names.variables.get(var)
    rels = [
        r
        for r in schema.relationships
        if label in (r.start, r.end) and any(p.name == prop for p in r.properties)
    ]
    end = match_end(tokens, var)
    if len(rels) != 1 or rels[0].start == rels[0].end or end is None:
        return None
    rel = rels[0]
    rel_var = fresh_variable(rel.type, {t.name for t in tokens if t.is_name})
    hop = (
        f"-[{rel_var}:{rel.type}]->(:{rel.end})"
        if rel.start == label
        else f"<-[{rel_var}:{rel.type}]-(:{rel.start})"
    )
    end = min(end, len(cypher))
    edits = [
        (tokens[k].position, tokens[k].end, rel_var) for k in property_reads(tokens, var, {prop})
    ]
    fixed = cypher
    for start, stop, text in sorted(edits, reverse=True):
        fixed = fixed[:start] + text + fixed[stop:]
    head, tail = fixed[:end].rstrip(), fixed[end:]
    fixed = f"{head}, ({var}){hop}" + (f" {tail}" if tail else "")
    return (
        fixed,
        f"{var}.{prop} read from the relationship (:{rel.type} has {prop}), matched from {var}",
    )


def end_node_property(cypher: str, schema: GraphSchema) -> tuple[str, str] | None:
    """The statement reading from a node a property its relationship was asked for, and what
    was changed; None when that is not the one change that makes the statement fit.

    `MATCH (t:Team {name: 'England'})-[r:PARTICIPATED_IN]->(x:Tournament) WHERE r.year IS NOT
    NULL RETURN x.year ORDER BY x.year LIMIT 1` where the relationship holds no year and the
    tournament does (a trial on a graph nobody here wrote): `r.year` reads `x.year`. Only when
    the type has no such property and exactly one of the relationship's two nodes has it; a
    node without a variable gets one."""
    tokens = tokenize(cypher)
    names = referenced_names(cypher)
    before = len(check_schema(cypher, schema).problems)
    taken = {t.name for t in tokens if t.is_name}
    for hop in written_hops(tokens, names):
        if hop.rel_var is None or hop.rel_var in names.variables:
            continue
        held = {
            p.name for r in schema.relationships if r.type == hop.rel_type for p in r.properties
        }
        for prop in dict.fromkeys(p for v, p in names.accesses if v == hop.rel_var):
            ends = [
                (var, label, side)
                for var, label, side in (
                    (hop.left_var, hop.left, "left"),
                    (hop.right_var, hop.right, "right"),
                )
                if label is not None and has_property(schema.label(label), prop)
            ]
            if prop in held or len(ends) != 1 or hop.left == hop.right:
                continue
            ((var, label, side),) = ends
            edits = []
            if var is None:
                var = fresh_variable(label, taken)
                opened = hop.last + 1 if side == "right" else matching_open(tokens, hop.first - 1)
                if opened is None:
                    continue
                at = tokens[opened].end
                edits.append((at, at, var))
            edits += [
                (tokens[k].position, tokens[k].end, var)
                for k in property_reads(tokens, hop.rel_var, {prop})
            ]
            fixed = cypher
            for start, end, text in sorted(edits, reverse=True):
                fixed = fixed[:start] + text + fixed[end:]
            if len(check_schema(fixed, schema).problems) < before:
                return fixed, (
                    f"{hop.rel_var}.{prop} read from the {label} ({var}.{prop}): "
                    f"{hop.rel_type} relationships have no {prop}"
                )
    return None


def relationship_by_word(cypher: str, schema: GraphSchema, question: str) -> tuple[str, str] | None:
    """The statement with a relationship type swapped for the one the question names, and
    what was changed; None when no written type is such a swap.

    `(s:Software)-[:DEPENDS_ON]->(v:Version)` for "Which software has the most versions?"
    where software also has `-[:VERSION]->` versions: of the types the schema has from the
    one label to the other in the written direction, the one whose name the question says is
    used, when the written type's name is not said, exactly one other type's is, and the
    statement does not use that one already (then this hop is another step of the path)."""
    said = {stem(w) for w in content_words(question)}
    if not said:
        return None
    tokens = tokenize(cypher)
    names = referenced_names(cypher)
    for hop in written_hops(tokens, names):
        if hop.left is None or hop.right is None:
            continue
        start, end = (hop.left, hop.right) if hop.points_right else (hop.right, hop.left)
        types = {r.type for r in schema.relationships if (r.start, r.end) == (start, end)}
        if hop.rel_type not in types or said & _stems(hop.rel_type):
            continue
        # A type the statement uses already has the question's word (software that depends
        # on a version, reached `<-[:VERSION]-` from postgres): this hop is another one.
        named = [
            t
            for t in sorted(types - {hop.rel_type})
            if said & _stems(t) and t not in names.rel_types
        ]
        if len(named) != 1:
            continue
        at = tokens[hop.colon_at + 1]
        fixed = cypher[: at.position] + named[0] + cypher[at.end :]
        detail = f"{hop.rel_type} → {named[0]}, the relationship from {start} to {end} the question names"
        return fixed, detail
    return None


def _stems(rel_type: str) -> set[str]:
    return {stem(w) for w in content_words(" ".join(name_words(rel_type)))}


_MEASURED = re.compile(
    r"\b(longest|shortest|largest|smallest|biggest|highest|lowest|farthest|furthest|nearest|"
    r"closest|heaviest|lightest)\s+([A-Za-z][\w-]*)(?:\s+([A-Za-z][\w-]*))?",
    re.IGNORECASE,
)
_SUPERLATIVES = re.compile(rf"\b(?:most|fewest|least|{SUPERLATIVE_EST})\b", re.IGNORECASE)
_MOST_FIRST = frozenset(
    {"longest", "largest", "biggest", "highest", "farthest", "furthest", "heaviest"}
)


def relationship_sort(cypher: str, schema: GraphSchema, question: str) -> tuple[str, str] | None:
    """The statement sorted on its relationship's number where the question's superlative
    measures the relationship, and what was changed; None otherwise.

    "What are the three longest routes out of Gatwick?" written `MATCH (a:Airport {…})-
    [:HAS_ROUTE]->(b:Airport) RETURN b.longest ORDER BY b.longest DESC LIMIT 3`: "routes" names
    HAS_ROUTE, whose one number is its distance, while `b.longest` is the destination's longest
    runway. The relationship gets a variable, the sort (and the column it returned) reads
    `r.distance`, longest/largest/highest first and shortest/smallest/lowest last, with what
    the sorted node is called where nothing returned names either end. Only when the
    word after the superlative (or the one after that) names exactly one relationship written
    in the statement, its type holds exactly one number property, and the statement sorts on a
    property of one of its two nodes."""
    found = _MEASURED.search(question)
    if found is None or len(_SUPERLATIVES.findall(question)) > 1:
        return None  # two superlatives: which one the sort is for stays the model's
    said = {stem(w) for w in found.groups()[1:] if w}
    statement = Statement(cypher)
    keys = statement.order_keys()
    if statement.has_union or not keys:
        return None
    tokens = statement.tokens
    names = referenced_names(cypher)
    hops = [h for h in written_hops(tokens, names) if said & _stems(h.rel_type)]
    if len(hops) != 1:
        return None
    hop = hops[0]
    numbers = {
        p.name
        for r in schema.relationships
        if r.type == hop.rel_type
        for p in r.properties
        if set(p.types) & NUMBER_TYPES
    }
    key = keys[0]
    key_words = statement.words(key)
    returned = statement.final_return()
    items = returned[1] if returned else []
    source = next((i for i in items if i.alias and key_words == [i.alias]), None)
    read = statement.words(source) if source else key_words
    if len(numbers) != 1 or len(read) != 3 or read[1] != ".":
        return None
    if read[0] not in {hop.left_var, hop.right_var} - {None}:
        return None  # not a node of this relationship (or the relationship itself)
    prop = numbers.pop()
    taken = {t.name for t in tokens if t.is_name}
    rel_var = hop.rel_var or fresh_variable(hop.rel_type, taken)
    at = tokens[hop.colon_at].position
    edits = [] if hop.rel_var else [(at, at, rel_var)]
    new = f"{rel_var}.{prop}"
    for item in [source] if source else [i for i in items if statement.words(i) == read]:
        first, last = tokens[item.first], tokens[item.end - 1]
        edits.append((first.position, last.end, new if item.alias else f"{new} AS {prop}"))
    if source is None:
        edits.append((tokens[key.first].position, tokens[key.end - 1].end, new))
    # The routes are told apart by the node at their end: its name comes back with the measure
    # where the statement returned nothing that names either end (`b.descr AS descr, …`).
    node = read[0]

    def called(var: str | None) -> list[str]:
        label = schema.label(names.variables.get(var or "", ""))
        return name_properties(label) if label is not None else []

    named = any(
        statement.words(i) == [var]
        or statement.words(i)[:3] in ([var, ".", p] for p in called(var))
        for i in items
        for var in (hop.left_var, hop.right_var)
        if var is not None
    )
    shown = called(node)
    if items and shown and not named:
        at = tokens[items[0].first].position
        edits.append((at, at, "".join(f"{node}.{p} AS {p}, " for p in shown)))
    descending = found.group(1).lower() in _MOST_FIRST
    word = "DESC" if descending else "ASC"
    if key.direction is not None:
        edits.append((tokens[key.direction].position, tokens[key.direction].end, word))
    else:
        end = tokens[key.end - 1].end
        edits.append((end, end, f" {word}"))
    detail = f"sorted on {new} ({hop.rel_type}'s number), not {''.join(read)}"
    return statement.edited(edits), detail


def contradicted_negation(cypher: str, schema: GraphSchema) -> tuple[str, str] | None:
    """The statement asking for nodes with no such relationship at all, where it matched the
    relationship and then asked for it not to be there; None when it does not.

    "Which airports in Portugal have no routes at all?" written `MATCH (a:Airport)-[:HAS_ROUTE]
    ->(a2:Airport), (a)-[:IN_COUNTRY]->(c:Country) WHERE c.code = 'PT' AND NOT (a)-[:HAS_ROUTE]
    ->(a2)` (a dev statement, on both attempts): every row needs the route and its absence, so
    nothing can come back. The matched hop goes and the negation keeps its shape with the far
    node anonymous (`NOT (a)-[:HAS_ROUTE]->(:Airport)`). Only when the far node's variable is
    used by those two patterns alone and the hop ends its chain. The negation may write the
    hop the other way round: "Which drug classes are not prescribed by any specialization?"
    written `MATCH (d:DoctorSpecialization)-[:CAN_PRESCRIBE]->(dc:DrugClass) WHERE NOT
    (dc)<-[:CAN_PRESCRIBE]-(d)` (a trial on a graph of drugs and doctors) is read as the
    matched hop is written."""
    if "NOT" not in cypher.upper():
        return None  # every statement is asked: no tokens read where no negation is written
    statement = Statement(cypher)
    tokens = statement.tokens
    names = referenced_names(cypher)
    hops = list(written_hops(tokens, names))
    for denied in hops:
        opened = matching_open(tokens, denied.first - 1)
        if opened is None or opened == 0 or not tokens[opened - 1].is_keyword("NOT"):
            continue
        for matched in hops:
            if matched is denied or matched.rel_type != denied.rel_type:
                continue
            if _mirrors(matched, denied):
                return contradicted_negation(_mirrored(statement, denied), schema)
            if matched.points_right != denied.points_right:
                continue
            if (matched.left_var, matched.right_var) != (denied.left_var, denied.right_var):
                continue
            fixed = _drop_far_node(statement, names, matched, denied, schema)
            if fixed is not None:
                return fixed
    return None


def _mirrors(matched: Hop, denied: Hop) -> bool:
    """Whether `denied` is `matched` written the other way round: `(b)<-[:T]-(a)` of
    `(a)-[:T]->(b)`, between two different variables."""
    return (
        matched.points_right != denied.points_right
        and matched.left_var is not None
        and matched.right_var is not None
        and matched.left_var != matched.right_var
        and (matched.left_var, matched.right_var) == (denied.right_var, denied.left_var)
    )


def _mirrored(statement: Statement, hop: Hop) -> str:
    """The statement with `hop` written the other way round, its nodes swapped:
    `(dc)<-[:T]-(d)` as `(d)-[:T]->(dc)`."""
    tokens = statement.tokens
    left_open = matching_open(tokens, hop.first - 1)
    right_close = matching_close(tokens, hop.last + 1)
    bracket = next(k for k in range(hop.first, hop.last) if tokens[k].is_punct("["))
    shut = matching_close(tokens, bracket)
    assert left_open is not None and right_close is not None and shut is not None
    left = statement.source(left_open, hop.first)
    right = statement.source(hop.last + 1, right_close + 1)
    inside = statement.source(bracket, shut + 1)
    arrow_ = f"<-{inside}-" if hop.points_right else f"-{inside}->"
    cut = (tokens[left_open].position, tokens[right_close].end)
    return statement.edited([(*cut, f"{right}{arrow_}{left}")])


def _drop_far_node(
    statement: Statement, names: ReferencedNames, matched: Hop, denied: Hop, schema: GraphSchema
) -> tuple[str, str] | None:
    """`matched`'s hop and far node cut from the MATCH and that node made anonymous in the
    negation, when its variable appears nowhere else and the hop ends its chain."""
    tokens = statement.tokens
    for far, near_side_right in ((matched.right_var, False), (matched.left_var, True)):
        if far is None or sum(t.name == far for t in tokens if t.is_name) != 2:
            continue
        if near_side_right:  # the far node is on the left: `(far)-[:T]->(near)`
            start = matching_open(tokens, matched.first - 1)
            if start is None or (start > 0 and tokens[start - 1].is_punct("-", ">", "<")):
                continue
            cut = (tokens[start].position, tokens[matched.last].end)
            far_open, far_close = start, matched.first - 1
            d_open: int | None = matching_open(tokens, denied.first - 1)
            d_close: int | None = denied.first - 1
        else:
            close = matching_close(tokens, matched.last + 1)
            if close is None or (close + 1 < len(tokens) and tokens[close + 1].is_punct("-", "<")):
                continue
            cut = (tokens[matched.first].position, tokens[close].end)
            far_open, far_close = matched.last + 1, close
            d_open, d_close = denied.last + 1, matching_close(tokens, denied.last + 1)
        if d_open is None or d_close is None:
            continue
        label = _node_label(tokens[far_open + 1 : far_close], names)
        anonymous = f"(:{label})" if label and schema.label(label) else "()"
        edits = [(*cut, ""), (tokens[d_open].position, tokens[d_close].end, anonymous)]
        detail = f"matched {matched.rel_type} and denied it: the negation alone is kept"
        return statement.edited(edits), detail
    return None


def label_kept_as_property(cypher: str, schema: GraphSchema) -> tuple[str, str] | None:
    """The statement reading a node's property where it matched a label that nothing links
    to that node, and what changed; None unless that is plain. "How many racks does each zone
    have?" written `MATCH (z:Zone)-[:HOLDS]->(r:Rack) RETURN z.zone AS zone, count(r) …` (a
    trial on the network graph): no relationship links a Zone to a Rack, and each rack holds
    its zone as `Rack.zone`; the Zone node and its hop go, and every read of it reads
    `r.zone`. Only when the two labels share no relationship, the other one has exactly one
    property named like the dropped label, the dropped node ends its chain, has no map and is
    read only through its properties, and the result passes the schema check. Where that
    property is true or false, the node matched is the property being true: "Which stores
    have a florist?" written `(s:Store)-[:HAS]->(f:Florist)` (a foodmart trial) reads
    `WHERE s.florist = true`. A relationship type the schema lacks, named like the kept
    node's property, is that property too (`-[:LAST_REMODEL_DATE]->(d:Date)`, `d.date` read
    as `s.last_remodel_date`)."""
    statement = Statement(cypher)
    tokens = statement.tokens
    names = referenced_names(cypher)
    for hop in written_hops(tokens, names):
        if hop.left is None or hop.right is None or hop.left == hop.right:
            continue
        if any({r.start, r.end} == {hop.left, hop.right} for r in schema.relationships):
            continue
        ends = ((hop.left_var, hop.left, hop.right_var, hop.right, True),
                (hop.right_var, hop.right, hop.left_var, hop.left, False))  # fmt: skip
        for far, far_label, near, near_label, far_is_left in ends:
            fixed = _dropped_for_property(
                statement, hop, far, far_label, near, near_label, far_is_left, schema
            )
            if fixed is not None:
                return fixed
    return None


def _dropped_for_property(
    statement: Statement,
    hop: Hop,
    far: str | None,
    far_label: str,
    near: str | None,
    near_label: str,
    far_is_left: bool,
    schema: GraphSchema,
) -> tuple[str, str] | None:
    """label_kept_as_property for one end of `hop`: `far` dropped, read as `near`'s property."""
    info = schema.label(near_label)
    if far is None or near is None or info is None:
        return None
    props = [p for p in info.properties if name_stems(p.name) == name_stems(far_label)]
    if not props and all(r.type != hop.rel_type for r in schema.relationships):
        # "Which store was remodeled most recently?" written `(s:Store)-[:LAST_REMODEL_DATE]->
        # (d:Date) … ORDER BY d.date` (a foodmart trial): the type is the store's property
        props = [p for p in info.properties if name_stems(p.name) == name_stems(hop.rel_type)]
    if len(props) != 1:
        return None
    prop = props[0]
    tokens = statement.tokens
    if far_is_left:  # `(far)-[:T]->(near)`: the chain must start at far
        opened = matching_open(tokens, hop.first - 1)
        if opened is None or (opened > 0 and tokens[opened - 1].is_punct("-", ">", "<")):
            return None
        first, last, node = opened, hop.last, (opened, hop.first - 1)
    else:
        shut = matching_close(tokens, hop.last + 1)
        if shut is None or (shut + 1 < len(tokens) and tokens[shut + 1].is_punct("-", "<")):
            return None
        first, last, node = hop.first, shut, (hop.last + 1, shut)
    if any(t.is_punct("{") for t in tokens[node[0] : node[1]]):
        return None
    uses = [
        k
        for k, t in enumerate(tokens)
        if t.is_name and t.name == far and not (k and tokens[k - 1].is_punct("."))
    ]
    reads = property_reads(tokens, far, {t.name for t in tokens if t.is_name})
    if len(uses) != len(reads) + 1:
        return None  # the node itself is read (returned, counted, compared)
    read = f"{near}.{prop.name}"
    edits = [(tokens[first].position, tokens[last].end, "")]
    edits += [(tokens[k].position, tokens[k + 2].end, read) for k in reads]
    text: str | None = statement.edited(edits)
    if text is not None and "BOOLEAN" in prop.types:
        # "Which stores have a florist?" matched `(f:Florist)` (a foodmart trial): a store
        # has one where its `florist` is true
        edited = tokenize(text)
        bound = binding(edited, near)
        text = (
            None if bound is None else add_condition(text, edited[bound].position, f"{read} = true")
        )
    if text is None or check_schema(text, schema).problems:
        return None
    return text, f"no relationship links {far_label} to {near_label}: {far_label} read as {read}"


def _linked(schema: GraphSchema, start: str, rel_type: str, end: str) -> bool:
    """Whether the schema has `(start)-[:rel_type]->(end)`."""
    return any(
        r.type == rel_type and r.start == start and r.end == end for r in schema.relationships
    )


def hop_on_its_node(cypher: str, schema: GraphSchema) -> tuple[str, str] | None:
    """The statement with a hop chained from the wrong node written from the node that has
    it, and what moved; None otherwise.

    "Which books were written by Mark Twain and made into a movie?" written `MATCH
    (b:Book)-[:WRITTEN_BY]->(p:Person {…})-[:MADE_INTO]->(m:Movie)` (a playground follow-up
    on a graph of books): a person is made into nothing, the book is. Where a chain `(a:A)
    -[:R1]-(b:B)-[:R2]-(c:C)` ends at c, the schema has no R2 between B and C that way and
    has it between A and C, the last hop goes from a: `(a)-[:R1]-(b:B), (a)-[:R2]-(c:C)`."""
    statement = Statement(cypher)
    tokens = statement.tokens
    names = referenced_names(cypher)
    hops = list(written_hops(tokens, names))
    for first, second in itertools.pairwise(hops):
        if first.left_var is None or first.right_var is None:
            continue
        b_close = matching_close(tokens, first.last + 1)
        c_close = matching_close(tokens, second.last + 1)
        if b_close is None or c_close is None or b_close + 1 != second.first:
            continue
        if c_close + 1 < len(tokens) and tokens[c_close + 1].is_punct("-", "<"):
            continue  # the chain goes on from c
        a, b, c = first.left, first.right, second.right
        if a is None or b is None or c is None:
            continue

        def has(near: str, hop: Hop = second, far: str = c) -> bool:
            ends = (near, far) if hop.points_right else (far, near)
            return _linked(schema, ends[0], hop.rel_type, ends[1])

        if has(b) or not has(a):
            continue
        moved = statement.source(second.first, c_close + 1)
        fixed = statement.edited(
            [(tokens[second.first].position, tokens[c_close].end, f", ({first.left_var}){moved}")]
        )
        return fixed, f"{second.rel_type} goes from {first.left_var}, a {a}, not from a {b}"
    return None


def labels_of_one_node(cypher: str, schema: GraphSchema) -> tuple[str, str] | None:
    """The statement with a relationship between two of one node's labels made one node, and
    what changed; None otherwise.

    "Which courses are web courses?" written `MATCH (c:Course)-[:FULFILLED_BY]->(w:Web) RETURN
    c.name` (a trial on a learning graph nobody here wrote): every `:Web` node is a `:Course`
    node, and nothing links a course to a web course. Where a hop links two labels with no
    relationship of its type between them either way, one label is a kind of the other
    (every sampled node of it carries both: `LabelInfo.within`), and one end is written
    `(w:Web)` or `(:Web)` and ends its chain, that end and the hop go, its label joins the
    other end (`(c:Course:Web)`) and every other use of its variable reads the kept one."""
    statement = Statement(cypher)
    tokens = statement.tokens
    names = referenced_names(cypher)
    for hop in written_hops(tokens, names):
        left, right = hop.left, hop.right
        if left is None or right is None or left == right:
            continue
        if _linked(schema, left, hop.rel_type, right) or _linked(schema, right, hop.rel_type, left):
            continue
        left_info, right_info = schema.label(left), schema.label(right)
        if left_info is None or right_info is None:
            continue
        if right not in left_info.within and left not in right_info.within:
            continue
        left_open, right_close = (
            matching_open(tokens, hop.first - 1),
            matching_close(tokens, hop.last + 1),
        )
        if left_open is None or right_close is None:
            continue
        sides = (
            # (dropped node's open, close, kept node's open, close, cut span)
            (hop.last + 1, right_close, left_open, hop.first - 1, (hop.first, right_close)),
            (left_open, hop.first - 1, hop.last + 1, right_close, (left_open, hop.last)),
        )
        for d_open, d_close, k_open, k_close, (cut_from, cut_to) in sides:
            fixed = _merged(statement, (d_open, d_close), (k_open, k_close), cut_from, cut_to)
            if fixed is not None:
                return fixed, f"{left} and {right} are labels of one node, not two linked"
    return None


def _merged(
    statement: Statement,
    dropped: tuple[int, int],
    kept: tuple[int, int],
    cut_from: int,
    cut_to: int,
) -> str | None:
    """The statement with the plain node pattern at token span `dropped` (`(w:Web)` or
    `(:Web)`, ending its chain) and its hop (tokens `cut_from`..`cut_to`) cut, its label added
    to the node pattern at `kept`, and its variable's other uses reading the kept node's."""
    tokens = statement.tokens
    d_open, d_close = dropped
    k_open, k_close = kept
    inner = tokens[d_open + 1 : d_close]
    var = inner[0].name if len(inner) == 3 and inner[0].is_name else None
    if var is not None:
        inner = inner[1:]
    if len(inner) != 2 or not inner[0].is_punct(":") or not inner[1].is_name:
        return None
    if (cut_from > 0 and tokens[cut_from - 1].is_punct("-", ">", "<")) or (
        cut_to + 1 < len(tokens) and tokens[cut_to + 1].is_punct("-", "<")
    ):
        return None  # the dropped node's chain goes on
    kept_inner = tokens[k_open + 1 : k_close]
    kept_var = kept_inner[0].name if kept_inner and kept_inner[0].is_name else None
    labels_end = k_open + 1 + (kept_var is not None)
    while labels_end + 1 < k_close and tokens[labels_end].is_punct(":"):
        labels_end += 2
    after = tokens[labels_end - 1].end
    edits = [
        (tokens[cut_from].position, tokens[cut_to].end, ""),
        (after, after, f":{inner[1].text}"),
    ]
    if kept_var is None and var is not None:  # `(:Course)` takes the dropped node's variable
        edits.append((tokens[k_open].end, tokens[k_open].end, var))
    elif var is not None and kept_var is not None:
        edits += [
            (t.position, t.end, kept_var)
            for k, t in enumerate(tokens)
            if t.is_name and t.name == var and not (cut_from <= k <= cut_to)
            and not (k and tokens[k - 1].is_punct(".", ":"))
        ]  # fmt: skip
    return statement.edited(edits)
