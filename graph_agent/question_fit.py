"""Does a statement fit the question's own words? Checks that need the question, not only the
schema: what it counts, and a number it compares with a property."""

from __future__ import annotations

import re

from graph_agent.graphdb.protocol import GraphSchema
from graph_agent.pruning import name_words
from graph_agent.statement import fresh_variable
from graph_agent.words import article, plural
from guardrails import referenced_names, split_name, stem

_COUNTED = re.compile(
    r"\b(?:how\s+many|number\s+of|(?:the\s+)?(?:most|fewest|least))\s+"
    r"([A-Za-z][\w-]*)(?:\s+([A-Za-z][\w-]*))?",
    re.IGNORECASE,
)
_COUNT_OF = re.compile(r"\bcount\s*\(\s*(?:DISTINCT\s+)?(\w+)\s*\)", re.IGNORECASE)


def counted_label(question: str, schema: GraphSchema) -> str | None:
    """The label whose nodes the question counts or ranks by: "How many machines…", "the
    most racks", "the number of machine types" (Type, the last noun of the compound)."""
    found = _COUNTED.search(question)
    if found is None:
        return None
    for word in (found.group(2), found.group(1)):
        if word and (label := _label_named(word, schema)) is not None:
            return label
    return None


def _label_named(word: str, schema: GraphSchema) -> str | None:
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
