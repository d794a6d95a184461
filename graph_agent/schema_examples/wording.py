"""How a schema reads in English (labels as nouns, relationship types as verb phrases) and how
a value is written in Cypher."""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any, Literal

from graph_agent.graphdb.schema import quote_name
from graph_agent.words import article, plural
from graph_agent.words import singular as word_singular
from guardrails import split_name

# --- words ------------------------------------------------------------------------------------

_PREPOSITIONS = frozenset(
    [
        "on",
        "in",
        "at",
        "for",
        "from",
        "to",
        "with",
        "under",
        "near",
        "of",
        "by",
        "into",
        "onto",
        "over",
        "inside",
        "within",
        "about",
    ]
)
# Irregular past tenses with their participles ("Which books has author X written?").
_IRREGULAR_PAST = {
    "wrote": "written",
    "made": "made",
    "led": "led",
    "built": "built",
    "took": "taken",
    "gave": "given",
    "won": "won",
    "bought": "bought",
    "sold": "sold",
    "held": "held",
    "ran": "run",
    "taught": "taught",
    "drove": "driven",
    "knew": "known",
    "met": "met",
    "sent": "sent",
    "saw": "seen",
    "began": "begun",
    "chose": "chosen",
    "paid": "paid",
}
# Participles that describe a state ("located in"), read with "is", not "has".
_STATIVE = frozenset(
    [
        "located",
        "based",
        "born",
        "situated",
        "listed",
        "included",
        "contained",
        "involved",
        "employed",
        "married",
        "related",
        "connected",
        "linked",
        "assigned",
        "tagged",
        "named",
        "scheduled",
        "deployed",
        "hosted",
        "stored",
        "registered",
        "enrolled",
        "classified",
        "categorized",
        "categorised",
    ]
)
_MASS_NOUNS = frozenset({"part", "staff", "head", "home"})


def words(name: str) -> list[str]:
    """Lower-case words of an identifier: `ACTED_IN` → acted, in; `OnCallRotation` → on, call…"""
    found: list[str] = []
    for part in re.split(r"[_\s\-]+", name):
        found.extend(w.lower() for w in (split_name(part) if part else []))
    return found


def singular(label: str) -> str:
    """A label as a noun in a sentence: `OnCallRotation` → "on call rotation", `OS` → "OS"."""
    return word_singular(label) if words(label) else label


def plural_noun(label: str) -> str:
    """A label as a plural noun: `Person` → "people", `Repository` → "repositories"."""
    return plural(label) if words(label) else label


def _base_form(verb: str) -> str:
    """Third-person singular → base form: owns → own, teaches → teach, applies → apply."""
    if verb.endswith("ies") and len(verb) > 4:
        return verb[:-3] + "y"
    if verb.endswith(("sses", "shes", "ches", "xes", "zzes", "oes")):
        return verb[:-2]
    return verb[:-1]


@dataclass(frozen=True)
class Phrase:
    """A relationship type as an English verb phrase, in the forms the questions need."""

    singular: str
    """After a singular subject: "acted in", "owns", "is a member of"."""
    plural: str
    """After a plural subject: "acted in", "own", "are members of"."""
    aux: Literal["does", "has", "is"]
    """The auxiliary of a question about the object: "Which teams *does* X own?"."""
    rest: str
    """What follows the subject in such a question, singular subject: "own", "a member of"."""
    rest_many: str
    """The same after a plural subject: "own", "members of"."""

    def ask(self, subject: str, *, many: bool = False) -> str:
        """ "does team X own", "has person X acted in", "are the films that … members of"."""
        aux = {"does": "do", "has": "have", "is": "are"}[self.aux] if many else self.aux
        return f"{aux} {subject} {self.rest_many if many else self.rest}"


