"""Does a statement fit the question's own words? Checks that need the question, not only the
schema: what it counts, a number it compares with a property, and how deep it follows a
relationship."""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Collection, Sequence

from graph_agent.graphdb.protocol import GraphSchema
from graph_agent.graphdb.schema import quote_name_if_needed
from graph_agent.lint import literal_filters
from graph_agent.pruning import name_words
from graph_agent.schema_examples.wording import literal
from graph_agent.statement import Statement, fresh_variable, is_aggregate_call
from graph_agent.words import (
    ASKS_WHO_OR_WHICH,
    article,
    label_said,
    met_only_in_label_words,
    plural,
    said,
    value_said_as_label,
)
from guardrails import matching_close, referenced_names, split_name, stem, tokenize

_NUMBER = r"(?:\d+|one|two|three|four|five|six|seven|eight|nine|ten|a\s+dozen|a\s+hundred)"
_COUNTED = re.compile(
    r"\b(?:how\s+many|number\s+of|(?:the\s+)?(?:most|fewest|least)"
    rf"|(?:more|fewer|less)\s+than\s+{_NUMBER}|at\s+(?:least|most)\s+{_NUMBER})\s+"
    r"([A-Za-z][\w-]*(?:\s+[A-Za-z][\w-]*){0,3})",
    re.IGNORECASE,
)
COUNT_FILLERS = frozenset({"different", "distinct", "unique", "separate", "individual", "other"})
"""Words before the counted noun that name no label: "how many different countries"."""
_COUNT_OF = re.compile(r"\bcount\s*\(\s*(?:DISTINCT\s+)?(\w+)\s*\)", re.IGNORECASE)


def counted_label(question: str, schema: GraphSchema, matched: Collection[str] = ()) -> str | None:
    """The label whose nodes the question counts or ranks by: "How many machines…", "the
    most racks", "more than one team", "the number of machine types" (Type, the last noun of
    the compound), "how many different operating systems" (OS by its initials, where
    `matched`, the labels a statement matches, holds it; a label of several words, such as
    DataCenter, by those words)."""
    found = _COUNTED.search(question)
    if found is None:
        return None
    words = found.group(1).split()
    while words and words[0].lower() in COUNT_FILLERS:
        words = words[1:]
    said = label_said(words, schema, matched)
    if said is not None and said.words > 1:
        # the last noun of a compound names what is counted: "operating system versions"
        after = words[said.words : said.words + 1]
        head = label_named(after[0], schema) if after else None
        return head or said.label.name
    for word in reversed(words[:2]):
        if (label := label_named(word, schema)) is not None:
            return label
    return None


def label_named(word: str, schema: GraphSchema) -> str | None:
    """The one-word label a word of the question names ("racks" → Rack), or None."""
    wanted = stem(word)
    for label in schema.labels:
        if len(split_name(label.name)) != 1:
            continue
        if wanted in name_words(label.name) | name_words(plural(label.name)):
            return label.name
    return None


def counted_label_feedback(cypher: str, question: str, schema: GraphSchema) -> str | None:
    """For a statement that never matches the label the question counts: "How many machines
    are in rack R?" answered by `MATCH (r:Rack {name: 'R'}) RETURN count(DISTINCT r)` (a real
    1.5B answer, "1 machine", that its evaluator accepted), or "Which data center has the most
    racks?" by counting data centres. None when the statement matches that label, or when the
    question counts nothing the schema names."""
    label = counted_label(question, schema)
    names = referenced_names(cypher)
    if label is None or label in names.labels:
        return None
    text = f"The question counts {plural(label)}, but the statement never matches {_a(label)}"
    counted = _COUNT_OF.search(cypher)
    if counted is not None and (other := names.variables.get(counted.group(1))):
        text += f" (it counts {counted.group(1)}, {_a(other)})"
    var = fresh_variable(label, names.variables)
    named = {bound: v for v, bound in reversed(list(names.variables.items()))}
    named[label] = var
    links = [
        f"({named.get(r.start, '')}:{r.start})-[:{r.type}]->({named.get(r.end, '')}:{r.end})"
        for r in schema.relationships
        if label in (r.start, r.end) and {r.start, r.end} & names.labels and r.start != r.end
    ]
    text += f": match the {plural(label)} and count {var}"
    if links:
        text += f", e.g. through {' or '.join(dict.fromkeys(links[:3]))}"
    return text + "."


