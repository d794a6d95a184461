"""Statement edits behind the count rules: a count that counts a node more than once, a count
of the one node the question names as a kind of thing, a count nobody asked for, a count
of rows where a relationship stores the number, and an aggregate split by a grouping key
nothing after it reads."""

from __future__ import annotations

import re
from collections.abc import Sequence

from graph_agent.graphdb.protocol import GraphSchema, LabelInfo, RelPattern
from graph_agent.graphdb.schema import NUMBER_TYPES, quote_name_if_needed
from graph_agent.lint import node_map_entries
from graph_agent.question_fit import COUNT_FILLERS, counted_label, label_named
from graph_agent.repair.edits import EACH, HOW_MANY, named_variables, node_filters
from graph_agent.repair.relationships import Hop, written_hops
from graph_agent.schema_check import arrow
from graph_agent.statement import Item, Statement, fresh_variable, is_aggregate_call
from graph_agent.superlatives import asks_order, name_properties, property_kind, read_instead
from graph_agent.words import LINKING, Said, label_said, plural
from guardrails import (
    ReferencedNames,
    Token,
    content_words,
    matching_close,
    matching_open,
    name_words,
    referenced_names,
    stem,
)

_TIMES = re.compile(r"\b(?:times|how\s+often)\b", re.IGNORECASE)
_COUNT_WORDS = re.compile(
    r"\b(?:how\s+many|how\s+much|number|count|counts|total|totals|amount|size|tally)\b",
    re.IGNORECASE,
)
_WHICH_PLURAL = re.compile(
    r"^\W*(?:which|what)\s+([A-Za-z][\w-]*(?:\s+[A-Za-z][\w-]*){0,2})\s+(?:are|were|exist)\b",
    re.IGNORECASE,
)


def _counts(statement: Statement) -> list[tuple[int, int, list[Token]]]:
    """Each `count(…)` call: its name token's index, its closing bracket's, and the tokens
    inside."""
    tokens = statement.tokens
    found = []
    for i, token in enumerate(tokens):
        if token.text.upper() == "COUNT" and is_aggregate_call(tokens, i):
            close = matching_close(tokens, i + 1)
            if close is not None:
                found.append((i, close, tokens[i + 2 : close]))
    return found


def _called_by(schema: GraphSchema) -> dict[str, set[str]]:
    """For each label, the properties that tell one of its nodes from another: what it is
    called by, and any property the schema sample found unique."""
    return {
        label.name: set(name_properties(label)) | {p.name for p in label.properties if p.unique}
        for label in schema.labels
    }


def _pinned(cypher: str, names: ReferencedNames, schema: GraphSchema) -> tuple[set[str], set[int]]:
    """The variables a literal filter pins to one node by what their label is called by (in a
    map or a WHERE, in any pattern of the variable), and the offsets of unnamed node patterns
    whose map does."""
    called_by = _called_by(schema)
    variables = {
        var
        for var, prop, value, in_map in node_filters(cypher)
        if (in_map or value.kind in ("string", "number", "parameter"))
        and prop in called_by.get(names.variables.get(var, ""), set())
    }
    unnamed = {
        e.node
        for e in node_map_entries(cypher)
        if e.variable is None and e.prop in called_by.get(e.label or "", set())
    }
    return variables, unnamed


def _node_patterns(tokens: list[Token], names: ReferencedNames) -> list[tuple[str | None, int]]:
    """The node patterns at either end of the statement's written hops: (variable or None,
    the offset of the pattern's `(`)."""
    seen: dict[int, str | None] = {}
    for hop in written_hops(tokens, names):
        for opened in (matching_open(tokens, hop.first - 1), hop.last + 1):
            if opened is not None:
                inside = tokens[opened + 1] if opened + 1 < len(tokens) else None
                seen[tokens[opened].position] = inside.name if inside and inside.is_name else None
    return [(var, at) for at, var in seen.items()]


