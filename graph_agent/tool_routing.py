"""Which graph tool answers a question without generated Cypher: the question shapes, the names
they hold, the request the agent runs, and the note a tool answer leaves where a statement
would be.

Three kinds of question get a fixed, parameterised read (graph_agent/tools) instead of a
statement a model writes: *what is this thing* (the entity card), *what is around it* (the
neighbourhood) and *how are these connected* (the connection). A question is routed by its
shape alone, in English words of asking, never a graph's vocabulary: `SHAPES` lists every
shape on one screen. The names a shape captures are then checked against the graph: a name
made only of the schema's own words ("teams", "the graph") or a pronoun is no name, and the
shapes a plain question shares ("what is the average price?") must name a stored value, one
the value lookup found for the question on a property that identifies its label.
"""

from __future__ import annotations

import json
import logging
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any, Literal, get_args

from graph_agent.graphdb.lookup import coverage
from graph_agent.graphdb.protocol import GraphSchema
from graph_agent.tools import Entity, GraphView
from graph_agent.words import plural, singular
from guardrails import name_words, stem

logger = logging.getLogger(__name__)

ToolName = Literal["card", "neighbourhood", "connection"]
TOOL_NAMES: tuple[ToolName, ...] = get_args(ToolName)
Hint = tuple[str, str, str]
"""A value hint: (label, property, stored value)."""


# --- the request ------------------------------------------------------------------------------


