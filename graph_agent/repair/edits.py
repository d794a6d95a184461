"""Statement edits behind the validate rules: a property read through the one neighbour that has
it, an unbound variable matched through the one relationship that reaches it."""

from __future__ import annotations

import re
from collections.abc import Callable, Collection, Iterable, Iterator, Sequence
from functools import partial
from operator import eq

from graph_agent.graphdb.protocol import GraphSchema, LabelInfo
from graph_agent.graphdb.schema import quote_name_if_needed
from graph_agent.lint import (
    MapEntry,
    node_map_entries,
    pattern_map_entries,
    with_condition,
    without_entries,
)
from graph_agent.pruning import name_words, question_words
from graph_agent.question_fit import counted_label
from graph_agent.repair.relationships import Hop, reroute_relationship, written_hops
from graph_agent.schema_check import (
    chain_starts,
    check_schema,
    flip_relationships,
    has_property,
    neighbours_with,
)
from graph_agent.statement import (
    Item,
    Statement,
    add_condition,
    binding,
    clause_at,
    fresh_variable,
    is_aggregate_call,
    label_places,
    match_end,
    node_has_more,
    property_reads,
)
from graph_agent.superlatives import asked_label, has_name, name_properties, read_instead
from graph_agent.words import (
    ASKS_WHO,
    EACH_WORDS,
    LINKING,
    Said,
    label_said,
    plural,
    value_said_as_label,
)
from graph_agent.words import said as said_word
from guardrails import (
    ReferencedNames,
    Token,
    enclosing,
    matching_close,
    matching_open,
    nesting,
    referenced_names,
    split_name,
    stem,
    tokenize,
)

_UNBOUND = re.compile(r"""(?:Variable\s+)?[`'"](\w+)[`'"]\s+not defined""", re.IGNORECASE)


def unbound_name(error: str) -> str | None:
    """The variable of an engine's "'m' not defined" (FalkorDB) or "Variable `m` not defined"
    (Neo4j); None for another error."""
    found = _UNBOUND.search(error)
    return found.group(1) if found else None


def _unbound(
    error: str, cypher: str, asked_labels: Iterable[str]
) -> tuple[str, ReferencedNames, list[str]] | None:
    """For an engine's "'m' not defined": the variable, the statement's names, and the labels
    the question names that the statement does not match; None for another error."""
    var = unbound_name(error)
    if var is None:
        return None
    names = referenced_names(cypher)
    return var, names, sorted(set(asked_labels) - set(names.variables.values()))


def aggregate_by_alias(error: str, cypher: str) -> tuple[str, str] | None:
    """The statement reading, after a WITH, the alias that WITH gave an expression instead of
    the expression again, and what changed; None unless the engine's error is a variable
    the WITH dropped and such an expression reads it.

    `MATCH (m:Machine)-[:TYPE]->(t:Type) WITH t.type AS type, count(m) AS machines
    RETURN type, count(m) AS machines ORDER BY count(m) DESC`: after the WITH only `type` and
    `machines` exist, so `count(m)` (in the RETURN and the sort) becomes `machines`."""
    var = unbound_name(error)
    statement = Statement(cypher)
    returned = statement.final_return()
    with_at = statement.last("WITH")
    if var is None or returned is None or with_at is None or with_at > returned[0]:
        return None
    tokens = statement.tokens

    def shape(item: Item) -> str:
        return "".join(t.text for t in tokens[item.first : item.end]).casefold()

    aliases = {shape(i): i.alias for i in statement.projection(with_at) if i.alias}
    edits = []
    for item in [*returned[1], *statement.order_keys()]:
        reads = any(t.is_name and t.name == var for t in tokens[item.first : item.end])
        if reads and (alias := aliases.get(shape(item))) is not None:
            edits.append((tokens[item.first].position, tokens[item.end - 1].end, alias))
    if not edits:
        return None
    return statement.edited(
        edits
    ), f"read the WITH's aliases for what it already computed from {var}"


def property_through_neighbour(cypher: str, schema: GraphSchema) -> tuple[str, str] | None:
    """The statement reading a property its node lacks from the one neighbouring label that
    has it, and what was changed; None when no such single change makes it fit the schema.

    `MATCH (m:Machine) RETURN m.type AS type, count(*)` on a graph with
    `(:Machine)-[:TYPE]->(:Type)` and `Type.type`: the MATCH gets `, (m)-[:TYPE]->(t:Type)`
    and `m.type` becomes `t.type`. A 1.5B model told exactly that pattern sent `m.type` back
    on every attempt, in two runs of three. A filter in the node's map moves with it:
    `(p:Product {categoryName: 'Seafood'})` becomes `(p:Product)` and
    `, (p)-[:PART_OF]->(c:Category {categoryName: 'Seafood'})`; when the statement matches a
    node of that label already, the filter goes into that node's map instead. Only when one
    relationship type links the label to a label with that property, the variable is bound in
    a MATCH, and the result passes the schema check.
    """
    names = referenced_names(cypher)
    entries = node_map_entries(cypher)
    written: list[tuple[str | None, str, str, MapEntry | None]] = [
        (var, names.variables.get(var, ""), prop, None) for var, prop in names.accesses
    ]
    written += [(e.variable, e.label or "", e.prop, e) for e in entries]
    for var, label_name, prop, entry in written:
        label = schema.label(label_name)
        if label is None or not label.properties or has_property(label, prop):
            continue
        hops = {(rel.start, rel.type, rel.end) for rel in neighbours_with(label.name, prop, schema)}
        farther = (
            _from_a_node_matched_with_it(cypher, var, prop, names, schema)
            if not hops and entry is None and var is not None
            else None
        )
        if farther is not None:
            return farther
        if len(hops) != 1:
            continue
        start, rel_type, end = hops.pop()
        other = end if start == label.name else start
        other_info = schema.label(other)

        def moves(
            p: str, label: LabelInfo = label, other_info: LabelInfo | None = other_info
        ) -> bool:
            return not has_property(label, p) and has_property(other_info, p)

        text, now, carried = cypher, names, ""
        read = _read_from_linked(cypher, var, other, rel_type, moves) if entry is None else None
        if read is not None and not check_schema(read[0], schema).problems:
            return read[0], f"{var}.{prop} read from the {other} already matched ({read[1]})"
        if entry is not None:
            holders = {v for v, bound in names.variables.items() if bound == other} - {var}
            if holders:  # the statement matches that neighbour already: the filter is its
                onto = _onto_matched(cypher, entries, entry, moves, holders)
                if onto is not None and not check_schema(onto[0], schema).problems:
                    return onto[0], f"{label.name}.{prop} filtered on the {other} {onto[1]}"
                continue
            text, var, carried = _unmap(cypher, entries, entry, names, moves)
            now = referenced_names(text)
        if var is None:
            continue  # an access always has its variable; an unnamed node got one above
        moved = {p for v, p in now.accesses if v == var and moves(p)}
        changed = _add_hop(
            text,
            tokenize(text),
            var,
            label.name,
            other,
            start,
            rel_type,
            now,
            moved,
            carried=carried,
            tie=_tie_to_named(text, var, label.name, other, schema),
        )
        if changed is None or check_schema(changed, schema).problems:
            continue
        return (
            changed,
            f"{var}.{prop} read from the related {other} (:{start})-[:{rel_type}]->(:{end})",
        )
    return None


def _tie_to_named(cypher: str, var: str | None, own: str, other: str, schema: GraphSchema) -> str:
    """The hop from a new `other` node on to the node the statement names (by a string), where
    `other` stands for the link between that node's label and `own` (the schema links it to
    those two labels only, by one relationship each); "" otherwise. "What does a c3.xlarge
    cost per hour in Oregon?" written `MATCH (r:Region {name: "Oregon"})-[:OFFERS_SERVICE]->
    (s:Service)<-[:IS_EC2_INSTANCE_TYPE]-(e:EC2InstanceType {name: "c3.xlarge"}) RETURN
    e.cost_per_hour` (a trial on an AWS infrastructure graph): a Price is one region's charge
    for one instance type, so the price read is the one Oregon charges, `(e)<-[:FOR_INSTANCE]-
    (p:Price)<-[:CHARGES]-(r)`, not every region's."""
    links = [r for r in schema.relationships if other in (r.start, r.end)]
    ends = {r.start if r.end == other else r.end for r in links}
    if len(links) != 2 or len(ends) != 2 or own not in ends:
        return ""
    names = referenced_names(cypher)
    ties = set()
    for named, _prop, value, _in_map in node_filters(cypher):
        label = names.variables.get(named)
        if named == var or value.kind != "string" or label not in ends - {own}:
            continue
        (road,) = [r for r in links if label in (r.start, r.end)]
        quoted = quote_name_if_needed(road.type)
        ties.add(f"<-[:{quoted}]-({named})" if road.start == label else f"-[:{quoted}]->({named})")
    return ties.pop() if len(ties) == 1 else ""


def _read_from_linked(
    cypher: str, var: str | None, other: str, rel_type: str, moves: Callable[[str], bool]
) -> tuple[str, str] | None:
    """The statement reading `var`'s missing properties from the one `other` node it already
    links to `var` by `rel_type`, and that node's variable; None where there is none, or two.
    "Which state has the most users?" written `MATCH (u:User)-[:USES]->(ip:IpAddress) WITH
    ip.state AS state, count(u)` (a trial on a movie graph nobody here wrote): the state is
    the matched user's, not that of another user of the same address."""
    tokens = tokenize(cypher)
    names = referenced_names(cypher)
    linked = {
        hop.right_var if hop.left_var == var else hop.left_var
        for hop in written_hops(tokens, names)
        if hop.rel_type == rel_type and var in (hop.left_var, hop.right_var)
    }
    holders = [v for v in linked if v is not None and v != var and names.variables.get(v) == other]
    if var is None or len(holders) != 1:
        return None
    holder = holders[0]
    moved = {p for v, p in names.accesses if v == var and moves(p)}
    reads = property_reads(tokens, var, moved)
    return _replaced(cypher, [(tokens[k].position, tokens[k].end, holder) for k in reads]), holder


def label_chain(cypher: str, schema: GraphSchema) -> tuple[str, str] | None:
    """`m.os.name` where Machine has no `os` and OS is a label one relationship links to
    Machine (a network dev question, "What operating systems do the machines in rack … run?"):
    the related node is matched, `, (m)-[:RUNS]->(os:OS)`, and `m.os.name` read as `os.name`.
    The new node takes the word the model wrote as its variable when that is free, so a sort
    it wrote on `os.name` reads it too. Where no relationship links the two labels, the one
    two-hop road through a third does (`r.type.cpu` of a Rack: `, (r)-[:HOLDS]->(m:Machine),
    (m)-[:TYPE]->(type:Type)`). A word that names a relationship at the node's label, not a
    label, reaches that relationship's other end (`h.ledBy.name` of a House: `, (h)-[:LED_BY]->
    (ledBy:Person)`, a trial on a Game of Thrones graph). None unless the statement reads one
    such chain (once or more), one road links the two labels, and the result passes the schema
    check."""
    names = referenced_names(cypher)
    tokens = tokenize(cypher)
    by_stem = {stem(label.name): label for label in schema.labels}
    chains: dict[tuple[str, str], list[int]] = {}
    for k in chain_starts(tokens):
        chains.setdefault((tokens[k].name, tokens[k + 2].name), []).append(k)
    if len(chains) != 1:
        return None
    (((var, word), at),) = chains.items()
    own = schema.label(names.variables.get(var, ""))
    other = by_stem.get(stem(word))
    road = None
    if own is not None and other is None:
        # `h.ledBy.name` (a Game of Thrones trial): the word names a relationship, LED_BY.
        found = _relationship_named_by(word, own.name, schema)
        other, road = found if found is not None else (None, None)
    if own is None or other is None or other.name == own.name or has_property(own, word):
        return None
    if road is not None and all(_on_the_road(road, tokens[k + 4].name, schema) for k in at):
        return _relationship_read(cypher, var, word, at, other.name, road[0], schema)
    if not all(has_property(other, tokens[k + 4].name) for k in at):
        return None
    road = road or _one_road(own.name, other.name, schema)
    if road is None:
        return None
    added = _through_road(cypher, schema, var, word, at, other.name, road)
    if added is None:
        return None
    return added[0], f"{var}.{word}.… read from the related {other.name}: {added[1]}"


def _on_the_road(road: list[tuple[str, str, str, str]], prop: str, schema: GraphSchema) -> bool:
    """Whether the one relationship of `road` holds `prop`."""
    start, rel_type, near, far = road[0]
    end = far if start == near else near
    return any(
        prop in {p.name for p in r.properties}
        for r in schema.relationships
        if (r.start, r.type, r.end) == (start, rel_type, end)
    )


