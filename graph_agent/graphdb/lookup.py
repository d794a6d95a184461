"""Value lookup: which stored values resemble a phrase ("Postgres" → PostgreSQL, "sci-fi" → Science Fiction).

Small string properties are read once into an in-memory catalog and scored with a token and
trigram similarity; properties with too many distinct values are searched per question
through an engine hook (full-text index or CONTAINS).
"""

from __future__ import annotations

import logging
import re
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

from graph_agent.graphdb.protocol import GraphSchema, ValueMatch
from graph_agent.graphdb.schema import Read, quote_name

logger = logging.getLogger(__name__)

CATALOG_CAP = 2000
"""Distinct values per property kept in memory; above this the property is searched per query."""
MIN_SCORE = 0.5
_SKIP_PROPS = re.compile(r"(^id$|_id$|^email$|^url$|_at$|_date$|^date$|^slack_channel$)")
_DISPLAY_PROPS = ("name", "title", "key")
_STOPWORDS = frozenset(
    [
        "a",
        "an",
        "and",
        "any",
        "are",
        "as",
        "at",
        "be",
        "by",
        "can",
        "do",
        "does",
        "for",
        "from",
        "has",
        "have",
        "how",
        "i",
        "in",
        "is",
        "it",
        "its",
        "list",
        "me",
        "my",
        "of",
        "on",
        "or",
        "our",
        "show",
        "the",
        "their",
        "them",
        "there",
        "these",
        "this",
        "to",
        "us",
        "use",
        "uses",
        "used",
        "using",
        "was",
        "we",
        "what",
        "when",
        "where",
        "which",
        "who",
        "whom",
        "whose",
        "why",
        "with",
        "all",
        "many",
        "much",
        "most",
        "more",
        "tell",
        "give",
        "find",
        "get",
    ]
)

Search = Callable[[str, str, Sequence[str], int], list[str]]
"""Engine hook: (label, property, tokens, limit) → stored values containing any token."""


def tokens(text: str) -> list[str]:
    return re.findall(r"[a-z0-9]+", text.lower())


@lru_cache(maxsize=65536)
def _trigrams(text: str) -> frozenset[str]:
    padded = f"  {text} "
    return frozenset(padded[i : i + 3] for i in range(len(padded) - 2))


def _abbreviates(short: Sequence[str], long: Sequence[str]) -> bool:
    """Each token of `short` starts the token of `long` at the same place (sci fi / science fiction)."""
    return len(short) == len(long) and all(
        b.startswith(a) and len(a) >= 2 for a, b in zip(short, long, strict=True)
    )


def similarity(phrase: str, value: str) -> float:
    """How much `value` looks like `phrase`, from 0 to 1 (case, punctuation and spacing ignored)."""
    p_tokens, v_tokens = tokens(phrase), tokens(value)
    if not p_tokens or not v_tokens:
        return 0.0
    p, v = " ".join(p_tokens), " ".join(v_tokens)
    if p == v:
        return 1.0
    if p.replace(" ", "") == v.replace(" ", ""):
        return 0.97
    scores = [0.0]
    joined_p, joined_v = p.replace(" ", ""), v.replace(" ", "")
    if len(p_tokens) == len(v_tokens) and len(joined_p) >= 4 and joined_v.startswith(joined_p):
        # "postgres" → "postgresql": a stem of the stored value.
        scores.append(0.75 + 0.2 * len(joined_p) / len(joined_v))
    if _abbreviates(p_tokens, v_tokens) or _abbreviates(v_tokens, p_tokens):
        scores.append(0.85)
    if set(p_tokens) <= set(v_tokens) and len(p) >= 3:
        # Whole words of the phrase inside a longer value: "checkout" in "checkout-api".
        scores.append(0.6 + 0.3 * len(p) / len(v))
    a, b = _trigrams(p), _trigrams(v)
    scores.append(2 * len(a & b) / (len(a) + len(b)))
    return max(scores)


def phrases(text: str, max_words: int = 4) -> list[str]:
    """The word windows of `text` worth matching (not made only of stopwords)."""
    words = tokens(text)
    found: list[str] = []
    for size in range(1, max_words + 1):
        for start in range(len(words) - size + 1):
            window = words[start : start + size]
            if all(w in _STOPWORDS for w in window) or (size == 1 and len(window[0]) < 2):
                continue
            if window[0] in _STOPWORDS or window[-1] in _STOPWORDS:
                continue
            found.append(" ".join(window))
    return list(dict.fromkeys(found))