def count_distinct(cypher: str, question: str, schema: GraphSchema) -> tuple[str, str] | None:
    """The statement counting each node once, and what changed; None unless a "how many
    <things>" question's `count(u)` (or `count(*)`, where one node of the counted label is
    matched) counts a node its pattern can reach more than once. "How many users from
    Virginia watched a horror movie?" written `MATCH (u:User {state: 'Virginia'})-[:WATCHED]->
    (m:Movie)-[:HAS]->(g:Genre {name: 'Horror'}) RETURN count(u)` (a trial on a movie graph
    nobody here wrote) gave 25: a user is counted once per horror film. Only where the pattern
    holds another node that nothing pins to one (a filter on what it is called by: a genre's
    name pins it, a film's year does not) and no returned column groups by; not for "how many
    times" or "how often"."""
    if not HOW_MANY.search(question) or _TIMES.search(question):
        return None
    statement = Statement(cypher)
    if statement.last("WITH") is not None or statement.has_union:
        return None  # a count behind a WITH is read again after it (with-alias's to mend)
    tokens = statement.tokens
    names = referenced_names(cypher)
    pinned, pinned_unnamed = _pinned(cypher, names, schema)
    patterns = _node_patterns(tokens, names)
    asked = counted_label(question, schema, names.labels)
    edits = []
    for at, close, inside in _counts(statement):
        if len(inside) == 1 and inside[0].is_punct("*"):
            of_label = [v for v, label in names.variables.items() if label == asked]
            if asked is None or len(of_label) != 1:
                continue
            var = of_label[0]
        elif len(inside) == 1 and inside[0].is_name and inside[0].name in names.variables:
            var = inside[0].name
        else:
            continue
        grouped = _grouped(statement, at)
        others = [
            v
            for v, at in patterns
            if v != var and at not in pinned_unnamed and v not in pinned | grouped
        ]
        if var not in {v for v, _ in patterns} or not others:
            continue
        edits.append((tokens[at + 2].position, tokens[close].position, f"DISTINCT {var}"))
    if not edits:
        return None
    return statement.edited(edits), "counted each node once (count(DISTINCT …))"


def other_label_counted(cypher: str, question: str, schema: GraphSchema) -> tuple[str, str] | None:
    """The statement counting the node of the label the question counts, and what changed;
    None unless that is plain. "How many people hold a position?" written `MATCH (p:Person)
    -[:HOLDS_POSITION]->(p2:Position) RETURN count(DISTINCT p2.name)` (a trial on a learning
    graph nobody here wrote) counted positions: three of each gave the right number by chance.
    Where a "how many <label>" question's one count counts a node of another label (or a
    property of it), and the statement matches one node of the counted label, which nothing
    pins and no column groups by, that node is counted, each once: `count(DISTINCT p)`. Not
    for "how many times" or "how often", nor behind a WITH or a UNION."""
    if not HOW_MANY.search(question) or _TIMES.search(question):
        return None
    statement = Statement(cypher)
    counts = _counts(statement)
    if statement.sole_return() is None or len(counts) != 1:
        return None
    names = referenced_names(cypher)
    asked = counted_label(question, schema, names.labels)
    said_words = re.findall(r"[A-Za-z][\w-]*", HOW_MANY.sub("", question))
    words = [w for w in said_words if w.lower() not in COUNT_FILLERS]
    said = label_said(words, schema, names.labels)
    if said is None or said.label.name != asked:
        return None  # "How many customers ordered Chai?": is Order the counted noun? open
    at, close, inside = counts[0]
    inside = inside[1:] if inside and inside[0].is_keyword("DISTINCT") else inside
    if not inside or not inside[0].is_name or len(inside) not in (1, 3):
        return None
    if len(inside) == 3 and not (inside[1].is_punct(".") and inside[2].is_name):
        return None
    label = names.variables.get(inside[0].name)
    of_label = [v for v, other in names.variables.items() if other == asked]
    if asked is None or label is None or label == asked or len(of_label) != 1:
        return None
    var = of_label[0]
    if var in _pinned(cypher, names, schema)[0] | _grouped(statement, at):
        return None
    tokens = statement.tokens
    fixed = statement.edited([(tokens[at + 2].position, tokens[close].position, f"DISTINCT {var}")])
    return fixed, f"counted {var}, the {asked} the question counts, not a {label}"


def _grouped(statement: Statement, at: int) -> set[str]:
    """The variables the projection holding token `at` groups by: those its items other than
    the aggregates read."""
    tokens = statement.tokens
    clause = max((c for c in statement.clauses if c <= at), default=None)
    if clause is None or statement.keyword_at(clause) not in ("RETURN", "WITH"):
        return set()
    names: set[str] = set()
    for item in statement.projection(clause):
        read = range(item.first, item.end)
        if any(is_aggregate_call(tokens, i) for i in read):
            continue
        names |= {tokens[i].name for i in read if tokens[i].is_name}
    return names


def _first_node_end(tokens: Sequence[Token], var: str) -> int | None:
    """The index of the `)` closing the first node pattern that starts with `var`."""
    opened = next(
        (i for i in range(len(tokens) - 1) if tokens[i].is_punct("(") and tokens[i + 1].is_name
         and tokens[i + 1].name == var),
        None,
    )  # fmt: skip
    return matching_close(tokens, opened) if opened is not None else None


