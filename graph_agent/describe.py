"""What a graph holds, in words: the description refusals quote and the example questions."""

from __future__ import annotations

import logging

from graph_agent.graphdb.protocol import GraphSchema
from graph_agent.words import plural, singular
from memory.types import ExampleStore

logger = logging.getLogger(__name__)


def describe(schema: GraphSchema, setting: str | None = None) -> str:
    """What the graph holds, in a sentence or two (the GRAPH_DESCRIPTION setting wins)."""
    if setting:
        return setting
    if not schema.labels:
        return "an empty graph."
    labels = sorted(schema.labels, key=lambda label: -label.count)[:12]
    things = ", ".join(plural(label.name) for label in labels)
    if len(schema.labels) > len(labels):
        things += f" and {len(schema.labels) - len(labels)} more kinds of things"
    rel_types: list[str] = []
    for rel in sorted(schema.relationships, key=lambda r: -r.count):
        phrase = rel.type.lower().replace("_", " ")
        if phrase not in rel_types:
            rel_types.append(phrase)
    how = ", ".join(rel_types[:10])
    return f"{things}" + (f", and how they relate ({how})." if how else ".")


def suggestions(
    schema: GraphSchema, examples: ExampleStore, n: int = 3, fingerprint: str | None = None
) -> list[str]:
    """Example questions: taught examples first, then questions derived from the schema
    (`fingerprint`: the schema's, passed on to the example store)."""
    picked: list[str] = []
    try:
        topic = " ".join(label.name for label in schema.labels)
        picked = [e.question for e in examples.similar(topic, n, schema_fingerprint=fingerprint)]
    except Exception:  # suggestions are decoration; never fail a refusal over them
        logger.warning("example store unavailable for suggestions", exc_info=True)
    for question in schema_questions(schema):
        if len(picked) >= n:
            break
        if question not in picked:
            picked.append(question)
    return picked[:n]


def schema_questions(schema: GraphSchema) -> list[str]:
    """Questions any graph of this shape can answer (for a graph with no taught examples)."""
    questions: list[str] = []
    for rel in sorted(schema.relationships, key=lambda r: -r.count)[:2]:
        if rel.start != rel.end:
            questions.append(f"Which {singular(rel.end)} has the most {plural(rel.start)}?")
    for label in sorted(schema.labels, key=lambda item: -item.count):
        prop = next((p for p in label.properties if p.sample_values and p.name != "name"), None)
        if prop is not None:
            questions.append(f"How many {plural(label.name)} are there per {prop.name}?")
            break
    if schema.labels:
        biggest = max(schema.labels, key=lambda item: item.count)
        questions.append(f"How many {plural(biggest.name)} are there?")
    return questions
