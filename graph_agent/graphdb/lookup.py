"""Value lookup: which stored values resemble a phrase ("Postgres" → PostgreSQL, "sci-fi" → Science Fiction).

Identifier-like string properties (each label's display property, short strings of modest
cardinality; never prose such as descriptions or taglines) are read once into an in-memory
catalog and scored with a token and trigram similarity, gated by how much of the stored value
the phrase names; display properties with too many distinct values are searched per question
through an engine hook (full-text index or CONTAINS).
"""

from __future__ import annotations

import logging
import re
import time
import unicodedata
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any

from graph_agent.graphdb.protocol import GraphSchema, ValueMatch
from graph_agent.graphdb.schema import Read, display_property, quote_name

logger = logging.getLogger(__name__)

CATALOG_CAP = 2000
"""Distinct values per property kept in memory; above this the property is searched per query."""
MIN_SCORE = 0.5
WHOLE_SCORE = 0.97
"""How alike a window of schema words only must be: the value written whole ("Node.js")."""
_SKIP_PROPS = re.compile(r"(^id$|_id$|^email$|^url$|_at$|_date$|^date$|^slack_channel$)")
_STOPWORD_TEXT = """
    a about after all also an and any are as at be been before being between but by can
    could did do does done each else ever every few find first for from get give had has
    have how i in into is it its last least list made make makes many me more most much my
    name names no not of on only or other our out over per released same show shows so
    some such tell than that the their them then there these they this those to top under
    us use used uses using was we were what when where which while who whom whose why will
    with would
"""
_STOPWORDS = frozenset(_STOPWORD_TEXT.split())
"""Words that never make a value hint on their own (question words, common verbs)."""
_MEASURE_WORDS = frozenset(
    {"average", "mean", "median", "total", "sum", "count", "number", "maximum", "minimum",
     "overall", "percentage", "percent", "ratio", "amount"}
)  # fmt: skip
"""Words that ask for a figure: like the schema's own words, they name a value only whole
("What is the average watch count?" had hinted the film "Average Joe": a movie-graph trial)."""
_FREE_TEXT_TEXT = """
    abstract bio biography body caption comment comments content description details
    message notes note overview plot quote remark remarks review summary synopsis tagline
    text
"""
_FREE_TEXT_WORDS = frozenset(_FREE_TEXT_TEXT.split())
"""Last words of property names that hold prose, not identifiers (shortDescription, plot_summary)."""
FREE_TEXT_MEAN_WORDS = 5.0
"""Stored values longer than this on average (in words) are prose, not names."""
FREE_TEXT_MEAN_CHARS = 40.0
COMMON_SHARE = 0.02
COMMON_MIN = 20
DISTINCTIVE_MAX_VALUES = 3
"""A word held by at most this many stored values names them (a hint even without coverage)."""
DISTINCTIVE_MIN_CHARS = 4
DISTINCTIVE_SCORE = 0.55
"""Below a phrase that matches a value outright, above nothing."""
MIN_COVERAGE = 0.7
"""Share of a stored value's characters the phrase must account for: most of it, not one word."""
_NAME_PART = re.compile(r"[A-Z]+(?=[A-Z][a-z])|[A-Z]?[a-z]+|[A-Z]+|\d+")

Search = Callable[[str, str, Sequence[str], int], list[str]]
"""Engine hook: (label, property, tokens, limit) → stored values containing any token."""


_TOKEN = re.compile(r"[a-z0-9]+")
_DATE = re.compile(
    r"(?<![\w/.-])(?:\d{1,2}[/.-]\d{1,2}[/.-]\d{4}|\d{4}-\d{1,2}-\d{1,2})(?![\w/.-])"
)


def tokens(text: str) -> list[str]:
    """Lower-case words, accents folded: "Reventón" is "reventon", not "revent" and "n" (a
    trial on the POLE graph: "revent" was one typo from the question's "recent")."""
    lowered = text.lower()
    if not lowered.isascii():
        lowered = "".join(
            c for c in unicodedata.normalize("NFKD", lowered) if not unicodedata.combining(c)
        )
    return _TOKEN.findall(lowered)


@lru_cache(maxsize=65536)
def _trigrams(text: str) -> frozenset[str]:
    padded = f"  {text} "
    return frozenset(padded[i : i + 3] for i in range(len(padded) - 2))


