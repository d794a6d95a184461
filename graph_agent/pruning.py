"""Pick the part of a large schema that matters for one question: matched labels + neighbours."""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence

from graph_agent.graphdb.protocol import GraphSchema
from guardrails import split_name, stem

_WORD = re.compile(r"[A-Za-z0-9]+")


def name_words(name: str) -> set[str]:
    """Stems of the words in an identifier: `ServiceLevel`, `DEPENDS_ON`, `created_at`."""
    words: list[str] = []
    for part in re.split(r"[_\s\-]+", name):
        words.extend(split_name(part))
    return {stem(w) for w in words if len(w) > 1}


_LITTLE_WORDS = """a an and are as at be by do does each for from has have how in is it list many me
    most much of on or per show the their there to was what when where which who with"""
_STOPWORDS = frozenset(_LITTLE_WORDS.split())


def question_words(text: str) -> set[str]:
    """Stems of the question's words, without the little words every question has."""
    return {stem(w) for w in _WORD.findall(text) if len(w) > 1 and w.lower() not in _STOPWORDS}


def relevant_labels(
    schema: GraphSchema,
    question: str,
    *,
    limit: int,
    boost: Iterable[str] = (),
) -> list[str] | None:
    """Labels to show for `question`, or None for the whole schema.

    None when the schema has at most `limit` labels or nothing matches. Otherwise the labels
    whose name, properties, relationship types or sample values share a word with the
    question (plus `boost`: labels of value hints and examples), then their neighbours,
    at most `limit` in all.
    """
    if len(schema.labels) <= limit:
        return None
    words = question_words(question)
    known = {label.name for label in schema.labels}
    score: dict[str, float] = {name: 0.0 for name in known}
    # A property word most labels share (`name`, `id`) says nothing about which label is meant.
    spread: dict[str, int] = {}
    for label in schema.labels:
        for word in {w for prop in label.properties for w in name_words(prop.name)}:
            spread[word] = spread.get(word, 0) + 1
    for label in schema.labels:
        values = {w for p in label.properties for v in p.sample_values for w in question_words(v)}
        for word in values:
            spread[f"={word}"] = spread.get(f"={word}", 0) + 1
    few = max(3, len(schema.labels) // 10)
    rare = {w for w, n in spread.items() if n <= few}
    for label in schema.labels:
        if name_words(label.name) & words:
            score[label.name] += 3
        for prop in label.properties:
            if name_words(prop.name) & words & rare:
                score[label.name] += 0.5
            if any({f"={w}" for w in question_words(v) & words} & rare for v in prop.sample_values):
                score[label.name] += 2
    related: set[str] = set()
    for rel in schema.relationships:
        if name_words(rel.type) & words:
            related |= {rel.start, rel.end}
    for name in related & known:
        score[name] += 1.5
    for name in boost:
        if name in score:
            score[name] += 3
    ranked = sorted((n for n, s in score.items() if s > 0), key=lambda n: (-score[n], n))
    if not ranked:
        return None
    # Named labels (or matched values) are the seeds; a relationship word or a property
    # alone is weak evidence, used to rank the seeds' neighbours.
    strong = [n for n in ranked if score[n] >= 2] or ranked
    picked = strong[:limit]
    chosen = set(picked)
    neighbours: dict[str, int] = {}
    for rel in schema.relationships:
        for here, there in ((rel.start, rel.end), (rel.end, rel.start)):
            if here in chosen and there not in chosen and there in known:
                neighbours[there] = neighbours.get(there, 0) + max(rel.count, 1)
    for name in sorted(neighbours, key=lambda n: (-score[n], -neighbours[n], n)):
        if len(picked) >= limit:
            break
        picked.append(name)
    return picked


def labels_in(names: Sequence[str], schema: GraphSchema) -> list[str]:
    """The names that are labels of `schema`, in order."""
    known = {label.name for label in schema.labels}
    return [n for n in names if n in known]