@dataclass(frozen=True)
class ToolRequest:
    """A graph tool to run and its arguments: one name (card, neighbourhood) or two
    (connection), each as the question writes it or, once a "did you mean" was answered, the
    entity chosen for it."""

    tool: ToolName
    names: tuple[str, ...]
    """As the question writes them, one per argument."""
    entities: tuple[Entity | None, ...] = ()
    """Per argument: the entity already chosen for the name, or None (resolve the name)."""
    hinted: tuple[bool, ...] = ()
    """Per argument: the value lookup matched the name to a stored value. A stored value that
    names no node is a filter value (a country, a status), not a misspelt name: no "did you
    mean" for it, the statement loop takes the question."""

    def argument(self, slot: int) -> str | Entity:
        """What the tool is called with for one argument: the chosen entity, or the name."""
        entity = self.entities[slot] if slot < len(self.entities) else None
        return entity if entity is not None else self.names[slot]

    def with_entity(self, slot: int, entity: Entity) -> ToolRequest:
        """The same call with `entity` chosen for argument `slot`."""
        entities = list(self.entities) + [None] * (len(self.names) - len(self.entities))
        entities[slot] = entity
        return replace(self, entities=tuple(entities))

    def was_hinted(self, slot: int) -> bool:
        return slot < len(self.hinted) and self.hinted[slot]

    def note(self, names: Sequence[str] | None = None) -> str:
        """`// graph tool: connection("Alice Nguyen", "Hana Smith")`: what stands in a turn's
        statement when a tool answered (history, memory, traces); `names` as resolved."""
        shown = names if names is not None else self.names
        arguments = ", ".join(json.dumps(name, ensure_ascii=False) for name in shown)
        return f"{NOTE_PREFIX}{self.tool}({arguments})"

    def to_dict(self) -> dict[str, Any]:
        """Plain JSON values (a Slack button's value carries them)."""
        return {
            "tool": self.tool,
            "names": list(self.names),
            "entities": [None if e is None else _entity_dict(e) for e in self.entities],
            "hinted": list(self.hinted),
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> ToolRequest:
        """The request `to_dict` gave; ValueError when it is not one."""
        tool = data.get("tool")
        names = data.get("names")
        entities = data.get("entities") or []
        if (
            tool not in TOOL_NAMES
            or not isinstance(names, list)
            or len(names) != arity(tool)
            or not isinstance(entities, list)
            or len(entities) > len(names)
        ):
            raise ValueError("not a graph tool request")
        return cls(
            tool=tool,
            names=tuple(str(n) for n in names),
            entities=tuple(None if e is None else _entity_of(e) for e in entities),
            hinted=tuple(bool(h) for h in data.get("hinted") or []),
        )


def _entity_dict(entity: Entity) -> dict[str, Any]:
    return {
        "key": entity.key,
        "label": entity.label,
        "labels": list(entity.labels),
        "name": entity.name,
        "detail": entity.detail,
    }


def arity(tool: ToolName) -> int:
    """How many names a tool takes: two for a connection, one otherwise."""
    return 2 if tool == "connection" else 1


def _entity_of(data: Any) -> Entity:
    if not isinstance(data, Mapping):
        raise ValueError("an entity is a mapping")
    key = data.get("key")
    if not isinstance(key, int | str) or isinstance(key, bool):
        raise ValueError("an entity needs its key")
    return Entity(
        key=key,
        label=str(data.get("label") or ""),
        labels=tuple(str(label) for label in data.get("labels") or []),
        name=str(data.get("name") or ""),
        detail=str(data.get("detail") or ""),
    )


NOTE_PREFIX = "// graph tool: "
_NOTE = re.compile(r"^//\s*graph tool:\s*(?P<tool>\w+)\((?P<arguments>.*)\)\s*$", re.DOTALL)


def is_tool_note(cypher: str | None) -> bool:
    """True when a turn's or an example's statement is a graph tool's note, not Cypher."""
    return cypher is not None and parse_note(cypher) is not None


def parse_note(cypher: str) -> ToolRequest | None:
    """The request a note stands for (a taught tool answer is asked again by it)."""
    match = _NOTE.match(cypher.strip())
    if match is None or match["tool"] not in TOOL_NAMES:
        return None
    try:
        names = json.loads(f"[{match['arguments']}]")
    except json.JSONDecodeError:
        return None
    tool: ToolName = match["tool"]  # type: ignore[assignment]  # checked just above
    if len(names) != arity(tool) or not all(isinstance(n, str) and n.strip() for n in names):
        return None
    return ToolRequest(tool, tuple(names))


def continued(question: str, name: str, chosen: str) -> str:
    """`question` with `name` replaced by the name of the entity chosen for it ("Tell me
    about Alice" → "Tell me about Alice Smith"); unchanged when the name is not in it."""
    words = name.split()
    if not words or name == chosen:
        return question
    pattern = re.compile(r"\s+".join(re.escape(w) for w in words), re.IGNORECASE)
    return pattern.sub(lambda _m: chosen, question, count=1)


# --- question shapes ---------------------------------------------------------------------------


@dataclass(frozen=True)
class Shape:
    """A way of asking for one tool: the pattern (the whole question, fillers and the final
    punctuation removed) with a group `a` (and `b` for a connection) for each name."""

    name: str
    tool: ToolName
    pattern: str
    example: str
    stored_name: bool = False
    """The words also start plain questions ("who is the oldest…?", "what is the average…?"):
    the name must be a stored name the value lookup found, or the statement loop answers."""
    regex: re.Pattern[str] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "regex", re.compile(self.pattern, re.IGNORECASE))


_LINKED = r"(?:connected|related|linked|tied)"
_BETWEEN = r"(?:connections?|relationships?|relations|links?|paths?|routes?)"

