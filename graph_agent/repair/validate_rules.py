"""Rules of the validate step: rewrites that make a statement fit, notes for the correction.

Each docstring names the failure it answers with a general example.
"""

from __future__ import annotations

import re
from typing import Any

from graph_agent.graphdb.errors import GraphError
from graph_agent.graphdb.schema import schema_vocabulary
from graph_agent.lint import (
    MapEntry,
    is_null_entry,
    is_type_name,
    node_map_entries,
    pattern_map_entries,
    without_entries,
)
from graph_agent.question_fit import any_depth_fix
from graph_agent.repair.comparisons import (
    aggregate_bound_fix,
    both_values_fix,
    comparison_fix,
    date_literal_fix,
    dates_as_text_fix,
    numbers_as_text_fix,
    or_map_fix,
    quoted_number_fix,
    text_twin_fix,
    year_as_day_fix,
)
from graph_agent.repair.counts import (
    asked_value_not_counted,
    count_distinct,
    count_unasked,
    fewest_keeps_none,
    lone_node_counted,
    named_node_counted,
    other_label_counted,
    pinned_node_counted,
    sql_group_by,
    stored_count,
    unused_grouping_key,
)
from graph_agent.repair.edits import (
    absent_link,
    aggregate_by_alias,
    asked_end_fix,
    asked_label_holds_read,
    asked_label_returned,
    bind_unbound_variable,
    co_linked_node,
    counted_by_property,
    counted_list,
    counted_road,
    grouped_with,
    label_chain,
    label_word_as_value,
    length_of_text,
    named_label,
    named_node_linked,
    named_node_returned,
    pinned_read_fix,
    pins_compared,
    property_through_neighbour,
    relationship_counted,
    relationship_named,
    respelled_names,
    sorted_before_return,
    unasked_hop,
    unwritten_negation,
    value_denied_next_door,
    walked_back_through_named,
    word_order_flip,
)
from graph_agent.repair.execute_rules import relabelled_read
from graph_agent.repair.probes import nothing_found
from graph_agent.repair.relationships import (
    both_chained_fix,
    contradicted_negation,
    end_node_property,
    hop_on_its_node,
    label_kept_as_property,
    labels_of_one_node,
    reciprocal_fix,
    relationship_by_word,
    relationship_property,
    relationship_sort,
    reroute_relationship,
    several_roads,
)
from graph_agent.repair.rule import Case, Fix, Kind, Phase, Trigger, rule
from graph_agent.result import Stage
from graph_agent.schema_check import check_schema
from graph_agent.schema_examples import question_focus
from graph_agent.statement import with_limit
from graph_agent.superlatives import (
    age_property_fix,
    asked_not_counted_fix,
    counted_property_fix,
    direction_in_return_fix,
    identify_fix,
    name_parts_fix,
    name_property_fix,
    named_by_fix,
    one_row_fix,
    return_fix,
    sort_direction_fix,
    sort_key_returned_fix,
    summed_property_fix,
    thing_of_measure_fix,
    top_rows_fix,
    unasked_limit_fix,
    unknown_sort_fix,
    who_unreturned_fix,
)
from graph_agent.words import said
from guardrails import content_words, name_words, referenced_names, stem, tokenize

V, S = Phase.VALIDATE, Trigger.STATEMENT


@rule("missing-return", V, S, Kind.REWRITE)
def missing_return(case: Case) -> Fix | None:
    """`MATCH (s:Service) ORDER BY s.created DESC LIMIT 3` for "Which three services were
    created most recently?": the model stopped before the RETURN and the engine rejects the
    statement (on four dev runs, three ordering questions, each time). The node the sort reads
    is returned by what it is called and the sort key (`RETURN s.name AS name, s.created AS
    created ORDER BY created DESC LIMIT 3`)."""
    fixed = return_fix(case.cypher, case.ctx.schema, case.question)
    return Fix(fixed[1], cypher=fixed[0]) if fixed else None


@rule("not-equal-operator", V, S, Kind.REWRITE)
def not_equal_operator(case: Case) -> Fix | None:
    """`WHERE s.lifecycle != 'production'` for "Which services are not in production?": Cypher
    says "not equal" as `<>`, and the engine rejects `!=` (two dev questions, on both attempts:
    the correction sent the same operator back). Every `!=` outside a string becomes `<>`."""
    found = [t for t in tokenize(case.cypher) if t.kind == "punct" and t.value == "!="]
    if not found:
        return None
    fixed = case.cypher
    for token in reversed(found):
        fixed = fixed[: token.position] + "<>" + fixed[token.end :]
    return Fix(f"wrote {len(found)} != as <> (Cypher's not-equal)", cypher=fixed)


@rule("string-alias", V, S, Kind.REWRITE)
def string_alias(case: Case) -> Fix | None:
    """`RETURN b.city AS "Where can I fly to directly from Edinburgh?"`: a column is named by
    an identifier, and the engine rejects a string there (two dev questions, on both
    attempts). The column takes the name of the property it returns (`AS city`), else the
    string's words joined (`AS total_routes`)."""
    tokens = tokenize(case.cypher)
    taken = {t.name for i, t in enumerate(tokens) if t.is_name and not tokens[i - 1].is_punct(".")}
    edits: list[tuple[int, int, str]] = []
    for i, tok in enumerate(tokens[1:], start=1):
        if tok.kind != "string" or not tokens[i - 1].is_keyword("AS"):
            continue
        before = tokens[i - 4 : i - 1]
        if len(before) == 3 and before[1].is_punct(".") and before[2].is_name:
            name = before[2].name
        else:
            name = "_".join(re.findall(r"[a-z0-9]+", tok.value.casefold())[:4]) or "value"
            name = name if name[0].isalpha() else f"c_{name}"
        while name in taken:
            name += "_"
        taken.add(name)
        edits.append((tok.position, tok.end, name))
    if not edits:
        return None
    fixed = case.cypher
    for start, end, text in reversed(edits):
        fixed = fixed[:start] + text + fixed[end:]
    return Fix(f"named {len(edits)} column(s) by an identifier, not a string", cypher=fixed)


@rule("direction-in-return", V, S, Kind.REWRITE)
def direction_in_return(case: Case) -> Fix | None:
    """`MATCH (f:Filing) RETURN f.amount DESC LIMIT 1` for "Which filing has the largest
    amount?" (a FinCEN trial, both attempts; the POLE and Stack Overflow trials' "most recent"
    and an air-routes dev item the same way): the engine rejects a direction written after a
    RETURN item. It becomes the ORDER BY the model meant (`RETURN f.amount ORDER BY f.amount
    DESC LIMIT 1`, by the item's alias where it has one), before any SKIP or LIMIT."""
    fixed = direction_in_return_fix(case.cypher)
    return Fix(fixed[1], cypher=fixed[0]) if fixed else None


@rule("sql-group-by", V, S, Kind.REWRITE)
def group_by(case: Case) -> Fix | None:
    """`MATCH (p:Person) RETURN p.culture GROUP BY p.culture ORDER BY count(*) DESC LIMIT 1`
    for "Which culture do most characters belong to?" (a trial on a Game of Thrones graph, both
    attempts refused by the engine): SQL's GROUP BY is no Cypher. It goes (Cypher groups by
    what the RETURN holds beside an aggregate), and an aggregate only the sort reads is
    returned under a name the sort reads (`RETURN p.culture, count(*) AS n ORDER BY n DESC`)."""
    fixed = sql_group_by(case.cypher)
    return Fix(fixed[1], cypher=fixed[0]) if fixed else None


@rule("order-before-return", V, S, Kind.REWRITE)
def order_before_return(case: Case) -> Fix | None:
    """`MATCH (s:Store) ORDER BY s.sqft DESC LIMIT 1 RETURN s.manager` for "Who manages the
    largest store?" (a foodmart trial, refused by the engine on both attempts): Cypher sorts
    the rows of a RETURN or a WITH, so an ORDER BY, SKIP or LIMIT written before the final
    RETURN (not after a WITH) goes after it."""
    fixed = sorted_before_return(case.cypher)
    return Fix(fixed[1], cypher=fixed[0]) if fixed else None