def _relationship_read(
    cypher: str,
    var: str,
    word: str,
    reads: list[int],
    other: str,
    hop: tuple[str, str, str, str],
    schema: GraphSchema,
) -> tuple[str, str] | None:
    """`e.worked_as.duration` where WORKED_AS holds `duration` (a trial on a competence graph:
    "Which employee has worked in their current role the longest?"): the relationship is
    matched under the word the model wrote, `, (e)-[worked_as:WORKED_AS]->(:Role)`, and read
    as `worked_as.duration`; None when that fails the schema check or `var` is bound in no
    MATCH."""
    tokens = tokenize(cypher)
    names = referenced_names(cypher)
    taken = set(names.variables) | {t.name for t in tokens if t.is_name and t.name != word}
    new = word if word not in taken else fresh_variable(hop[1].lower(), taken)
    end = match_end(tokens, var)
    if end is None:
        return None
    start, rel_type, _near, _far = hop
    rel = f"[{new}:{quote_name_if_needed(rel_type)}]"
    far = f"(:{quote_name_if_needed(other)})"
    pattern = f", ({var})-{rel}->{far}" if start != other else f", ({var})<-{rel}-{far}"
    end = min(end, len(cypher))
    edits = [(end, end, pattern + (" " if end < len(cypher) else ""))]
    edits += [(tokens[k].position, tokens[k + 2].end, new) for k in reads]
    text = _spliced(cypher, edits)
    if check_schema(text, schema).problems:
        return None
    return text, f"{var}.{word}.… read from the relationship {rel_type}: {pattern[2:]}"


def _through_road(
    cypher: str,
    schema: GraphSchema,
    var: str,
    word: str,
    reads: list[int],
    other: str,
    road: list[tuple[str, str, str, str]],
) -> tuple[str, str] | None:
    """label_chain's and relationship_counted's edit: each `var.word` read at token `reads`
    becomes a new node (called `word` where that is free) that `road` reaches from `var`;
    the statement and the road as written, or None when that fails the schema check."""
    tokens = tokenize(cypher)
    names = referenced_names(cypher)
    taken = set(names.variables) | {t.name for t in tokens if t.is_name and t.name != word}
    new = word if word not in taken else fresh_variable(other, taken)
    text = _replaced(cypher, [(tokens[k].position, tokens[k + 2].end, new) for k in reads])
    added = _add_road(text, var, road, new, taken)
    if added is None or check_schema(added[0], schema).problems:
        return None
    return added


def relationship_counted(cypher: str, schema: GraphSchema) -> tuple[str, str] | None:
    """`count(h.heirs)` for "Which house has the most heirs?" (a trial on a Game of Thrones
    graph, both attempts, on two rounds), where House has no `heirs` and HEIR_TO links heirs
    to houses: the one relationship at the node's label that the word names (its linking words
    aside) is matched to a new node, `, (h)<-[:HEIR_TO]-(heirs:Person)`, and that node counted,
    `count(heirs)`. None unless the statement counts one such read, and the result passes the
    schema check."""
    tokens = tokenize(cypher)
    names = referenced_names(cypher)
    found = [
        k
        for k in range(2, len(tokens) - 3)
        if tokens[k].is_name
        and tokens[k + 1].is_punct(".")
        and tokens[k + 2].is_name
        and tokens[k + 3].is_punct(")")
        and is_aggregate_call(tokens, k - 2 - int(tokens[k - 1].is_keyword("DISTINCT")))
    ]
    if len(found) != 1:
        return None
    k = found[0]
    var, word = tokens[k].name, tokens[k + 2].name
    own = schema.label(names.variables.get(var, ""))
    if own is None or has_property(own, word):
        return None
    related = _relationship_named_by(word, own.name, schema)
    if related is None or related[0].name == own.name:
        return None
    other, road = related
    added = _through_road(cypher, schema, var, word, [k], other.name, road)
    if added is None:
        return None
    return added[0], f"counted {var}.{word} as the related {other.name}: {added[1]}"


HOW_MANY = re.compile(r"^\W*how\s+many\b", re.IGNORECASE)
"""A question that asks for a number of things."""
EACH = re.compile(rf"\b{EACH_WORDS}\b", re.IGNORECASE)
"""A question that asks for one answer per thing ("each department", "per team")."""


def counted_list(cypher: str, question: str, schema: GraphSchema) -> tuple[str, str] | None:
    """The statement counting the nodes it lists, and what changed; None unless the question
    asks "how many <label>" of one total and the statement's RETURN lists nodes of that label
    (the node or one of its properties, nothing else, no aggregate). "How many different
    countries can you reach nonstop from Venice Marco Polo?" written `… RETURN DISTINCT
    c2.descr AS name ORDER BY name LIMIT 100` (a dev statement, once its country was matched):
    `RETURN count(DISTINCT c2.descr) AS countries`, the sort and LIMIT of the list dropped
    (a DISTINCT list of a property the label has counts its values; any other list counts
    its nodes)."""
    names = referenced_names(cypher)
    label = counted_label(question, schema, names.labels)
    if label is None or not HOW_MANY.search(question) or EACH.search(question):
        return None
    statement = Statement(cypher)
    returned = statement.final_return()
    tokens = statement.tokens
    if returned is None or statement.has_union or len(returned[1]) != 1:
        return None
    if any(is_aggregate_call(tokens, i) for i in range(len(tokens))):
        return None
    at, (item,) = returned
    read = tokens[item.first : item.end]
    shapes = (len(read) == 1, len(read) == 3 and read[1].is_punct(".") and read[2].is_name)
    if not any(shapes) or not read[0].is_name or names.variables.get(read[0].name) != label:
        return None
    # A DISTINCT list of a property counts the values it showed: the OS a machine runs is a
    # node of its own named by its version, so "how many different operating systems" in a
    # rack are its distinct names, not its OS nodes (one per machine; a network trial).
    distinct = tokens[at + 1].text.upper() == "DISTINCT" and shapes[1]
    info = schema.label(label)
    distinct = distinct and info is not None and has_property(info, read[2].name)
    what = statement.source(item.first, item.end) if distinct else read[0].name
    alias = quote_name_if_needed(plural(label).lower().replace(" ", "_"))
    counted = f"RETURN count(DISTINCT {what}) AS {alias}"
    return cypher[: tokens[at].position] + counted, f"counted the listed {plural(label)}"


_WHICH_LABEL = re.compile(
    r"^\W*(?:(?:through|via|in|from|to|at|with)\s+)?(?:which|what)\s+"
    r"([A-Za-z][\w-]*(?:\s+[A-Za-z][\w-]*){0,2})",
    re.IGNORECASE,
)


def _plain_return(cypher: str) -> tuple[Statement, int, ReferencedNames] | None:
    """The statement, its final RETURN's keyword index and its names, for a statement with a
    final RETURN, no UNION and no aggregate; None otherwise."""
    statement = Statement(cypher)
    returned = statement.final_return()
    if returned is None or statement.has_union or not returned[1]:
        return None
    tokens = statement.tokens
    if any(is_aggregate_call(tokens, i) for i in range(len(tokens))):
        return None
    return statement, returned[0], referenced_names(cypher)


def _which_label_read(
    cypher: str, question: str, schema: GraphSchema
) -> tuple[Said, Statement, int, ReferencedNames, set[str]] | None:
    """For a "which/what <label>" question and a statement with a plain final RETURN: the label
    said, the statement, its RETURN's keyword index, its names and the node variables read from
    the RETURN on; None otherwise."""
    asked = _WHICH_LABEL.search(question)
    said = label_said(asked.group(1).split(), schema) if asked else None
    plain = _plain_return(cypher)
    if said is None or plain is None:
        return None
    statement, at, names = plain
    tokens = statement.tokens
    read = {
        t.name
        for k, t in enumerate(tokens[at:], start=at)
        if t.is_name and t.name in names.variables and not tokens[k - 1].is_punct(".")
    }
    return said, statement, at, names, read


def named_node_returned(cypher: str, question: str, schema: GraphSchema) -> tuple[str, str] | None:
    """The statement returning the node of the asked label that it leaves open instead of the
    one it names, and what changed; None unless that is unambiguous. "Through which airports
    can I get from Inverness to Athens with exactly one change?" written `MATCH (a:Airport
    {city: 'Inverness'})-[:HAS_ROUTE]->(a2:Airport)-[:HAS_ROUTE]->(a3:Airport {city: 'Athens'})
    RETURN DISTINCT a3.descr` (a dev statement) answers "Athens": the user named that airport.
    Only for a "which/what <label>" question whose RETURN reads one node only, that node
    filtered on a literal, and exactly one node of the same label left open; no aggregate."""
    found = _which_label_read(cypher, question, schema)
    if found is None:
        return None
    said, statement, at, names, read = found
    label, tokens = said.label.name, statement.tokens
    named = named_variables(cypher)
    open_nodes = [v for v, lb in names.variables.items() if lb == label and v not in named]
    if len(read) != 1 or len(open_nodes) != 1:
        return None
    (var,) = read
    if var not in named or names.variables[var] != label:
        return None
    new = open_nodes[0]
    edits = [
        (t.position, t.end, new)
        for k, t in enumerate(tokens[at:], start=at)
        if t.is_name and t.name == var and not tokens[k - 1].is_punct(".")
    ]
    text = _replaced(cypher, edits)
    return text, f"returned {new}, the {label} left open, not {var}, the named one"


def asked_label_returned(cypher: str, question: str, schema: GraphSchema) -> tuple[str, str] | None:
    """The statement returning the node of the asked label that it matched, where it returned
    a neighbour of another label instead, and what changed; None unless that is plain.

    "Which drug classes can treat asthma?" written `MATCH (p:Pathology {name: "Asthma"})
    <-[:CURES]-(d:DrugClass)<-[:BELONGS_TO_CLASS]-(d2:Drug) RETURN DISTINCT d2.name` (a trial
    on a graph of drugs and doctors): the 13 drugs of the classes, not the classes. For a
    "which/what <label>" question whose RETURN reads one node only, of a label the question
    does not name, where the statement matches exactly one node of the asked label and leaves
    it open: that node is returned by what it is called by, DISTINCT, and the hop to the other
    goes where it ends its chain and nothing else reads it."""
    found = _which_label_read(cypher, question, schema)
    if found is None:
        return None
    said, statement, at, names, read = found
    label, tokens = said.label.name, statement.tokens
    if len(read) != 1:
        return None
    (var,) = read
    other = names.variables[var]
    if other == label or other in labels_named(question, schema):
        return None
    named = named_variables(cypher)
    mine = [v for v, lb in names.variables.items() if lb == label]
    props = name_properties(said.label)
    if len(mine) != 1 or mine[0] in named or not props:
        return None
    node = mine[0]
    shown = ", ".join(f"{node}.{quote_name_if_needed(p)} AS {p}" for p in props)
    limit = statement.last("LIMIT")
    tail = f" {statement.source(limit, statement.clause_end(limit))}" if limit is not None else ""
    fixed = f"{cypher[: tokens[at].position]}RETURN DISTINCT {shown} ORDER BY {props[0]}{tail}"
    fixed = _without_end_node(fixed, var) or fixed
    return fixed, f"returned {node}, the {label} asked for, not {var}, a {other}"


_CO_LINK = r"\b(?:with|as|besides|beside|alongside)\s+(?:the\s+)?{}(?!\w)"
_OTHERS = re.compile(r"\b(?:who|whom|what|which)\s+else\b|\bother\b", re.IGNORECASE)
_SHARING = re.compile(r"\b(?:else|others?|same|also|too|besides|shared?)\b", re.IGNORECASE)


