"""Retrieval: examples that cover the question's shape, not only its words."""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

from graph_agent.graphdb.protocol import (
    GraphSchema,
)
from graph_agent.pruning import name_words, question_words
from graph_agent.schema_examples.wording import plural_noun, singular
from guardrails import referenced_names
from memory.types import Example

# --- retrieval: examples that cover the question's shape, not only its words ---------------------

Cue = Literal["top", "negation", "multi_hop", "count", "range"]
_QUESTION_CUES: dict[Cue, re.Pattern[str]] = {
    "top": re.compile(
        r"\b(most|top|highest|lowest|least|largest|biggest|smallest|fewest|maximum|minimum)\b",
        re.IGNORECASE,
    ),
    "negation": re.compile(
        r"\b(no|without|never|none|nobody|nothing|not|lacks?|lacking|missing)\b|n't\b",
        re.IGNORECASE,
    ),
    "multi_hop": re.compile(r"\b(both|also|same|other|others|together)\b|\bco-\w+", re.IGNORECASE),
    "count": re.compile(r"\bhow many\b|\bnumber of\b|\bcount\b", re.IGNORECASE),
    "range": re.compile(
        r"\b(above|below|over|under|more than|less than|greater than|fewer than|at least|"
        r"at most|before|after|between|since|older than|newer than)\b",
        re.IGNORECASE,
    ),
}
# Words the generated questions of each shape use, so lexical retrieval finds them too.
_CUE_WORDS: dict[str, str] = {
    "top": "most highest",
    "negation": "without",
    "multi_hop": "both same other also",
    "range": "above between",
}
_TOP = re.compile(r"\bORDER\s+BY\b.*\bLIMIT\s+\d+", re.IGNORECASE | re.DOTALL)
_NEGATION = re.compile(r"\bNOT\s*(\(|EXISTS\b)|\bIS\s+NULL\b", re.IGNORECASE)
_HOP = re.compile(r"-\[|-->|<--")
_VAR_LENGTH = re.compile(r"\[[^\]]*\*[^\]]*\]")
_COUNT = re.compile(r"\bcount\s*\(", re.IGNORECASE)
_RANGE = re.compile(r"(?<![<\-])[<>]=?\s*(?:-?\d|'|\"|date|datetime|localdatetime)", re.IGNORECASE)


def question_cues(question: str, *, relationships: int = 0, entities: int = 0) -> frozenset[str]:
    """The shapes a question's words point to: most/top → top, no/without → negation,
    both/also/same or two relationships or two named entities → multi_hop, how many → count,
    above/between → range."""
    cues = {cue for cue, pattern in _QUESTION_CUES.items() if pattern.search(question)}
    if relationships >= 2 or entities >= 2:
        cues.add("multi_hop")
    return frozenset(cues)


def cypher_cues(cypher: str) -> frozenset[str]:
    """The shapes a query has, read from its text (works for taught examples too)."""
    cues: set[str] = set()
    if _TOP.search(cypher):
        cues.add("top")
    if _NEGATION.search(cypher):
        cues.add("negation")
    if len(_HOP.findall(cypher)) >= 2 or _VAR_LENGTH.search(cypher):
        cues.add("multi_hop")
    if _COUNT.search(cypher) and "top" not in cues:
        cues.add("count")
    if _RANGE.search(cypher):
        cues.add("range")
    return frozenset(cues)


@dataclass(frozen=True)
class Focus:
    """What a question points at: labels, relationship types and shape cues."""

    labels: frozenset[str] = frozenset()
    rel_types: frozenset[str] = frozenset()
    cues: frozenset[str] = frozenset()


def question_focus(question: str, schema: GraphSchema, hint_labels: Sequence[str] = ()) -> Focus:
    """Labels named in the question (singular or plural) or holding its value hints,
    relationship types whose words it uses, and its shape cues."""
    asked = question_words(question)
    known = {label.name for label in schema.labels}
    labels = {
        label.name
        for label in schema.labels
        if (name_words(label.name) | name_words(plural_noun(label.name))) & asked
    }
    labels |= set(hint_labels) & known
    rel_types = {rel.type for rel in schema.relationships if name_words(rel.type) & asked}
    cues = question_cues(question, relationships=len(rel_types), entities=len(hint_labels))
    return Focus(frozenset(labels), frozenset(rel_types), cues)


def retrieval_query(question: str, focus: Focus) -> str:
    """The question plus its labels' nouns and its shapes' words, for the example store."""
    extra = [singular(label) + " " + plural_noun(label) for label in sorted(focus.labels)]
    extra += [_CUE_WORDS[cue] for cue in sorted(focus.cues) if cue in _CUE_WORDS]
    return " ".join([question, *extra])


def rank_examples(
    examples: Sequence[Example], question: str, focus: Focus, k: int
) -> list[Example]:
    """The k examples that best cover the question: shared words, the same labels and
    relationship types, the same shape. Ties go to taught examples over schema-generated
    ones (people vouched for those), then to the store's own order."""
    asked = question_words(question)
    scored: list[tuple[float, bool, int, Example]] = []
    for index, example in enumerate(examples):
        names = referenced_names(example.cypher)
        lexical = len(asked & question_words(example.question)) / max(1, len(asked))
        covered = len(names.labels & focus.labels) / max(1, len(focus.labels))
        score = lexical + 0.5 * covered
        if names.rel_types & focus.rel_types:
            score += 0.3
        if cypher_cues(example.cypher) & focus.cues:
            score += 0.6
        scored.append((-round(score, 3), example.source == "schema", index, example))
    scored.sort(key=lambda item: item[:3])
    return [item[3] for item in scored[: max(0, k)]]