@rule("map-as-value", V, S, Kind.REWRITE)
def map_as_value(case: Case) -> Fix | None:
    """`(p:Project {due_date: {due_date: 'Oldest'}})` for "Which project has the earliest due
    date?": a property never holds a map, so that filter matches nothing whatever the graph
    holds. It goes, and the rest of the statement (here its sort) is the model's answer; but
    `(a:Airport {runways: {runways: 5}})` for "airports with five runways" keeps the value
    inside, `{runways: 5}`, when the question says it (as written, or a number in words) and
    it is of the property's type."""
    entries = node_map_entries(case.cypher)
    bad = [e for e in entries if e.text.split(":", 1)[1].lstrip().startswith("{")]
    if not bad:
        return None

    def inner(entry: MapEntry) -> str | None:
        found = _SAME_KEY_MAP.fullmatch(entry.value)
        if found is None or found.group(1) != entry.prop:
            return None
        value = found.group(2)
        label = case.ctx.schema.label(entry.label or "")
        prop = next((p for p in label.properties if p.name == entry.prop), None) if label else None
        wanted = {"STRING"} if value[0] in "'\"" else {"INTEGER", "FLOAT"}
        if prop is None or not wanted & set(prop.types):
            return None  # 'Earliest' for a year: a word of the question, not a value
        return f"{entry.prop}: {value}" if said(value.strip("'\""), case.question) else None

    unwrapped = {e: inner(e) for e in bad}
    fixed = without_entries(case.cypher, entries, lambda e: e in unwrapped, unwrapped.get)
    kept = [e.prop for e, text in unwrapped.items() if text is not None]
    gone = [e.prop for e, text in unwrapped.items() if text is None]
    detail = "; ".join(
        [f"{', '.join(kept)}: the value inside the map kept"] * bool(kept)
        + [f"dropped the map compared with {', '.join(gone)}"] * bool(gone)
    )
    return Fix(f"{detail} (a property never holds a map)", cypher=fixed)


@rule("type-as-value", V, S, Kind.REWRITE)
def type_as_value(case: Case) -> Fix | None:
    """ "How many users watched a movie from 2007?" written `MATCH (u:User)-[w:WATCHED
    {watchCount: INTEGER}]->(m:Movie)` (a trial on a movie graph nobody here wrote), the map
    copied from the schema text's `(:User)-[:WATCHED {watchCount: INTEGER}]->(:Movie)`: the
    engine reads `INTEGER` as a variable nobody defined, on both attempts. A pattern map's
    entry whose value is a type name the schema writes is no filter; it goes (a map left empty
    goes with its braces)."""
    entries = pattern_map_entries(case.cypher)
    typed = [e for e in entries if is_type_name(e)]
    if not typed:
        return None
    fixed = without_entries(case.cypher, entries, is_type_name)
    dropped = ", ".join(dict.fromkeys(e.text for e in typed))
    return Fix(f"dropped {dropped}: a type name from the schema, not a value", cypher=fixed)


_ABSENCE = re.compile(
    r"\b(?:no|not|never|none|without|missing|unknown|empty|lacks?|lacking|blank|unset)\b|n't\b",
    re.IGNORECASE,
)


@rule("null-in-map", V, S, Kind.REWRITE)
def null_in_map(case: Case) -> Fix | None:
    """ "Which distribution center supplies the most destination centers?" written `MATCH
    (d:DistributionCenter)-[r:SUPPLY_TO {distance: NULL}]->(dc:DestinationCenter)` (a trial on
    a supply-chain graph nobody here wrote): nothing came back, since a comparison with null
    is never true and such a map matches nothing. Where the question says nothing of a value
    being absent ("no", "without", "missing", "unknown" …), a pattern map's entry whose value
    is null is no filter; it goes (a map left empty goes with its braces)."""
    entries = pattern_map_entries(case.cypher)
    nulls = [e for e in entries if is_null_entry(e)]
    if not nulls or _ABSENCE.search(case.question):
        return None
    fixed = without_entries(case.cypher, entries, is_null_entry)
    dropped = ", ".join(dict.fromkeys(e.text for e in nulls))
    return Fix(f"dropped {dropped}: a map entry equal to null matches nothing", cypher=fixed)


_SAME_KEY_MAP = re.compile(r"\{\s*(\w+)\s*:\s*(-?\d+(?:\.\d+)?|'[^'\n]*'|\"[^\"\n]*\")\s*\}")


@rule("or-in-map", V, S, Kind.REWRITE)
def or_in_map(case: Case) -> Fix | None:
    """`(i:Incident {severity: 'SEV1' OR severity: 'SEV2'})` for "Which SEV1 or SEV2
    incidents are not resolved yet?" (a dev question, on both attempts): a map holds one value
    per key and the engine rejects the OR. The map goes; the MATCH's WHERE gets
    `i.severity IN ['SEV1', 'SEV2']`."""
    if fixed := or_map_fix(case.cypher):
        return Fix(fixed[1], cypher=fixed[0])
    return None


@rule("text-twin", V, S, Kind.REWRITE)
def text_twin(case: Case) -> Fix | None:
    """`WHERE f.end_date = "2016"` for "Which filings … ended in 2016?" (a FinCEN trial, a
    graph nobody here wrote): the import kept the column `end_date` ("Apr 1, 2016") beside
    `end`, the date; the text matched nothing, and sorted it put September before April. A
    read of a string the schema sample found writing a typed property of the same node on
    every node that holds both reads the typed one (`f.end`); the schema text shows only
    that one. The date and number rules after it compare it as what it is."""
    fixed = text_twin_fix(case.cypher, case.ctx.schema)
    return Fix(fixed[1], cypher=fixed[0]) if fixed else None


@rule("number-comparison", V, S, Kind.REWRITE)
def number_comparison(case: Case) -> Fix | None:
    """`(a:Airport {runways: 5})` for "Which airports have five or more runways?" (a dev
    question, on every run): only the airports with exactly five. A number the question
    bounds ("more than", "over", "at least", "N or more", "fewer than", "under", "at most",
    "N or fewer"), written as an equality, takes that bound: a map entry moves to the MATCH's
    WHERE (`WHERE a.runways >= 5`), `x.p = 5` becomes `x.p >= 5`. A number the question
    bounds two ways is left."""
    if fixed := comparison_fix(case.cypher, case.question):
        return Fix(fixed[1], cypher=fixed[0])
    return None


@rule("length-of-text", V, S, Kind.REWRITE)
def length_of_text_rule(case: Case) -> Fix | None:
    """ "Which speaker has the longest name?" written `ORDER BY length(s.name) DESC` (a trial on
    a conference-schedule graph nobody here wrote), refused by the engine on both attempts:
    `length` measures a path. A property's length is read with `size`."""
    fixed = length_of_text(case.cypher)
    return Fix(fixed[1], cypher=fixed[0]) if fixed else None


@rule("number-in-quotes", V, S, Kind.REWRITE)
def number_in_quotes(case: Case) -> Fix | None:
    """ "Which machines in zone two run the crm application?" written `(r:Rack {zone: '2'})`
    (a dev item, on both attempts) where zones are integers: nothing matched, since a string
    never equals a number. A number in quotes matched (a node's map) or compared with a
    property that only holds numbers is written as a number."""
    if fixed := quoted_number_fix(case.cypher, case.ctx.schema):
        return Fix(fixed[1], cypher=fixed[0])
    return None


@rule("date-literal", V, S, Kind.REWRITE)
def date_literal(case: Case) -> Fix | None:
    """`WHERE p.dob < '1975-01-01'` for "Which players were born before 1975?" where `dob`
    holds dates (a trial on a graph nobody here wrote: nothing found, since a date never
    orders with a string). The string is read as a date, `date('1975-01-01')` (`datetime(…)`
    for a date-and-time property), in a WHERE or a node's map; a year (`p.dob < 1975` or
    `'1975'`) is compared with the date's year, `p.dob.year < 1975`."""
    if fixed := date_literal_fix(case.cypher, case.ctx.schema):
        return Fix(fixed[1], cypher=fixed[0])
    return None


@rule("year-as-first-day", V, S, Kind.REWRITE)
def year_as_first_day(case: Case) -> Fix | None:
    """ "How many filings began in 2016?" written `WHERE f.begin = date('2016-01-01')` (a
    FinCEN trial, a graph nobody here wrote) counted the filings of New Year's Day. Where the
    question names the year and no month or day, equality with the year's first day on a
    property holding dates compares the year (`f.begin.year = 2016`)."""
    fixed = year_as_day_fix(case.cypher, case.question, case.ctx.schema)
    return Fix(fixed[1], cypher=fixed[0]) if fixed else None


@rule("both-chained", V, S, Kind.REWRITE)
def both_chained(case: Case) -> Fix | None:
    """ "Which destinations are served from both Luton and Stansted?" written `(a {descr:
    'London Luton Airport'})-[:HAS_ROUTE]->(a2 {descr: 'London Stansted Airport'})-[:HAS_ROUTE]
    ->(d)` (a dev item, on every attempt) asked for the places reached through Stansted. Where
    a "both"/"in common" question's chain runs from one named node through another over two
    hops of one type, the two are both linked to the third: `(a {…})-[:HAS_ROUTE]->(d)<-
    [:HAS_ROUTE]-(a2 {…})`."""
    if fixed := both_chained_fix(case.cypher, case.question):
        return Fix(fixed[1], cypher=fixed[0])
    return None