def named_node_counted(cypher: str, question: str, schema: GraphSchema) -> tuple[str, str] | None:
    """The statement counting what is linked to the one node it names, and what changed; None
    unless that is unambiguous. "How many comedies are there?" written `MATCH (g:Genre {name:
    'Comedy'}) RETURN count(g)` (a trial on a movie graph nobody here wrote) answered 1: the
    question names a kind of thing the graph stores as a node, and counts the things of that
    kind. Only for a "how many" question that names no label (a label named is counted-road's
    and counted-label's), whose statement matches that one node alone, on what the node is
    called by, and returns its count alone, no WITH; the count moves to the one label linked
    to it: `MATCH (g:Genre {name: 'Comedy'})<-[:HAS]-(m:Movie) RETURN count(DISTINCT m)`."""
    if not HOW_MANY.search(question) or EACH.search(question):
        return None
    names = referenced_names(cypher)
    if len(names.variables) != 1 or names.rel_types or counted_label(question, schema):
        return None  # a label counted: counted-road's and counted-label's to mend
    ((var, label_name),) = names.variables.items()
    label = schema.label(label_name)
    if label is None or var not in named_variables(cypher):
        return None
    called_by = _called_by(schema)[label.name]
    if not {p for v, p in names.accesses if v == var} | _map_keys(cypher, var) <= called_by:
        return None
    statement = Statement(cypher)
    returned = statement.final_return()
    counts = _counts(statement)
    if returned is None or len(returned[1]) != 1 or len(counts) != 1:
        return None
    if statement.last("WITH") is not None:
        return None
    at, close, inside = counts[0]
    if inside and inside[0].is_keyword("DISTINCT"):
        inside = inside[1:]
    if [t.text for t in inside] not in (["*"], [var]):
        return None  # another variable counted: bind-unbound-variable's to match
    links = {
        (r.start, r.type, r.end): r
        for r in schema.relationships
        if label.name in (r.start, r.end) and r.start != r.end
    }
    if len(links) != 1:
        return None
    (rel,) = links.values()
    other = rel.end if rel.start == label.name else rel.start
    new = fresh_variable(other, names.variables)
    hop = f"{arrow(label.name, rel)}({new}:{other})"
    tokens = statement.tokens
    shut = _first_node_end(tokens, var)
    if shut is None:
        return None
    text = statement.edited(
        [(tokens[shut].end, tokens[shut].end, hop),
         (tokens[at + 2].position, tokens[close].position, f"DISTINCT {new}")]
    )  # fmt: skip
    return text, f"counted the {plural(other)} linked to the named {label.name}"


def _map_keys(cypher: str, var: str) -> set[str]:
    return {e.prop for e in node_map_entries(cypher) if e.variable == var}


def _label_after_values(words: list[str], statement: Statement, schema: GraphSchema) -> Said | None:
    """The label the phrase names, after any leading words that the statement's string
    literals hold ("female characters" where it filters `gender: "female"`)."""
    literals = {w.lower() for t in statement.tokens if t.kind == "string" for w in t.value.split()}
    for start in range(len(words)):
        if start and words[start - 1].lower() not in literals:
            return None
        if (said := label_said(words[start:], schema)) is not None:
            return said
    return None


def count_unasked(cypher: str, question: str, schema: GraphSchema) -> tuple[str, str] | None:
    """The statement listing what it counted, and what changed; None unless a "which/what
    <label> are there" question with no word of counting is answered by one count of that
    label alone. "What genres are there?" written `MATCH (g:Genre) RETURN count(g) AS
    genreCount` (a trial on a movie graph nobody here wrote) answered 10: `RETURN DISTINCT
    g.name AS name ORDER BY name`, by what the label is called by (the node itself where
    nothing is)."""
    asked = _WHICH_PLURAL.search(question)
    if asked is None or _COUNT_WORDS.search(question):
        return None
    statement = Statement(cypher)
    said = _label_after_values(asked.group(1).split(), statement, schema)
    returned = statement.final_return()
    counts = _counts(statement)
    if said is None or returned is None or len(returned[1]) != 1 or len(counts) != 1:
        return None
    tokens = statement.tokens
    at, (item,) = returned
    count_at, close, inside = counts[0]
    if (item.first, item.end) != (count_at, close + 1):
        return None
    if inside and inside[0].is_keyword("DISTINCT"):
        inside = inside[1:]
    names = referenced_names(cypher)
    if (
        not inside
        or not inside[0].is_name
        or names.variables.get(inside[0].name) != said.label.name
    ):
        return None
    var = inside[0].name
    if len(inside) == 3 and inside[1].is_punct(".") and inside[2].is_name:
        props = [inside[2].name]
    elif len(inside) == 1:
        props = name_properties(said.label)
    else:
        return None
    if props:
        columns = [f"{var}.{p} AS {quote_name_if_needed(p)}" for p in props]
        order = ", ".join(quote_name_if_needed(p) for p in props)
        listed = f"RETURN DISTINCT {', '.join(columns)} ORDER BY {order}"
    else:
        listed = f"RETURN DISTINCT {var}"
    return cypher[: tokens[at].position] + listed, f"listed the {plural(said.label.name)}"