def _a(label: str) -> str:
    return f"{article(label)} {label}"


ANY_DEPTH = 8
"""How many hops "directly or indirectly" follows (an org chart or a dependency tree is rarely
deeper; a bound keeps the read cheap on a dense graph)."""
_INDIRECT = re.compile(r"\b(?:indirectly|directly\s+or\s+(?:through|via)\b)", re.IGNORECASE)


def any_depth_fix(cypher: str, question: str, schema: GraphSchema) -> tuple[str, str] | None:
    """ "Which services depend on checkout-api, directly or through other services?" or "Who
    works under Andrew Fuller, directly or indirectly?" answered with one hop of a relationship
    that links a label to itself (`-[:DEPENDS_ON]->`, `-[:REPORTS_TO]->`): that relationship is
    followed up to ANY_DEPTH hops (`-[:DEPENDS_ON*1..8]->`), and a RETURN without aggregates
    gets DISTINCT, `count(p)` becomes `count(DISTINCT p)` (a node reached by two routes is one
    answer). Only when the statement has one such relationship, written without a length and
    without a variable it uses elsewhere; a fixed chain of two or more hops of it through nodes
    used nowhere else counts as one (`-[:DEPENDS_ON]->(s2:Service)-[:DEPENDS_ON]->`, written
    for "directly or through other services" on a demo dev item, finds only two hops away)."""
    if not _INDIRECT.search(question):
        return None
    own = {r.type for r in schema.relationships if r.start == r.end}
    other = {r.type for r in schema.relationships if r.start != r.end}
    chained = cypher
    while (shorter := _one_hop_less(chained, own - other)) is not None:
        chained = shorter
    statement = Statement(chained)
    tokens = statement.tokens
    found = []
    for i, tok in enumerate(tokens):
        if not (tok.is_punct("[") and i and tokens[i - 1].is_punct("-")):
            continue
        close = matching_close(tokens, i)
        if close is None:
            return None
        inside = tokens[i + 1 : close]
        colon = next((k for k, t in enumerate(inside) if t.is_punct(":")), None)
        if colon is None or colon + 1 >= len(inside) or not inside[colon + 1].is_name:
            continue
        rel_type = inside[colon + 1].name
        if rel_type not in own or rel_type in other:
            continue
        if any(t.is_punct("*", "|") for t in inside):
            return None  # a length or several types already: the model chose
        if colon == 1:
            var = inside[0].name
            if sum(t.is_name and t.name == var for t in tokens) > 1:
                return None
        found.append(inside[colon + 1])
    if len(found) != 1:
        return None
    edits = [(found[0].end, found[0].end, f"*1..{ANY_DEPTH}")]
    returned = statement.final_return()
    if returned is not None:
        at = returned[0]
        first, end = at + 1, statement.clause_end(at)
        plain = not any(is_aggregate_call(tokens, k) for k in range(first, end))
        if plain and not tokens[first].is_keyword("DISTINCT"):
            edits.append((tokens[at].end, tokens[at].end, " DISTINCT"))
        edits += [  # count(p) → count(DISTINCT p)
            (tokens[k + 2].position, tokens[k + 2].position, "DISTINCT ")
            for k in range(first, end - 3)
            if tokens[k].is_keyword("COUNT")
            and tokens[k + 1].is_punct("(")
            and tokens[k + 2].kind == "identifier"
            and tokens[k + 3].is_punct(")")
        ]
    detail = f"{found[0].name} followed up to {ANY_DEPTH} hops"
    return statement.edited(edits), detail + (" (for the fixed chain)" if chained != cypher else "")