@rule("pins-compared", V, S, Kind.REWRITE)
def pins_compared_rule(case: Case) -> Fix | None:
    """ "Which events are in both the Cloud and Community categories?" written with one
    category called Cloud, the other Community, and `WHERE c1.name = c2.name` (a trial on a
    conference-schedule graph nobody here wrote): the two names are never equal, so nothing
    came back. A comparison of two nodes' property that each node's filter pins to a different
    string goes."""
    fixed = pins_compared(case.cypher)
    return Fix(fixed[1], cypher=fixed[0]) if fixed else None


@rule("both-values", V, S, Kind.REWRITE)
def both_values(case: Case) -> Fix | None:
    """ "Which teams took part in both 2015 and 2019?" written `WHERE t.year IN [2015, 2019]`
    (a World Cup trial) listed the teams of either year. Where a "both … and …" question's
    statement keeps one property in a list of the two values the question says, the rows are
    kept only for what meets both (`WITH t, count(DISTINCT tour.year) AS matched_values WHERE
    matched_values = 2`)."""
    if fixed := both_values_fix(case.cypher, case.question):
        return Fix(fixed[1], cypher=fixed[0])
    return None


@rule("aggregate-bound", V, S, Kind.REWRITE)
def aggregate_bound(case: Case) -> Fix | None:
    """ "Which machines run more than five applications?" (a playground question on the
    network graph) answered by `WITH m, count(a) AS apps RETURN m.name, apps ORDER BY apps DESC
    LIMIT 5`: every machine counted, five listed, none left out for the bound. When the
    question bounds one number the statement never writes, and the statement computes one
    aggregate beside what it groups by, the bound goes on that aggregate (`WITH m, count(a) AS
    apps WHERE apps > 5`; a final `RETURN r.name AS rack, count(m) AS machines` becomes a WITH
    of the same columns with the WHERE, then their RETURN). A final LIMIT the question does not
    ask for goes with it."""
    if fixed := aggregate_bound_fix(case.cypher, case.question):
        return Fix(fixed[1], cypher=fixed[0])
    return None


@rule("any-depth", V, S, Kind.REWRITE)
def any_depth(case: Case) -> Fix | None:
    """ "Who works under Andrew Fuller, directly or indirectly?" answered with one hop of
    `(e:Employee)-[:REPORTS_TO]->(:Employee {…})`: only the direct reports. A relationship
    that links a label to itself is followed up to a few hops (`-[:REPORTS_TO*1..8]->`), and a
    plain RETURN gets DISTINCT (a count counts distinct nodes)."""
    fixed = any_depth_fix(case.cypher, case.question, case.ctx.schema)
    return Fix(fixed[1], cypher=fixed[0]) if fixed else None


@rule("negation-contradicted", V, S, Kind.REWRITE)
def negation_contradicted(case: Case) -> Fix | None:
    """ "Which airports in Portugal have no routes at all?" written `MATCH (a:Airport)-[:HAS_ROUTE]
    ->(a2:Airport), … WHERE … AND NOT (a)-[:HAS_ROUTE]->(a2)` (a dev statement, both attempts):
    each row needs the route and its absence, so nothing can come back. The matched hop goes,
    and the negation stays with its far node anonymous: `NOT (a)-[:HAS_ROUTE]->(:Airport)`.
    Only when the far node's variable is in those two patterns alone and the hop ends its
    chain."""
    if fixed := contradicted_negation(case.cypher, case.ctx.schema):
        return Fix(fixed[1], cypher=fixed[0])
    return None


@rule("absent-link", V, S, Kind.REWRITE)
def absent_link_rule(case: Case) -> Fix | None:
    """ "Which distribution centers supply no destination center?" written `MATCH
    (d:DistributionCenter)-[:SUPPLY_TO]->(dc:DestinationCenter) WHERE dc.type IS NULL RETURN
    dc` (a trial on a supply-chain graph nobody here wrote): a path that is matched has its
    end, so nothing came back (and "Which destination centers does no distribution center
    supply?", the hop written with no filter, named every supplied one). A "which <label> …
    no <other label>" question answered by one hop between the two, with no filter or only a
    property of the far end being null, asks for the nodes with no such hop: `MATCH
    (d:DistributionCenter) WHERE NOT (d)-[:SUPPLY_TO]->(:DestinationCenter) RETURN
    d.description …`."""
    fixed = absent_link(case.cypher, case.question, case.ctx.schema)
    return Fix(fixed[1], cypher=fixed[0]) if fixed else None


@rule("negation-unwritten", V, S, Kind.REWRITE)
def negation_unwritten(case: Case) -> Fix | None:
    """ "Which services are not offered in Sao Paulo?" written `MATCH (r:Region {name: "Sao
    Paulo"})-[:OFFERS_SERVICE]->(s:Service) RETURN s.name` (a trial on an AWS infrastructure
    graph nobody here wrote) listed what Sao Paulo offers; "… offered in Beijing but not in
    Tokyo?" matched Tokyo in an OPTIONAL MATCH, which filters nothing. The named node the
    question denies goes from the pattern with its hop, and the link is denied: `MATCH
    (s:Service) WHERE NOT (:Region {name: "Sao Paulo"})-[:OFFERS_SERVICE]->(s)`."""
    fixed = unwritten_negation(case.cypher, case.question)
    return Fix(fixed[1], cypher=fixed[0]) if fixed else None


@rule("value-denied-next-door", V, S, Kind.REWRITE)
def value_denied_next_door_rule(case: Case) -> Fix | None:
    """ "Which regions are not in North America?" written `MATCH (r:Region) WHERE r.name <>
    "North America"` (a trial on an AWS infrastructure graph nobody here wrote): every region
    came back, since no region is called that; the value lookup found it as a continent's
    name. A `<>` comparison with a value the lookup holds on one other label (and not on the
    compared property), where one relationship type links the two labels, denies that link
    instead: `NOT (r)-[:IS_LOCATED_IN]->(:Continent {name: "North America"})`."""
    fixed = value_denied_next_door(case.cypher, case.hints, case.ctx.schema)
    return Fix(fixed[1], cypher=fixed[0]) if fixed else None


@rule("unasked-hop", V, S, Kind.REWRITE)
def unasked_hop_rule(case: Case) -> Fix | None:
    """ "Which books are fiction?" written `MATCH (g:Genre {name: "fiction"})<-[:OF_TYPE]-(b:Book)
    -[:IS_PART_OF]->(b2:BookSeries) RETURN b.title` (a trial on a graph of books nobody here
    wrote, in four questions of twenty): the hop to a series keeps only the books in one. A
    MATCH hop whose far node ends its chain, has a label and nothing else, and is read
    nowhere, goes with that node where the question says no word of its label (beyond the
    words it shares with the near node's) nor of the relationship's type."""
    fixed = unasked_hop(case.cypher, case.question, case.ctx.schema)
    return Fix(fixed[1], cypher=fixed[0]) if fixed else None


@rule("label-word-as-value", V, S, Kind.REWRITE)
def label_word_as_value_rule(case: Case) -> Fix | None:
    """ "Which venue hosts the most events?" written `MATCH (c:Category {name: "Events"})
    <-[:HAS_CATEGORY]-(e:Event)-[:AT_VENUE]->(v:Venue) …` (a trial on a conference-schedule graph
    nobody here wrote, one of whose categories is called "Events"): the question's word for the
    label was taken for the value it also is, and only that category's events were counted. A
    string filter whose whole value names a label the statement matches, where the question
    says that word once and not as the filtered node's own ("the Events category"), goes: the
    map entry on that label's node, or another node with its hop where nothing else reads it."""
    fixed = label_word_as_value(case.cypher, case.question, case.ctx.schema)
    return Fix(fixed[1], cypher=fixed[0]) if fixed else None


@rule("named-label", V, S, Kind.REWRITE)
def named_label_rule(case: Case) -> Fix | None:
    """ "Which distribution centers are in Canada?" written `MATCH (d:DestinationCenter
    {country: 'Canada'})` (a trial on a supply-chain graph nobody here wrote): the destination
    centers came back. The one label the question names and the statement lacks replaces the
    one label the statement uses and the question does not name, where the two share their
    last word (DistributionCenter, DestinationCenter) and the statement still fits the schema;
    where the question names both and the statement wrote one twice in a pattern the schema
    lacks, the one place whose change makes it fit is changed."""
    fixed = named_label(case.cypher, case.question, case.ctx.schema)
    return Fix(fixed[1], cypher=fixed[0]) if fixed else None


@rule("relationship-direction", V, S, Kind.REWRITE)
def relationship_direction(case: Case) -> Fix | None:
    """A relationship written against the only direction the schema has for it, and every use
    of that type in the statement reversed: `(b:Book)-[:WROTE]->(p:Person)` where the graph
    only has `(:Person)-[:WROTE]->(:Book)` is turned round. A statement that uses the type both
    ways is left to the schema check, which names the problem."""
    checked = check_schema(case.cypher, case.ctx.schema)
    if checked.cypher == case.cypher:
        return None
    return Fix(
        "; ".join(checked.corrections) or "turned a relationship round", cypher=checked.cypher
    )


