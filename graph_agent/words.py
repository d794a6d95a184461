"""English for schema names: `Person` → "people", `OrderDetail` → "order detail",
`OS` → "OSes", `Software` → "software"."""

from __future__ import annotations

from guardrails import split_name

UNCOUNTABLE = frozenset(
    {"software", "hardware", "firmware", "middleware", "data", "metadata", "information",
     "equipment", "feedback", "news", "staff", "series", "species", "media", "knowledge",
     "inventory", "evidence", "research", "traffic", "music"}
)  # fmt: skip
"""Nouns whose plural is the word itself: "List the software", not "the softwares"."""


def _acronym(part: str, name: str) -> bool:
    """An upper-case part of a mixed-case name (`HTTPServer`, `IPAddress`), or a whole name of
    two or three capitals (`OS`, `CPU`, `VM`). Longer all-caps names are words written in
    capitals (`PERSON`, `ON_CALL`)."""
    if len(part) < 2 or not part.isupper():
        return False
    return not name.isupper() or len(name) <= 3


def singular(name: str) -> str:
    """`OrderDetail` → "order detail", `HTTPServer` → "HTTP server", `OS` → "OS"."""
    return " ".join(part if _acronym(part, name) else part.lower() for part in split_name(name))


def plural(name: str) -> str:
    """`Person` → `people`, `Repository` → `repositories`, `Service` → `services`,
    `OS` → `OSes`, `CPU` → `CPUs`, `Software` → `software`."""
    word = singular(name)
    last = word.rsplit(" ", 1)[-1]
    if last.lower() in UNCOUNTABLE:
        return word
    if _acronym(last, name):
        return word + ("es" if last.endswith(("S", "X")) else "s")
    if word.endswith("person"):
        return word[: -len("person")] + "people"
    if word.endswith("y") and word[-2:-1] not in "aeiou":
        return word[:-1] + "ies"
    if word.endswith(("s", "x", "ch", "sh")):
        return word + "es"
    return word + "s"


def article(noun: str) -> str:
    """ "a" or "an" before `noun` by its first letter: an Airport, an OS, a Team."""
    return "an" if noun[:1].lower() in "aeiou" else "a"
