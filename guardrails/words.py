"""The one word helper: a crude English stem and the parts of a schema name.

Pruning, relevance, the schema check's notes, hints and schema examples all meet words here,
so "processes", "people" and "services" stem the same way everywhere.
"""

from __future__ import annotations

import re

_CAMEL = re.compile(r"[A-Z]+\d*(?=[A-Z][a-z])|[A-Z]?[a-z]+\d*|[A-Z]+\d*|\d+")


_ACRONYM_PLURAL = re.compile(r"([A-Z]{2,})(?:e?s)")


def split_name(name: str) -> list[str]:
    """The parts of a CamelCase name (`HTTPServer` → HTTP, Server; `unitsInStock` → units,
    In, Stock); digits stay with the letters they follow (`EC2InstanceType` → EC2, Instance,
    Type: a question writes "EC2"); a name with none (`_`) is itself."""
    return _CAMEL.findall(name) or [name]


def stem(word: str) -> str:
    """A crude English stem, enough to match "suppliers" with `Supplier` and "directed" with
    `DIRECTED`: lower case, no possessive, irregular and regular plurals, -ing/-ed."""
    if acronym := _ACRONYM_PLURAL.fullmatch(word):
        return acronym.group(1).lower()  # "CPUs", "OSes": not "cpus" like "status"
    w = word.lower().replace("’", "'")
    if w.endswith("'s"):
        w = w[:-2]
    w = w.strip("'")
    w = _IRREGULAR.get(w, w)
    if len(w) > 4 and w.endswith("ies"):
        w = w[:-3] + "y"
    elif len(w) > 4 and w.endswith(("sses", "ches", "shes", "xes")):
        w = w[:-2]
    elif len(w) > 3 and w.endswith("s") and not w.endswith(("ss", "us", "is")):
        w = w[:-1]
    if len(w) > 5 and w.endswith("ing"):
        w = w[:-3]
    elif len(w) > 4 and w.endswith("ed"):
        w = w[:-2]
    return w


_IRREGULAR = {
    "people": "person",
    "men": "man",
    "women": "woman",
    "children": "child",
    "mice": "mouse",
    "feet": "foot",
    "teeth": "tooth",
}