def _copula(phrase_words: list[str]) -> Phrase:
    first, tail = phrase_words[0], phrase_words[1:]
    text = " ".join(phrase_words)
    if first in _PREPOSITIONS or first in _MASS_NOUNS or first in _STATIVE:
        return Phrase(f"is {text}", f"are {text}", "is", text, text)
    if not tail or tail[-1] not in _PREPOSITIONS:
        tail = [*tail, "of"]
    one = " ".join([first, *tail])
    many = " ".join([plural(first), *tail])
    a = article(first)
    return Phrase(f"is {a} {one}", f"are {many}", "is", f"{a} {one}", many)


def relationship_phrase(rel_type: str, end_label: str | None = None) -> Phrase:
    """`ACTED_IN` → "acted in", `OWNS` → "owns"/"own", `MEMBER_OF` → "is a member of",
    `PUBLISHED_BY` → "is published by", `IN_GENRE` (to Genre) → "is in"."""
    ws = words(rel_type) or [rel_type.lower()]
    end = words(end_label) if end_label else []
    if end and len(ws) > len(end) and ws[-len(end) :] == end:
        ws = ws[: -len(end)]  # HAS_GENRE → has; IN_GENRE → in
    if ws[0] in ("is", "was", "are", "be") and len(ws) > 1:
        ws = ws[1:]
    first, tail = ws[0], ws[1:]
    text = " ".join(ws)
    if first in ("has", "have", "had"):
        return Phrase("has", "have", "does", "have", "have")
    if first in _STATIVE or ((first.endswith("ed") or first in _IRREGULAR_PAST) and ws[-1] == "by"):
        return Phrase(f"is {text}", f"are {text}", "is", text, text)
    if first.endswith("ed") or first in _IRREGULAR_PAST:
        participle = " ".join([_IRREGULAR_PAST.get(first, first), *tail])
        return Phrase(text, text, "has", participle, participle)
    if (
        len(first) > 2
        and first.endswith("s")
        and not first.endswith(("ss", "us", "is"))
        and first not in _PREPOSITIONS
    ):
        base = " ".join([_base_form(first), *tail])
        return Phrase(text, base, "does", base, base)
    return _copula(ws)


# --- Cypher text ------------------------------------------------------------------------------

IDENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
ID_LIKE = re.compile(r"(^|_)(id|uuid|guid)$|[a-z]Id$|^id", re.IGNORECASE)
FREE_TEXT = re.compile(
    r"desc|summary|text|body|comment|note|content|bio|abstract|message|url|uri|email|"
    r"html|markdown|plot|overview|tagline|embedding|vector|password|hash|path",
    re.IGNORECASE,
)
ISO_DATE = re.compile(r"^\d{4}-\d{2}-\d{2}")
DATE_TYPES = ("DATE", "DATETIME", "LOCALDATETIME")


def cy_name(name: str) -> str:
    """A label, type or property name as Cypher needs it (backticks only when they are needed)."""
    return name if IDENT.fullmatch(name) else quote_name(name)


def column_alias(name: str, taken: Iterable[str] = ()) -> str:
    alias = re.sub(r"\W+", "_", name).strip("_") or "value"
    if alias[0].isdigit():
        alias = "v_" + alias
    while alias in set(taken):
        alias += "_2"
    return alias


def literal(value: Any) -> str:
    """A value as a Cypher literal (strings single-quoted and escaped)."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int | float):
        return repr(value)
    text = str(value).replace("\\", "\\\\").replace("'", "\\'")
    return f"'{text}'"


def date_phrase(prop: str) -> str:
    """`created`/`resolved_at` → "were created"; `start_date` → "have a start date"."""
    ws = [w for w in words(prop) if w not in ("at", "on", "date", "time")] or words(prop)
    if len(ws) == 1 and ws[0].endswith("ed"):
        return f"were {ws[0]}"
    return f"have a {' '.join(words(prop))}"


def identifier_like(value: Any) -> bool:
    """A value someone would type to name a thing: short, one line, a few words."""
    if not isinstance(value, str):
        return False
    text = value.strip()
    return 0 < len(text) <= 60 and "\n" not in text and len(text.split()) <= 8
