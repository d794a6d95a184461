"""English for schema names: `Person` → "people", `OrderDetail` → "order detail",
`OS` → "OSes", `Software` → "software"."""

from __future__ import annotations

import re
from collections.abc import Collection, Sequence
from typing import NamedTuple

from graph_agent.graphdb.protocol import GraphSchema, LabelInfo
from guardrails import split_name, stem

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


_IRREGULAR_PLURALS = {"people": "person", "children": "child", "men": "man", "women": "woman"}
"""Plurals a trailing s does not make ("Which people…" asks about Person nodes)."""


class Said(NamedTuple):
    """A label a phrase names: the label, whether in the singular, and how many words."""

    label: LabelInfo
    singular: bool
    words: int


def label_said(
    words: Sequence[str], schema: GraphSchema, initials_of: Collection[str] = ()
) -> Said | None:
    """The label the leading words of a phrase name, the longest name first: "data centers"
    → DataCenter (plural, two words), "people" → Person; and a two- or three-capital label
    of `initials_of` (labels a statement matches: the model read the phrase so) by its
    words' initials: "operating systems" → OS ("How many different operating systems run on
    … DC1-RCK-1-3?", a trial on the network graph, listed the OS nodes). Initials alone are
    no evidence ("open slots" is not OS), nor where their last word names a label itself
    ("other services" is Service)."""
    for label in sorted(schema.labels, key=lambda lb: -len(split_name(lb.name))):
        parts = [p.lower() for p in split_name(label.name)]
        if len(words) < len(parts):
            continue
        said = [w.lower() for w in words[: len(parts)]]
        last = _IRREGULAR_PLURALS.get(said[-1])
        if last is not None:
            if [stem(w) for w in said[:-1]] + [last] == [stem(p) for p in parts[:-1]] + [parts[-1]]:
                return Said(label, False, len(parts))
            continue
        if [stem(w) for w in said] == [stem(p) for p in parts]:
            return Said(label, said[-1] == parts[-1] or not said[-1].endswith("s"), len(parts))
    for label in schema.labels:
        if label.name not in initials_of:
            continue
        letters = label.name.lower()
        if not _acronym(label.name, label.name) or len(words) < len(letters):
            continue
        said = [w.lower() for w in words[: len(letters)]]
        if "".join(w[0] for w in said) != letters or any(len(w) < 3 for w in said):
            continue
        if label_said(said[-1:], schema) is None:
            return Said(label, not said[-1].endswith("s"), len(letters))
    return None


def value_said_as_label(
    value: str, question: str, schema: GraphSchema, own: Collection[str] = ()
) -> str | None:
    """The label whose word a stored value is, where the question says that word once and not
    beside a word of `own` (the names of the label and property holding the value); None
    otherwise. "Which venue hosts the most events?" asks about Event nodes, not the category
    called "Events" (a trial on a conference-schedule graph); "the Events category" names it;
    the word before one of the label's properties ("each event type") says the property."""
    said = label_said(value.split(), schema)
    if said is None or said.words != len(value.split()):
        return None
    label = said.label
    props = {stem(p.name.lower()) for p in label.properties if len(split_name(p.name)) == 1}
    words = re.findall(r"[A-Za-z][\w-]*", question)
    spans = []
    for i in range(len(words)):
        mention = label_said(words[i:], schema)
        if mention is None or mention.label.name != label.name:
            continue
        after = words[i + mention.words : i + mention.words + 1]
        if after and stem(after[0].lower()) in props:
            continue  # "event type": the label's property is said (one whole word of it)
        spans.append((i, i + mention.words))
    if len(spans) != 1:
        return None
    start, end = spans[0]
    beside = words[max(0, start - 1) : start] + words[end : end + 1]
    own_stems = {stem(part.lower()) for name in own for part in split_name(name)}
    return None if {stem(w.lower()) for w in beside} & own_stems else label.name


def met_only_in_label_words(
    values: Collection[str], question: str, schema: GraphSchema
) -> set[str]:
    """The stored values the question meets only inside its words for a label, and there as
    a part of that label's name: "Which EC2 instance type has the most memory?" shares
    "instance" with the family "GPU instances" (a trial on an AWS infrastructure graph: the
    model filtered on that family from the value hint), and says "EC2" only as the first
    word of EC2InstanceType, not a service called EC2. Not a value the question meets
    elsewhere, or says whole as a label's whole word ("events" and a category "Events":
    `value_said_as_label` is for that). The question's label words are read once for all."""
    words = re.findall(r"[A-Za-z][\w-]*", question)
    spans: dict[int, int] = {}
    for i in range(len(words)):
        if (mention := label_said(words[i:], schema)) is not None:
            for k in range(i, i + mention.words):
                spans[k] = max(spans.get(k, 0), mention.words)
    found = set()
    for value in values:
        parts = re.findall(r"[A-Za-z][\w-]*", value)
        stems = {stem(w.lower()) for w in parts}
        met = [i for i, word in enumerate(words) if stem(word.lower()) in stems]
        whole = said(value, question)
        if met and all(i in spans and (spans[i] > len(parts) or not whole) for i in met):
            found.add(value)
    return found


EACH_WORDS = r"(?:each|every|per)"
"""Words that ask for one answer per thing ("each department", "per team")."""

ASKS_WHO = re.compile(r"^\W*who\b", re.IGNORECASE)
"""A question that starts with "who"."""
ASKS_WHO_OR_WHICH = re.compile(r"^\W*(?:who|which)\b", re.IGNORECASE)
"""A question that starts with "who" or "which"."""

_NOT_SUPERLATIVE = (
    "interest", "request", "forest", "harvest", "contest", "protest", "conquest", "inquest",
    "manifest", "arrest", "honest", "modest", "earnest", "suggest", "invest", "digest",
    "ingest", "attest", "detest", "priest", "midwest", "northwest", "southwest", "unrest",
    "tempest", "bequest", "behest", "infest", "armrest",
)  # fmt: skip
SUPERLATIVE_EST = rf"(?!(?:{'|'.join(_NOT_SUPERLATIVE)})\b)(?-i:[a-z]{{3,}}est)"
"""A regex fragment for a superlative in -est of six letters or more, in lower case
("tallest", "heaviest", "richest"), not a noun or verb that ends so ("interest", "request")
nor a name ("Budapest")."""

NUMBER_WORDS = (
    "zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten",
    "eleven", "twelve", "thirteen", "fourteen", "fifteen", "sixteen", "seventeen", "eighteen",
    "nineteen", "twenty",
)  # fmt: skip
"""Whole numbers a question may write in words (index = value)."""


def said(value: str, question: str) -> bool:
    """Whether the question says `value`: as written (case aside, whole words), or a whole
    number up to twenty in words ("five runways" for 5)."""
    text = question.casefold()
    if re.search(rf"(?<!\w){re.escape(value.casefold())}(?!\w)", text):
        return True
    if value.isdigit() and int(value) < len(NUMBER_WORDS):
        return re.search(rf"\b{NUMBER_WORDS[int(value)]}\b", text) is not None
    return False


LINKING = frozenset(["of", "to", "in", "for", "by", "at", "on", "with", "from"])
"""The words after a relationship type's first that make it name its start node's role
(MEMBER_OF: the start is a member of the end; ADMIN_TO: an admin to it; LED_BY: led by it)."""