def _key(name: str) -> str:
    return name.replace("_", "").casefold()


def stored_count(cypher: str, schema: GraphSchema) -> tuple[str, str] | None:
    """The statement adding up the number a relationship stores, and what changed; None unless
    one `count(…)` is named after a number property of exactly one relationship the statement
    matches. "How many times did Kippy Butterfill watch each of the movies he watched?"
    written `MATCH (u:User {…})-[:WATCHED]->(m:Movie) RETURN m.title AS title, count(*) AS
    watchCount` (a playground trial on a movie graph nobody here wrote) gave 1 for every film:
    each row is one WATCHED relationship, whose `watchCount` holds the times. The count
    becomes `sum(r.watchCount)`, the relationship named `r` where it has no name. A node's
    number is left: summed over rows it would count itself once per row."""
    statement = Statement(cypher)
    tokens = statement.tokens
    names = referenced_names(cypher)
    found = []
    for clause in statement.clauses:
        if statement.keyword_at(clause) not in ("RETURN", "WITH"):
            continue
        for item in statement.projection(clause):
            whole = (
                is_aggregate_call(tokens, item.first)
                and tokens[item.first].text.upper() == "COUNT"
                and matching_close(tokens, item.first + 1) == item.end - 1
            )
            if item.alias and whole:
                found.append((item, _key(item.alias)))
    numbers = {
        (r.type, p.name)
        for r in schema.relationships
        for p in r.properties
        if {"INTEGER", "FLOAT"} & set(p.types)
    }
    for item, key in found:
        hops = [
            (hop, prop)
            for hop in written_hops(tokens, names)
            for rel_type, prop in numbers
            if rel_type == hop.rel_type and _key(prop) == key
        ]
        if len(hops) != 1:
            continue
        hop, prop = hops[0]
        taken = set(names.variables) | set(names.rel_variables)
        var = hop.rel_var or fresh_variable("r", taken)
        edits = [(tokens[item.first].position, tokens[item.end - 1].end, f"sum({var}.{prop})")]
        if hop.rel_var is None:
            colon = tokens[hop.colon_at].position
            edits.append((colon, colon, var))
        return statement.edited(edits), f"added up {hop.rel_type}'s {prop} (sum({var}.{prop}))"
    return None


def sql_group_by(cypher: str) -> tuple[str, str] | None:
    """The statement without a SQL `GROUP BY` in its final RETURN, and what went; None when it
    has none. "Which culture do most characters belong to?" written `MATCH (p:Person) RETURN
    p.culture GROUP BY p.culture ORDER BY count(*) DESC LIMIT 1` (a trial on a Game of Thrones
    graph nobody here wrote) was refused by the engine on both attempts. Cypher groups by the
    values a RETURN holds beside an aggregate: the GROUP BY goes, and an aggregate the sort
    reads while the RETURN holds none is returned too, under a name the sort then reads
    (`RETURN p.culture, count(*) AS n ORDER BY n DESC`)."""
    statement = Statement(cypher)
    tokens = statement.tokens
    returned = statement.final_return()
    if returned is None or statement.has_union:
        return None
    end = statement.clause_end(returned[0])
    at = next(
        (
            i
            for i in range(returned[0] + 1, end - 1)
            if tokens[i].is_name
            and tokens[i].text.upper() == "GROUP"
            and tokens[i + 1].is_keyword("BY")
        ),
        None,
    )
    if at is None or at == returned[0] + 1:
        return None
    gone = statement.source(at, end)
    cut = statement.edited([(tokens[at - 1].end, tokens[end - 1].end, "")])
    statement = Statement(cut)
    tokens = statement.tokens
    returned = statement.final_return()
    if returned is None:
        return None
    items = returned[1]
    if any(statement.aggregates(item) for item in items):
        return cut, f"dropped {gone} (Cypher groups by what the RETURN holds)"
    measured = [key for key in statement.order_keys() if statement.aggregates(key)]
    if len(measured) != 1:
        return None
    key = measured[0]
    name = fresh_variable("n", referenced_names(cut).variables)
    edits = [
        (tokens[items[-1].end - 1].end, tokens[items[-1].end - 1].end,
         f", {statement.source(key.first, key.end)} AS {name}"),
        (tokens[key.first].position, tokens[key.end - 1].end, name),
    ]  # fmt: skip
    return statement.edited(edits), f"dropped {gone}; the sort's aggregate returned as {name}"