@rule("reciprocal-relationship", V, S, Kind.REWRITE)
def reciprocal_relationship(case: Case) -> Fix | None:
    """ "Who knows Jessica Kelly?" written `(p:Person)-[:KNOWS]->(j:Person {…})` (a trial on
    the POLE graph) found one of the six people she knows: a tie between two people is stored
    once, in either direction. A directed relationship between two nodes of one label whose
    type names a reciprocal tie (knows, sibling, married, friend, partner, colleague,
    neighbour…) is read both ways where one end is named or read again."""
    if fixed := reciprocal_fix(case.cypher, case.ctx.schema):
        return Fix(fixed[1], cypher=fixed[0])
    return None


@rule("sort-unasked", V, Trigger.SCHEMA_PROBLEM, Kind.REWRITE)
def sort_unasked(case: Case) -> Fix | None:
    """ "Which books take place in London?" written `… RETURN b.title ORDER BY b2.year DESC`
    (a trial on a graph of books: four questions of twenty sorted on a year no book or series
    holds, and sent the statement back unchanged after the schema check's note, so the
    question went unanswered): a sort nobody asked for, on a property the node's label
    lacks. For a question that asks for no order and does not say the property, those sort
    keys go (the whole ORDER BY when none is left)."""
    fixed = unknown_sort_fix(case.cypher, case.question, case.ctx.schema)
    return Fix(fixed[1], cypher=fixed[0]) if fixed else None


@rule("name-spelling", V, Trigger.SCHEMA_PROBLEM, Kind.REWRITE)
def name_spelling(case: Case) -> Fix | None:
    """`(c:Customer)-[:ORDER]->(p:Product)` on a graph whose type is ORDERS (a dev question,
    the same statement on both attempts although the schema check listed the types): an
    unknown label or relationship type that is one schema name but for case, underscores, a
    plural s or one letter is written as that name. Only when every unknown label and type
    is such a misspelling of exactly one name; the schema's other rules then see the
    statement respelt."""
    if fixed := respelled_names(case.cypher, case.ctx.schema):
        return Fix(fixed[1], cypher=fixed[0])
    return None


@rule("relationship-word", V, S, Kind.REWRITE)
def relationship_word(case: Case) -> Fix | None:
    """`(s:Software)-[:DEPENDS_ON]->(v:Version)` for "Which software has the most versions?"
    on a graph where software both depends on versions and has them (`-[:VERSION]->`): a
    playground question on the network graph, whose answer counted dependencies. Of the
    relationship types the schema has between the two labels in the written direction, the
    one the question names is used, when it names exactly one and not the written one."""
    if fixed := relationship_by_word(case.cypher, case.ctx.schema, case.question):
        return Fix(fixed[1], cypher=fixed[0])
    return None


@rule("relationship-word-order", V, S, Kind.REWRITE)
def relationship_word_order(case: Case) -> Fix | None:
    """ "Which houses are sworn to House Tyrell?" written `(h:House {name: 'House Tyrell'})-
    [:SWORN_TO]->(h2:House) RETURN h2.name` (a trial on a Game of Thrones graph nobody here
    wrote) named Tyrell's own overlord. A relationship the schema has only from a label to
    itself has no wrong direction to the schema check; the question's words give it: the
    type's words followed by the value of the end the statement names make it the end
    ("sworn to House Tyrell", "parent of Aegon"), the value followed by them its start
    ("House Tyrell sworn to"). The arrow is turned where it reads the other way."""
    if fixed := word_order_flip(case.cypher, case.question, case.ctx.schema):
        return Fix(fixed[1], cypher=fixed[0])
    return None


@rule("walked-back-named", V, S, Kind.REWRITE)
def walked_back_named(case: Case) -> Fix | None:
    """ "How many houses in the Reach that are sworn to House Tyrell have a seat?" (a
    follow-up's rewrite in a playground thread on a Game of Thrones graph) written `…(h2:House)-
    [:IN_REGION]->(r:Region {name: 'The Reach'})<-[:IN_REGION]-(:House)<-[:SEAT_OF]-(s:Seat)
    RETURN count(DISTINCT h2)`: the seat was any house's in the Reach, and all 59 counted
    (26 have one). A walk from a node to a middle the statement names and back, by the same
    relationship, to an unnamed node of the first one's label the path goes on from, goes on
    from the first node (`…(r:Region {name: 'The Reach'}), (h2)<-[:SEAT_OF]-(s:Seat)`). Not
    for a question of others ("same", "other", "also", …), nor from a named first node."""
    if fixed := walked_back_through_named(case.cypher, case.question):
        return Fix(fixed[1], cypher=fixed[0])
    return None


@rule("hop-on-its-node", V, Trigger.SCHEMA_PROBLEM, Kind.REWRITE)
def hop_on_its_node_rule(case: Case) -> Fix | None:
    """ "Which books were written by Mark Twain and made into a movie?" written `(b:Book)
    -[:WRITTEN_BY]->(p:Person {…})-[:MADE_INTO]->(m:Movie)` (a playground follow-up on a graph
    of books nobody here wrote, both attempts): a chain's last hop, which the schema has from
    the chain's first node and not from the node before it, goes from the first node:
    `(b)-[:WRITTEN_BY]->(p:Person {…}), (b)-[:MADE_INTO]->(m:Movie)`."""
    fixed = hop_on_its_node(case.cypher, case.ctx.schema)
    return Fix(fixed[1], cypher=fixed[0]) if fixed else None


@rule("one-node-two-labels", V, Trigger.SCHEMA_PROBLEM, Kind.REWRITE)
def one_node_two_labels(case: Case) -> Fix | None:
    """ "Which courses are web courses?" written `MATCH (c:Course)-[:FULFILLED_BY]->(w:Web)
    RETURN c.name` (a trial on a learning graph nobody here wrote, where every `:Web` and
    `:Classroom` node is also a `:Course`): relationship-road then found a road from a course
    through a learning item to a web course, and no rows. A hop the schema has no such
    relationship for between a label and a kind of it (every sampled node of one carries
    the other) is one node with both labels: `MATCH (c:Course:Web)`."""
    fixed = labels_of_one_node(case.cypher, case.ctx.schema)
    return Fix(fixed[1], cypher=fixed[0]) if fixed else None


@rule("relationship-road", V, Trigger.SCHEMA_PROBLEM, Kind.REWRITE)
async def relationship_road(case: Case) -> Fix | None:
    """`(p:Project)<-[:WORKS_ON]-(t:Team)` for "Which teams have people on Project Atlas?" on a
    graph where people work on projects and belong to teams: the road the schema has replaces
    it, `(p:Project)<-[:WORKS_ON]-(:Person)-[:MEMBER_OF]->(t:Team)` (the one two-hop path that
    uses the written type, when nothing links the two labels directly); and
    `(s:Service)-[:DEPENDS_ON]->(t:Technology)` where the one relationship between the two is
    USES becomes `(s:Service)-[:USES]->(t:Technology)`. The schema check names both roads; on
    the dev records the model sent the same statement back on both attempts. Not when the
    question says a relationship type neither statement uses ("Who influenced
    people in London?" written `(p:Person)-[:WROTE]->(c:City)`: LIVES_IN would answer who
    lives there, not who influenced them): the mistake is elsewhere; a word that also names a
    label the statement matches ("version" for `:Version` and `VERSION`) says no type.

    Where several two-hop paths use the written type (`(m:Machine)-[:RUNS]->(v:Version {name:
    '16.04'})` for "How many machines run version 16.04?", a dev statement on both attempts:
    machines run OSes, applications and services, each an instance of a version; up to six), each is read
    once (through the channel's policy) and the one that finds rows is taken, or the first of
    those that find the same rows; none when they find different ones. Where no road uses the
    written type and one two-hop path links the labels, that path ("Which area has the most
    crimes?" written `(a:Area)-[:INVESTIGATED_BY]->(c:Crime)` on both attempts, a POLE trial:
    crimes occur at locations, which lie in areas). Where nothing links them within two hops,
    the one shortest road of three or four hops through different labels (of those using the
    written type, where any does; never one of several chosen by its rows: so far apart, the
    one that finds rows is as likely a detour) ("Which anatomic functional area
    does Multaq 60 tablets belong to?" written `(a:AnatomicFunctionalArea)-[:HAS_ANATOMIC_
    FUNCTIONAL_AREA]->(p:PharmaceuticalSpeciality)`, a trial on a drug classification: area,
    mechanism, ingredient, posology, speciality)."""
    rerouted = reroute_relationship(case.cypher, case.ctx.schema, case.question)
    rerouted = rerouted or await _road_with_rows(case)
    if rerouted is None:
        return None
    said = {stem(w) for w in content_words(case.question)}
    names = referenced_names(case.cypher)
    said -= {stem(w) for label in names.labels for w in name_words(label)}
    written = names.rel_types | referenced_names(rerouted[0]).rel_types
    for rel in case.ctx.schema.relationships:
        words = {stem(w) for w in content_words(" ".join(name_words(rel.type)))}
        if rel.type not in written and said & words:
            return None
    return Fix(rerouted[1], cypher=rerouted[0])