SHAPES: tuple[Shape, ...] = (
    # How are these connected: more specific than the others, asked first.
    Shape(
        "how-is-a-linked-to-b",
        "connection",
        rf"how(?:'s| is| are| was| were) (?P<a>.+?) {_LINKED} (?:up )?(?:to|with) (?P<b>.+)",
        "How is <a> connected to <b>?",
    ),
    Shape(
        "how-are-a-and-b-linked",
        "connection",
        rf"(?:how(?:'s| is| are| was| were)|is|are) (?P<a>.+?) and (?P<b>.+?) {_LINKED}"
        r"(?: to each other| to one another| together)?",
        "How are <a> and <b> related?",
    ),
    Shape(
        "how-does-a-relate-to-b",
        "connection",
        r"how (?:does|do|did) (?P<a>.+?) (?:relate|connect|link) (?:up )?(?:to|with) (?P<b>.+)",
        "How does <a> relate to <b>?",
    ),
    Shape(
        "tell-me-how-a-is-linked-to-b",
        "connection",
        rf"(?:tell me|show me|show|explain) how (?P<a>.+?) (?:is|are) {_LINKED} (?:to|with) (?P<b>.+)",
        "Show me how <a> is linked to <b>.",
    ),
    Shape(
        "what-links-a-and-b",
        "connection",
        r"what (?:links|connects|relates|ties|joins) (?P<a>.+?) (?:and|to|with) (?P<b>.+)",
        "What links <a> and <b>?",
    ),
    Shape(
        "what-do-a-and-b-have-in-common",
        "connection",
        r"what (?:do|does|did) (?P<a>.+?) and (?P<b>.+?) have in common",
        "What do <a> and <b> have in common?",
    ),
    Shape(
        "the-link-between-a-and-b",
        "connection",
        rf"(?:what(?:'s| is| are)|show me|show|find|describe|explain) (?:the |a |any )?{_BETWEEN} "
        r"between (?P<a>.+?) and (?P<b>.+)",
        "What is the relationship between <a> and <b>?",
    ),
    Shape(
        "is-a-linked-to-b",
        "connection",
        rf"(?:is|are) (?P<a>.+?) {_LINKED} (?:in any way )?(?:to|with) (?P<b>.+)",
        "Is <a> connected to <b>?",
    ),
    # What is around it.
    Shape(
        "what-is-a-linked-to",
        "neighbourhood",
        rf"(?:what|who)(?:'s| is| are| was| were) (?P<a>.+?) {_LINKED} (?:to|with)",
        "What is <a> linked to?",
    ),
    Shape(
        "what-does-a-link-to",
        "neighbourhood",
        r"what (?:does|do) (?P<a>.+?) (?:link|connect|relate) (?:to|with)",
        "What does <a> connect to?",
    ),
    Shape(
        "what-is-linked-to-a",
        "neighbourhood",
        rf"(?:what|who)(?:'s| is| are) {_LINKED} (?:to|with) (?P<a>.+)",
        "What is connected to <a>?",
    ),
    Shape(
        "what-is-around-a",
        "neighbourhood",
        r"what(?:'s| is| lies) around (?P<a>.+)",
        "What is around <a>?",
    ),
    Shape(
        "the-neighbours-of-a",
        "neighbourhood",
        r"(?:show|list|give)(?: me)? (?:the |all )?(?:neighbou?rs|neighbou?rhood|connections|links) "
        r"(?:of|for|around) (?P<a>.+)",
        "Show me the neighbours of <a>.",
    ),
    # What is this thing.
    Shape(
        "tell-me-about-a",
        "card",
        r"tell me (?:(?:a (?:bit|little)|more|something|everything|all) )?about (?P<a>.+)",
        "Tell me about <a>.",
    ),
    Shape(
        "what-do-you-know-about-a",
        "card",
        r"what (?:do you|do we|does the graph) (?:know|have|hold|say) (?:about|on) (?P<a>.+)",
        "What do you know about <a>?",
    ),
    Shape(
        "describe-a",
        "card",
        r"(?:describe|summari[sz]e|give me an overview of|(?:show|give) me (?:the )?"
        r"(?:details|info|information|profile|card) (?:of|on|for|about)) (?P<a>.+)",
        "Describe <a>.",
    ),
    Shape(
        "who-is-a",
        "card",
        r"(?:who|what)(?:'s| is| was| are| were) (?P<a>.+)",
        "Who is <a>?",
        stored_name=True,
    ),
)
"""Every shape a tool is asked by, in the order they are tried (the first that fits wins)."""

_FILLER = re.compile(
    r"^(?:(?:and|so|ok|okay|then|also|now|well|hey|hi|hello|but|please)\b[,\s]*)*"
    r"(?:(?:can|could|would|will) you (?:please )?)?",
    re.IGNORECASE,
)
_END = re.compile(r"[\s?!.…]+$")
_ARTICLE = re.compile(r"^(?:the|a|an)\s+", re.IGNORECASE)
_TAIL = re.compile(
    r"\s+(?:please|for me|exactly|in the graph|in the data(?:base)?|at all)$", re.IGNORECASE
)
_QUOTES = " \t\"'“”‘’`,;:"
_WORD = re.compile(r"[^\W_]+(?:['’][^\W_]+)*")
MAX_NAME_WORDS = 8
NAME_COVERED = 0.8
"""Share of a name's letters that stored values of one label must account for to make it a
stored name ("Kenji Smith's salary" is 59% Kenji Smith: not a name)."""