def _one_hop_less(cypher: str, types: set[str]) -> str | None:
    """Two hops of one self-linking type written as a fixed chain, `(s)-[:DEPENDS_ON]->(s2:
    Service)-[:DEPENDS_ON]->(s3)` (a demo dev statement for "directly or through other
    services", which finds only the services two hops away), as one hop `(s)-[:DEPENDS_ON]->
    (s3)` for any-depth to lengthen; None when there is no such chain. Both hops the same way,
    neither with a variable, a map or a length, and the node between them a bare `(v:Label)`
    whose variable is used nowhere else."""
    tokens = tokenize(cypher)
    uses = Counter(t.name for t in tokens if t.is_name)

    def texts(at: int, n: int) -> list[str]:
        return [t.text for t in tokens[at : at + n]]

    for c1, tok in enumerate(tokens):
        if not (tok.is_punct("]") and c1 >= 3 and texts(c1 - 3, 2) == ["[", ":"]):
            continue
        rel_type = tokens[c1 - 1].name
        if rel_type not in types:
            continue
        leftward = c1 >= 5 and texts(c1 - 5, 2) == ["<", "-"]
        k = c1 + 1 + (1 if leftward else 2)  # past `]-` or `]->`
        if texts(c1 + 1, k - c1 - 1) != (["-"] if leftward else ["-", ">"]):
            continue
        close = matching_close(tokens, k) if k < len(tokens) and tokens[k].is_punct("(") else None
        if close is None:
            continue
        node = tokens[k + 1 : close]
        bare = (
            not node
            or (len(node) == 2 and node[0].is_punct(":") and node[1].is_name)
            or (node[0].is_name and uses[node[0].name] == 1 and len(node) in (1, 3))
        )
        if not bare or (len(node) == 3 and not node[1].is_punct(":")):
            continue
        arrow = ["-", "[", ":", rel_type, "]", "-", ">"]
        if leftward:
            arrow = ["<", "-", "[", ":", rel_type, "]", "-"]
        if texts(close + 1, len(arrow)) != arrow:
            continue
        c2 = close + arrow.index("]") + 1
        return cypher[: tokens[c1].position] + cypher[tokens[c2].position :]
    return None


_WHO_IS = re.compile(r"^\W*(?:who|which)\s+(?:is|are|was|were)\s+(.*?)\W*$", re.IGNORECASE)
""""Who is Andrew Fuller?": asks about the one it names, not for others linked to them."""


def echoed_feedback(
    cypher: str, question: str, rows: Sequence[Sequence[object]], schema: GraphSchema
) -> str | None:
    """For a "who"/"which" question whose rows only repeat the values the question names:
    "Who works under Andrew Fuller, directly or indirectly?" answered by `MATCH (e:Employee)
    WHERE e.firstName = "Andrew" AND e.lastName = "Fuller" RETURN e.firstName, e.lastName` (a
    dev item, in one call: Andrew Fuller). The note names the relationships the named node's
    label has. None when a row holds anything else, or the question asks about the named one
    ("Who is Andrew Fuller?")."""
    if not ASKS_WHO_OR_WHICH.match(question) or not rows:
        return None
    named = [(label, v) for label, _prop, v in literal_filters(cypher) if said(v, question)]
    values = {v.casefold() for _label, v in named}
    asked = _WHO_IS.match(question)
    if asked and asked.group(1).casefold() in values | {" ".join(v for _l, v in named).casefold()}:
        return None
    cells = [cell for row in rows for cell in row]
    if not cells or not all(isinstance(c, str) and c.casefold() in values for c in cells):
        return None
    labels = {label for label, _v in named}
    links = [
        f"(:{r.start})-[:{r.type}]->(:{r.end})"
        for r in schema.relationships
        if labels & {r.start, r.end}
    ]
    shown = ", ".join(dict.fromkeys(str(c) for c in cells))
    text = (
        f"The rows only repeat {shown}, which the question itself names; it asks for others"
        " linked to them: match the named node and follow a relationship from it to the ones"
        " asked for, and return those"
    )
    if links:
        text += f" (the graph has {', '.join(dict.fromkeys(links[:4]))})"
    return text + "."