def co_linked_node(cypher: str, question: str, schema: GraphSchema) -> tuple[str, str] | None:
    """The statement returning the other nodes linked like the named one, and what changed;
    None unless that is unambiguous. "Who has acted with Tom Hanks?" written `MATCH (p:Person
    {name: 'Tom Hanks'})-[:ACTED_IN]->(m:Movie) RETURN p.name` (a Movies trial) answers "Tom
    Hanks" once per film: the people asked for share his films. The one hop from the named
    node is taken again from its other end, to a node of the named node's label, and that node
    is returned: `, (m)<-[:ACTED_IN]-(p2:Person) RETURN DISTINCT p2.name`. Only for a "who"
    question or a "which <that label>" one that puts the named value after "with", "as",
    "besides" or "alongside" ("the same city as Bram Stoker", not "people with the title X"),
    whose RETURN reads only the named node (and the node it shares: "Who acted in the same
    movie as Keanu Reeves?" returned him with each film), with no aggregate and no other node
    of that label. "Who else …" or "… other …" questions count wherever they say the named
    value ("Who else pilots the starships that Han Solo pilots?"). Where the RETURN reads only
    the shared node ("Which characters are from the same planet as Luke Skywalker?" returned
    Tatooine, a Star Wars trial), what the others are called by is returned before it."""
    plain = _plain_return(cypher)
    if plain is None:
        return None
    statement, at, names = plain
    tokens = statement.tokens
    reads = [
        k
        for k in range(at, statement.clause_end(at))
        if tokens[k].is_name
        and tokens[k].name in names.variables
        and not tokens[k - 1].is_punct(".")
    ]
    read = {tokens[k].name for k in reads}
    others = _OTHERS.search(question) is not None
    named = [
        v
        for v in names.variables
        if any(
            re.search(_CO_LINK.format(re.escape(value)), question, re.IGNORECASE)
            or (others and said_word(value, question))
            for value in _named_values(cypher, v)
        )
    ]
    if len(named) != 1:
        return None
    var = named[0]
    label = names.variables[var]
    asked = _WHICH_LABEL.search(question)
    said = label_said(asked.group(1).split(), schema) if asked else None
    if not (ASKS_WHO.match(question) or (said and said.label.name == label)):
        return None
    if any(lb == label for v, lb in names.variables.items() if v != var):
        return None
    hops = [h for h in written_hops(tokens, names) if var in (h.left_var, h.right_var)]
    if len(hops) != 1:
        return None
    hop = hops[0]
    middle, middle_label = (
        (hop.right_var, hop.right) if hop.left_var == var else (hop.left_var, hop.left)
    )
    if middle is None or middle_label is None or middle_label == label or read - {var, middle}:
        return None
    new = fresh_variable(label, set(names.variables) | {t.name for t in tokens if t.is_name})
    edits = [
        (t.position, t.end, new)
        for k, t in enumerate(tokens[at:], start=at)
        if t.is_name and t.name == var and not tokens[k - 1].is_punct(".")
    ]
    if var not in read:  # only the shared node was returned: the others go first
        info = schema.label(label)
        called = name_properties(info) if info is not None else []
        if not called or not _middle_named(question, middle_label, schema):
            return None  # the shared node may be what is asked ("Who else lives in London?")
        first = at + 2 if tokens[at + 1].is_keyword("DISTINCT") else at + 1
        added = "".join(f"{new}.{prop}, " for prop in called)
        edits.append((tokens[first].position, tokens[first].position, added))
    if not tokens[at + 1].is_keyword("DISTINCT") and not any(
        tokens[k].name != var and tokens[k].name in names.variables
        for k in range(at, len(tokens))
        if tokens[k].is_name and not tokens[k - 1].is_punct(".")
    ):
        edits.append((tokens[at].end, tokens[at].end, " DISTINCT"))
    text = _replaced(cypher, edits)
    start = hop.left if hop.points_right else hop.right
    changed = _add_hop(
        text, tokenize(text), middle, middle_label, label, start or "", hop.rel_type,
        referenced_names(text), set(), new,
    )  # fmt: skip
    changed = _carried(changed, new) if changed is not None else None
    if changed is None:
        return None
    return (
        changed,
        f"returned {new}, another {label} linked to {middle} by {hop.rel_type}, not {var}, the named one",
    )


def _middle_named(question: str, label: str, schema: GraphSchema) -> bool:
    """Whether the question names the shared node: its label ("the same planet as …") or the
    property it is called by ("the same address as Todd Hamilton", a Location called by its
    `address`: a POLE trial, where the address alone came back)."""
    info = schema.label(label)
    called = name_properties(info) if info is not None else []
    return _label_named(question, label, schema) or any(said_word(p, question) for p in called)


def _label_named(question: str, label: str, schema: GraphSchema) -> bool:
    """Whether the question names `label` in its words ("the same planet as …")."""
    words = re.findall(r"[A-Za-z][\w-]*", question)
    return any(
        (said := label_said(words[i:], schema)) is not None and said.label.name == label
        for i in range(len(words))
    )


def _carried(cypher: str, var: str) -> str | None:
    """`cypher` with `var` carried by each WITH (`WITH c, s` → `WITH c, s, c2`); None when a
    WITH projects more than bare variables (it may group, and `var` would split its rows)."""
    statement = Statement(cypher)
    edits = []
    for clause in statement.clauses:
        if statement.keyword_at(clause) != "WITH":
            continue
        items = statement.projection(clause)
        if not items or any(item.end - item.first != 1 or item.alias for item in items):
            return None
        end = statement.tokens[items[-1].end - 1].end
        edits.append((end, end, f", {var}"))
    return statement.edited(edits)


def _add_road(
    text: str, var: str, road: list[tuple[str, str, str, str]], new: str, taken: set[str]
) -> tuple[str, str] | None:
    """`text` with `_one_road`'s hops matched from `var` to a node `new` (`, (r)-[:HOLDS]->
    (m:Machine), (m)-[:TYPE]->(t:Type)`), and the road as written; None when `var` is not
    bound in a MATCH. Variables of middle nodes avoid `taken`, which gains them."""
    near, written = var, f"({var})"
    for i, (start, rel_type, label, next_label) in enumerate(road):
        last = i == len(road) - 1
        step = new if last else fresh_variable(next_label, taken | {new})
        taken.add(step)
        changed = _add_hop(
            text, tokenize(text), near, label, next_label, start, rel_type,
            referenced_names(text), set(), step,
        )  # fmt: skip
        if changed is None:
            return None
        arrow = f"-[:{rel_type}]->" if start == label else f"<-[:{rel_type}]-"
        text, near, written = changed, step, f"{written}{arrow}({step}:{next_label})"
    return text, written


def counted_road(cypher: str, question: str, schema: GraphSchema) -> tuple[str, str] | None:
    """The statement with the label the question counts matched and counted, and what was
    added; None unless that is unambiguous. "Which data center has the most racks?" written
    `MATCH (d:DataCenter) RETURN d.name AS name, count(*) AS rack_count ORDER BY rack_count
    DESC LIMIT 1` (a dev statement: one per data centre, told the pattern to match, the model
    then counted the data centres): the one road from the data centre to its racks is matched,
    `, (d)-[:CONTAINS]->(r:Rack)`, and `count(*)` reads `count(DISTINCT r)`. Only when the
    statement never matches the counted label, every count in it is the same `count(*)` or
    count of one matched node, one matched node has one road (a relationship, or one two-hop
    road) to the label, and the result passes the schema check; no WITH or UNION."""
    label = counted_label(question, schema)
    names = referenced_names(cypher)
    statement = Statement(cypher)
    if label is None or label in names.labels or statement.has_union:
        return None
    tokens = statement.tokens
    calls = [i for i in range(len(tokens)) if is_aggregate_call(tokens, i)]
    counts = [i for i in calls if tokens[i].text.casefold() == "count"]
    spans = [(i, close) for i in counts if (close := matching_close(tokens, i + 1)) is not None]
    arguments = {
        tuple(t.text for t in tokens[i + 2 : close] if t.text.upper() != "DISTINCT")
        for i, close in spans
    }
    if not counts or len(counts) != len(calls) or len(spans) != len(counts) or len(arguments) != 1:
        return None
    (parts,) = arguments
    argument = parts[0] if len(parts) == 1 else ""
    if argument != "*" and argument not in names.variables:
        return None
    if statement.last("WITH") is not None and not _counted_where_bound(statement, argument, counts):
        return None
    anchors = [argument] if argument in names.variables else list(names.variables)
    roads = {
        v: road
        for v in anchors
        if names.variables[v] != label
        and (road := _one_road(names.variables[v], label, schema)) is not None
    }
    if len(roads) != 1:
        return None
    ((var, road),) = roads.items()
    taken = set(names.variables) | {t.name for t in tokens if t.is_name}
    new = fresh_variable(label, taken)
    taken.add(new)
    counted = f"count(DISTINCT {new})"
    text = _replaced(
        cypher, [(tokens[i].position, tokens[close].end, counted) for i, close in spans]
    )
    added = _add_road(text, var, road, new, taken)
    if added is None or check_schema(added[0], schema).problems:
        return None
    return added[0], f"counted the {label} nodes the question counts: {added[1]}, {counted}"


def counted_by_property(cypher: str, question: str, schema: GraphSchema) -> tuple[str, str] | None:
    """The statement counting the label the question counts, grouped by its property named
    like the label the statement matched, and what changed; None unless that is plain.
    "Which zone has the most racks?" written `MATCH (z:Zone) RETURN z.name AS name, count(*)
    AS rack_count ORDER BY rack_count DESC LIMIT 1` (net-zone-most-racks, a dev statement,
    on every run): no relationship links a Zone to a Rack, but each rack holds its zone,
    `Rack.zone`; `MATCH (r:Rack) RETURN r.zone AS name, count(r) AS rack_count …`. Only for a
    statement of one node and no relationship, filter, WITH or UNION, whose label no
    relationship links to the counted one, which has exactly one property so named; every
    read of the node reads that property, and every count counts the counted label's node."""
    label = counted_label(question, schema)
    names = referenced_names(cypher)
    statement = Statement(cypher)
    info = schema.label(label) if label else None
    if info is None or label in names.labels or len(names.variables) != 1 or names.rel_types:
        return None
    keywords = {statement.keyword_at(c) for c in statement.clauses}
    if not keywords <= {"MATCH", "RETURN", "ORDER", "SKIP", "LIMIT"} or "{" in cypher:
        return None
    ((var, grouped),) = names.variables.items()
    if any({r.start, r.end} == {grouped, info.name} for r in schema.relationships):
        return None
    props = [p.name for p in info.properties if name_words(p.name) == name_words(grouped)]
    if len(props) != 1:
        return None
    tokens = statement.tokens
    new = fresh_variable(info.name, {t.name for t in tokens if t.is_name})
    edits = [(tokens[k + 2].position, tokens[k + 2].end, props[0]) for k in property_reads(
        tokens, var, {t.name for t in tokens if t.is_name})]  # fmt: skip
    for k, tok in enumerate(tokens):
        after_colon = k and tokens[k - 1].is_punct(":")
        if tok.is_name and tok.name == var and not (k and tokens[k - 1].is_punct(".")):
            read = k + 1 < len(tokens) and tokens[k + 1].is_punct(".")
            if not (read or _in_pattern(tokens, k) or _counted_at(tokens, k)):
                return None  # the node itself returned: grouped by the new node, not its zone
            edits.append((tok.position, tok.end, new))
        elif tok.is_name and tok.name == grouped and after_colon:
            edits.append((tok.position, tok.end, quote_name_if_needed(info.name)))
        elif tok.is_punct("*") and k >= 2 and tokens[k - 2].text.casefold() == "count":
            edits.append((tok.position, tok.end, new))
    text = _replaced(cypher, edits)
    if check_schema(text, schema).problems:
        return None
    return text, f"{grouped} is {info.name}.{props[0]}: counted the {plural(info.name)} by it"


def _in_pattern(tokens: list[Token], k: int) -> bool:
    """Whether the name at `k` is a node pattern's variable: `(z:Zone)`."""
    return tokens[k - 1].is_punct("(") and k + 1 < len(tokens) and tokens[k + 1].is_punct(":")


def _counted_at(tokens: list[Token], k: int) -> bool:
    """Whether the name at `k` is what a count counts: `count(z)`, `count(DISTINCT z)`."""
    back = 3 if tokens[k - 1].text.upper() == "DISTINCT" else 2
    return k >= back and tokens[k - back].text.casefold() == "count"


def _counted_where_bound(statement: Statement, var: str, counts: list[int]) -> bool:
    """Whether every count of `var` sits in the first clause after the MATCH that binds it
    can carry a new node to: no WITH between them (`MATCH (p)-[:COACH_FOR]->(s:Squad) WITH p,
    count(DISTINCT s) AS n` counts where s was matched; after `WITH t`, a node matched with t
    would be gone). A `count(*)` behind a WITH leaves open what it counts."""
    bound = binding(statement.tokens, var)
    if bound is None:
        return False
    withs = [c for c in statement.clauses if statement.keyword_at(c) == "WITH"]
    for at in counts:
        own = max((c for c in statement.clauses if c <= at), default=0)
        if at < bound or any(bound < c < own for c in withs):
            return False
    return True


def _relationship_named_by(
    word: str, label: str, schema: GraphSchema
) -> tuple[LabelInfo, list[tuple[str, str, str, str]]] | None:
    """The label at the far end of the one relationship at `label` whose type `word` names,
    but for its linking words ("ledBy" for LED_BY, "heir" for HEIR_TO), and that hop as
    `_one_road` gives it; None when no one type is so named."""
    wanted = {stem(w) for w in split_name(word) if w.lower() not in LINKING}
    found = [
        r
        for r in schema.relationships
        if label in (r.start, r.end)
        and {stem(w) for w in split_name(r.type) if w.lower() not in LINKING} == wanted
    ]
    if len(found) > 1:  # WORKS_AS and WORKED_AS: the one written as the word is
        exact = [w.lower() for w in split_name(word)]
        found = [r for r in found if [w.lower() for w in split_name(r.type)] == exact]
    if len(found) != 1:
        return None
    rel = found[0]
    far = rel.end if rel.start == label else rel.start
    info = schema.label(far)
    return None if info is None else (info, [(rel.start, rel.type, label, far)])


def _one_road(own: str, other: str, schema: GraphSchema) -> list[tuple[str, str, str, str]] | None:
    """The hops from label `own` to label `other` as (start, type, from, to): the one
    relationship that links them, else the one two-hop road through a third label where
    each hop is the one relationship between its two labels (`r.type.cpu` of a Rack: racks
    hold machines, machines have a type; "Which rack has the most CPUs in total?", a
    playground trial on the network graph). None when there is no such road, or several."""

    def links(a: str, b: str) -> set[tuple[str, str]]:
        return {(r.start, r.type) for r in schema.relationships if {r.start, r.end} == {a, b}}

    def hop(a: str, b: str) -> tuple[str, str, str, str] | None:
        found = links(a, b)
        if len(found) != 1:
            return None
        ((start, rel_type),) = found
        return start, rel_type, a, b

    direct = links(own, other)
    if direct:
        one = hop(own, other)
        return [one] if one is not None else None
    roads = [
        [first, second]
        for middle in schema.labels
        if middle.name not in (own, other)
        and (first := hop(own, middle.name)) is not None
        and (second := hop(middle.name, other)) is not None
    ]
    return roads[0] if len(roads) == 1 else None