_APART = re.compile(r"\b(?:same|one|single|each|every|per|pairs?|together)\b", re.IGNORECASE)
"""Words that ask for an aggregate per combination of things ("the same person", "each
pair"), where a grouping key the answer does not show is wanted."""
_TOTAL = re.compile(r"\b(?:total|in\s+all|altogether|overall)\b", re.IGNORECASE)


def unused_grouping_key(cypher: str, question: str) -> tuple[str, str] | None:
    """The statement without the WITH's grouping variables that nothing after it reads, and
    what went; None when it has none (or the question asks for an aggregate per
    combination).

    "Which originator bank sent the most money in total?" written `MATCH (e:Entity)-[:FILED]->
    (f:Filing)-[:ORIGINATOR]->(o:Entity) WITH e, o, sum(f.amount) AS total RETURN o.name,
    total ORDER BY total DESC LIMIT 1` (a FinCEN trial): grouped by filer and bank together,
    the total was one filer's share of a bank's money. A bare variable the one WITH groups by
    and no later clause reads leaves the WITH, so the aggregate groups by what the answer
    shows. Only for a question that ranks or totals, with no aggregate after the WITH (a
    `max()` of per-group totals needs the groups), no filter right after it (a count kept per
    pair and filtered is a question about pairs) and no UNION."""
    if not (asks_order(question) or _TOTAL.search(question)) or _APART.search(question):
        return None
    statement = Statement(cypher)
    tokens = statement.tokens
    withs = [c for c in statement.clauses if statement.keyword_at(c) == "WITH"]
    if len(withs) != 1 or statement.has_union:
        return None
    end = statement.clause_end(withs[0])
    if any(is_aggregate_call(tokens, i) for i in range(end, len(tokens))) or (
        end < len(tokens) and tokens[end].is_keyword("WHERE")
    ):
        return None
    items = statement.projection(withs[0])
    measured = [statement.aggregates(item) for item in items]
    read_later = {t.name for t in tokens[end:] if t.is_name}
    unused = [
        n
        for n, item in enumerate(items)
        if not measured[n]
        and item.alias is None
        and item.end - item.first == 1
        and tokens[item.first].is_name
        and tokens[item.first].name not in read_later
    ]
    kept = [n for n in range(len(items)) if not measured[n] and n not in unused]
    if not unused or not kept or not any(measured):
        return None
    edits = []
    for n in unused:
        # The item and the comma after it; the last item, with the comma before it.
        first, last = tokens[items[n].first], tokens[items[n].end - 1]
        if n + 1 < len(items):
            edits.append((first.position, tokens[items[n + 1].first].position, ""))
        else:
            edits.append((tokens[items[n].first - 1].position, last.end, ""))
    dropped = ", ".join(tokens[items[n].first].text for n in unused)
    return statement.edited(edits), f"grouped without {dropped} (nothing after the WITH reads it)"