ROAD_ROWS = 20
"""Rows read of each road's statement to tell whether two roads find the same."""


async def _road_with_rows(case: Case) -> tuple[str, str] | None:
    """Of the statement on each of several roads, the one whose read finds something; or the
    first of those that find the very same rows (a node with two labels, `:OS:Process`, is
    reached either way)."""
    found: list[tuple[str, str, list[list[Any]]]] = []
    for fixed, detail in several_roads(case.cypher, case.ctx.schema):
        try:
            rows = await case.probe.rows(fixed, None, ROAD_ROWS + 1)
        except GraphError:
            continue
        if not nothing_found(rows):
            found.append((fixed, detail, rows))
    if not found or len(found[0][2]) > ROAD_ROWS or any(f[2] != found[0][2] for f in found):
        return None
    why = (
        "the one that finds rows"
        if len(found) == 1
        else f"the {len(found)} that find rows find the same"
    )
    return found[0][0], f"{found[0][1]} ({why})"


@rule("relationship-property", V, Trigger.SCHEMA_PROBLEM, Kind.REWRITE)
def relationship_property_read(case: Case) -> Fix | None:
    """`MATCH (a:Airport {…})-[:HAS_ROUTE]->(b:Airport {…}) RETURN b.distance` for "How far is
    the flight from Heathrow to Charles de Gaulle?": the distance is the route's, not an
    airport's. The relationship gets a variable and the property is read from it
    (`-[h:HAS_ROUTE]->`, `h.distance`), when exactly one relationship next to the node has it.
    The schema check named the airport's properties; the model sent the same statement back."""
    if read := relationship_property(case.cypher, case.ctx.schema):
        return Fix(read[1], cypher=read[0])
    return None


@rule("end-node-property", V, Trigger.SCHEMA_PROBLEM, Kind.REWRITE)
def end_node_property_read(case: Case) -> Fix | None:
    """`MATCH (t:Team {name: 'England'})-[r:PARTICIPATED_IN]->(x:Tournament) WHERE r.year IS
    NOT NULL RETURN x.year …` for "When did England first take part?" (a trial on a graph of
    football tournaments, answered "(none)"): the relationship holds no year, the tournament
    at its end does. `r.year` is read as `x.year`, when exactly one of the two nodes has it
    (relationship-property is the other way round)."""
    if read := end_node_property(case.cypher, case.ctx.schema):
        return Fix(read[1], cypher=read[0])
    return None


@rule("property-through-neighbour", V, Trigger.SCHEMA_PROBLEM, Kind.REWRITE)
def property_from_neighbour(case: Case) -> Fix | None:
    """`m.kind` where m's label lacks `kind` and its one neighbouring label has it: read it
    from that neighbour (`, (m)-[:OF_KIND]->(k:Kind)` and `k.kind`), only when that alone
    makes the statement fit the schema. When no label next to m's has it, from the one label
    next to another node the statement matched that does: `a.zone` of an Application run by
    the matched Machine `m`, read from the machine's Rack (a network dev question)."""
    if moved := property_through_neighbour(case.cypher, case.ctx.schema):
        return Fix(moved[1], cypher=moved[0])
    return None


@rule("asked-label-holds-it", V, Trigger.SCHEMA_PROBLEM, Kind.REWRITE)
def asked_label_holds_it(case: Case) -> Fix | None:
    """ "What is the most expensive pharmaceutical speciality in the blood and blood-forming
    organs area?" written `(a:AnatomicFunctionalArea {…})<-[:HAS_ANATOMIC_FUNCTIONAL_AREA]-
    (n:NationalClassifier) … RETURN n.price` (a trial on a drug classification nobody here
    wrote, both attempts): the classifier has no price, and the one label that has one is the
    speciality the question asks about, four hops from the area. The node is matched as that
    label, reached on the schema's road (`(a)-[:MECHANISM_OF_ACTION]->…->(n:
    PharmaceuticalSpeciality)`), where every property read from it is missing from its label
    and one label the question names holds them all; only when the statement then fits."""
    fixed = asked_label_holds_read(case.cypher, case.question, case.ctx.schema)
    return Fix(fixed[1], cypher=fixed[0]) if fixed else None


@rule("label-as-property", V, Trigger.SCHEMA_PROBLEM, Kind.REWRITE)
def label_as_property(case: Case) -> Fix | None:
    """`RETURN m.os.name` for "What operating systems do the machines in rack … run?" (a
    network dev question): OS is a label, not a property of Machine. The one relationship
    between the two labels matches it (`, (m)-[:RUNS]->(os:OS)`) and `m.os.name` is read as
    `os.name` (the word as the new variable, so a sort on `os.name` reads it too). So too for
    a relationship's name: `h.ledBy.name` for "Who is the current lord of House Stark?" (a
    trial on a Game of Thrones graph, both attempts) reads the Person at the end of LED_BY,
    and `count(h.heirs)` for "Which house has the most heirs?" counts the people HEIR_TO it."""
    if fixed := label_chain(case.cypher, case.ctx.schema) or relationship_counted(
        case.cypher, case.ctx.schema
    ):
        return Fix(fixed[1], cypher=fixed[0])
    return None


@rule("property-for-label", V, Trigger.SCHEMA_PROBLEM, Kind.REWRITE)
def property_for_label(case: Case) -> Fix | None:
    """`MATCH (z:Zone)-[:HOLDS]->(r:Rack) RETURN z.zone AS zone, count(r)` for "How many racks
    does each zone have?" (a trial on the network graph): no relationship links a Zone to a
    Rack, and each rack holds its zone as `Rack.zone`. The Zone node and its invented hop go,
    and its reads read `r.zone` (`MATCH (r:Rack) RETURN r.zone AS zone, count(r)`). Only where
    the two labels share no relationship, the kept one has one property named like the other,
    and the dropped node ends its chain, has no map and is read only through its properties
    (counted-by-property is the same mistake where the statement matched the zone alone).
    A true/false property is read as true where the node stood ("Which stores have a
    florist?", `(f:Florist)` for `s.florist`, a foodmart trial: every store came back)."""
    if fixed := label_kept_as_property(case.cypher, case.ctx.schema):
        return Fix(fixed[1], cypher=fixed[0])
    return None


@rule("name-property", V, Trigger.SCHEMA_PROBLEM, Kind.REWRITE)
def name_property(case: Case) -> Fix | None:
    """`RETURN s.firstName AS firstName, s.lastName AS lastName` for "Who supplies Tofu?" where
    a supplier is called by its `companyName` (people on the same graph have first and last
    names, and the model wrote them for every "who"; two dev questions, both attempts): the
    label's own name property is returned instead, and the sort follows. Only for returned
    properties whose name says name, read nowhere before the RETURN."""
    fixed = name_property_fix(case.cypher, case.ctx.schema)
    return Fix(fixed[1], cypher=fixed[0]) if fixed else None


@rule("misfit-value-label", V, Trigger.SCHEMA_PROBLEM, Kind.REWRITE)
async def misfit_value_label(case: Case) -> Fix | None:
    """ "Which centers is Madrid linked to?" written `MATCH (d:DestinationCenter {city:
    'Madrid'}) OPTIONAL MATCH (d)-[:LINKED]->(dc:DestinationCenter)` (a trial on a
    supply-chain graph nobody here wrote): the schema has no LINKED between destination
    centers, and Madrid is a DistributionCenter's city. value-label's change for a statement
    the schema check refused: the one label alike that holds the literal, where the statement
    then fits the schema and finds rows (each place alone, then every place); the statement
    then runs as usual."""
    if not check_schema(case.cypher, case.ctx.schema).problems:
        return None  # an earlier rule made it fit
    found = await relabelled_read(case)
    return Fix(found[1], cypher=found[0]) if found else None


@rule("asked-but-missing", V, Trigger.SCHEMA_PROBLEM, Kind.GUARD)
def asked_but_missing(case: Case) -> Fix | None:
    """A word of the question the statement used as a label, type or property, which nothing
    in the graph is called ("salary" in `e.salary`): remembered; the second time, the run stops
    and says the graph has no data on it instead of trying a third statement."""
    asked = {stem(w): w.lower() for w in content_words(case.question)}
    vocabulary = schema_vocabulary(case.ctx.schema)
    found = [
        asked[stem(word)]
        for name in case.unknown
        for word in name_words(name)
        if stem(word) in asked and not vocabulary.knows(word)
    ]
    missing = list(dict.fromkeys(found))
    if not missing:
        return None
    before = set(case.state.get("missing_data") or [])
    update: dict[str, Any] = {"missing_data": sorted(before | set(missing))}
    if before & set(missing):
        update["fatal"] = True
    return Fix(f"the graph has no name for {', '.join(missing)}", update=update)