def _from_a_node_matched_with_it(
    cypher: str, var: str, prop: str, names: ReferencedNames, schema: GraphSchema
) -> tuple[str, str] | None:
    """`a.zone` where no label next to the Application has a zone, but the statement matches
    the Machine that runs it and one label next to Machine does (its Rack): `a.zone` is read
    from that rack, `, (m)<-[:HOLDS]-(r:Rack)` added ("Which machines in zone two run the crm
    application?", a network trial question, now a dev item). Only when exactly one other
    matched node has exactly one such neighbour, and the result passes the schema check."""
    found = {
        (other_var, rel.start, rel.type, rel.end)
        for other_var, bound in names.variables.items()
        if other_var != var and schema.label(bound) is not None
        and not has_property(schema.label(bound), prop)
        for rel in neighbours_with(bound, prop, schema)
    }  # fmt: skip
    if len(found) != 1:
        return None
    ((near, start, rel_type, end),) = found
    label = names.variables[near]
    other = end if start == label else start
    tokens = tokenize(cypher)
    new = fresh_variable(other, set(names.variables) | {t.name for t in tokens if t.is_name})
    reads = property_reads(tokens, var, {prop})
    text = _replaced(cypher, [(tokens[k].position, tokens[k].end, new) for k in reads])
    changed = _add_hop(
        text,
        tokenize(text),
        near,
        label,
        other,
        start,
        rel_type,
        referenced_names(text),
        set(),
        new,
    )
    if changed is None or check_schema(changed, schema).problems:
        return None
    return changed, (
        f"{var}.{prop} read from the {other} next to {near} (:{start})-[:{rel_type}]->(:{end})"
    )


def _replaced(text: str, edits: list[tuple[int, int, str]]) -> str:
    """`text` with each (start, stop, replacement) edit made, the last first."""
    for left, right, replacement in sorted(edits, reverse=True):
        text = text[:left] + replacement + text[right:]
    return text


def _same_node(entries: list[MapEntry], entry: MapEntry) -> list[MapEntry]:
    """The map entries of `entry`'s node: its own pattern's, or every pattern of its variable."""
    if entry.variable is None:
        return [e for e in entries if e.node == entry.node]
    return [e for e in entries if e.variable == entry.variable]


def _onto_matched(
    cypher: str,
    entries: list[MapEntry],
    entry: MapEntry,
    moves: Callable[[str], bool],
    holders: set[str],
) -> tuple[str, str] | None:
    """`(p:Person {title: 'X'})-[:WORKS_ON]->(pr:Project {location: 'London'})` where only
    people have a location: the entries `moves` takes go into the map of the one matched
    Person, `(p:Person {title: 'X', location: 'London'})`, not to a new Person next door
    (someone else on the project). None when two variables have that label (which one is
    meant stays open) or the holder is not bound by a node pattern."""
    if len(holders) != 1:
        return None
    [holder] = holders
    same = _same_node(entries, entry)
    body = ", ".join(dict.fromkeys(e.text for e in same if moves(e.prop)))
    text = without_entries(cypher, same, lambda e: moves(e.prop))
    tokens = tokenize(text)
    opened = next(
        (
            k
            for k in range(len(tokens) - 2)
            if tokens[k].is_punct("(")
            and tokens[k + 1].name == holder
            and tokens[k + 2].is_punct(":")
        ),
        None,
    )
    close = None if opened is None else matching_close(tokens, opened)
    if opened is None or close is None:
        return None
    brace = next(
        (
            k
            for k, tok, depth in nesting(tokens, opened + 1, close)
            if depth == 0 and tok.is_punct("{")
        ),
        None,
    )
    shut = None if brace is None else matching_close(tokens, brace)
    if brace is not None and shut is not None:
        at, insert = tokens[shut].position, ", " + body
    else:
        at, insert = tokens[close].position, " {" + body + "}"
    return text[:at] + insert + text[at:], f"already matched ({holder})"


def _unmap(
    cypher: str,
    entries: list[MapEntry],
    entry: MapEntry,
    names: ReferencedNames,
    moves: Callable[[str], bool],
) -> tuple[str, str, str]:
    """`cypher` without the map entries of `entry`'s node that `moves` takes to the
    neighbour, the node's variable (a fresh one written in when it had none), and the taken
    entries as one map body (`categoryName: 'Seafood'`)."""
    same = _same_node(entries, entry)
    carried = ", ".join(dict.fromkeys(e.text for e in same if moves(e.prop)))
    text = without_entries(cypher, same, lambda e: moves(e.prop))
    var = entry.variable
    if var is None:  # the maps dropped come after the node's "(": its offset still holds
        var = fresh_variable(entry.label or "n", set(names.variables))
        text = text[: entry.node + 1] + var + text[entry.node + 1 :]
    return text, var, carried


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
    carried: str = "",
    tie: str = "",
) -> str | None:
    """`cypher` with `(var)-[:REL]->(x:Other)` added to the MATCH that binds `var`, and its
    properties in `moved` read from `x` (`new`, else a fresh variable); `carried`, a map
    body, becomes x's map; `tie`, a hop on to a node already bound, follows x. None when
    `var` is not bound in a MATCH."""
    end = match_end(tokens, var)
    if end is None:
        return None
    end = min(end, len(cypher))
    if new is None:
        new = fresh_variable(other, set(names.variables) | {t.name for t in tokens if t.is_name})
    arrow = f"-[:{rel_type}]->" if start == label else f"<-[:{rel_type}]-"
    node = f"({new}:{other}" + (f" {{{carried}}})" if carried else ")")
    edits = [(end, end, f", ({var}){arrow}{node}{tie}" + (" " if end < len(cypher) else ""))]
    edits += [(tokens[k].position, tokens[k].end, new) for k in property_reads(tokens, var, moved)]
    return _spliced(cypher, edits)


def _spliced(cypher: str, edits: Sequence[tuple[int, int, str]]) -> str:
    """`cypher` with the (start, stop, text) edits made; an insertion (start == stop) takes
    the spaces before it away, so `(e:Employee) RETURN` gets `(e:Employee), (e)-… RETURN`."""
    text = cypher
    for left, right, replacement in sorted(edits, reverse=True):
        head = text[:left].rstrip() if left == right else text[:left]
        text = head + replacement + text[right:]
    return text


def relationship_named(error: str, cypher: str, schema: GraphSchema) -> tuple[str, str] | None:
    """The statement giving its one unnamed relationship that holds what an unbound variable
    reads that variable's name, and what changed; None unless exactly one such relationship.
    "What is the average watch count?" written `MATCH (u:User)-[:WATCHED]->(m:Movie) RETURN
    avg(r.watchCount)` (a playground trial on a movie graph nobody here wrote): `r` names
    nothing, and only WATCHED holds `watchCount`: `-[r:WATCHED]->`."""
    var = unbound_name(error)
    if var is None:
        return None
    names = referenced_names(cypher)
    tokens = tokenize(cypher)
    read = {p for v, p in names.accesses if v == var}
    bare = any(
        t.is_name and t.name == var and not (k + 1 < len(tokens) and tokens[k + 1].is_punct("."))
        for k, t in enumerate(tokens)
    )
    if var in names.variables or not read or bare:
        return None  # read whole somewhere: which node or relationship it is stays open

    def holds(rel_type: str) -> bool:
        props = {p.name for r in schema.relationships if r.type == rel_type for p in r.properties}
        return read <= props

    hops = [h for h in written_hops(tokens, names) if h.rel_var is None and holds(h.rel_type)]
    if len(hops) != 1 or not hops[0].colon_at:
        return None
    colon = tokens[hops[0].colon_at].position
    return _replaced(
        cypher, [(colon, colon, var)]
    ), f"named the {hops[0].rel_type} relationship {var}"