@dataclass(frozen=True)
class CatalogEntry:
    label: str
    property: str
    value: str
    """What the phrase is compared with (may be an alias)."""
    canonical: str
    """What to report: the value itself, or the node's name when `value` is an alias."""
    canonical_property: str


@dataclass
class ValueCatalog:
    """Distinct values of a graph's small string properties, plus the properties too big to hold."""

    entries: list[CatalogEntry]
    large: list[tuple[str, str]]
    built_at: float

    @classmethod
    def build(cls, read: Read, schema: GraphSchema) -> ValueCatalog:
        entries: list[CatalogEntry] = []
        large: list[tuple[str, str]] = []
        for label in schema.labels:
            names = {p.name for p in label.properties}
            display = next((d for d in _DISPLAY_PROPS if d in names), None)
            for prop in label.properties:
                kinds = set(prop.types) - {"NULL"}
                if _SKIP_PROPS.search(prop.name) or not kinds:
                    continue
                node, key = f"(n:{quote_name(label.name)})", f"n.{quote_name(prop.name)}"
                if kinds <= {"STRING"}:
                    rows = read(
                        f"MATCH {node} WHERE {key} IS NOT NULL "
                        f"RETURN DISTINCT {key} LIMIT {CATALOG_CAP + 1}"
                    )
                    if len(rows) > CATALOG_CAP:
                        large.append((label.name, prop.name))
                        continue
                    entries.extend(
                        CatalogEntry(label.name, prop.name, str(r[0]), str(r[0]), prop.name)
                        for r in rows
                    )
                elif kinds <= {"LIST<STRING>", "LIST"} and display and display != prop.name:
                    rows = read(
                        f"MATCH {node} WHERE {key} IS NOT NULL "
                        f"RETURN n.{quote_name(display)}, {key} LIMIT {CATALOG_CAP + 1}"
                    )
                    for canonical, values in rows[:CATALOG_CAP]:
                        entries.extend(
                            CatalogEntry(label.name, prop.name, str(v), str(canonical), display)
                            for v in values or []
                            if isinstance(v, str) and canonical is not None
                        )
        logger.debug("Value catalog: %d values, %d large properties", len(entries), len(large))
        return cls(entries=entries, large=large, built_at=time.monotonic())

    def match(self, text: str, limit: int, search: Search | None = None) -> list[ValueMatch]:
        windows = phrases(text) or [text]
        best: dict[tuple[str, str, str], float] = {}

        def consider(label: str, prop: str, value: str, candidate: str) -> None:
            score = max(similarity(w, candidate) for w in windows)
            if score >= MIN_SCORE:
                key = (label, prop, value)
                best[key] = max(best.get(key, 0.0), score)

        for entry in self.entries:
            consider(entry.label, entry.canonical_property, entry.canonical, entry.value)
        if search is not None and self.large:
            words = [w for w in dict.fromkeys(tokens(text)) if w not in _STOPWORDS and len(w) >= 3]
            for label, prop in self.large if words else []:
                for value in search(label, prop, words, 50):
                    consider(label, prop, value, value)
        ranked = sorted(best.items(), key=lambda kv: (-kv[1], len(kv[0][2]), kv[0]))
        return [
            ValueMatch(label=label, property=prop, value=value, score=round(score, 3))
            for (label, prop, value), score in ranked[:limit]
        ]


def contains_search(read_with_params: Callable[[str, dict[str, Any]], list[list[Any]]]) -> Search:
    """A Search hook through case-insensitive CONTAINS, for engines without a full-text index."""

    def search(label: str, prop: str, words: Sequence[str], limit: int) -> list[str]:
        key = f"n.{quote_name(prop)}"
        rows = read_with_params(
            f"MATCH (n:{quote_name(label)}) WHERE {key} IS NOT NULL "
            f"AND any(w IN $words WHERE toLower({key}) CONTAINS w) "
            f"RETURN DISTINCT {key} LIMIT {int(limit)}",
            {"words": list(words)},
        )
        return [str(r[0]) for r in rows]

    return search