def _shape(cypher: str) -> str:
    return "".join(cypher.split()).casefold()


COSTLY_READ_HINT = (
    "Write a different, cheaper statement: filter early, aggregate (count, sum) instead of "
    "collecting, never combine every row with every other, and do not send this one again."
)


@rule("costly-read-repeated", V, Trigger.BEFORE_ENGINE, Kind.GUARD)
def costly_read_repeated(case: Case) -> Fix | None:
    """The statement (but for spacing and case) already ran out of time or memory in this
    question: it is not run again, which would only cost the same again."""
    max_rows = case.ctx.config.max_rows
    shape = _shape(with_limit(case.cypher, max_rows))
    for attempt in case.state.get("attempts", []):
        if attempt.stage in (Stage.TIMEOUT, Stage.RESOURCE) and _shape(attempt.cypher) == shape:
            note = (
                "This is the statement that already ran out of time or memory; it was not run "
                f"again. {COSTLY_READ_HINT}"
            )
            return Fix("not run again", note=note, stage=Stage.RESOURCE)
    return None


def _asked(case: Case) -> frozenset[str]:
    return question_focus(case.question, case.ctx.schema).labels


@rule("with-keeps-the-node", V, Trigger.ENGINE_ERROR, Kind.REWRITE)
def with_keeps_the_node(case: Case) -> Fix | None:
    """`MATCH (s:Software) WITH count(DISTINCT v) AS count RETURN s.name AS name, count` for
    "Which software has more than 3 versions?" (the network trial, twice; "Which data center
    has the most racks?", a dev question, on every attempt): a WITH of aggregates only drops
    `s`, and `v` was never matched. The WITH keeps the nodes read after it (`WITH s, count(…)`,
    counting per software), and an unmatched variable the aggregate reads is matched through
    the one relationship to the label the question names (of several, the one whose type the
    question says: "versions" → VERSION). EXPLAINed again by the runner."""
    fixed = grouped_with(case.error, case.cypher, case.ctx.schema, _asked(case), case.question)
    return Fix(fixed[1], cypher=fixed[0]) if fixed else None


@rule("bind-unbound-variable", V, Trigger.ENGINE_ERROR, Kind.REWRITE)
def bind_unbound(case: Case) -> Fix | None:
    """`MATCH (r:Rack {name: 'x'}) RETURN count(m)` with `m` never matched, where the question
    names one label the statement lacks and one relationship reaches it from a matched node:
    `, (r)-[:HOLDS]->(m:Machine)` is added (EXPLAINed again by the runner)."""
    bound = bind_unbound_variable(case.error, case.cypher, case.ctx.schema, _asked(case))
    return Fix(bound[1], cypher=bound[0]) if bound else None


@rule("bind-unbound-relationship", V, Trigger.ENGINE_ERROR, Kind.REWRITE)
def bind_unbound_relationship(case: Case) -> Fix | None:
    """ "What is the average watch count?" written `MATCH (u:User)-[:WATCHED]->(m:Movie)
    RETURN avg(r.watchCount)` (a playground trial on a movie graph nobody here wrote): the
    engine says `r` is not defined, on both attempts. Where the variable is only read for
    properties and exactly one unnamed relationship of the statement holds them, that
    relationship takes the name (`-[r:WATCHED]->`; EXPLAINed again by the runner)."""
    named = relationship_named(case.error, case.cypher, case.ctx.schema)
    return Fix(named[1], cypher=named[0]) if named else None


@rule("with-alias", V, Trigger.ENGINE_ERROR, Kind.REWRITE)
def with_alias(case: Case) -> Fix | None:
    """`… WITH t.type AS type, count(m) AS count RETURN type, count(m) AS count` for "How many
    machines of each type are there?": the WITH keeps only its aliases, so the engine says
    `m` is not defined (a dev question, on both attempts). What the WITH already computed is
    read by its alias (`RETURN type, count AS count`), in the RETURN and the sort (EXPLAINed
    again by the runner)."""
    fixed = aggregate_by_alias(case.error, case.cypher)
    return Fix(fixed[1], cypher=fixed[0]) if fixed else None


@rule("relationship-measure", V, S, Kind.REWRITE)
def relationship_measure(case: Case) -> Fix | None:
    """ "What are the three longest routes out of Gatwick?" written `…-[:HAS_ROUTE]->(b:Airport)
    RETURN b.longest ORDER BY b.longest DESC LIMIT 3` (ap-order-gatwick-longest, a dev
    statement): the superlative measures the routes, and a route's one number is its distance;
    `b.longest` is the destination's longest runway. The relationship gets a variable and the
    sort (with the column it returned) reads its number, the superlative's way round. Only
    when the word after the superlative names one relationship the statement matches, that
    type has one number property, the sort is on one of its nodes, and the question has one
    superlative."""
    if fixed := relationship_sort(case.cypher, case.ctx.schema, case.question):
        return Fix(fixed[1], cypher=fixed[0])
    return None


@rule("count-of-a-number", V, S, Kind.REWRITE)
def count_of_a_number(case: Case) -> Fix | None:
    """ "Which machine type has the most CPUs?" answered by `MATCH (t:Type) RETURN t.name AS
    name, count(*) AS count ORDER BY count DESC LIMIT 1` (net-type-most-cpus, on both dev runs):
    one lone node counted per row gives 1 for every type, while the number is a property,
    `t.cpu`. The count becomes `sum(t.cpu)`, named after the property. Only where "the most
    <word>" names one number property of the one node matched, no relationship is matched,
    and the word names no label or relationship type ("the most books" may be a count).
    "How many runways do the airports in Spain have in total?" answered by `count(a.runways)`
    (ap-agg-spain-runways, a dev statement) counts airports: `sum(a.runways)`, where "how many
    <word>" names the number property counted."""
    schema = case.ctx.schema
    fixed = counted_property_fix(case.cypher, case.question, schema) or summed_property_fix(
        case.cypher, case.question, schema
    )
    return Fix(fixed[1], cypher=fixed[0]) if fixed else None


@rule("counted-road", V, S, Kind.REWRITE)
async def counted_road_rule(case: Case) -> Fix | None:
    """ "Which data center has the most racks?" written `MATCH (d:DataCenter) RETURN d.name AS
    name, count(*) AS rack_count …` (net-most-racks, a dev statement): the racks are never
    matched, and told by counted-label's correction to match them, the model counted the data
    centres instead. Where one matched node has one road to the counted label, that road is
    matched and the count counts its nodes (`, (d)-[:CONTAINS]->(r:Rack)`, `count(DISTINCT
    r)`), when that statement finds something (one read). Labels are the schema's, and a node
    can carry two: on the network graph a Machine RUNS an `OS:Process` while VERSION links an
    `OS:Software`, so `(o:OS)-[:VERSION]->(v), (o)<-[:RUNS]-(m:Machine)` finds nothing (a dev
    run), and such a road is not taken. counted-label's correction is left for what this
    cannot settle."""
    return await _if_it_finds_rows(case, counted_road(case.cypher, case.question, case.ctx.schema))


async def _if_it_finds_rows(case: Case, fixed: tuple[str, str] | None) -> Fix | None:
    """The rewrite as a fix when its statement finds something (one read through the
    channel's policy), else None."""
    if fixed is None:
        return None
    try:
        rows = await case.probe.rows(fixed[0], None, 2)
    except GraphError:
        return None
    return None if nothing_found(rows) else Fix(fixed[1], cypher=fixed[0])


@rule("counted-by-property", V, S, Kind.REWRITE)
async def counted_by_property_rule(case: Case) -> Fix | None:
    """ "Which zone has the most racks?" written `MATCH (z:Zone) RETURN z.name AS name,
    count(*) AS rack_count …` on every run of net-zone-most-racks (a dev item): no
    relationship links a Zone to a Rack; each rack holds its zone as `Rack.zone`. A statement
    of one node, whose label nothing links to the counted one, counts the counted label
    grouped by its property named like that node's label (`MATCH (r:Rack) RETURN r.zone AS
    name, count(r) …`), when that finds something (one read). A graph that keeps a thing both
    as a label and as a property of another (a city's country, a product's category) meets it
    wherever the two are not linked."""
    found = counted_by_property(case.cypher, case.question, case.ctx.schema)
    return await _if_it_finds_rows(case, found)