def lone_node_counted(cypher: str, question: str, schema: GraphSchema) -> tuple[str, str] | None:
    """The statement counting, per node, what the question counts through the relationship
    it names, and what changed; None unless that is unambiguous. "Which group has the most
    members?" written `MATCH (g:Group) RETURN g.name AS group, count(*) AS members ORDER BY
    members DESC LIMIT 1` (a trial on the cybersecurity graph) counted each group once: a
    count grouped by the one node a statement matches is 1 for every node. Of the
    relationship types at that node's label, the one a word of the question names is matched
    from it: its start's role ("members" for MEMBER_OF, "admins" for ADMIN_TO) counts the
    starts, `(g:Group)<-[:MEMBER_OF]-(m)`; another word ("contains" for CONTAINS) the ends,
    `(o:OU)-[:CONTAINS]->(c:Computer)`, the other end labelled when one label is there or the
    question names one of those there. Where no relationship is named but the label counted
    is ("Which region has the most houses?", a trial on a Game of Thrones graph: `MATCH
    (r:Region) WITH r, count(*) …` named a region of one), the one relationship between the
    two labels is matched, `(r:Region)<-[:IN_REGION]-(h:House)`. Only for a statement of one
    node pattern and no relationship, whose one count (of `*`, the node, or a name nothing
    binds) sits beside a read of the node."""
    names = referenced_names(cypher)
    if len(names.variables) != 1 or names.rel_types:
        return None
    ((var, label_name),) = names.variables.items()
    label = schema.label(label_name)
    statement = Statement(cypher)
    counts = _counts(statement)
    if label is None or len(counts) != 1 or statement.has_union:
        return None
    at, close, inside = counts[0]
    distinct = bool(inside) and inside[0].is_keyword("DISTINCT")
    counted = [t.text for t in inside[int(distinct) :]]
    # A name nothing binds (`count(DISTINCT a)` for "the fewest admins") is the other end.
    unbound = len(counted) == 1 and inside[-1].is_name and _only_in(statement, counted[0], at)
    if counted not in (["*"], [var]) and not unbound:
        return None
    if not _beside_a_read(statement, (at, close), var, _called_by(schema)[label.name]):
        return None
    # The words naming the node's own label ("reading group") name no relationship (READS).
    words = {stem(w) for w in content_words(question)} - {stem(w) for w in name_words(label.name)}
    roles: set[tuple[str, bool]] = set()
    for rel in schema.relationships:
        parts = [w.lower() for w in name_words(rel.type)]
        if not words & {stem(p) for p in parts if p not in LINKING}:
            continue
        # A role ("members" for MEMBER_OF) counts the starts into the node; a verb the ends.
        role = len(parts) > 1 and stem(parts[0]) in words and set(parts[1:]) <= LINKING
        if (rel.end if role else rel.start) == label.name:
            roles.add((rel.type, role))
    said = {label_named(w, schema) for w in content_words(question)} - {None, label.name}
    ranked = counted_label(question, schema)
    if not roles and ranked not in (None, label.name):
        # No relationship named, but the counted label ("the most houses"): the one
        # relationship between the two labels, either way round.
        roles = {(r.type, r.end == label.name) for r in _between(schema, label.name, ranked)}
        said = {ranked} if ranked else set()
    if not roles and (measure := _stored_measure(statement, close, label)) is not None:
        tokens = statement.tokens
        read = f"{var}.{quote_name_if_needed(measure)}"
        edits = [(tokens[at].position, tokens[close].end, read)]
        return statement.edited(edits), f"read {read} (a count per node alone is 1)"
    if len(roles) != 1:
        return None
    ((rel_type, into),) = roles
    others = {
        r.start if into else r.end
        for r in schema.relationships
        if r.type == rel_type and (r.end if into else r.start) == label.name
    }
    # The other end's label: the one there, or the one of those there the question names.
    fitting = others if len(others) == 1 else said & others
    other = next(iter(fitting)) if len(fitting) == 1 else None
    new = counted[0] if unbound else fresh_variable(other or rel_type, names.variables)
    end = f"({new}:{quote_name_if_needed(other)})" if other else f"({new})"
    hop = f"<-[:{rel_type}]-{end}" if into else f"-[:{rel_type}]->{end}"
    tokens = statement.tokens
    shut = _first_node_end(tokens, var)
    if shut is None:
        return None
    edits = [(tokens[shut].end, tokens[shut].end, hop)]
    if inside[-1].text == var:
        edits.append((inside[-1].position, inside[-1].end, new))
    what = f"{rel_type} {'into' if into else 'out of'} each {label.name}"
    return statement.edited(edits), f"counted {what} (a count per node alone is 1)"


def _stored_measure(statement: Statement, close: int, label: LabelInfo) -> str | None:
    """The number property a count per lone node stands for, when no relationship is named
    and the question ranks by it: the one its alias names ("count(*) AS freqsum"), else the
    label's only number property that is neither what a node is called by nor a point in
    time or a span (a year of birth is no measure of anything counted). "Which character is
    mentioned most often?" written `MATCH (c:Character) RETURN c.name, count(*) AS freqsum
    ORDER BY freqsum DESC LIMIT 1` (a trial on a co-occurrence graph) tied every character at
    1; each stores how often it is mentioned in `freqsum`."""
    tokens = statement.tokens
    alias = (
        tokens[close + 2].name
        if close + 2 < len(tokens)
        and tokens[close + 1].is_keyword("AS")
        and tokens[close + 2].is_name
        else None
    )
    if alias is None or alias not in (
        statement.source(k.first, k.end) for k in statement.order_keys()
    ):
        return None
    numbers = [
        p.name
        for p in label.properties
        if set(p.types) & NUMBER_TYPES
        and not p.unique
        and p.name not in name_properties(label)
        and property_kind(p) is None
    ]
    named = [
        n
        for n in numbers
        if [w.lower() for w in name_words(n)] == [w.lower() for w in name_words(alias)]
    ]
    if named:
        return named[0]
    return numbers[0] if len(numbers) == 1 else None


def _between(schema: GraphSchema, one: str, other: str | None) -> list[RelPattern]:
    """The schema's relationships from either label to the other."""
    return [r for r in schema.relationships if {r.start, r.end} == {one, other}]


def _only_in(statement: Statement, name: str, count: int) -> bool:
    """Whether `name` is read only inside the count whose name token is at `count`."""
    tokens = statement.tokens
    return [i for i, t in enumerate(tokens) if t.is_name and t.name == name] == [
        count + 2 + int(tokens[count + 2].is_keyword("DISTINCT"))
    ]


