"""Schema paths for multi-hop questions: how the things a question names reach what it asks about.

A small model asked "Which teams have people on Project Atlas?" writes the relationship it
imagines (`(t:Team)-[:OWNS]->(p:Project)`) instead of the two hops the graph has. The schema
already knows every way from `Project` to `Team`; this module enumerates them (both
directions, up to three hops, each relationship pattern at most once), ranks them (fewest
hops, relationship words the question uses, labels it names on the way), and renders the
best few as ready `MATCH` patterns with the question's values bound, so the model starts
from a path that exists. Nothing here reads the graph: the schema and the value hints the
value lookup found are the only inputs.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterable, Sequence, Set
from dataclasses import dataclass
from difflib import SequenceMatcher

from graph_agent.graphdb.protocol import GraphSchema, RelPattern
from graph_agent.pruning import name_words, question_words
from graph_agent.schema_examples import question_focus
from graph_agent.statement import fresh_variable

MAX_HOPS = 3
MAX_PATHS = 3
_ENUMERATION_CAP = 400
"""Paths enumerated per pair of labels before ranking: wide schemas stay cheap."""

Hint = tuple[str, str, str]
"""A value hint: (label, property, stored value)."""
_WORDS = re.compile(r"[^\W_]+")


@dataclass(frozen=True)
class Hop:
    """One relationship pattern walked forward (start → end) or backward."""

    rel: RelPattern
    forward: bool

    @property
    def target(self) -> str:
        return self.rel.end if self.forward else self.rel.start


@dataclass(frozen=True)
class SchemaPath:
    """Labels from `start` through `hops` (an empty tuple: the start label itself)."""

    start: str
    hops: tuple[Hop, ...]

    @property
    def labels(self) -> list[str]:
        return [self.start, *(hop.target for hop in self.hops)]

    @property
    def end(self) -> str:
        return self.labels[-1]


def schema_paths(
    schema: GraphSchema, start: str, end: str, max_hops: int = MAX_HOPS
) -> list[SchemaPath]:
    """Every path from label `start` to label `end` of at most `max_hops` relationships,
    walking each relationship pattern either way and at most once, shortest first."""
    found: list[SchemaPath] = []
    frontier = [SchemaPath(start, ())]
    if start == end:
        found.append(frontier[0])
    for _ in range(max_hops):
        grown: list[SchemaPath] = []
        for path in frontier:
            used = {hop.rel for hop in path.hops}
            here = path.end
            for rel in schema.relationships:
                if rel in used:
                    continue
                for forward in (True, False):
                    if (rel.start if forward else rel.end) != here:
                        continue
                    longer = SchemaPath(start, (*path.hops, Hop(rel, forward)))
                    grown.append(longer)
                    if longer.end == end:
                        found.append(longer)
            if len(found) >= _ENUMERATION_CAP:
                return found
        frontier = grown
    return found


def _score(path: SchemaPath, asked: Set[str], named: Set[str]) -> float:
    """Lower is better: a hop costs 1, a relationship the question words cuts 0.8, a label it
    names along the way cuts 0.3."""
    score = float(len(path.hops))
    for hop in path.hops:
        if name_words(hop.rel.type) & asked:
            score -= 0.8
    ends = {path.start, path.end}
    for label in set(path.labels[1:-1]) - ends:
        if label in named:
            score -= 0.3
    return score


def rank_paths(
    paths: Iterable[SchemaPath], question: str, named: Iterable[str] = ()
) -> list[SchemaPath]:
    """The paths best fitting the question first: those passing every label it names, then
    the shortest (relationships it words count less), then the more common relationships."""
    asked = question_words(question)
    labels = frozenset(named)
    return sorted(
        paths,
        key=lambda p: (
            len(labels - set(p.labels)),
            _score(p, asked, labels),
            -min((h.rel.count for h in p.hops), default=0),
        ),
    )


@dataclass(frozen=True)
class Named:
    """A node the question names: its label and the stored values that pick it out (two
    when the question's phrase spans two properties: "Andrew Fuller" as first and last name)."""

    label: str
    values: tuple[tuple[str, str], ...]

    @property
    def text(self) -> str:
        return " ".join(value for _prop, value in self.values)

    def pattern(self) -> str:
        inside = ", ".join(f"{prop}: {_literal(value)}" for prop, value in self.values)
        return f" {{{inside}}}"


def _literal(value: str) -> str:
    return json.dumps(value, ensure_ascii=False)


def _render(legs: Sequence[tuple[SchemaPath, Named | None, Named | None]]) -> str:
    """One MATCH over `legs` (path, node bound at its start, node bound at its end); every
    leg after the first ends on the first leg's end node."""
    used: dict[str, str] = {}
    parts: list[str] = []
    meeting: str | None = None
    for path, first, last in legs:
        labels = path.labels
        texts = []
        for index, label in enumerate(labels):
            final = index == len(labels) - 1
            if final and meeting is not None:
                texts.append(f"({meeting})")
                continue
            var = fresh_variable(label, used)
            used[var] = label
            named = first if index == 0 else last if final else None
            texts.append(f"({var}:{label}{named.pattern() if named else ''})")
            if final:
                meeting = var
        text = texts[0]
        for hop, node in zip(path.hops, texts[1:], strict=True):
            text += (f"-[:{hop.rel.type}]->" if hop.forward else f"<-[:{hop.rel.type}]-") + node
        parts.append(text)
    return "MATCH " + ", ".join(parts)


def path_patterns(
    question: str, schema: GraphSchema, hints: Sequence[Hint], limit: int = MAX_PATHS
) -> list[str]:
    """Ready MATCH patterns from the nodes the question names (found by the value lookup) to
    the labels it asks about (named, or at an end of a relationship it words: "commanded").

    With two named nodes, first the pattern joining both to one node of an asked label
    ("destinations served from both A and B"), else the path between them. Then each node's
    own best paths, interleaved. Empty when the question names no value or nothing asked is
    within three hops.
    """
    nodes = named_nodes(question, hints)
    if not nodes or limit <= 0:
        return []
    focus = question_focus(question, schema)
    worded = {
        end
        for rel in schema.relationships
        if rel.type in focus.rel_types
        for end in (rel.start, rel.end)
    }
    # Paths must pass the labels the question names; the ends of a worded relationship are
    # destinations too, but not required on the way.
    asked = frozenset(focus.labels)
    targets = sorted(asked | worded)
    words = question_words(question)
    best: dict[Named, list[SchemaPath]] = {}
    for node in nodes:
        if targets:
            found = [p for t in targets for p in schema_paths(schema, node.label, t) if p.hops]
            if node.label in asked:
                # The value is the asked node's own ("How many drug crimes are there?"): a
                # road back to its label only through a relationship the question words ("who
                # knows Jessica Kelly?"). Offered a three-hop cycle through a person's address,
                # the 1.5B model took it for "drug crimes" (a trial on the POLE graph).
                found = [
                    p
                    for p in found
                    if p.end != node.label
                    or any(name_words(hop.rel.type) & words for hop in p.hops)
                ]
        else:
            # Nothing asked beyond the values: their neighbours through a worded relationship.
            found = [
                p for p in _one_hop(schema, node.label) if name_words(p.hops[0].rel.type) & words
            ]
        best[node] = _near_the_best(rank_paths(found, question, asked), question, asked)
    patterns = [
        pattern
        for first, second in _pairs(nodes)[:1]
        for pattern in _both(schema, question, asked, first, second, best)
    ]
    for rank in range(limit):
        for node in nodes:
            if rank < len(best[node]):
                patterns.append(_render([(best[node][rank], node, None)]))
    return list(dict.fromkeys(patterns))[:limit]


def with_data(
    patterns: Sequence[str], has_rows: Callable[[str], bool | None], limit: int
) -> list[str]:
    """The first `limit` patterns the data has a match for (`has_rows(statement)`; None when
    it could not tell, which keeps the pattern). The schema says a path exists between two
    labels; only the data says whether it exists from this very node, and which way round a
    relationship from a label to itself ("reports to") goes for it."""
    kept = []
    for pattern in patterns:
        if has_rows(f"{pattern} RETURN 1 AS found LIMIT 1") is not False:
            kept.append(pattern)
        if len(kept) == limit:
            break
    return kept


def _pairs(nodes: Sequence[Named]) -> list[tuple[Named, Named]]:
    return [
        (a, b)
        for i, a in enumerate(nodes)
        for b in nodes[i + 1 :]
        if a.text.casefold() != b.text.casefold()
    ]


def _both(
    schema: GraphSchema,
    question: str,
    asked: frozenset[str],
    first: Named,
    second: Named,
    best: dict[Named, list[SchemaPath]],
) -> list[str]:
    """A pattern binding both nodes: joined on one asked node, else a path between them."""
    legs = best
    if first.label == second.label and not (asked - {first.label}):
        # Two things of one kind and nothing else asked ("destinations served from both A and
        # B"): they meet on a neighbour, through the same relationship if possible.
        around = rank_paths(_one_hop(schema, first.label), question, asked)
        legs = {first: around, second: around}
    for a in legs[first][:2]:
        b = next((b for b in legs[second] if b.end == a.end), None)
        if b is not None:
            return [_render([(a, first, None), (b, second, None)])]
    between = [p for p in schema_paths(schema, first.label, second.label) if p.hops]
    ranked = _near_the_best(rank_paths(between, question, asked), question, asked)
    return [_render([(path, first, second)]) for path in ranked[:1]]


def _near_the_best(
    ranked: list[SchemaPath], question: str, named: frozenset[str]
) -> list[SchemaPath]:
    """The ranked paths that cover as many named labels as the best and are less than one hop
    longer, without those that only walk on past a shorter one: a detour through an unrelated
    relationship is noise, not a choice."""
    # A path that only walks on past a shorter one covering the same named labels says less.
    kept = {p.hops for p in ranked}
    ranked = [
        p
        for p in ranked
        if not any(
            p.hops[:n] in kept
            and not (named - set(SchemaPath(p.start, p.hops[:n]).labels)) - (named - set(p.labels))
            for n in range(1, len(p.hops))
        )
    ]
    if not ranked:
        return []
    asked = question_words(question)
    first = ranked[0]
    missing, score = len(named - set(first.labels)), _score(first, asked, named)
    return [
        p
        for p in ranked
        if len(named - set(p.labels)) == missing and _score(p, asked, named) < score + 1
    ]


def _one_hop(schema: GraphSchema, label: str) -> list[SchemaPath]:
    hops = [Hop(r, True) for r in schema.relationships if r.start == label]
    hops += [Hop(r, False) for r in schema.relationships if r.end == label]
    return [SchemaPath(label, (hop,)) for hop in hops]


_CLOSE_ENOUGH = 0.85
"""How alike (difflib ratio) every word of a value and some word of the question must be for
a misspelt value to count as named ("Camenbert Pierot" for "Camembert Pierrot")."""


def _words(text: str) -> list[str]:
    return [w.casefold() for w in _WORDS.findall(text) if len(w) > 3]


def named_nodes(question: str, hints: Sequence[Hint]) -> list[Named]:
    """The nodes the question names, from the value lookup's hints, at most three.

    A value counts when the question spells it out (but not one inside a longer spelled value:
    "Billing" in "billing-api"), or shares a whole word with it ("Luton" for "London Luton
    Airport"), or when every word of it is close to one of the question's (a typo). The
    lookup's looser finds ("Data" for "date", "24, place Kléber" for "placed") are left out.
    Two values of one label that the question writes side by side ("Andrew Fuller": firstName
    and lastName) name one node.
    """
    lowered = question.casefold()
    asked = _words(question)
    spelled = [h for h in hints if h[2].casefold() in lowered]
    texts = {h[2].casefold() for h in spelled}
    spelled = [
        h for h in spelled if not any(h[2].casefold() in t and h[2].casefold() != t for t in texts)
    ]
    shared = [h for h in hints if set(_words(h[2])) & set(asked)]
    close = [
        h
        for h in hints
        if _words(h[2])
        and all(
            any(SequenceMatcher(None, word, other).ratio() >= _CLOSE_ENOUGH for other in asked)
            for word in _words(h[2])
        )
    ]
    chosen = list(dict.fromkeys(spelled))[:3] or list(dict.fromkeys(shared + close))[:2]
    nodes = _joined(question, chosen)
    parts = _parts(nodes)
    return [
        n for n in nodes if len(n.values) == 2 or (n.label, n.values[0][1].casefold()) not in parts
    ]


def unshadowed(question: str, hints: Sequence[Hint]) -> list[Hint]:
    """The hints less a value that is only part of a name the question writes over two
    properties: "Kelly" as someone's first name where "Jessica Kelly" is a first name and a
    surname (a trial on the POLE graph: the model wrote `{name: "Kelly"}` from that hint)."""
    nodes = _joined(question, hints)
    parts = _parts(nodes)
    kept = {(n.label, prop, value) for n in nodes if len(n.values) == 2 for prop, value in n.values}
    return [h for h in hints if (h[0], h[2].casefold()) not in parts or h in kept]


def _parts(nodes: Sequence[Named]) -> set[tuple[str, str]]:
    """(label, value) of every part of a name written over two properties."""
    return {
        (n.label, value.casefold()) for n in nodes if len(n.values) == 2 for _p, value in n.values
    }


def _joined(question: str, hints: Sequence[Hint]) -> list[Named]:
    """Hints as named nodes, two of one label written side by side in the question merged."""
    lowered = " ".join(question.casefold().split())
    nodes: list[Named] = []
    merged: set[Hint] = set()
    for a in hints:
        if a in merged:
            continue
        partner = next(
            (
                b
                for b in hints
                if b not in merged
                and b[0] == a[0]
                and b[1] != a[1]
                and (_side_by_side(a, b, lowered) or _side_by_side(b, a, lowered))
            ),
            None,
        )
        if partner is None:
            nodes.append(Named(a[0], ((a[1], a[2]),)))
        else:
            merged |= {a, partner}
            # In the question's order, whichever part the lookup ranked first.
            first, second = (a, partner) if _side_by_side(a, partner, lowered) else (partner, a)
            nodes.append(Named(a[0], ((first[1], first[2]), (second[1], second[2]))))
    return nodes


def _side_by_side(a: Hint, b: Hint, lowered: str) -> bool:
    return f"{a[2]} {b[2]}".casefold() in lowered