@rule("counted-list", V, S, Kind.REWRITE)
def counted_list_rule(case: Case) -> Fix | None:
    """ "How many different countries can you reach nonstop from Venice Marco Polo?" answered
    by listing the countries (`RETURN DISTINCT c2.descr AS name ORDER BY name LIMIT 100`,
    ap-hop-venice-countries, a dev statement): a "how many <label>" question of one total
    whose RETURN lists nodes of that label and nothing else counts them instead (`RETURN
    count(DISTINCT c2) AS countries`). Not for "how many … each/per/every", a property's
    number ("How many runways does Heathrow have?" reads `a.runways`: no label), or a RETURN
    with anything beside the node."""
    fixed = counted_list(case.cypher, case.question, case.ctx.schema)
    return Fix(fixed[1], cypher=fixed[0]) if fixed else None


@rule("count-distinct", V, S, Kind.REWRITE)
def count_distinct_rule(case: Case) -> Fix | None:
    """ "How many users from Virginia watched a horror movie?" written `MATCH (u:User {state:
    'Virginia'})-[:WATCHED]->(m:Movie)-[:HAS]->(:Genre {name: 'Horror'}) RETURN count(u)` (a
    trial on a movie graph nobody here wrote) counted a user once per horror film: 25 for 22.
    A "how many <things>" question's count of a node (or `count(*)` where one node of the
    counted label is matched) that its pattern can reach by more than one row, through a node
    nothing pins to one (a filter on what it is called by: a genre's name, not a film's year)
    or groups by, counts each node once (`count(DISTINCT u)`). Not for "how many times" or
    "how often"."""
    fixed = count_distinct(case.cypher, case.question, case.ctx.schema)
    return Fix(fixed[1], cypher=fixed[0]) if fixed else None


@rule("counted-other-label", V, S, Kind.REWRITE)
def counted_other_label(case: Case) -> Fix | None:
    """ "How many people hold a position?" written `MATCH (p:Person)-[:HOLDS_POSITION]->
    (p2:Position) RETURN count(DISTINCT p2.name)` (a trial on a learning graph nobody here
    wrote) counted the positions. A "how many <label>" question whose one count counts a node
    of another label, where the statement matches one node of the counted label that nothing
    pins and no column groups by, counts that node: `count(DISTINCT p)`."""
    fixed = other_label_counted(case.cypher, case.question, case.ctx.schema)
    return Fix(fixed[1], cypher=fixed[0]) if fixed else None


@rule("named-node-counted", V, S, Kind.REWRITE)
def named_node_counted_rule(case: Case) -> Fix | None:
    """ "How many comedies are there?" written `MATCH (g:Genre {name: 'Comedy'}) RETURN
    count(g)` (a trial on a movie graph nobody here wrote) answered 1: the question counts the
    things of a kind the graph stores as a node. A "how many" question that names no label,
    answered by counting the one node it matches by what that node is called by, counts the
    nodes of the one label linked to it: `MATCH (g:Genre {name: 'Comedy'})<-[:HAS]-(m:Movie)
    RETURN count(DISTINCT m)`. Not where the question names a label ("How many users live in
    Ohio?", "How many people are in the Payments team?": counted-road's). Where the question
    names the label and the count is of a node of it named by what it is called by ("How
    many characters are related to both Sam and Gollum?" counted Sam, a trial on a
    co-occurrence graph), the label's one unnamed node is counted (pinned_node_counted)."""
    fixed = named_node_counted(case.cypher, case.question, case.ctx.schema) or (
        pinned_node_counted(case.cypher, case.question, case.ctx.schema)
    )
    return Fix(fixed[1], cypher=fixed[0]) if fixed else None


@rule("lone-node-counted", V, S, Kind.REWRITE)
def lone_node_counted_rule(case: Case) -> Fix | None:
    """ "Which group has the most members?" written `MATCH (g:Group) RETURN g.name AS group,
    count(*) AS members ORDER BY members DESC LIMIT 1` (a trial on the cybersecurity graph)
    named one of 300 groups with 1: a count grouped by the one node a statement matches is 1
    for every node. The relationship at that label the question names is matched from it:
    a role ("members" for MEMBER_OF) counts the starts, `(g:Group)<-[:MEMBER_OF]-(m)`; a verb
    ("contains" for CONTAINS) the ends, labelled when the question names a label there. Only
    where the count (of `*` or the node) sits beside the node or what it is called by, and one
    relationship type and side fits."""
    fixed = lone_node_counted(case.cypher, case.question, case.ctx.schema)
    return Fix(fixed[1], cypher=fixed[0]) if fixed else None


@rule("fewest-with-none", V, S, Kind.REWRITE)
def fewest_with_none(case: Case) -> Fix | None:
    """ "Which group has the fewest members?" written `MATCH (g:Group)<-[:MEMBER_OF]-(m) RETURN
    g.name AS grp, count(m) AS members ORDER BY members LIMIT 1` (a trial on the cybersecurity
    graph) named groups of one member: the 40 groups with none are matched by no path. The
    grouped node is matched alone and the hop becomes an OPTIONAL MATCH from it, counting the
    other end, so those with none count 0. Only for a "fewest/least" question whose statement
    is one MATCH of one hop and no WHERE, whose one count (of `*` or the other end) sits beside
    a read of the grouped end and is the first sort key, ascending."""
    fixed = fewest_keeps_none(case.cypher, case.question)
    return Fix(fixed[1], cypher=fixed[0]) if fixed else None


@rule("count-unasked", V, S, Kind.REWRITE)
def count_unasked_rule(case: Case) -> Fix | None:
    """ "What genres are there?" written `MATCH (g:Genre) RETURN count(g) AS genreCount` (a
    trial on a movie graph nobody here wrote) answered 10. A "which/what <label> are there"
    question with no word of counting (how many, number, count, total, …), answered by one
    count of that label alone, lists the label by what it is called by instead (`RETURN
    DISTINCT g.name AS name ORDER BY name`)."""
    fixed = count_unasked(case.cypher, case.question, case.ctx.schema)
    return Fix(fixed[1], cypher=fixed[0]) if fixed else None


@rule("stored-count", V, S, Kind.REWRITE)
def stored_count_rule(case: Case) -> Fix | None:
    """ "How many times did he watch each of them?" written `MATCH (u:User {…})-[:WATCHED]->
    (m:Movie) RETURN m.title AS title, count(*) AS watchCount` (a playground trial on a movie
    graph nobody here wrote) gave 1 for each film: the WATCHED relationship stores the times
    in `watchCount`. A count named after a number property of the one relationship of the
    statement that holds it adds that number up (`sum(r.watchCount)`, the relationship named
    where it has no name)."""
    fixed = stored_count(case.cypher, case.ctx.schema)
    return Fix(fixed[1], cypher=fixed[0]) if fixed else None


@rule("grouping-key-unused", V, S, Kind.REWRITE)
def grouping_key_unused_rule(case: Case) -> Fix | None:
    """ "Which originator bank sent the most money in total?" written `… WITH e, o,
    sum(f.amount) AS total RETURN o.name, total ORDER BY total DESC LIMIT 1` (a FinCEN trial,
    a graph nobody here wrote): grouped by the filer too, the top total was one filer's
    share. For a question that ranks or totals, a bare variable the WITH groups by and nothing
    after it reads leaves the WITH (`WITH o, sum(f.amount) AS total`). Not after a filter
    right behind the WITH, a later aggregate, or words that ask per combination ("the same",
    "each", "one")."""
    fixed = unused_grouping_key(case.cypher, case.question)
    return Fix(fixed[1], cypher=fixed[0]) if fixed else None


@rule("named-node-returned", V, S, Kind.REWRITE)
def named_node_returned_rule(case: Case) -> Fix | None:
    """ "Through which airports can I get from Inverness to Athens with exactly one change?"
    written with the change airport matched as `a2` and `RETURN DISTINCT a3.descr`, a3 being
    Athens (ap-hop-inverness-athens, a dev statement): the answer was the airport the user
    named. Where a "which <label>" question's RETURN reads only a node the statement names by a
    literal and one node of that label is left open, the open one is returned.
    "Who has acted with Tom Hanks?" written `(p:Person {name: 'Tom Hanks'})-[:ACTED_IN]->
    (m:Movie) RETURN p.name` (a Movies trial) has no such node: the one hop from the named
    node is taken again from the film to another person, who is returned (co_linked_node)."""
    fixed = named_node_returned(case.cypher, case.question, case.ctx.schema) or co_linked_node(
        case.cypher, case.question, case.ctx.schema
    )
    return Fix(fixed[1], cypher=fixed[0]) if fixed else None


@rule("asked-label-returned", V, S, Kind.REWRITE)
def asked_label_returned_rule(case: Case) -> Fix | None:
    """ "Which drug classes can treat asthma?" written `… <-[:CURES]-(d:DrugClass)
    <-[:BELONGS_TO_CLASS]-(d2:Drug) RETURN DISTINCT d2.name` (a trial on a graph of drugs
    nobody here wrote): the 13 drugs, not the three classes. Where a "which <label>" question's
    RETURN reads only a node of a label the question does not name, and the statement matches
    one node of the asked label, unfiltered, that node is returned DISTINCT by what it is
    called by, and the hop to the other goes where it ends its chain."""
    fixed = asked_label_returned(case.cypher, case.question, case.ctx.schema)
    return Fix(fixed[1], cypher=fixed[0]) if fixed else None