def bind_unbound_variable(
    error: str,
    cypher: str,
    schema: GraphSchema,
    asked_labels: Iterable[str],
    question: str = "",
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
    if len(links) > 1 and question:
        # Of several types, the one the question says ("versions" → VERSION).
        said = {stem(w) for w in re.findall(r"[A-Za-z]+", question)}
        links = [(v, r) for v, r in links if stem(r.type.replace("_", " ").split()[-1]) in said]
    if len(links) > 1 and len({(r.start, r.type) for _, r in links}) == 1:
        # One relationship from several nodes of a label: of the named one and the one the
        # statement leaves open, the open one is asked about (`(a:Airport {descr: 'Venice…'})
        # -[:HAS_ROUTE]->(b:Airport) RETURN DISTINCT c2.name`: the countries reached, a dev
        # statement on both attempts).
        named = named_variables(cypher)
        links = [(v, r) for v, r in links if v not in named]
    if len(links) != 1:
        return None
    own, rel = links[0]
    mine = names.variables[own]
    tokens = tokenize(cypher)
    changed = _add_hop(cypher, tokens, own, mine, wanted[0], rel.start, rel.type, names, set(), var)
    if changed is None:
        return None
    if check_schema(changed, schema).problems and check_schema(cypher, schema).problems:
        # A clean statement's new problems are the new node's reads (`c2.name` of a Country
        # called by its `code`), which the schema rewrites look at next; else it stays open.
        return None
    return changed, f"bound {var} through (:{rel.start})-[:{rel.type}]->(:{rel.end})"


def node_filters(cypher: str) -> list[tuple[str, str, Token, bool]]:
    """(variable, property, the value's last token, whether in a node's map) for each filter a
    statement writes on a node's property: `(p {name: 'X'})`, `WHERE p.name = 'X'`."""
    found = [
        (e.variable, e.prop, tokenize(e.text)[-1], True)
        for e in node_map_entries(cypher)
        if e.variable
    ]
    tokens = tokenize(cypher)
    for k in range(len(tokens) - 4):
        var, dot, prop, equals, value = tokens[k : k + 5]
        if var.is_name and dot.is_punct(".") and prop.is_name and equals.is_punct("="):
            found.append((var.name, prop.name, value, False))
    return found


def _named_values(cypher: str, var: str) -> list[str]:
    """The string literals a statement filters `var` on: `(p {name: 'X'})`, `p.name = 'X'`."""
    return [tok.value for v, _, tok, _ in node_filters(cypher) if v == var and tok.kind == "string"]


_WORD = re.compile(r"[\w']+")


def word_order_flip(cypher: str, question: str, schema: GraphSchema) -> tuple[str, str] | None:
    """The statement with a relationship between two nodes of one label turned round to read
    as the question says it, and what changed; None when it reads so already or the question
    does not say. "Which houses are sworn to House Tyrell?" written `(h:House {name: 'House
    Tyrell'})-[:SWORN_TO]->(h2:House) RETURN h2.name` (a trial on a Game of Thrones graph
    nobody here wrote) listed Tyrell's own overlord: where the schema has the type only from
    a label to itself, its direction is in the question's words. The type's words followed by
    the value of the one end the statement names ("sworn to House Tyrell", "parent of Aegon")
    make that end the relationship's end; the value followed by them ("House Tyrell sworn
    to") its start. Only where the statement writes the type once, directed, and names one of
    its ends by a literal."""
    tokens = tokenize(cypher)
    hops = list(written_hops(tokens, referenced_names(cypher)))
    said = [w.lower() for w in _WORD.findall(question)]
    stems = [_verb_stem(w) for w in said]
    for hop in hops:
        if hop.left is None or hop.left != hop.right or hop.left_var == hop.right_var:
            continue
        if [h.rel_type for h in hops].count(hop.rel_type) != 1 or not any(
            (r.type, r.start, r.end) == (hop.rel_type, hop.left, hop.left)
            for r in schema.relationships
        ):
            continue
        named = [
            (is_left, values)
            for is_left, var in ((True, hop.left_var), (False, hop.right_var))
            if var is not None and (values := _named_values(cypher, var))
        ]
        if len(named) != 1:
            continue
        left_named, values = named[0]
        phrase = [_verb_stem(w) for w in split_name(hop.rel_type)]
        at = _phrase_at(stems, phrase)
        linked = False
        if at is None and len(phrase) > 1 and phrase[0] in _COPULA:
            # IS_PREREQUISITE said apart: "Which certification is Cert2 a prerequisite for?"
            # (a trial on a learning graph) — the noun alone, an article before it.
            phrase, linked = phrase[1:], True
            at = _phrase_at(stems, phrase)
        if at is None:
            continue
        value = [w.lower() for w in _WORD.findall(values[0])]
        after = said[at + len(phrase) :]
        after = after[1:] if linked and after[:1] in (["for"], ["of"], ["to"]) else after
        after = after[1:] if after[:1] == ["the"] else after
        before = at - 1 if linked and at and said[at - 1] in ("a", "an", "the") else at
        if after[: len(value)] == value:
            named_is_start = False
        elif value and said[max(0, before - len(value)) : before] == value:
            named_is_start = True
        else:
            continue
        if named_is_start == (left_named == hop.points_right):
            continue  # it reads so already
        where = "start" if named_is_start else "end"
        return (
            flip_relationships(cypher, hop.rel_type),
            f"turned {hop.rel_type} round: the question makes {values[0]!r} its {where}",
        )
    return None


def _phrase_at(stems: Sequence[str], phrase: Sequence[str]) -> int | None:
    """Where the words `phrase` (stemmed) first stand together in the question's `stems`."""
    return next((i for i in range(len(stems)) if stems[i : i + len(phrase)] == phrase), None)


_COPULA = frozenset({"is", "are", "was", "were", "be"})
"""The verb a relationship type may start with (IS_PREREQUISITE) that a question says apart."""


def _verb_stem(word: str) -> str:
    """A word's stem without a final e: "influence" is "influenced" less its -ed."""
    return stem(word).rstrip("e")


def flag_for_value(
    cypher: str, label: str, prop: str, value: str, schema: GraphSchema
) -> tuple[str, str] | None:
    """The statement with a filter on a text value read as the true/false property the
    value names, and what changed; None unless exactly one node of the statement has one.

    "Which stores have a coffee bar?" written `(s:Store)-[:OF_TYPE]->(st:StoreType {name:
    'Coffee Bar'})` (a foodmart trial), where a store's `coffee_bar` is true or false and
    no store type is called so: the filter becomes `s.coffee_bar = true`. The property's
    name must say the value's words, no more and no fewer; the hop stays."""
    words = name_words(value)
    if not words:
        return None
    names = referenced_names(cypher)
    flags = {
        (var, p.name)
        for var, name in names.variables.items()
        if (info := schema.label(name)) is not None
        for p in info.properties
        if "BOOLEAN" in p.types and name_words(p.name) == words
    }
    if len(flags) != 1:
        return None
    var, flag = flags.pop()
    condition = f"{var}.{quote_name_if_needed(flag)} = true"
    fixed = with_condition(cypher, label, prop, value, condition)
    if fixed is None:
        return None
    return fixed, f"{label}.{prop} {value!r} read as {condition} (no {label} is called so)"


_SORTING = frozenset({"ORDER", "SKIP", "LIMIT"})


def sorted_before_return(cypher: str) -> tuple[str, str] | None:
    """The statement with an ORDER BY, SKIP or LIMIT written before its final RETURN moved
    after it, and what moved; None when there is none. "Who manages the largest store?"
    written `MATCH (s:Store) ORDER BY s.sqft DESC LIMIT 1 RETURN s.manager` (a foodmart
    trial, refused by the engine on both attempts): Cypher sorts a RETURN's or a WITH's rows,
    so the sort goes after the RETURN. Not after a WITH (`WITH s ORDER BY … RETURN` is Cypher),
    nor where the RETURN sorts or limits too."""
    statement = Statement(cypher)
    returned = statement.final_return()
    if returned is None or statement.has_union:
        return None
    clauses = statement.clauses
    at = clauses.index(returned[0])
    first = at
    while first > 0 and statement.keyword_at(clauses[first - 1]) in _SORTING:
        first -= 1
    if first == at or first == 0 or statement.keyword_at(clauses[first - 1]) == "WITH":
        return None
    if any(statement.keyword_at(c) in _SORTING for c in clauses[at + 1 :]):
        return None
    tokens = statement.tokens
    moved = statement.source(clauses[first], clauses[at])
    head = cypher[: tokens[clauses[first]].position].rstrip()
    tail = cypher[tokens[clauses[at]].position : tokens[-1].end].rstrip().rstrip(";").rstrip()
    return f"{head} {tail} {moved}", f"moved {moved} after the RETURN"


def named_variables(cypher: str) -> set[str]:
    """The variables a statement filters on a literal: `(a:Airport {descr: 'X'})`, `WHERE
    a.iata = 'X'`."""
    return {
        var
        for var, _, value, in_map in node_filters(cypher)
        if in_map or value.kind in ("string", "number", "parameter")
    }


def grouped_with(
    error: str, cypher: str, schema: GraphSchema, asked_labels: Iterable[str], question: str
) -> tuple[str, str] | None:
    """`MATCH (s:Software) WITH count(DISTINCT v) AS count RETURN s.name AS name, count` for
    "Which software has more than 3 versions?" (the network trial, twice; the dev question
    "Which data center has the most racks?" on every attempt): a WITH of aggregates only keeps
    no node, so what comes after it cannot name `s`, and `v` was never matched. The nodes
    matched before the WITH that are read after it are kept by it (`WITH s, count(…)`, which
    also counts per software), and a variable the aggregate reads that nothing matched is
    matched as bind-unbound-variable would (the one relationship to the label the question
    names, or of several the one whose type the question says). None unless the engine said
    a variable is not defined and that WITH is the reason."""
    if unbound_name(error) is None:
        return None
    statement = Statement(cypher)
    tokens = statement.tokens
    names = referenced_names(cypher)
    withs = [c for c in statement.clauses if statement.keyword_at(c) == "WITH"]
    if len(withs) != 1 or statement.has_union:
        return None
    at = withs[0]
    items = statement.projection(at)
    aggregate = [statement.aggregates(item) for item in items]
    if not items or not all(aggregate):
        return None
    before = {t.name for t in tokens[:at] if t.is_name} & set(names.variables)
    end = statement.clause_end(at)
    read_after = [
        t.name
        for k, t in enumerate(tokens[end:], end)
        if t.is_name and t.name in before and k + 1 < len(tokens) and tokens[k + 1].is_punct(".")
    ]
    kept = list(dict.fromkeys(read_after))
    if not kept:
        return None
    first = tokens[at + 1]
    if first.is_keyword("DISTINCT"):
        first = tokens[at + 2]
    fixed = statement.edited([(first.position, first.position, ", ".join(kept) + ", ")])
    done = f"kept {', '.join(kept)} through the WITH"
    unmatched = [
        tokens[k].name
        for item in items
        for k in range(item.first, item.end)
        if tokens[k].is_name and tokens[k].kind == "identifier"
        and tokens[k].name not in names.variables
        and not (k + 1 < len(tokens) and tokens[k + 1].is_punct("("))
        and not tokens[k - 1].is_punct(".")
    ]  # fmt: skip
    for var in dict.fromkeys(unmatched):
        bound = bind_unbound_variable(f"'{var}' not defined", fixed, schema, asked_labels, question)
        if bound is None:
            return None
        fixed, done = bound[0], f"{done}; {bound[1]}"
    if check_schema(fixed, schema).problems:
        return None
    return fixed, done


def respelled_names(cypher: str, schema: GraphSchema) -> tuple[str, str] | None:
    """The statement with each unknown label or relationship type written as the one schema
    name it misspells (`[:ORDER]` → `[:ORDERS]`, `(:person)` → `(:Person)`), and what changed;
    None when some unknown name is no such misspelling or is one of several names'."""
    names = referenced_names(cypher)
    known_labels = [label.name for label in schema.labels]
    known_types = sorted({rel.type for rel in schema.relationships})
    tokens = tokenize(cypher)
    edits: list[tuple[Token, str]] = []
    for i, tok in enumerate(tokens):
        if not tok.is_name or i == 0 or not tokens[i - 1].is_punct(":", "|"):
            continue
        opener = next(iter(enclosing(tokens, i)), None)
        inside = tokens[opener].text if opener is not None else ""
        if inside == "(" and tok.name in names.labels - set(known_labels):
            known = known_labels
        elif inside == "[" and tok.name in names.rel_types - set(known_types):
            known = known_types
        else:
            continue
        spelt = [k for k in known if same_name(tok.name, k)]
        if len(spelt) != 1:
            return None
        edits.append((tok, spelt[0]))
    if not edits:
        return None
    out = cypher
    for tok, new in sorted(edits, key=lambda e: -e[0].position):
        out = f"{out[: tok.position]}{quote_name_if_needed(new)}{out[tok.end :]}"
    changed = dict.fromkeys(f"{tok.name} → {new}" for tok, new in edits)
    return out, ", ".join(changed)


def same_name(written: str, known: str) -> bool:
    """Whether `written` is `known` misspelt: the same word but for case, underscores or
    hyphens, a plural s, or (for words of five letters or more) one letter."""
    a, b = _bare(written), _bare(known)
    if a == b:
        return True
    if len(a) < 5 or len(b) < 5 or abs(len(a) - len(b)) > 1:
        return False
    if len(a) == len(b):
        return sum(x != y for x, y in zip(a, b, strict=True)) == 1
    short, long = (a, b) if len(a) < len(b) else (b, a)
    return any(long[:k] + long[k + 1 :] == short for k in range(len(long)))


def _bare(name: str) -> str:
    word = re.sub(r"[_\-\s]", "", name.casefold())
    return word[:-1] if word.endswith("s") and len(word) > 3 else word


def _node_span(tokens: Sequence[Token], hop: Hop, right: bool) -> tuple[int, int] | None:
    """The token indexes of the `(` and `)` of the node written on one side of `hop`."""
    if right:
        shut = matching_close(tokens, hop.last + 1)
        return (hop.last + 1, shut) if shut is not None else None
    opened = matching_open(tokens, hop.first - 1)
    return (opened, hop.first - 1) if opened is not None else None


def named_node_linked(cypher: str, question: str, schema: GraphSchema) -> tuple[str, str] | None:
    """The statement with a named node that only touches another named node tied to the asked
    node instead, and what changed; None unless that is unambiguous.

    "Which characters from Naboo appeared in The Phantom Menace?" written `MATCH (p:Planet
    {name: 'Naboo'})-[:APPEARED_IN]->(f:Film {title: 'The Phantom Menace'})<-[:APPEARED_IN]-
    (c:Character) RETURN c.name` (a Star Wars trial) listed the film's whole cast: a hop
    between two named nodes is true or false once, for every row, so Naboo filtered nothing.
    The named node is tied to the asked one (the one node the RETURN reads that no literal
    names) by the one relationship between their labels (or the one of several whose words
    the question says): `MATCH (f:Film {…})<-[:APPEARED_IN]-(c:Character), (c)-[:HOMEWORLD]->
    (p:Planet {name: 'Naboo'})`. Not where the question says the named nodes' own relationship
    and no other hop of the statement accounts for the words ("Who acted in The Matrix,
    directed by Lana Wachowski?" ties the director to the film, as asked)."""
    statement = Statement(cypher)
    returned = statement.final_return()
    if returned is None or statement.has_union:
        return None
    tokens = statement.tokens
    names = referenced_names(cypher)
    named = named_variables(cypher)
    at = returned[0]
    read = {
        t.name
        for k, t in enumerate(tokens[at:], start=at)
        if t.is_name and t.name in names.variables and not tokens[k - 1].is_punct(".")
    }
    asked = read - named
    if len(asked) != 1:
        return None
    x = asked.pop()
    hops = list(written_hops(tokens, names))

    def pinned(span: tuple[int, int] | None, var: str | None) -> bool:
        if var is not None:
            return var in named
        return span is not None and any(t.is_punct("{") for t in tokens[span[0] : span[1]])

    found = []
    for hop in hops:
        for right in (False, True):  # the named node on the hop's left, then on its right
            a_var, b_var = (hop.right_var, hop.left_var) if right else (hop.left_var, hop.right_var)
            span = _node_span(tokens, hop, right)
            if not (pinned(span, a_var) and b_var in named) or a_var in read or a_var == x:
                continue
            if a_var is not None and sum(a_var in (h.left_var, h.right_var) for h in hops) != 1:
                continue
            next_to = [h for h in hops if {x, b_var} == {h.left_var, h.right_var}]
            if span is not None and next_to:
                found.append((hop, right, span, next_to[0]))
    if len(found) != 1:
        return None
    hop, right, span, beside = found[0]
    words = question_words(question)
    if name_words(hop.rel_type) & words and hop.rel_type != beside.rel_type:
        return None  # the question says the named nodes' own relationship
    near, far = names.variables.get(x), hop.right if right else hop.left
    if near is None or far is None or near == far:
        return None
    rels = {
        (r.type, r.start == near) for r in schema.relationships if {r.start, r.end} == {near, far}
    }
    if len(rels) > 1:
        rels = {r for r in rels if name_words(r[0]) & words}
    if len(rels) != 1:
        return None
    rel_type, outward = rels.pop()
    node = cypher[tokens[span[0]].position : tokens[span[1]].end]
    if right:
        cut = (tokens[hop.first].position, tokens[span[1]].end)
    else:
        cut = (tokens[span[0]].position, tokens[hop.last].end)
    clause = max((c for c in statement.clauses if c <= hop.first), default=None)
    if clause is None or statement.keyword_at(clause) != "MATCH":
        return None
    end = tokens[statement.clause_end(clause) - 1].end
    arrow = f"-[:{rel_type}]->" if outward else f"<-[:{rel_type}]-"
    text = statement.edited([(*cut, ""), (end, end, f", ({x}){arrow}{node}")])
    return text, f"{node} tied to {x} by {rel_type}, not to the other named node"


def walked_back(cypher: str, question: str) -> tuple[str, str, str] | None:
    """The statement with a walk back to the node it left read as that node, what changed,
    and a read that finds a middle node with two such relationships (the walk back then means
    the others: "the other films of The Matrix's directors"); None when it walks back nowhere.

    `MATCH (t:Type {type: 'xl'})<-[:TYPE]-(m:Machine), (m)-[:TYPE]->(t2:Type) RETURN t2.ram`
    for "How much RAM does the xl machine type have?" (a dev statement): a machine has one TYPE
    relationship, and Cypher binds a relationship once in a MATCH, so the walk back to another
    type finds nothing; the statement means the type it left. Where two hops of one type and
    direction start at a middle node of a known label and end at two nodes of one label, the
    second unfiltered, the second hop goes and its node is read as the first (`RETURN t.ram`).
    Not for a question of others ("else", "other", "same", "also", "too"), nor where the
    relationships end at the middle (people in one city: the others who share it)."""
    for tokens, names, named, first, second in _same_type_pairs(cypher, question):
        ends = _walk_back(first, second)
        if ends is None:
            continue
        middle, kept, gone, gone_right = ends
        label = names.variables.get(kept)
        middle_label = names.variables.get(middle)
        if gone in named or kept == gone or label is None or middle_label is None:
            continue
        if names.variables.get(gone) != label:
            continue
        span = _node_span(tokens, second, gone_right)
        if span is None or any(t.is_punct("{") for t in tokens[span[0] : span[1]]):
            continue
        if gone_right:
            cut = (tokens[second.first].position, tokens[span[1]].end)
        else:
            cut = (tokens[span[0]].position, tokens[second.last].end)
        edits = [(*cut, "")] + [
            (t.position, t.end, kept)
            for k, t in enumerate(tokens)
            if t.is_name
            and t.name == gone
            and not (k and tokens[k - 1].is_punct("."))
            and not cut[0] <= t.position < cut[1]
        ]
        arrow = f"-[:{quote_name_if_needed(first.rel_type)}]->"
        twice = (
            f"MATCH (m:{quote_name_if_needed(middle_label)}){arrow}(:{quote_name_if_needed(label)}) "
            "WITH m, count(*) AS n WHERE n > 1 RETURN 1 LIMIT 1"
        )
        detail = f"{gone} read as {kept}: a {middle_label} has one {first.rel_type}, walked back"
        return _replaced(cypher, edits), detail, twice
    return None


def walked_back_through_named(cypher: str, question: str) -> tuple[str, str] | None:
    """The statement going on from the node it had left, not from any node of its label that
    shares a named middle with it, and what changed; None when it walks back nowhere so.

    "How many of those have a seat?" after "which houses in it are sworn to House Tyrell?"
    (a playground thread on a Game of Thrones graph nobody here wrote) was written `(:House
    {name: 'House Tyrell'})<-[:SWORN_TO]-(h2:House)-[:IN_REGION]->(r:Region {name: 'The
    Reach'})<-[:IN_REGION]-(:House)<-[:SEAT_OF]-(s:Seat) RETURN count(DISTINCT h2)`: the
    seat counted was any house's in the Reach, and every one of the 59 counted (26 have one).
    Where a node reaches a middle node the statement names by a literal, and the same
    relationship leads back from that middle to an unnamed node of the first node's label
    with no filter that the path goes on from, the path goes on from the first node: `…
    (r:Region {name: 'The Reach'}), (h2)<-[:SEAT_OF]-(s:Seat)`. A named middle reached to
    come back from says nothing the first node's own link does not. Not for a question of
    others ("else", "other", "same", "also", …), nor from a node named by a literal (the walk
    back may then mean its neighbours)."""
    for tokens, _names, named, first, second in _same_type_pairs(cypher, question):
        # `(kept)-[:R]->(m {…})<-[:R]-(:Label)`: the first hop from the kept node on its
        # left, the second back to the unnamed node on its right, both the same way to m.
        if first.left_var in (None, *named) or first.right_var not in named:
            continue  # a named first node: the walk back may mean its neighbours
        if second.left_var != first.right_var or second.right_var is not None:
            continue
        if first.points_right == second.points_right or second.right != first.left:
            continue
        opened = second.last + 1
        if opened + 4 >= len(tokens) or not tokens[opened + 1].is_punct(":"):
            continue
        close = matching_close(tokens, opened)
        if close != opened + 3:
            continue  # not `(:Label)` alone
        if not tokens[close + 1].is_punct("-", "<"):
            continue  # the path does not go on from it
        kept = first.left_var
        cut = (tokens[second.first].position, tokens[close].end)
        detail = (
            f"went on from {kept}, not from another {first.left} linked to the named "
            f"{first.right_var} by {first.rel_type}"
        )
        return _replaced(cypher, [(*cut, f", ({kept})")]), detail
    return None


def _same_type_pairs(
    cypher: str, question: str
) -> Iterator[tuple[list[Token], ReferencedNames, set[str], Hop, Hop]]:
    """For a question not of others ("else", "same", "also", …), every two hops of one
    relationship type the statement writes, with what the walked-back readings need: its
    tokens, names, and the variables it names by a literal."""
    if _SHARING.search(question):
        return
    tokens = tokenize(cypher)
    names = referenced_names(cypher)
    named = named_variables(cypher)
    hops = list(written_hops(tokens, names))
    for first in hops:
        for second in hops:
            if second is not first and second.rel_type == first.rel_type:
                yield tokens, names, named, first, second


def _walk_back(first: Hop, second: Hop) -> tuple[str, str, str, bool] | None:
    """For two hops whose relationships start at one middle node, the middle, the node the
    first reaches, the node the second reaches and whether that one is on the second's right."""

    def ends(hop: Hop) -> tuple[str | None, str | None, bool]:
        if hop.points_right:
            return hop.left_var, hop.right_var, True
        return hop.right_var, hop.left_var, False

    m1, a, _ = ends(first)
    m2, b, b_right = ends(second)
    if m1 is not None and m1 == m2 and a is not None and b is not None:
        return m1, a, b, b_right
    return None


def labels_named(question: str, schema: GraphSchema) -> set[str]:
    """The labels the question names in its words ("distribution centers" →
    DistributionCenter)."""
    words = re.findall(r"[A-Za-z][\w-]*", question)
    return {said.label.name for i in range(len(words)) if (said := label_said(words[i:], schema))}


def named_label(cypher: str, question: str, schema: GraphSchema) -> tuple[str, str] | None:
    """The statement matching the label the question names instead of a look-alike, and what
    changed; None otherwise.

    "Which distribution centers are in Canada?" written `MATCH (d:DestinationCenter {country:
    'Canada'})` (a trial on a supply-chain graph): the destination centers came back. Where
    the question names exactly one label the statement lacks, and the statement uses exactly
    one label the question does not name that shares its last word (Center), the one
    becomes the other. Where the look-alike is one the question names too ("Which
    distribution center supplies the most destination centers?" written
    `(dc:DistributionCenter)-[:SUPPLY_TO]->(dc2:DistributionCenter)`, a pattern the schema
    lacks), the one place whose change makes the statement fit is changed. Either way only
    when the statement then fits the schema (every property and relationship it reads
    there exists)."""
    names = referenced_names(cypher)
    named = labels_named(question, schema)
    missing = named - names.labels
    if len(missing) != 1:
        return None
    (want,) = missing
    head = split_name(want)[-1].lower()
    alike = [label for label in names.labels if split_name(label)[-1].lower() == head]
    spots = label_places(tokenize(cypher), alike)
    unnamed = {t.name for t in spots} - named
    quoted = quote_name_if_needed(want)
    if len(unnamed) == 1:
        (used,) = unnamed
        tried = [[t for t in spots if t.name == used]]
    elif not unnamed and spots and _misfits(cypher, schema):
        tried = [[t] for t in spots]
    else:
        return None
    fits = [
        (fixed, group[0].name)
        for group in tried
        if not _misfits(
            fixed := _replaced(cypher, [(t.position, t.end, quoted) for t in group]), schema
        )
    ]
    if len(fits) != 1:
        return None
    fixed, used = fits[0]
    return fixed, f"matched {want}, the label the question names, not {used}"


def label_word_as_value(cypher: str, question: str, schema: GraphSchema) -> tuple[str, str] | None:
    """The statement without a filter whose value is the word the question says for a label
    the statement matches, and what changed; None otherwise.

    "Which venue hosts the most events?" written `MATCH (c:Category {name: "Events"})
    <-[:HAS_CATEGORY]-(e:Event)-[:AT_VENUE]->(v:Venue) …`, and "What is the earliest event?"
    `MATCH (e:Event {type: "Event"}) …` (a trial on a conference-schedule graph nobody here
    wrote, whose categories and event types include "Events" and "Event"): the value lookup
    found the word, and the model pinned it, so only the events of that category or type were
    read. Where a string filter's whole value names a label the statement matches, and the
    question says that label's word once and not as the filtered node's own ("the Events
    category", "of type Event"; `words.value_said_as_label`), the filter goes (a map entry, or
    a comparison ANDed in the WHERE or alone there); a node of another label left with no
    filter goes too, with its hop, where nothing else reads it and the hop ends its chain."""
    names = referenced_names(cypher)
    entries = node_map_entries(cypher)
    offsets = {t.position: k for k, t in enumerate(tokenize(cypher))}
    for var, prop, value, in_map in node_filters(cypher):
        if value.kind != "string":
            continue
        own = names.variables.get(var)
        label = value_said_as_label(value.value, question, schema, (own or "", prop))
        if label is None or label not in names.labels:
            continue
        if in_map:  # the value's offset is within the entry's text: found by what it says
            entry = next(
                (e for e in entries if (e.variable, e.prop, e.value) == (var, prop, value.text)),
                None,
            )
            fixed = None if entry is None else without_entries(cypher, entries, partial(eq, entry))
        else:
            at = offsets[value.position]
            fixed = _without_comparison(cypher, at - 4, at)
        if fixed is None:
            continue
        if own != label:
            fixed = _without_end_node(fixed, var) or fixed
        return fixed, f"{var}.{prop} = {value.text} is the word for {label}, not a filter"
    return None


def _without_comparison(cypher: str, first: int, last: int) -> str | None:
    """`cypher` without the comparison written by tokens `first` to `last`, where it is the
    WHERE's one condition or ANDed with the others there; None otherwise."""
    statement = Statement(cypher)
    tokens = statement.tokens
    if first < 2 or last >= len(tokens):
        return None
    before, after = tokens[first - 1], tokens[last + 1] if last + 1 < len(tokens) else None
    if after is not None and after.is_keyword("OR", "XOR"):
        return None  # `a AND x OR b`: x binds to a, not a filter of its own
    if before.is_keyword("AND") or (
        before.is_keyword("WHERE") and (after is None or last + 1 in statement.clauses)
    ):
        cut = (tokens[first - 2].end, tokens[last].end)  # with the AND or WHERE before it
    elif before.is_keyword("WHERE") and after is not None and after.is_keyword("AND"):
        cut = (tokens[first].position, tokens[last + 2].position)  # with the AND after it
    else:
        return None  # inside OR, NOT or brackets: not a filter of its own
    return statement.edited([(*cut, "")])


def pins_compared(cypher: str) -> tuple[str, str] | None:
    """The statement without a comparison of two nodes' property that their filters keep
    apart, and what changed; None when there is none.

    "Which events are in both the Cloud and Community categories?" written `MATCH (c1:Category
    {name: "Cloud"})<-[:HAS_CATEGORY]-(e:Event) MATCH (c2:Category {name: "Community"})
    <-[:HAS_CATEGORY]-(e:Event) WHERE c1.name = c2.name …` (a trial on a conference-schedule
    graph): one node is called Cloud, the other Community, so their names are never equal and
    nothing came back. A comparison `a.p = b.p` where `a.p` and `b.p` are each filtered on
    one string, not the same, goes (where it is the WHERE's one condition or ANDed there)."""
    pins: dict[tuple[str, str], set[str]] = {}
    for var, prop, value, _ in node_filters(cypher):
        if value.kind == "string":
            pins.setdefault((var, prop), set()).add(value.value)
    if len(pins) < 2:
        return None
    tokens = tokenize(cypher)
    for k in range(len(tokens) - 6):
        a, dot, p, equals, b, dot2, q = tokens[k : k + 7]
        if not (a.is_name and b.is_name and p.is_name and q.is_name and equals.is_punct("=")):
            continue
        if not (dot.is_punct(".") and dot2.is_punct(".")) or a.name == b.name:
            continue
        left, right = pins.get((a.name, p.name), set()), pins.get((b.name, q.name), set())
        if len(left) != 1 or len(right) != 1 or left == right:
            continue
        fixed = _without_comparison(cypher, k, k + 6)
        if fixed is not None:
            shown = cypher[a.position : q.end]
            return fixed, f"{shown} can never hold: {left.pop()!r} and {right.pop()!r}"
    return None


def _without_end_node(cypher: str, var: str) -> str | None:
    """`cypher` without the node `var` and its one hop, where the node ends its chain and its
    variable is written nowhere else; None otherwise."""
    statement = Statement(cypher)
    names = referenced_names(cypher)
    tokens = statement.tokens
    if sum(t.is_name and t.name == var for t in tokens) != 1:
        return None
    hops = [h for h in written_hops(tokens, names) if var in (h.left_var, h.right_var)]
    if len(hops) != 1:
        return None
    hop = hops[0]
    right = hop.right_var == var
    span = _node_span(tokens, hop, right)
    if span is None:
        return None
    if right:
        if span[1] + 1 < len(tokens) and tokens[span[1] + 1].is_punct("-", "<"):
            return None
        cut = (tokens[hop.first].position, tokens[span[1]].end)
    else:
        if span[0] > 0 and tokens[span[0] - 1].is_punct("-", ">", "<"):
            return None
        cut = (tokens[span[0]].position, tokens[hop.last].end)
    near = hop.left_var if right else hop.right_var
    fixed = statement.edited([(*cut, "")])
    return _without_lone_node(fixed, near) if near else fixed


def unasked_hop(cypher: str, question: str, schema: GraphSchema) -> tuple[str, str] | None:
    """The statement without a hop the question never asks for, and what went; None when
    every hop is asked for or read.

    "Which books are fiction?" written `MATCH (g:Genre {name: "fiction"})<-[:OF_TYPE]-(b:Book)
    -[:IS_PART_OF]->(b2:BookSeries) RETURN b.title` (a trial on a graph of books, in four
    questions of twenty): the hop to a series keeps only the books that are in one, one of
    two. A hop of a MATCH whose far node ends its chain, is written nowhere else (no map, no
    read) and has a label, where the question says no word of that label (but for the words
    it shares with the label at the near end) nor of the relationship's type, goes with its
    node. A word said counts where it begins the name's word or the name's word begins it
    ("actors" says ACTED_IN). Not where the statement reads a variable it never binds (`RETURN
    c2.name` beside an unread airport: bind-unbound-variable binds it from there), where it
    counts or sums rows (but for `count(DISTINCT …)`: the hop's rows are what is measured),
    nor, for a "who" question, a node that has a name (who is asked)."""
    statement = Statement(cypher)
    tokens = statement.tokens
    names = referenced_names(cypher)
    aliases = {tokens[k + 1].name for k in range(len(tokens) - 1) if tokens[k].is_keyword("AS")}
    bound = names.variables.keys() | names.rel_variables.keys() | aliases
    if any(var not in bound for var, _prop in names.accesses):
        return None  # a read of a node never matched: the unread one may be what it meant
    if any(
        is_aggregate_call(tokens, k) and not tokens[k + 2].is_keyword("DISTINCT")
        for k in range(len(tokens) - 2)
    ):
        # The hop's rows are what is counted or summed: "Which account holder has the most
        # accounts?" counted `count(*)` over bank accounts, and without them every holder
        # had one (a trial on a bank-fraud graph).
        return None
    asked = question_words(question)
    who = bool(ASKS_WHO.match(question))

    def said(stems: set[str]) -> bool:
        return any(
            a.startswith(w) or w.startswith(a)
            for a in asked
            for w in stems
            if min(len(a), len(w)) >= 3
        )

    for hop in written_hops(tokens, names):
        clause = clause_at(statement, tokens[hop.first].position)
        if clause is None or statement.keyword_at(clause) != "MATCH" or statement.depths[hop.first]:
            continue
        if clause and tokens[clause - 1].is_keyword("OPTIONAL"):
            continue  # an OPTIONAL MATCH filters nothing
        if hop.rel_var is not None and sum(t.name == hop.rel_var for t in tokens if t.is_name) > 1:
            continue
        ends = ((hop.right_var, hop.right, hop.left), (hop.left_var, hop.left, hop.right))
        for far, far_label, near_label in ends:
            far_info = schema.label(far_label) if far_label is not None else None
            if far is None or far_label is None or far_info is None:
                continue
            if said(name_words(hop.rel_type)):
                break
            own = name_words(far_label) - (name_words(near_label) if near_label else set())
            if said(own or name_words(far_label)) or node_has_more(tokens, far):
                continue
            if who and has_name(far_info):
                continue  # "Who has the lowest APR?": the loan's holder is who is asked
            fixed = _without_end_node(cypher, far)
            if fixed is not None:
                detail = f"dropped ({far}:{far_label}) and its {hop.rel_type} hop"
                return fixed, f"{detail}: the question asks for no {far_label}"
    return None


def _without_lone_node(cypher: str, var: str) -> str:
    """`cypher` without a pattern `, (var)` that only repeats a node bound before it."""
    statement = Statement(cypher)
    tokens = statement.tokens
    for k in range(2, len(tokens) - 2):
        lone = tokens[k].is_punct("(") and tokens[k + 1].name == var and tokens[k + 2].is_punct(")")
        if not lone or not tokens[k - 1].is_punct(","):
            continue
        follows = tokens[k + 3] if k + 3 < len(tokens) else None
        if follows is None or follows.is_punct(",") or k + 3 in statement.clauses:
            return statement.edited([(tokens[k - 2].end, tokens[k + 2].end, "")])
    return cypher


def _misfits(cypher: str, schema: GraphSchema) -> bool:
    """Whether the statement reads a label, relationship or property the schema lacks there,
    or walks a relationship against its direction."""
    check = check_schema(cypher, schema)
    return bool(check.problems or check.unknown or check.corrections)


_NOBODY = re.compile(r"\b(?:nobody|no\s+one|no-one)\b", re.IGNORECASE)
"""No one at all: "Which courses has nobody completed?" says no label."""
_NONE_OF = re.compile(
    r"\b(?:no|without(?:\s+any)?|(?:not|never)\s+(?:\w+\s+){1,3}(?:any|an?))"
    r"\s+([A-Za-z][\w-]*(?:\s+[A-Za-z][\w-]*){0,2})",
    re.IGNORECASE,
)
"""Says the asked nodes have none of a thing: "no speaker", "without any", "not supplied by
any distribution center", "were not made into a movie", "has never won an award"."""


def absent_link(cypher: str, question: str, schema: GraphSchema) -> tuple[str, str] | None:
    """The statement asking for the asked nodes with no link to the label the question says
    they have none of, and what changed; None otherwise.

    "Which distribution centers supply no destination center?" written `MATCH
    (d:DistributionCenter)-[:SUPPLY_TO]->(dc:DestinationCenter) WHERE dc.type IS NULL RETURN
    dc` (a trial on a supply-chain graph nobody here wrote): a matched path always has its end,
    so nothing came back; "Which destination centers does no distribution center supply?"
    written with the hop and no filter at all named every supplied one. Where a "which
    <label> … no <other label>" question's statement is one MATCH of one hop between the two,
    with no filter or only the other end or a property of it being null (`WHERE s IS NULL`, "Which
    events have no speaker?" on a conference-schedule trial), it becomes `MATCH
    (d:DistributionCenter) WHERE NOT (d)-[:SUPPLY_TO]->(:DestinationCenter) RETURN d.<what it
    is called by>`. So too for "Which books were not made into a movie?", written as the hop
    alone (a trial on a graph of books: the two that were)."""
    said_none = _NONE_OF.search(question)
    asked = asked_label(question, schema)
    nobody = _NOBODY.search(question) is not None
    if (said_none is None and not nobody) or asked is None:
        return None
    said = label_said(said_none.group(1).split(), schema) if said_none else None
    if said is not None and said.label.name == asked[0].name:
        return None
    statement = Statement(cypher)
    kinds = [statement.keyword_at(c) for c in statement.clauses]
    filtered = kinds[1:2] == ["WHERE"]
    rest = kinds[2:] if filtered else kinds[1:]
    if kinds[:1] != ["MATCH"] or rest[:1] != ["RETURN"] or "MATCH" in rest:
        return None
    tokens, names = statement.tokens, referenced_names(cypher)
    hops = list(written_hops(tokens, names))
    if len(hops) != 1 or asked[0].name not in (hops[0].left, hops[0].right):
        return None
    hop = hops[0]
    mine = hop.left == asked[0].name
    other = hop.right if mine else hop.left
    if (said is not None and said.label.name != other) or (said is None and not nobody):
        return None  # "nobody": no one at the hop's other end
    if other is None or other == asked[0].name:
        return None
    var, far = (hop.left_var, hop.right_var) if mine else (hop.right_var, hop.left_var)
    if var is None or pattern_map_entries(cypher):
        return None  # a filter on either end is not only the link
    if filtered:
        where = [
            t.text.upper() if t.is_keyword("IS", "NULL") else t.text
            for t in tokens[statement.clauses[1] + 1 : statement.clauses[2]]
        ]
        missing = where[:-2]
        if far is None or where[-2:] != ["IS", "NULL"]:
            return None
        if missing != [far] and (len(missing) != 3 or missing[:2] not in ([far, "."], [var, "."])):
            return None  # only the far end, or a property of either end, may be missing
    outward = hop.points_right == mine
    road = (
        f"-[:{quote_name_if_needed(hop.rel_type)}]->"
        if outward
        else f"<-[:{quote_name_if_needed(hop.rel_type)}]-"
    )
    props = name_properties(asked[0]) or []
    shown = ", ".join(f"{var}.{quote_name_if_needed(p)} AS {p}" for p in props) or var
    limit = statement.last("LIMIT")
    tail = f" ORDER BY {props[0]}" if props else ""
    tail += f" {statement.source(limit, statement.clause_end(limit))}" if limit is not None else ""
    fixed = (
        f"MATCH ({var}:{quote_name_if_needed(asked[0].name)}) "
        f"WHERE NOT ({var}){road}(:{quote_name_if_needed(other)}) RETURN {shown}{tail}"
    )
    return fixed, f"asked for each {asked[0].name} with no {hop.rel_type} to a {other}"


def length_of_text(cypher: str) -> tuple[str, str] | None:
    """The statement measuring a property's text or list with `size` where it wrote `length`,
    and what changed; None when it does not.

    "Which speaker has the longest name?" written `ORDER BY length(s.name) DESC` (a trial on a
    conference-schedule graph nobody here wrote), on both attempts: `length` measures a path,
    and the engine refused a string ("Type mismatch: expected Path or Null but was String").
    A property is never a path, so `length(x.p)` becomes `size(x.p)`."""
    if "length" not in cypher.casefold():
        return None  # every statement is asked: no tokens read where no length is written
    tokens = tokenize(cypher)
    edits = [
        (tok.position, tok.end, "size")
        for k, tok in enumerate(tokens[:-5])
        if tok.is_word
        and tok.text.casefold() == "length"
        and tokens[k + 1].is_punct("(")
        and tokens[k + 2].is_name
        and tokens[k + 3].is_punct(".")
        and tokens[k + 4].is_name
        and tokens[k + 5].is_punct(")")
        and not (k and tokens[k - 1].is_punct("."))
    ]
    if not edits:
        return None
    return _replaced(cypher, edits), "size(…) of a property, not length(…), which measures a path"


_NEGATED = re.compile(r"\b(?:not|never)\b(?!\s+(?:only|just)\b)|n['’]t\b", re.IGNORECASE)
"""A verb the question denies: "not offered", "never worked", "doesn't run"."""


def _negated_value(question: str, values: Collection[str]) -> str | None:
    """The value the question's first denial is about: the nearest one said after it ("offered
    in Beijing but not in Tokyo" → Tokyo), or the only one said where none follows ("Which
    services does Sao Paulo not offer?"); None where the question denies nothing."""
    denial = _NEGATED.search(question)
    if denial is None:
        return None
    text = question.casefold()
    places = {
        value: found.start()
        for value in values
        if (found := re.search(rf"(?<!\w){re.escape(value.casefold())}(?!\w)", text))
    }
    after = sorted((at, value) for value, at in places.items() if at > denial.start())
    if after:
        return after[0][1]
    return next(iter(places)) if len(places) == 1 else None


def unwritten_negation(cypher: str, question: str) -> tuple[str, str] | None:
    """The statement denying the link to the named node the question denies, and what changed;
    None otherwise.

    "Which services are not offered in Sao Paulo?" written `MATCH (r:Region {name: "Sao
    Paulo"})-[:OFFERS_SERVICE]->(s:Service) RETURN s.name` (a trial on an AWS infrastructure
    graph nobody here wrote) listed the services Sao Paulo offers; "Which services are offered
    in Beijing but not in Tokyo?" matched Tokyo's link in an OPTIONAL MATCH, which filters
    nothing. The named node the question's "not" (or "never", "n't") is about, pinned by a
    string, goes from the MATCH with its hop where it ends a chain and nothing else reads it,
    or the OPTIONAL MATCH that holds it goes (its WHERE with it) where it binds nothing read
    later; either way `WHERE NOT (:Region {name: "Sao Paulo"})-[:OFFERS_SERVICE]->(s)` keeps
    the link denied. Not where the statement writes a NOT of its own."""
    if _NEGATED.search(question) is None:
        return None  # every statement is asked: its filters are read only for a denial
    pinned = [
        (var, prop, value) for var, prop, value, in_map in node_filters(cypher)
        if in_map and value.kind == "string"
    ]  # fmt: skip
    denied = _negated_value(question, {value.value for _, _, value in pinned})
    if denied is None:
        return None
    statement = Statement(cypher)
    tokens, names = statement.tokens, referenced_names(cypher)
    for var, _prop, value in pinned:
        if value.value != denied:
            continue
        for hop in written_hops(tokens, names):
            if var not in (hop.left_var, hop.right_var) or hop.rel_var is not None:
                continue
            right = hop.right_var == var
            near = hop.left_var if right else hop.right_var
            span = _node_span(tokens, hop, right)
            if near is None or span is None:
                continue
            node = "(" + statement.source(span[0] + 2, span[1]).strip() + ")"
            if not tokens[span[0] + 2].is_punct(":"):
                continue  # `(var:Label …)`: the label kept, the variable left out
            road = statement.source(hop.first, hop.last + 1).strip()
            denial = f"NOT ({near}){road}{node}" if right else f"NOT {node}{road}({near})"
            clause = clause_at(statement, tokens[hop.first].position)
            if (
                clause is not None
                and clause - 1 in statement.clauses
                and tokens[clause - 1].is_keyword("OPTIONAL")
            ):
                fixed = _without_optional(statement, clause, near, denial)
            else:
                tested = _without_null_test(_without_null_test(cypher, near), var)
                fixed = _denied_at_end(tested, var, near, denial)
            if fixed is not None:
                return fixed, f"the question denies the link to {value.text}: {denial}"
    return None


def _without_null_test(cypher: str, var: str) -> str:
    """`cypher` without a WHERE that only tests `var` or a property of it for null (`WHERE NOT
    s.name IS NOT NULL` of the services, or `WHERE r2.name IS NULL` of the denied region: the
    model's own tries at "does not offer"); else as it is."""
    statement = Statement(cypher)
    tokens = statement.tokens
    for clause in statement.clauses:
        if statement.keyword_at(clause) != "WHERE":
            continue
        body = [
            t.text.upper() if t.is_keyword("NOT", "IS", "NULL") else t.text
            for t in tokens[clause + 1 : statement.clause_end(clause)]
        ]
        if body[:1] == ["NOT"]:
            body = body[1:]
        if body[:1] == [var] and body[1:2] == ["."] and len(body) > 2:
            body = body[3:]
        elif body[:1] == [var]:
            body = body[1:]
        else:
            continue
        if body in (["IS", "NULL"], ["IS", "NOT", "NULL"]):
            end = statement.clause_end(clause)
            stop = tokens[end].position if end < len(tokens) else len(cypher)
            return statement.edited([(tokens[clause].position, stop, "")])
    return cypher


def _denied_at_end(cypher: str, var: str, near: str, denial: str) -> str | None:
    """The statement without the node `var` and its hop, `denial` added to the MATCH that binds
    `near`, where the node ends its chain, nothing else reads it and the statement denies
    nothing yet."""
    tokens = tokenize(cypher)
    if any(
        t.is_keyword("NOT") and not tokens[k - 1].is_keyword("IS")
        for k, t in enumerate(tokens)
        if k
    ):
        return None  # a NOT of its own: what it denies is the model's to say
    cut = _without_end_node(cypher, var)
    if cut is None:
        return None
    tokens = tokenize(cut)
    at = binding(tokens, near)
    return None if at is None else add_condition(cut, tokens[at].position, denial)


def _without_optional(statement: Statement, clause: int, near: str, denial: str) -> str | None:
    """The statement without the OPTIONAL MATCH whose MATCH is at `clause` (and its WHERE),
    `denial` added to the MATCH that binds `near`, where the OPTIONAL MATCH binds nothing read
    after it."""
    tokens = statement.tokens
    end = statement.clause_end(clause)
    clause -= 1  # from the OPTIONAL
    if end < len(tokens) and statement.keyword_at(end) == "WHERE":
        end = statement.clause_end(end)
    before = {t.name for t in tokens[:clause] if t.is_name}
    new = {t.name for t in tokens[clause:end] if t.is_name and t.name not in before}
    if any(t.is_name and t.name in new for t in tokens[end:]):
        return None
    bound = binding(tokens[:clause], near)
    if bound is None:
        return None
    stop = tokens[end].position if end < len(tokens) else len(statement.text)
    cut = statement.edited([(tokens[clause].position, stop, "")])
    return add_condition(cut, tokens[bound].position, denial)


def value_denied_next_door(
    cypher: str, hints: Sequence[tuple[str, str, str]], schema: GraphSchema
) -> tuple[str, str] | None:
    """The statement denying the link to the node that holds a value it compared with the
    wrong node's property, and what changed; None otherwise.

    "Which regions are not in North America?" written `MATCH (r:Region) WHERE r.name <>
    "North America"` (a trial on an AWS infrastructure graph nobody here wrote) listed all
    ten regions: no region is called that, a continent is. Where the value lookup found the
    value on one other label's property and not on the compared one, and one relationship
    type links the two labels, the comparison (a filter of its own in the WHERE) becomes
    `NOT (r)-[:IS_LOCATED_IN]->(:Continent {name: "North America"})`."""
    if "<>" not in cypher:
        return None
    names = referenced_names(cypher)
    tokens = tokenize(cypher)
    for k in range(len(tokens) - 4):
        var, dot, prop, op, value = tokens[k : k + 5]
        if not (var.is_name and dot.is_punct(".") and prop.is_name and op.is_punct("<>")):
            continue
        own = names.variables.get(var.name)
        if value.kind != "string" or own is None or (k and tokens[k - 1].is_punct(".")):
            continue
        holders = {
            (label, held) for label, held, v in hints if v.casefold() == value.value.casefold()
        }
        if (own, prop.name) in holders or len(holders) != 1:
            continue
        ((label, held),) = holders
        roads = [
            r for r in schema.relationships if {r.start, r.end} == {own, label} and own != label
        ]
        if len(roads) != 1:
            continue
        road = roads[0]
        rel = f"[:{quote_name_if_needed(road.type)}]"
        far = f"(:{quote_name_if_needed(label)} {{{quote_name_if_needed(held)}: {value.text}}})"
        denial = (
            f"NOT ({var.name})-{rel}->{far}"
            if road.start == own
            else f"NOT ({var.name})<-{rel}-{far}"
        )
        if _without_comparison(cypher, k, k + 4) is None:
            continue  # inside OR, NOT or brackets: not a filter of its own
        fixed = cypher[: tokens[k].position] + denial + cypher[tokens[k + 4].end :]
        return fixed, f"{value.text} is a {label}'s {held}: {denial}"
    return None


def asked_label_holds_read(
    cypher: str, question: str, schema: GraphSchema
) -> tuple[str, str] | None:
    """The statement matching, where it read properties from a node whose label lacks every
    one of them, the one label that holds them all and that the question names, reached from
    the node before it on the schema's road; and what changed. None unless that makes the
    statement fit the schema.

    "What is the most expensive pharmaceutical speciality in the blood and blood-forming
    organs area?" written `(a:AnatomicFunctionalArea {…})<-[:HAS_ANATOMIC_FUNCTIONAL_AREA]-
    (n:NationalClassifier) … RETURN n.price` (a trial on a drug classification, both
    attempts): only specialities have a price, four hops from an area; `n` becomes
    `(n:PharmaceuticalSpeciality)`, reached on the one road from the area. Only where the node
    is written once with its label and no map, and is no other label's that the statement
    matches."""
    tokens = tokenize(cypher)
    names = referenced_names(cypher)
    named = labels_named(question, schema)
    for var, label in names.variables.items():
        info = schema.label(label)
        read = {prop for v, prop in names.accesses if v == var}
        if info is None or not read or any(has_property(info, p) for p in read):
            continue
        holders = [
            other.name
            for other in schema.labels
            if other.name != label and all(has_property(other, p) for p in read)
        ]
        if len(holders) != 1 or holders[0] not in named or holders[0] in names.labels:
            continue
        bound = binding(tokens, var)
        labelled = sum(
            t.name == var and tokens[k + 1].is_punct(":") for k, t in enumerate(tokens[:-1])
        )
        if bound is None or labelled != 1 or node_has_more(tokens, var):
            continue
        at = tokens[bound + 3]
        fixed = cypher[: at.position] + quote_name_if_needed(holders[0]) + cypher[at.end :]
        if check_schema(fixed, schema).problems:
            rerouted = reroute_relationship(fixed, schema, question)
            fixed = rerouted[0] if rerouted else fixed
        if not check_schema(fixed, schema).problems:
            said = ", ".join(sorted(read))
            return (
                fixed,
                f"{var} matched as :{holders[0]}, the label the question names that holds {said}",
            )
    return None


_ASKS_FOR_THINGS = re.compile(r"^\W*(?:which|what|who)\b", re.IGNORECASE)


def pinned_read_fix(cypher: str, question: str, schema: GraphSchema) -> tuple[str, str] | None:
    """For a "which/what/who" question whose statement returns only properties of one node
    that it pins to a value itself, what the node is called by in their place, and what
    changed; None otherwise. "Which mammals live in beaver ponds?" written `MATCH (l:Landscape
    {Entity: "Beaver Ponds"})-[:HABITAT_FOR]->(a:Animal {Group: "Mammal"}) RETURN DISTINCT
    a.Group` (a trial on a Yellowstone food web nobody here wrote) answered 'Mammal', the
    value it filtered on. Not where the node has no name, is called by a pinned property, the
    sort reads a replaced column, or the statement aggregates or has a UNION."""
    if not _ASKS_FOR_THINGS.match(question):
        return None
    statement = Statement(cypher)
    returned = statement.final_return()
    if returned is None or statement.has_union:
        return None
    items = returned[1]
    names = referenced_names(cypher)
    if any(t.is_keyword("OR", "XOR") for t in statement.tokens):
        return None  # `a.x = 'A' OR a.x = 'B'`: the value read tells them apart
    filters = [(var, prop, value) for var, prop, value, _in_map in node_filters(cypher)]
    pinned = {
        (var, prop)
        for var, prop, value in filters
        if value.kind in ("string", "number")
        and sum((v, p) == (var, prop) for v, p, _ in filters) == 1
    }
    reads = [statement.words(item) for item in items]
    if not reads or any(len(w) != 3 or w[1] != "." or (w[0], w[2]) not in pinned for w in reads):
        return None
    variables = {w[0] for w in reads}
    label = schema.label(names.variables.get(next(iter(variables)), ""))
    if len(variables) != 1 or label is None:
        return None
    called = name_properties(label)
    if not called or set(called) & {w[2] for w in reads}:
        return None
    replaced = {statement.source(i.first, i.end) for i in items} | {i.alias for i in items}
    if any(statement.source(k.first, k.end) in replaced for k in statement.order_keys()):
        return None
    var = variables.pop()
    named = ", ".join(
        f"{var}.{quote_name_if_needed(p)} AS {quote_name_if_needed(p)}" for p in called
    )
    last = items[-1]
    stop = statement.tokens[last.end + 1].end if last.alias else statement.tokens[last.end - 1].end
    fixed = statement.edited([(statement.tokens[items[0].first].position, stop, named)])
    return fixed, f"returned {named}: the rows only repeated the value the statement filters on"


_MOST_OR_FEWEST = re.compile(r"\b(?:most|fewest|least)\b", re.IGNORECASE)


def asked_end_fix(cypher: str, question: str, schema: GraphSchema) -> tuple[str, str] | None:
    """For a "which <label> … the most …" question counted over a relationship between two
    nodes of that label, the end the question's words ask for named in place of the other,
    and what changed; None otherwise. "Which animal preys on the most animals?" written
    `MATCH (a:Animal)-[r:PREY_ON]->(p:Animal) RETURN p.Entity AS prey, count(r) AS prey_count
    ORDER BY prey_count DESC LIMIT 1` (a trial on a Yellowstone food web nobody here wrote)
    named the animal preyed on by the most. The type's words after the asked label ("animal
    preys on") make the asked node the relationship's start; followed by "by" ("animal is
    preyed on by the most") its end. Only where the RETURN is one read of the other end and
    one aggregate, and the statement writes the relationship once."""
    asked = asked_label(question, schema)
    statement = Statement(cypher)
    returned = statement.sole_return()
    if asked is None or returned is None or not _MOST_OR_FEWEST.search(question):
        return None
    items = returned[1]
    reads = [item for item in items if not statement.aggregates(item)]
    if len(items) != 2 or len(reads) != 1:
        return None
    words = statement.words(reads[0])
    label = asked[0].name
    hops = [
        h
        for h in written_hops(statement.tokens, referenced_names(cypher))
        if h.left == h.right == label and h.left_var and h.right_var
    ]
    if len(hops) != 1 or len(words) != 3 or words[1] != ".":
        return None
    hop = hops[0]
    said = [w.lower() for w in _WORD.findall(question)]
    stems = [_verb_stem(w) for w in said]
    phrase = [_verb_stem(w) for w in split_name(hop.rel_type)]
    at = _phrase_at(stems, phrase)
    if at is None:
        return None
    start, end = (
        (hop.left_var, hop.right_var) if hop.points_right else (hop.right_var, hop.left_var)
    )
    wanted = end if said[at + len(phrase) : at + len(phrase) + 1] == ["by"] else start
    other = start if wanted == end else end
    props = name_properties(asked[0])
    if wanted is None or words[0] != other or not props:
        return None
    fixed = read_instead(statement, reads[0], wanted, props)
    if fixed is None:
        return None
    where = "end" if wanted == end else "start"
    return fixed[0], f"returned {fixed[1]}: the question asks for {hop.rel_type}'s {where}"