def _abbreviates(short: Sequence[str], long: Sequence[str]) -> bool:
    """Each token of `short` starts the token of `long` at the same place (sci fi / science fiction)."""
    return len(short) == len(long) and all(
        b.startswith(a) and len(a) >= 2 for a, b in zip(short, long, strict=True)
    )


@dataclass(frozen=True)
class Words:
    """A text tokenised once for matching: a catalog holds one per stored value and a
    question one per word window, so comparing them re-reads no string."""

    tokens: tuple[str, ...]
    spaced: str
    """The tokens joined by single spaces ("sci fi")."""
    joined: str
    """The tokens run together ("scifi")."""
    token_set: frozenset[str]
    trigrams: frozenset[str]

    @classmethod
    def of(cls, text: str) -> Words:
        found = tuple(tokens(text))
        spaced = " ".join(found)
        return cls(found, spaced, "".join(found), frozenset(found), _trigrams(spaced))


def similarity(phrase: str, value: str) -> float:
    """How much `value` looks like `phrase`, from 0 to 1 (case, punctuation and spacing ignored)."""
    return _similarity(Words.of(phrase), Words.of(value))


def _similarity(phrase: Words, value: Words) -> float:
    p_tokens, v_tokens = phrase.tokens, value.tokens
    if not p_tokens or not v_tokens:
        return 0.0
    p, v = phrase.spaced, value.spaced
    if p == v:
        return 1.0
    joined_p, joined_v = phrase.joined, value.joined
    if joined_p == joined_v:
        return 0.97
    score = 0.0
    if len(p_tokens) == len(v_tokens) and len(joined_p) >= 4 and joined_v.startswith(joined_p):
        # "postgres" → "postgresql": a stem of the stored value.
        score = 0.75 + 0.2 * len(joined_p) / len(joined_v)
    # Either side shortening the other word by word ("sci fi" / "Science Fiction"), but not
    # a single short code: "RO" or "REG" start many words ("routes", "region") without
    # meaning them.
    if len(p_tokens) == len(v_tokens) and (
        _abbreviates(p_tokens, v_tokens)
        or (_abbreviates(v_tokens, p_tokens) and (len(v_tokens) > 1 or len(v_tokens[0]) >= 4))
    ):
        score = max(score, 0.85)
    if phrase.token_set <= value.token_set and len(p) >= 3:
        # Whole words of the phrase inside a longer value: "checkout" in "checkout-api".
        score = max(score, 0.6 + 0.3 * len(p) / len(v))
    a, b = phrase.trigrams, value.trigrams
    return max(score, 2 * len(a & b) / (len(a) + len(b)))


@lru_cache(maxsize=65536)
def _near(a: str, b: str) -> bool:
    """Two words that name the same thing: equal, a stem or abbreviation, or one typo apart."""
    if a == b:
        return True
    short, long = sorted((a, b), key=len)
    if long.startswith(short) and len(short) >= 2:
        return not _not_a_stem(short, long)
    if any(c.isdigit() for c in a + b) or len(short) < 4:
        return False  # SEV1 is not SEV2, and short words are too easy to reach
    return _edit_distance(a, b) <= (1 if len(long) < 8 else 2)


MONTHS = frozenset(
    [
        "january",
        "february",
        "march",
        "april",
        "may",
        "june",
        "july",
        "august",
        "september",
        "october",
        "november",
        "december",
    ]
)
"""Month names: one starts no longer name ("August" is no Augustine); capitalised for grammar."""


def _not_a_stem(short: str, long: str) -> bool:
    """`long` starts with `short` without naming the same thing: a comparative or superlative
    of it ("longest" is no surname Long), or a month's name inside a name ("August" is no
    officer Augustine). A trial on the POLE graph: both became filters the question never
    asked for."""
    rest = long[len(short) :]
    if len(rest) > 2 and rest[0] == short[-1]:
        rest = rest[1:]  # "biggest"
    return rest in ("r", "st", "er", "est") or short in MONTHS


def _edit_distance(a: str, b: str) -> int:
    previous = list(range(len(b) + 1))
    for i, ca in enumerate(a, start=1):
        current = [i]
        for j, cb in enumerate(b, start=1):
            current.append(min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + (ca != cb)))
        previous = current
    return previous[-1]