_NOT_A_NAME_TEXT = """
    it its he him his she her hers they them their theirs this that these those there here
    me my mine us our ours you your yours we i one ones someone something everyone everything
    anyone anything nobody nothing all every each any some many much most few several both
    either neither other others which what who whom whose how why when where in on at for with
    from of to by into about near behind between among than more less
"""
_NOT_A_NAME = frozenset(_NOT_A_NAME_TEXT.split())
"""Words no name starts with."""
_PRONOUN_TEXT = "it its he him his she her hers they them their theirs those these"
_PRONOUNS = frozenset(_PRONOUN_TEXT.split())
"""Pronouns no name holds: a name with one is an unresolved "she"."""
_GENERIC_TEXT = """
    graph graphs data database databases schema node nodes relationship relationships edge
    edges label labels property properties thing things stuff type types kind kinds entity
    entities item items record records
"""
_GENERIC = frozenset(_GENERIC_TEXT.split())
"""Words about the graph itself: "tell me about the graph" asks for no one entity."""
_JOINING_TEXT = "the a an of and or in on for with to by all"
_JOINING = frozenset(_JOINING_TEXT.split())


def route(question: str, schema: GraphSchema, hints: Sequence[Hint] = ()) -> ToolRequest | None:
    """The graph tool whose shape `question` has, with the names it gives, or None (write
    Cypher). `schema` is the channel's view; `hints` are the stored values the value lookup
    found for the question (label, property, value)."""
    text = _asked(question)
    for shape in SHAPES:
        match = shape.regex.fullmatch(text)
        if match is None:
            continue
        request = _request(shape, match, schema, hints)
        if request is not None:
            logger.debug("question shape %s: %s", shape.name, request.tool)
            return request
        # A shape that fits with something other than names (a vocabulary word, a clause)
        # ends the search: a later, looser shape would read the same words as a name.
        return None
    return None


def _asked(question: str) -> str:
    text = " ".join(question.replace("’", "'").split())
    text = _END.sub("", text)
    return _FILLER.sub("", text).strip()


def _request(
    shape: Shape, match: re.Match[str], schema: GraphSchema, hints: Sequence[Hint]
) -> ToolRequest | None:
    groups = ("a", "b") if shape.tool == "connection" else ("a",)
    vocabulary = SchemaWords.of(schema)
    view = GraphView.of(schema)
    names: list[str] = []
    hinted: list[bool] = []
    for group in groups:
        name = clean_name(match[group])
        if name is None:
            return None
        stored = stored_name(name, hints, view, vocabulary)
        if shape.stored_name and (stored != "identifying" or _described(name)):
            return None
        if stored != "identifying" and (
            vocabulary.holds_only_its_words(name)
            or vocabulary.starts_with_a_plural(name)
            or _possessive(name)
        ):
            # "the teams", "customers from Germany", "Hana Smith's manager": things
            # described, not named.
            return None
        names.append(name)
        hinted.append(stored is not None)
    if len(names) == 2 and names[0].casefold() == names[1].casefold():
        return None
    return ToolRequest(shape.tool, tuple(names), hinted=tuple(hinted))


def clean_name(raw: str) -> str | None:
    """A captured name without quotes, a leading article or a trailing "please"; None when it
    cannot be a name (empty, too long, a pronoun, a quantifier or a preposition first)."""
    text = raw.strip(_QUOTES)
    text = _ARTICLE.sub("", text)
    text = _TAIL.sub("", text).strip(_QUOTES)
    words = _WORD.findall(text)
    if not words or len(words) > MAX_NAME_WORDS:
        return None
    folded = [w.casefold() for w in words]
    if folded[0] in _NOT_A_NAME or any(w in _PRONOUNS for w in folded):
        return None
    return text


def _described(name: str) -> bool:
    """`author of Harry Potter and the Philosophers Stone`: something of a named thing, said by
    a word in lower case before "of" (a name such as "Bank of America" starts with a capital),
    however much of the phrase the name fills."""
    return name[:1].islower() and re.match(r"\S+\s+of\s+\S", name) is not None


def _possessive(name: str) -> bool:
    """`Hana Smith's manager`: something of a named thing, not its name."""
    return re.search(r"[^\W_]['’]s?\s+\S", name) is not None


