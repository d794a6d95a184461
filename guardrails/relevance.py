"""Does a question touch the graph at all? A check on words, made before any model is asked.

A small model's guard calls nearly everything in scope ("a recipe for gnocchi", "the prime
minister of Ireland"), and then the generator spends three attempts on a question the graph
cannot answer. This check needs no model: it compares the question's content words with the
graph's own vocabulary (label, relationship type and property names, sampled category values)
and with the stored values the value lookup found for the question. It is deliberately one-sided:
it only ever declines a question about a general-knowledge topic (the weather, a recipe, a joke)
that the graph has no word for; everything else goes on to the model's guard.

Why not also decline questions that name nothing of the graph? Measured on the three eval sets,
that rule declined 8 of ~150 answerable questions that use synonyms or misspellings ("Which
drinks do we sell?" for a Beverages category, "repos written in Golang"), which is worse than a
slow honest failure. The words the graph lacks are still reported (`foreign`), for the log and
for the "the graph has no data on …" answer after failed attempts.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from difflib import SequenceMatcher

from guardrails.words import stem

_WORD = re.compile(r"[A-Za-z][A-Za-z'’]*")

_STOP_TEXT = """
    a an the this that these those there here it its it's they them their we us our you your i me my
    he him his she her hers who whom whose which what when where why how whats whos
    is are was were be been being am do does did done doing have has had having will would shall
    should can could may might must
    of in on at to from by for with without about into onto over under between among through
    during before after above below up down out off than then as like per via within across
    and or but nor not no yes if so also only just both either neither each every all any some
    none many much more most less least few fewer several other others another such same own
    one ones two three first last next previous top bottom
    show list give tell find get name names count number numbers total amount sum average
    please thanks thank kindly let lets want need know see look display return
    everything anything something nothing everyone anyone someone nobody
"""
STOP_WORDS = frozenset(_STOP_TEXT.split())
"""Words that say how to ask, not what about; they never decide whether a question touches the graph."""

_GRAPH_TEXT = """
    graph graphs node nodes relationship relationships edge edges label labels property
    properties schema data database record records entry entries kind kinds type types
"""
GRAPH_WORDS = frozenset(_GRAPH_TEXT.split())
"""Questions about the graph itself ("how many nodes are there?") are always about the graph."""

_TOPIC_TEXT = """
    weather forecast rain raining snow snowing sunny temperature
    recipe recipes cook cooking bake baking
    joke jokes poem poems song songs lyrics story stories haiku
    horoscope zodiac
    bitcoin crypto cryptocurrency
    news headline headlines
    password passwords login
    translate translation
    capital president minister king queen
    fifa olympics
"""
GENERAL_TOPICS = frozenset(_TOPIC_TEXT.split())
"""General-knowledge and chit-chat topics. They decline a question only when the graph itself
has no such word: a weather graph's "forecast" or a Country's "capital" property keeps it."""


_QUERYING = re.compile(r"\b(?:cypher|query|queries)\b", re.IGNORECASE)


def name_words(name: str) -> list[str]:
    """The words of a schema name: `unitsInStock` → units, in, stock; `ACTED_IN` → acted, in."""
    spaced = re.sub(r"(?<=[a-z0-9])(?=[A-Z])", " ", name)
    return [w for w in re.split(r"[^A-Za-z]+", spaced) if w]


def content_words(question: str) -> list[str]:
    """The question's words that say what it is about (stop words and numbers left out)."""
    return [w for w in _WORD.findall(question) if w.lower().strip("'’") not in STOP_WORDS]


@dataclass(frozen=True)
class Relevance:
    """Which words of a question the graph knows, and whether to decline it outright."""

    touching: tuple[str, ...]
    """Content words that match the graph's vocabulary or a stored value."""
    foreign: tuple[str, ...]
    """Content words the graph has no word for."""
    general_topic: str | None = None
    """A general-knowledge topic word the graph has no word for ("weather", "recipe")."""

    @property
    def decline(self) -> bool:
        """It asks about a general-knowledge topic the graph has no word for."""
        return self.general_topic is not None

    @property
    def reason(self) -> str:
        return f"asks about {self.general_topic}, which the graph holds nothing about"


_SHORT_FORMS = {"password": ("pwd", "passwd"), "login": ("logon",)}
"""How schema names shorten a topic word (Active Directory's `pwdlastset`, `lastlogon`)."""


_DERIVING = ("ment", "ments", "ing", "er", "ers", "ion", "ions", "ation", "ations", "al")
"""Endings that make a noun of a verb the graph names ("endorsement" of ENDORSES)."""


def _derived(word: str, known: str) -> bool:
    """Whether `word` is `known` (a stem of at least four letters) with a noun's ending:
    "endorsement" and `ENDORSES` (a trial on a competence graph: "What is the average
    endorsement level …?" was declined as asking about something the graph has no name for),
    "creation" and `CREATES`."""
    if len(known) < 4 or not word.startswith(known[:-1]):
        return False
    bases = {known, known[:-1]} if known.endswith("e") else {known}
    return any(word == base + ending for base in bases for ending in _DERIVING)


class Vocabulary:
    """The graph's words, stemmed, with a tolerant match for misspellings ("servics")."""

    def __init__(self, names: Iterable[str], values: Iterable[str] = ()) -> None:
        stems: set[str] = set()
        glued: set[str] = set()
        for name in names:
            words = name_words(name)
            stems.update(stem(w) for w in words)
            glued.update(w.lower() for w in words if len(w) > 7)
        for value in values:
            stems.update(stem(w) for w in _WORD.findall(value))
        self.stems = frozenset(s for s in stems if len(s) > 1)
        self.glued = frozenset(glued)
        """Long words of names that may be several written as one (`operatingsystem`)."""

    def inside_a_name(self, word: str) -> bool:
        """Whether a name written as one word holds `word` or its usual short form: the
        cybersecurity graph's `pwdlastset` answers "Which user changed their password longest
        ago?", which the topic list would otherwise have declined."""
        short = _SHORT_FORMS.get(word.lower(), ())
        if any(form in self.stems for form in short):
            return True  # `pwd_hash`
        forms = (stem(word), *short)
        return any(form in name for form in forms for name in self.glued)

    def knows(self, word: str) -> bool:
        s = stem(word)
        if s in self.stems or any(_derived(s, known) for known in self.stems):
            return True
        if len(s) < 5:
            return False
        # One typo or a different suffix ("servics", "employment" vs "employee"): same start,
        # close spelling.
        return any(
            len(known) >= 5
            and known[:3] == s[:3]
            and SequenceMatcher(None, s, known).ratio() >= 0.85
            for known in self.stems
        )


def relevance(question: str, vocabulary: Vocabulary, value_words: Iterable[str] = ()) -> Relevance:
    """How `question` relates to the graph: `value_words` are the words of stored values that
    the value lookup matched for it (a product name, a city)."""
    found = {stem(w) for value in value_words for w in _WORD.findall(value)}
    # "Translate to Cypher: …" and "a query for the news items" are about querying the graph.
    querying = bool(_QUERYING.search(question))
    touching: list[str] = []
    foreign: list[str] = []
    topic: str | None = None
    for word in content_words(question):
        lowered = word.lower()
        if lowered in GRAPH_WORDS or stem(word) in found or vocabulary.knows(word):
            touching.append(word)
            continue
        foreign.append(word)
        if topic is None and not querying and lowered in GENERAL_TOPICS:
            topic = None if vocabulary.inside_a_name(word) else lowered
    return Relevance(touching=tuple(touching), foreign=tuple(foreign), general_topic=topic)