_AGAIN = re.compile(r"\b(?:again|repeat|same)\b", re.IGNORECASE)
_TRAILING_LIMIT = re.compile(r"\s+LIMIT\s+\d+\s*$", re.IGNORECASE)


def _same_statement(one: str, other: str) -> bool:
    """Whether two statements are the same but for spacing and a final row cap."""

    def bare(text: str) -> str:
        return " ".join(_TRAILING_LIMIT.sub("", text.strip()).split())

    return bare(one) == bare(other)


def repeated_feedback(
    cypher: str, question: str, previous_question: str, previous_cypher: str | None
) -> str | None:
    """For a follow-up answered by the very statement that answered the turn before it: "what
    do they eat?" after "which animals live in beaver ponds?" (a playground thread on a
    Yellowstone food web) came back as the same animals, by the same statement. The note
    says the question asks something the earlier one did not. None where the statements
    differ, the two questions are one, or the question asks for the same again."""
    if previous_cypher is None or not _same_statement(cypher, previous_cypher):
        return None
    if question.strip().casefold() == previous_question.strip().casefold() or _AGAIN.search(
        question
    ):
        return None
    return (
        f'This is the statement that answered the previous question ("{previous_question}"); '
        f'this question asks something else ("{question}"): follow the relationship or read '
        "the property it names from those rows' nodes, and return what it asks for."
    )


LEFT_OUT_SHOWN = 3
"""At most this many left-out values are named in one note."""


def left_out_values_feedback(
    cypher: str, question: str, hints: Sequence[tuple[str, str, str]], schema: GraphSchema
) -> str | None:
    """For rows from a statement that never uses a stored value the question says word for
    word: "Which questions tagged python did cybersam answer?" written without the python tag,
    "Which tags are used most often together with cypher?" counting every tag (trials on a
    graph nobody here wrote), "Who reports to the manager of the Search team?" without the
    team (a dev item). None when the statement uses each such value (in any case, or inside a
    longer literal), filters that value's label on something else (`c.code = 'PT'` for
    "Portugal"), reads the property that holds it (`i.status <> 'resolved'` for "still
    open"), reads a property whose name says the value ("coffee" of `s.coffee_bar = true`
    for "Which stores have a coffee bar?", a foodmart trial), or has a literal the question
    never says, which may stand for the value (`{iata: 'EDI'}` for "Edinburgh"), or where the
    value is the question's word for a label the statement matches (a category "Events" for
    "Which venue hosts the most events?": `words.value_said_as_label`)."""
    literals = [t.value.casefold() for t in tokenize(cypher) if t.kind == "string"]
    if any(not said(lit, question) for lit in literals):
        return None  # a literal the question never says may stand for one it does ('EDI')
    names = referenced_names(cypher)
    filtered = {label for label, _prop, _value in literal_filters(cypher)}
    read = {(names.variables.get(var), prop) for var, prop in names.accesses}
    read_words = {w for _var, prop in names.accesses for w in name_words(prop)}
    taken = set(names.variables)
    missing: list[str] = []
    for label, prop, value in hints:
        wanted = value.casefold().strip()
        if len(wanted) < 2 or not said(wanted, question):
            continue
        if any(wanted in lit for lit in literals) or label in filtered or (label, prop) in read:
            continue
        if name_words(value) <= read_words:
            continue  # said as a property's name: 'Coffee' in `s.coffee_bar = true`
        if value_said_as_label(value, question, schema, (label, prop)) in names.labels:
            continue  # said as the word for a label matched: "events" for `(e:Event)`
        if met_only_in_label_words([value], question, schema):
            continue  # said inside a label's name: "EC2" of "EC2 instance type"
        var = fresh_variable(label, taken)
        taken.add(var)
        pattern = f"({var}:{label} {{{quote_name_if_needed(prop)}: {literal(value)}}})"
        if pattern not in missing:
            missing.append(pattern)
    if not missing:
        return None
    shown = missing[:LEFT_OUT_SHOWN]
    them = "them" if len(shown) > 1 else "it"
    return (
        f"The question names {' and '.join(shown)}, which the statement never uses: "
        f"match {them} and keep only the rows linked to {them}."
    )