def _beside_a_read(
    statement: Statement, count: tuple[int, int], var: str, called: set[str]
) -> bool:
    """Whether the RETURN or WITH holding the count (its first and last token) groups by the
    node: reads `var` alone or what it is called by (`called`) outside the count, and nothing
    else of it (a count per `u.domain` is a count per domain)."""
    at, close = count
    clause = max((c for c in statement.clauses if c < at), default=None)
    if clause is None or statement.keyword_at(clause) not in ("RETURN", "WITH"):
        return False
    tokens = statement.tokens
    reads = [
        tokens[i + 2].name if i + 2 < len(tokens) and tokens[i + 1].is_punct(".") else ""
        for i in range(clause + 1, statement.clause_end(clause))
        if not at <= i <= close and tokens[i].is_name and tokens[i].name == var
    ]
    return bool(reads) and all(r == "" or r in called for r in reads)


_FEWEST = re.compile(r"\b(?:fewest|least|lowest\s+number\s+of|smallest\s+number\s+of)\b", re.I)


def fewest_keeps_none(cypher: str, question: str) -> tuple[str, str] | None:
    """The statement counting with the nodes that have none, and what changed; None unless the
    shape is plain. "Which group has the fewest members?" written `MATCH (g:Group)<-[:MEMBER_OF]-
    (m) RETURN g.name AS grp, count(m) AS members ORDER BY members LIMIT 1` (a trial on the
    cybersecurity graph) named groups of one: the 40 groups with no member are matched by no
    path. The grouped node is matched alone and the hop becomes an OPTIONAL MATCH from it,
    `MATCH (g:Group) OPTIONAL MATCH (g)<-[:MEMBER_OF]-(m)`, counting the other end (a count of
    `*` would count the empty row as one). Only for a "fewest/least" question whose statement
    is one MATCH of one hop and no WHERE, whose one count sits beside a read of one end and is
    the first sort key, ascending."""
    if not _FEWEST.search(question):
        return None
    statement = Statement(cypher)
    tokens = statement.tokens
    names = referenced_names(cypher)
    hops = list(written_hops(list(tokens), names))
    matches = [c for c in statement.clauses if statement.keyword_at(c) in ("MATCH", "OPTIONAL")]
    if len(hops) != 1 or len(matches) != 1 or statement.keyword_at(matches[0]) != "MATCH":
        return None
    if any(statement.keyword_at(c) in ("WHERE", "UNION", "CALL") for c in statement.clauses):
        return None
    counts = _counts(statement)
    keys = statement.order_keys()
    if len(counts) != 1 or not keys or keys[0].descending:
        return None
    (hop,) = hops
    at, close, inside = counts[0]
    distinct = bool(inside) and inside[0].is_keyword("DISTINCT")
    counted = [t.text for t in inside[int(distinct) :]]
    for grouped, other in ((hop.left_var, hop.right_var), (hop.right_var, hop.left_var)):
        if grouped is None or other is None or counted not in (["*"], [other]):
            continue  # an unnamed end has nothing to count but the empty row
        if not _beside_a_read(statement, (at, close), grouped, _read_props(statement, grouped)):
            continue
        if not _sorts_by_count(statement, keys[0], (at, close)):
            return None
        return _optional_hop(statement, hop, grouped, other, (at, close), names)
    return None


def _read_props(statement: Statement, var: str) -> set[str]:
    """Every property of `var` the statement reads (the grouped node is read by any of them)."""
    tokens = statement.tokens
    return {
        tokens[i + 2].name
        for i in range(len(tokens) - 2)
        if tokens[i].is_name and tokens[i].name == var and tokens[i + 1].is_punct(".")
    }


def _sorts_by_count(statement: Statement, key: Item, count: tuple[int, int]) -> bool:
    """Whether the sort key is the count: written out, or by its alias."""
    at, close = count
    tokens = statement.tokens
    said = {statement.source(at, close + 1)}
    if close + 2 < len(tokens) and tokens[close + 1].is_keyword("AS"):
        said.add(tokens[close + 2].name)
    return statement.source(key.first, key.end) in said


def _optional_hop(
    statement: Statement,
    hop: Hop,
    grouped: str,
    other: str,
    count: tuple[int, int],
    names: ReferencedNames,
) -> tuple[str, str] | None:
    tokens = statement.tokens
    left_open = matching_open(tokens, hop.first - 1)
    right_shut = matching_close(tokens, hop.last + 1)
    if left_open is None or right_shut is None:
        return None
    ends = {hop.left_var: (left_open, hop.first - 1), hop.right_var: (hop.last + 1, right_shut)}
    g_first, g_last = ends[grouped]
    node = statement.source(g_first, g_last + 1)
    edits = [(tokens[g_first].position, tokens[g_last].end, f"({grouped})")]
    before = tokens[left_open - 1] if left_open > 0 else None
    if before is not None and before.is_punct(",") and node == f"({grouped})":
        # `MATCH (r:Rack), (r)-[:HOLDS]->(m)`: the node is matched already, on its own.
        edits.append((before.position, before.end, " OPTIONAL MATCH"))
    else:
        edits.append(
            (tokens[left_open].position, tokens[left_open].position, f"{node} OPTIONAL MATCH ")
        )
    close = count[1]
    if tokens[close - 1].text == "*":
        star = tokens[close - 1]
        edits.append((star.position, star.end, other))
    label = names.variables.get(grouped, "node")
    return statement.edited(edits), f"{label}s with none counted (OPTIONAL MATCH, 0 for them)"


