"""English for schema names: `Person` → "people", `OrderDetail` → "order detail"."""

from __future__ import annotations

import re

_CAMEL = re.compile(r"[A-Z]+(?=[A-Z][a-z])|[A-Z]?[a-z]+|[A-Z]+|\d+")


def split_name(name: str) -> list[str]:
    """The parts of a CamelCase or snake_case name (`HTTPServer` → HTTP, Server)."""
    return _CAMEL.findall(name) or [name]


def singular(name: str) -> str:
    """`OrderDetail` → "order detail"."""
    return " ".join(part.lower() for part in split_name(name))


def plural(name: str) -> str:
    """`Person` → `people`, `Repository` → `repositories`, `Service` → `services`."""
    word = singular(name)
    if word.endswith("person"):
        return word[: -len("person")] + "people"
    if word.endswith("y") and word[-2:-1] not in "aeiou":
        return word[:-1] + "ies"
    if word.endswith(("s", "x", "ch", "sh")):
        return word + "es"
    return word + "s"
