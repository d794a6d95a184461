"""An in-memory ExampleStore for tests and for the CLI when no memory database is configured."""

from __future__ import annotations

import re
import threading
from dataclasses import replace

from memory.types import Example

_WORD = re.compile(r"[a-z0-9]+")


def normalise_question(question: str) -> str:
    """Case, whitespace and punctuation folded away: the key for exact reuse."""
    return " ".join(_WORD.findall(question.lower()))


class InMemoryExampleStore:
    """Examples kept in a list; lexical overlap for `similar`, normalised equality for `exact`."""

    def __init__(self, examples: list[Example] | None = None) -> None:
        self._lock = threading.Lock()
        self._examples: list[Example] = list(examples or [])

    @property
    def examples(self) -> list[Example]:
        """A snapshot of every example, candidates included."""
        with self._lock:
            return list(self._examples)

    def add(self, question: str, cypher: str, **fields: object) -> Example:
        """Add an active example (tests, seeds); returns it."""
        with self._lock:
            example = Example(id=len(self._examples) + 1, question=question, cypher=cypher)
            example = replace(example, **fields)  # type: ignore[arg-type]
            self._examples.append(example)
            return example

    def similar(
        self, question: str, k: int = 3, *, schema_fingerprint: str | None = None
    ) -> list[Example]:
        words = set(_WORD.findall(question.lower()))
        scored: list[tuple[float, int, Example]] = []
        for example in self.examples:
            if example.status != "active":
                continue
            other = set(_WORD.findall(example.question.lower()))
            overlap = len(words & other) / (len(other) or 1)
            scored.append((overlap, -example.id, example))
        scored.sort(key=lambda item: (item[0], item[1]), reverse=True)
        picked: list[Example] = []
        seen: set[str] = set()
        for _score, _id, example in scored:
            key = normalise_question(example.question)
            if key in seen:
                continue
            seen.add(key)
            picked.append(_flagged(example, schema_fingerprint))
            if len(picked) == k:
                break
        return picked

    def exact(self, question: str, *, schema_fingerprint: str | None = None) -> Example | None:
        key = normalise_question(question)
        for example in self.examples:
            trusted = example.source in ("admin", "seed") or example.up_votes >= 2
            if (
                example.status == "active"
                and trusted
                and normalise_question(example.question) == key
            ):
                return _flagged(example, schema_fingerprint)
        return None

    def add_candidate(self, question: str, cypher: str, schema_fingerprint: str | None) -> int:
        with self._lock:
            example = Example(
                id=len(self._examples) + 1,
                question=question,
                cypher=cypher,
                source="self_healed",
                status="candidate",
                schema_fingerprint=schema_fingerprint,
            )
            self._examples.append(example)
            return example.id

    def mark_used(self, ids: list[int]) -> None:
        with self._lock:
            self._examples = [
                replace(e, times_used=e.times_used + 1) if e.id in ids else e
                for e in self._examples
            ]


def _flagged(example: Example, fingerprint: str | None) -> Example:
    """`example` marked for re-validation when it was verified on another schema."""
    if fingerprint is None or example.schema_fingerprint == fingerprint:
        return example
    return replace(example, verified_on_current=False)
