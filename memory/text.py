"""Question text helpers: the normalisation used for exact reuse, and FTS5 query building."""

from __future__ import annotations

import re
import unicodedata

_PUNCT = re.compile(r"[^\w\s]|_", re.UNICODE)
_SPACE = re.compile(r"\s+")
_WORD = re.compile(r"\w+", re.UNICODE)

# Words too common in questions to say anything about which example fits; dropping them keeps
# the FTS5 OR-query small (fast at 100k rows) and BM25 focused on the content words.
STOPWORDS = frozenset(
    [
        "a",
        "an",
        "the",
        "of",
        "in",
        "on",
        "at",
        "to",
        "for",
        "from",
        "by",
        "with",
        "and",
        "or",
        "is",
        "are",
        "was",
        "were",
        "be",
        "been",
        "do",
        "does",
        "did",
        "what",
        "which",
        "who",
        "whom",
        "whose",
        "when",
        "where",
        "why",
        "how",
        "many",
        "much",
        "me",
        "my",
        "i",
        "you",
        "your",
        "we",
        "our",
        "us",
        "it",
        "its",
        "this",
        "that",
        "these",
        "those",
        "there",
        "their",
        "them",
        "they",
        "show",
        "list",
        "give",
        "tell",
        "find",
        "get",
        "all",
        "any",
        "some",
        "please",
        "can",
        "could",
        "would",
        "should",
        "has",
        "have",
        "had",
        "not",
        "no",
        "than",
        "then",
        "as",
        "into",
        "about",
        "per",
        "each",
    ]
)


def normalise_question(text: str) -> str:
    """Case-folded, punctuation-free, single-spaced form of `text`, for exact-match reuse.

    Punctuation becomes a space (so "Tom-Hanks" equals "tom hanks") and digits are kept as
    they are, so "after 2000" never equals "after 2001".
    """
    folded = unicodedata.normalize("NFKC", text).casefold()
    return _SPACE.sub(" ", _PUNCT.sub(" ", folded)).strip()


def content_words(text: str) -> list[str]:
    """The distinct non-stopword words of `text`, in order of first appearance."""
    seen: dict[str, None] = {}
    for word in _WORD.findall(normalise_question(text)):
        if word not in STOPWORDS:
            seen.setdefault(word, None)
    return list(seen)


def search_words(text: str) -> list[str]:
    """The words lexical retrieval looks for: content words, else every word (at most 32)."""
    return (content_words(text) or _WORD.findall(normalise_question(text)))[:32]


def fts_query(text: str) -> str | None:
    """An FTS5 MATCH expression OR-ing the content words of `text`; None when there are none."""
    words = search_words(text)
    if not words:
        return None
    # Quoting each word makes FTS5 treat it as a plain token, never as syntax (AND, NEAR, *).
    return " OR ".join('"' + w.replace('"', '""') + '"' for w in words)


def token_set(text: str) -> frozenset[str]:
    """Content words as a set, for near-duplicate checks."""
    return frozenset(content_words(text))


def jaccard(a: frozenset[str], b: frozenset[str]) -> float:
    """Overlap of two word sets, 0..1 (1.0 when both are empty)."""
    if not a and not b:
        return 1.0
    return len(a & b) / len(a | b)


def normalise_cypher(cypher: str) -> str:
    """Whitespace-collapsed Cypher without a trailing semicolon, to recognise the same query."""
    return _SPACE.sub(" ", cypher).strip().rstrip(";").strip()