def stored_name(
    name: str, hints: Sequence[Hint], view: GraphView, vocabulary: SchemaWords | None = None
) -> Literal["identifying", "other"] | None:
    """Whether `name` is a stored name: "identifying" when stored values the name holds,
        all of one label, make up most of it (`NAME_COVERED`) and one is on the property that
        label's nodes are called by ("Nancy Davolio": firstName Nancy and lastName Davolio);
        "other" when such values are only on other properties (a country, a job title); None
        when the value lookup found nothing the name holds whole ("Alice" is part of several
        names, none of them). A label word at either end of the name may count or not ("the
    Payments team", "Munich International Airport"); left off, it says the label of the
    values that count."""
    forms: list[tuple[str, frozenset[str] | None]] = [(name, None)]
    if vocabulary is not None and vocabulary.without_label_words(name) != name:
        forms.append((vocabulary.without_label_words(name), vocabulary.end_labels(name)))
    found: Literal["identifying", "other"] | None = None
    for form, labels in forms:
        by_label: dict[str, list[Hint]] = {}
        for hint in hints:
            # Only values the name holds: "Engineering Manager" is no part of "Hana Smith's
            # manager"; and with a label word left off, only values of that label: "the
            # keynote speakers" are no speaker called Keynotes (a category is).
            if labels is not None and hint[0] not in labels:
                continue
            if coverage(form, hint[2]) >= NAME_COVERED:
                by_label.setdefault(hint[0], []).append(hint)
        for label, held in by_label.items():
            if coverage(" ".join(value for _l, _p, value in held), form) < NAME_COVERED:
                continue
            if any(prop == view.identifying.get(label) for _l, prop, _v in held):
                return "identifying"
            found = "other"
    return found


@dataclass(frozen=True)
class SchemaWords:
    """The schema's own words (label, relationship type and property names, stemmed) and its
    labels' plurals: what a name is not made of."""

    stems: frozenset[str]
    label_words: frozenset[str]
    """Label names as written in a question, singular and plural ("team", "teams", "people")."""
    plurals: frozenset[str]
    labels_by_word: tuple[tuple[str, str], ...] = ()
    """(a label's word as written, singular or plural; the label): ("teams", "Team")."""

    @classmethod
    def of(cls, schema: GraphSchema) -> SchemaWords:
        names = [label.name for label in schema.labels]
        names += [p.name for label in schema.labels for p in label.properties]
        names += [rel.type for rel in schema.relationships]
        stems = {stem(w) for name in names for w in name_words(name)}
        by_word = {
            (form(label.name).casefold(), label.name)
            for label in schema.labels
            for form in (singular, plural)
        }
        plurals = {plural(label.name).casefold() for label in schema.labels}
        words = frozenset(word for word, _label in by_word)
        return cls(frozenset(stems), words, frozenset(plurals), tuple(sorted(by_word)))

    def holds_only_its_words(self, name: str) -> bool:
        """Every word of `name` is the schema's or the graph's own ("teams", "the schema")."""
        words = [w for w in _WORD.findall(name) if w.casefold() not in _JOINING]
        return bool(words) and all(w.casefold() in _GENERIC or stem(w) in self.stems for w in words)

    def starts_with_a_plural(self, name: str) -> bool:
        """ "customers from Germany": a plural label word first describes many things."""
        words = _WORD.findall(name.casefold())
        return any(" ".join(words[: len(p.split())]) == p for p in self.plurals if words)

    def without_label_words(self, name: str) -> str:
        """The name without a label word at either end ("Payments team" → "Payments"),
        unless nothing else is left."""
        words = name.split()
        if len(words) > 1 and words[-1].casefold() in self.label_words:
            words = words[:-1]
        if len(words) > 1 and words[0].casefold() in self.label_words:
            words = words[1:]
        return " ".join(words)

    def end_labels(self, name: str) -> frozenset[str]:
        """The labels a word at either end of the name says ("keynote speakers" → Speaker)."""
        words = [w.casefold() for w in name.split()]
        ends = {words[0], words[-1]} if len(words) > 1 else set()
        return frozenset(label for word, label in self.labels_by_word if word in ends)