def coverage(phrase: str, value: str, common: frozenset[str] = frozenset()) -> float:
    """Share of the stored value's characters (stop words aside) that words of `phrase` name.

    "Keanu Reeves" for "keanu reeves" is 1.0; a long tagline that shares one word with the
    question is small, so it never becomes a hint. Words in `common` (held by many stored
    values, such as "Airport") count like stop words: "airport" does not name "Bol Airport".
    """
    skip = _STOPWORDS | common
    p_tokens = [t for t in tokens(phrase) if t not in skip]
    v_tokens = [t for t in tokens(value) if t not in skip] or tokens(value)
    total = sum(len(t) for t in v_tokens)
    if not p_tokens or not total:
        return 0.0
    joined_p = "".join(p_tokens)
    if joined_p == "".join(v_tokens):  # "node js" / "Node.js"
        return 1.0
    # A stored code of one short token ("REG", "NO") is named only by itself, not by every
    # word that starts with it ("region", "nonstop"); "Sci-Fi" still by "science fiction".
    loose = len(v_tokens) > 1 or len(v_tokens[0]) >= 4
    covered = sum(
        len(t) for t in v_tokens if any(p == t or (loose and _near(p, t)) for p in p_tokens)
    )
    return covered / total


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
    _rare: dict[str, list[int]] | None = field(default=None, init=False, repr=False)
    _common: frozenset[str] | None = field(default=None, init=False, repr=False)
    vocabulary: frozenset[str] = frozenset()
    """The words of the schema's label, property and relationship type names (`KNOWS`)."""
    _names: frozenset[str] | None = field(default=None, init=False, repr=False)
    """Words held by at most DISTINCTIVE_MAX_VALUES values → those entries (built on first use)."""
    _words: list[Words] | None = field(default=None, init=False, repr=False)
    """Each entry's value tokenised, in entry order (built on first use)."""
    _codes: dict[str, list[int]] | None = field(default=None, init=False, repr=False)
    """Code-like values, case-folded → their entries (built on first use)."""

    @classmethod
    def build(cls, read: Read, schema: GraphSchema) -> ValueCatalog:
        """Read the identifier-like string properties: each label's display property, and
        short strings of modest cardinality; never prose (descriptions, taglines)."""
        entries: list[CatalogEntry] = []
        large: list[tuple[str, str]] = []
        for label in schema.labels:
            display = display_property(label)
            for prop in label.properties:
                kinds = set(prop.types) - {"NULL"}
                if (_SKIP_PROPS.search(prop.name) and prop.name != display) or not kinds:
                    continue  # an `id` is a value only where nothing else names the node
                if prop.text_of:
                    continue  # a copy kept as text is read as its typed twin
                if prop.name != display and _prose_name(prop.name):
                    continue
                node, key = f"(n:{quote_name(label.name)})", f"n.{quote_name(prop.name)}"
                if kinds <= {"STRING"}:
                    rows = read(
                        f"MATCH {node} WHERE {key} IS NOT NULL "
                        f"RETURN DISTINCT {key} LIMIT {CATALOG_CAP + 1}"
                    )
                    values = [str(r[0]) for r in rows]
                    if prop.name != display and _prose(values):
                        logger.debug("value lookup skips %s.%s: prose", label.name, prop.name)
                        continue
                    if len(rows) > CATALOG_CAP:
                        # Searched per question; only names are worth it at that cardinality.
                        if prop.name == display:
                            large.append((label.name, prop.name))
                        continue
                    entries.extend(
                        CatalogEntry(label.name, prop.name, v, v, prop.name) for v in values
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
        names = [label.name for label in schema.labels]
        names += [p.name for label in schema.labels for p in label.properties]
        names += [r.type for r in schema.relationships]
        names += [p.name for r in schema.relationships for p in r.properties]
        vocabulary = frozenset(
            w for name in names for w in tokens(" ".join(_NAME_PART.findall(name)))
        )
        return cls(entries=entries, large=large, built_at=time.monotonic(), vocabulary=vocabulary)

    def _common_words(self) -> frozenset[str]:
        """Words many stored values share ("airport", "international"): they name no one
        value. Held by more than COMMON_SHARE of the values (and at least COMMON_MIN)."""
        if self._common is None:
            counts: dict[str, int] = {}
            for entry in self.entries:
                for word in set(tokens(entry.value)):
                    counts[word] = counts.get(word, 0) + 1
            bar = max(COMMON_MIN, COMMON_SHARE * len(self.entries))
            self._common = frozenset(w for w, n in counts.items() if n > bar)
        return self._common

    def _schema_words(self) -> frozenset[str]:
        """The schema's names as words (with plurals): the catalog's labels and properties,
        every label, property, relationship type and relationship property the schema has
        ("Which person knows the most people?" had hinted the surname Peterson for "person
        knows": a POLE trial), and the words that ask for a figure (`_MEASURE_WORDS`)."""
        if self._names is None:
            words = {w for e in self.entries for w in tokens(f"{e.label} {e.property}")}
            words |= self.vocabulary | _MEASURE_WORDS
            words |= {w + "s" for w in words} | {w[:-1] + "ies" for w in words if w.endswith("y")}
            self._names = frozenset(words)
        return self._names

    def _distinctive_hits(self, text: str) -> list[CatalogEntry]:
        """Values holding a word of the question that few values hold: "Gatwick" for "London
        Gatwick", "Schipol" (one typo) for "Amsterdam Airport Schiphol". Coverage alone
        drops them (one word of three), yet such a word names one thing, unlike a word many
        values share ("London", "Airport")."""
        if self._rare is None:
            index: dict[str, list[int]] = {}
            for n, entry in enumerate(self.entries):
                for word in dict.fromkeys(tokens(entry.value)):
                    if len(word) >= DISTINCTIVE_MIN_CHARS and word not in _STOPWORDS:
                        index.setdefault(word, []).append(n)
            self._rare = {w: ns for w, ns in index.items() if len(ns) <= DISTINCTIVE_MAX_VALUES}
        # "region" asks about the Region label, not about "Region of Murcia Airport".
        names = self._schema_words()
        lower = _lower_case_words(text)
        said = tokens(text)
        hits: list[CatalogEntry] = []
        for word in dict.fromkeys(said):
            if len(word) < DISTINCTIVE_MIN_CHARS or word in _STOPWORDS or word in names:
                continue
            found = self._rare.get(word)
            if word in lower:
                # A word in lower case is a word ("the largest cast" is no "Cast Away"), unless
                # a value holds it as written and it stands beside that value's label as a kind
                # of it: "the antithrombotic mechanism of action" ('Antithrombotic:Heparin and
                # derivatives', a trial on a drug classification), "posologies are injectable".
                beside = [
                    n for n in found or [] if _beside_label(word, self.entries[n].label, said)
                ]
                hits.extend(self.entries[n] for n in beside)
                continue
            if found is None:
                # One typo away, same first two letters (cheap to scan, rarely ambiguous).
                near = [w for w in self._rare if w[:2] == word[:2] and _near(word, w)]
                found = self._rare[near[0]] if len(near) == 1 else []
            hits.extend(self.entries[n] for n in found)
        return hits

    def _code_hits(self, text: str) -> list[CatalogEntry]:
        """Values the question writes out whole that are codes ('DC1-RCK-2-1', 'xs-1/1/1',
        'SEV-2'): their parts are shared by many values (every rack and machine name starts
        'DC1-RCK-'), so word similarity finds none of them, yet written whole they name one."""
        if self._codes is None:
            codes: dict[str, list[int]] = {}
            for n, entry in enumerate(self.entries):
                if is_code(entry.value):
                    codes.setdefault(entry.value.casefold(), []).append(n)
            self._codes = codes
        hits: list[CatalogEntry] = []
        for word in _CODE_WORD.findall(text):
            word = word.rstrip(".")
            hits.extend(self.entries[n] for n in self._codes.get(word.casefold(), []))
        return hits

    def match(self, text: str, limit: int, search: Search | None = None) -> list[ValueMatch]:
        # A date is no run of numbers: "24/08/2017" had hinted a call 24 long, a call at 08:24
        # and the car model 240SX (a POLE trial).
        text = _DATE.sub(" ", text)
        windows = [(window, Words.of(window)) for window in phrases(text)]
        if not windows:
            return []
        common = self._common_words()
        if self._words is None:
            self._words = [Words.of(entry.value) for entry in self.entries]
        best: dict[tuple[str, str, str], float] = {}

        # A window of the schema's own words ("type", "crime") names a value only whole: the
        # question's "type of crime" is no Vehicle model "S-Type" nor the type "Other crime".
        # So does a number: the house number in "178 Polding Street" is no call at "17:17".
        names = self._schema_words()
        schema_only = {
            window
            for window, words in windows
            if words.token_set <= names or all(t.isdigit() for t in words.tokens)
        }

        def consider(label: str, prop: str, value: str, candidate: str, tokenised: Words) -> None:
            # A window counts only when it is like the value and names most of it (coverage,
            # the dearer test, only for windows that are alike at all).
            score = 0.0
            for window, window_words in windows:
                alike = _similarity(window_words, tokenised)
                if (
                    alike > score
                    and alike >= (WHOLE_SCORE if window in schema_only else MIN_SCORE)
                    and coverage(window, candidate, common) >= MIN_COVERAGE
                ):
                    score = alike
            if score >= MIN_SCORE:
                key = (label, prop, value)
                best[key] = max(best.get(key, 0.0), score)

        for entry, tokenised in zip(self.entries, self._words, strict=True):
            consider(entry.label, entry.canonical_property, entry.canonical, entry.value, tokenised)
        for entry in self._distinctive_hits(text):
            key = (entry.label, entry.canonical_property, entry.canonical)
            best[key] = max(best.get(key, 0.0), DISTINCTIVE_SCORE)
        for entry in self._code_hits(text):
            best[(entry.label, entry.canonical_property, entry.canonical)] = 1.0
        if search is not None and self.large:
            words = [w for w in dict.fromkeys(tokens(text)) if w not in _STOPWORDS and len(w) >= 3]
            for label, prop in self.large if words else []:
                for value in search(label, prop, words, 50):
                    consider(label, prop, value, value, Words.of(value))
        ranked = sorted(best.items(), key=lambda kv: (-kv[1], len(kv[0][2]), kv[0]))
        return [
            ValueMatch(label=label, property=prop, value=value, score=round(score, 3))
            for (label, prop, value), score in ranked[:limit]
        ]


_CODE_WORD = re.compile(r"[^\s,;:!?\"'()\[\]{}]+")
"""A run of characters a code may hold (a question's words with their hyphens and slashes)."""


def _lower_case_words(text: str) -> frozenset[str]:
    """The words a question writes in lower case where it writes with capitals (its first
    word, or a name): "cast" in "Which movie has the largest cast?" is a word, not the film
    "Cast Away" (a Movies trial), while "Split" in "How many routes leave Split?" may be the
    airport. Nothing for a question in lower case throughout ("routes out of gatwick")."""
    words = re.findall(r"[A-Za-z0-9]+", text)
    capitalised = {w.casefold() for w in words if w[0].isupper()}
    if not capitalised:
        return frozenset()
    return frozenset(w for w in words[1:] if w.islower() and w not in capitalised)


_LINKING_VERBS = frozenset({"is", "are", "was", "were"})


def _beside_label(word: str, label: str, said: Sequence[str]) -> bool:
    """Whether the question's words `said` put `word` right before the words of `label`
    ("antithrombotic mechanisms of action") or right after them and a linking verb
    ("posologies are injectable"), plurals allowed."""
    parts = tokens(" ".join(_NAME_PART.findall(label)))
    size = len(parts)
    for at in range(len(said) - size + 1):
        if not all(_plural_of(said[at + k], part) for k, part in enumerate(parts)):
            continue
        after = said[at + size : at + size + 2]
        if (at and said[at - 1] == word) or (
            len(after) == 2 and after[0] in _LINKING_VERBS and after[1] == word
        ):
            return True
    return False


def _plural_of(said: str, word: str) -> bool:
    """`said` is `word` or its plural ("posologies" of "posology")."""
    return said in (word, word + "s", word + "es") or (
        word.endswith("y") and said == word[:-1] + "ies"
    )


def is_code(value: str) -> bool:
    """A code rather than a name: one word of letters and digits joined by `-`, `_`, `/` or
    `.`, with a digit in it ('DC1-RCK-2-1', 'xs-1/1/1', 'SEV-2'; not 'Jean-Luc', '2024')."""
    return bool(
        re.fullmatch(r"[A-Za-z0-9]+(?:[-_/.][A-Za-z0-9]+)+", value)
        and re.search(r"\d", value)
        and re.search(r"[A-Za-z]", value)
    )


def _prose_name(name: str) -> bool:
    """A property named like prose: its last word is description, tagline, summary, bio…"""
    parts = _NAME_PART.findall(name) or [name]
    return parts[-1].lower() in _FREE_TEXT_WORDS


def _prose(values: Sequence[str]) -> bool:
    """Stored values that read as sentences, not names (measured on their lengths)."""
    if not values:
        return False
    words = sum(len(v.split()) for v in values) / len(values)
    chars = sum(len(v) for v in values) / len(values)
    return words > FREE_TEXT_MEAN_WORDS or chars > FREE_TEXT_MEAN_CHARS


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