@rule("named-node-linked", V, S, Kind.REWRITE)
def named_node_linked_rule(case: Case) -> Fix | None:
    """ "Which characters from Naboo appeared in The Phantom Menace?" written with the planet
    Naboo appearing in the film (a Star Wars trial): the film's whole cast, since a hop
    between two named nodes holds or not once for every row. A named node that only touches
    another named node is tied to the asked node (the one the RETURN reads that no literal
    names) by the one relationship between their labels, or the one of several the question
    says; not where the question says the named nodes' own relationship."""
    fixed = named_node_linked(case.cypher, case.question, case.ctx.schema)
    return Fix(fixed[1], cypher=fixed[0]) if fixed else None


@rule("which-names-the-thing", V, S, Kind.REWRITE)
def which_names_the_thing(case: Case) -> Fix | None:
    """ "Which data center has the most racks?" answered by `MATCH (d:DataCenter)-[:CONTAINS]->
    (r:Rack) RETURN count(*) AS racks ORDER BY racks DESC LIMIT 1`: only the measure comes
    back. The asked node's identifying property (first and last name where it has both) is
    added to the RETURN, which also groups the count per data center.
    "What is the earliest movie Tom Hanks acted in?" answered by the film's year alone (a
    Movies trial): the film's title is added (thing_of_measure_fix). "Which film has the most
    planets?" answered by the planet in the most films, grouped by the counted node (a Star
    Wars trial): the asked node's name replaces the counted node's (asked_not_counted_fix);
    so too where the asked thing is a value of the node ("Which dwarf is related to the most
    characters?" grouped by the other character, a trial on a co-occurrence graph:
    asked_value_not_counted). "Which posologies does Famotidine have?" answered by their codes
    alone (`RETURN p.code`, a trial on a drug classification): the name goes in front
    (named_by_fix). "Who has the largest unsecured loan?" answered by the loan's number and
    amount (a trial on a bank-fraud graph): the account holder matched beside it, named
    (who_unreturned_fix). "Which mammals live in beaver ponds?" answered by `RETURN DISTINCT
    a.Group` where the statement pins `a.Group` to "Mammal" itself (a trial on a Yellowstone
    food web): the animals' name in its place (pinned_read_fix). "Which animal preys on the
    most animals?" grouped by the prey (the same trial): the relationship's end the question's
    words ask for, named (asked_end_fix)."""
    schema = case.ctx.schema
    fixed = (
        identify_fix(case.cypher, case.question, schema)
        or thing_of_measure_fix(case.cypher, case.question, schema)
        or asked_not_counted_fix(case.cypher, case.question, schema)
        or asked_value_not_counted(case.cypher, case.question, schema)
        or asked_end_fix(case.cypher, case.question, schema)
        or named_by_fix(case.cypher, case.question, schema)
        or who_unreturned_fix(case.cypher, case.question, schema)
        or pinned_read_fix(case.cypher, case.question, schema)
    )
    return Fix(fixed[1], cypher=fixed[0]) if fixed else None


@rule("name-parts", V, S, Kind.REWRITE)
def name_parts(case: Case) -> Fix | None:
    """`RETURN e2.lastName AS lastName` for "Who reports directly to Andrew Fuller?" where
    employees are called by a first and a last name (a dev question, written so on every
    run): the other part is returned too (`e2.firstName AS firstName, e2.lastName AS
    lastName`), the pair found from the label's properties as for "which" answers."""
    fixed = name_parts_fix(case.cypher, case.ctx.schema)
    return Fix(fixed[1], cypher=fixed[0]) if fixed else None


@rule("superlative-sort-direction", V, S, Kind.REWRITE)
def superlative_sort_direction(case: Case) -> Fix | None:
    """ "Who is the oldest employee?" sorted `ORDER BY e.birthDate DESC`: for a point in time
    (a date or year property) oldest/earliest put the smallest first and newest/latest/most
    recent the largest; for an age or a duration the other way round. The sort is turned.
    "Who has been with the company the longest?" sorted `ORDER BY p.start_date DESC` (a dev
    question): longest since a point in time is the earliest (shortest, the latest).
    Sorted on `e.hireDate` where employees have a birth date: oldest and youngest are about
    age, so the birth date is sorted on (then turned as needed)."""
    cypher, done = case.cypher, []
    if aged := age_property_fix(cypher, case.question, case.ctx.schema):
        cypher, done = aged[0], [aged[1]]
    if turned := sort_direction_fix(cypher, case.question, case.ctx.schema):
        cypher, done = turned[0], [*done, turned[1]]
    return Fix("; ".join(done), cypher=cypher) if done else None


@rule("superlative-one-row", V, S, Kind.REWRITE)
def superlative_one_row(case: Case) -> Fix | None:
    """ "Which product has the highest price?" (one product, in the singular) sorted with
    `LIMIT 5` or no LIMIT: `LIMIT 1`. Not for "the three highest" or a plural ("Which
    products…")."""
    fixed = one_row_fix(case.cypher, case.question, case.ctx.schema)
    return Fix(fixed[1], cypher=fixed[0]) if fixed else None


@rule("superlative-top-rows", V, S, Kind.REWRITE)
def superlative_top_rows(case: Case) -> Fix | None:
    """ "Which racks hold the most machines?" (a network trial question, now a dev item)
    sorted every rack by its machines under `LIMIT 100`, and the answer named one of the racks
    tied at the top. A plural superlative that asks for no number, sorted with no LIMIT or one
    of at least 100, gets `LIMIT 1`; ties-shown then reads the rows tied for first. A smaller
    LIMIT is a top list the model chose, and stays."""
    fixed = top_rows_fix(case.cypher, case.question, case.ctx.schema)
    return Fix(fixed[1], cypher=fixed[0]) if fixed else None


@rule("limit-unasked", V, S, Kind.REWRITE)
def limit_unasked(case: Case) -> Fix | None:
    """ "Who directed The Matrix?" (a Movies trial) written with `ORDER BY p.born DESC LIMIT 1`
    named one of the film's two directors. A final `LIMIT 1` is dropped where a "who" or
    "which" question asks for no superlative ("the most", "the oldest"), no number and no one
    thing ("first", "only", "name a …")."""
    fixed = unasked_limit_fix(case.cypher, case.question)
    return Fix(fixed[1], cypher=fixed[0]) if fixed else None


@rule("sort-key-returned", V, S, Kind.REWRITE)
def sort_key_returned(case: Case) -> Fix | None:
    """ "Which German airport is closest to sea level?" written `RETURN a.descr AS descr ORDER
    BY a.altitude LIMIT 1` (a dev item) named the airport without the height that put it
    first. For a question that asks for a ranking (a superlative, "sorted by"), where the
    final RETURN names things without aggregating and sorts them first by a number or a date
    of a node or relationship it does not return, that value is returned too (`a.altitude AS
    altitude`): the measure a ranking ranks by is part of the answer."""
    fixed = sort_key_returned_fix(case.cypher, case.question, case.ctx.schema)
    return Fix(fixed[1], cypher=fixed[0]) if fixed else None


@rule("numbers-as-text", V, S, Kind.REWRITE)
def numbers_as_text(case: Case) -> Fix | None:
    """ "Who is the tallest character?" written `ORDER BY c.height DESC LIMIT 1`, where heights
    are stored as text ("172", "unknown": a CSV import with no types; a trial on a graph nobody
    here wrote) named a character of unknown height. A property whose sampled values are
    numbers written as text is read as a number (`toFloat(replace(trim(c.height), ',', ''))`)
    where it is sorted (placeholders last), summed, averaged, or compared with anything but a
    string. After the superlative rules, which read the sort key as written."""
    fixed = numbers_as_text_fix(case.cypher, case.ctx.schema)
    return Fix(fixed[1], cypher=fixed[0]) if fixed else None


@rule("dates-as-text", V, S, Kind.REWRITE)
def dates_as_text(case: Case) -> Fix | None:
    """ "What is the most recent crime?" written `ORDER BY c.date DESC LIMIT 1`, where dates
    are stored as "24/08/2017" (a trial on the POLE graph), named a crime of the 9th: text
    sorts "9/08/2017" above "31/08/2017". A property whose sampled values are dates written
    day/month/year (or month/day/year, told apart by a part above 12) is read as the number
    `yyyymmdd` where it is sorted or compared; a date literal beside it (ISO, or written as
    the property writes it) becomes that number, `STARTS WITH '2017-08'` the month's range."""
    fixed = dates_as_text_fix(case.cypher, case.ctx.schema)
    return Fix(fixed[1], cypher=fixed[0]) if fixed else None