_WHICH_WORD = re.compile(r"^\s*(?:which|what)\s+([A-Za-z][\w-]*)", re.IGNORECASE)
_MOST_OF = re.compile(r"\b(?:most|fewest|least)\s+[A-Za-z]", re.IGNORECASE)


def asked_value_not_counted(
    cypher: str, question: str, schema: GraphSchema
) -> tuple[str, str] | None:
    """The statement returning the node the question asks about by a value, and what changed;
    None unless that node is plain. "Which dwarf is related to the most characters?" written
    `MATCH (c:Character {race: "dwarf"})-[:RELATED_TO]-(c2:Character) RETURN c2.name, count(*)
    AS num ORDER BY num DESC LIMIT 1` (a trial on a co-occurrence graph) named the character
    related to the most dwarves. Where the word after "which" is the one string value the
    statement filters one node on, and the RETURN is one count beside one read of another
    node of that label (the counted one), what the filtered node is called by is read instead
    (so the count is per that node). Not behind a WITH or UNION, nor where the sort reads the
    replaced column."""
    found = _WHICH_WORD.match(question)
    if found is None or not _MOST_OF.search(question):
        return None
    asked = stem(found.group(1))
    filtered = {
        var
        for var, _prop, value, _in_map in node_filters(cypher)
        if value.kind == "string" and [stem(w) for w in value.value.split()] == [asked]
    }
    names = referenced_names(cypher)
    statement = Statement(cypher)
    returned = statement.sole_return()
    if len(filtered) != 1 or returned is None:
        return None
    (var,) = filtered
    label = schema.label(names.variables.get(var, ""))
    items = returned[1]
    reads = [item for item in items if not statement.aggregates(item)]
    if label is None or len(items) != 2 or len(reads) != 1 or not _counts(statement):
        return None
    item = reads[0]
    words = statement.words(item)
    if len(words) != 3 or words[1] != "." or words[0] == var:
        return None
    if names.variables.get(words[0]) != label.name or not (props := name_properties(label)):
        return None
    fixed = read_instead(statement, item, var, props)
    if fixed is None:
        return None
    text, read = fixed
    return text, f"returned {read}, the {found.group(1)} asked about, not the {words[0]} counted"


def pinned_node_counted(cypher: str, question: str, schema: GraphSchema) -> tuple[str, str] | None:
    """The statement counting the one node of the counted label that nothing names, and what
    changed; None unless there is exactly one. "How many characters are related to both Sam
    and Gollum?" written `MATCH (c:Character {name: "Sam"})-[:RELATED_TO]-(c2:Character)
    -[:RELATED_TO]-(c3:Character {name: "Gollum"}) RETURN count(DISTINCT c)` (a trial on a
    co-occurrence graph) answered 1: a node matched by what it is called by is one node. For
    a "how many <label>" question whose one count is of a node of that label named so, the
    count moves to the label's one node the statement leaves unnamed."""
    counted = counted_label(question, schema)
    if not HOW_MANY.search(question) or EACH.search(question) or counted is None:
        return None
    statement = Statement(cypher)
    counts = _counts(statement)
    if len(counts) != 1:
        return None
    _at, close, inside = counts[0]
    distinct = bool(inside) and inside[0].is_keyword("DISTINCT")
    counted_var = inside[int(distinct)].name if len(inside) == 1 + int(distinct) else None
    names = referenced_names(cypher)
    if counted_var is None or names.variables.get(counted_var) != counted:
        return None
    label = schema.label(counted)
    named = named_variables(cypher)
    if label is None or counted_var not in named:
        return None
    keys = _map_keys(cypher, counted_var)
    if not keys or not keys <= _called_by(schema)[label.name]:
        return None
    free = [v for v, lb in names.variables.items() if lb == counted and v not in named]
    if len(free) != 1:
        return None
    tokens = statement.tokens
    edits = [(tokens[close - 1].position, tokens[close - 1].end, free[0])]
    fixed = statement.edited(edits)
    return (
        fixed,
        f"counted {free[0]}, not {counted_var} (a {counted} named by what it is called by is one)",
    )
