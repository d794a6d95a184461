"""Answers held to the rows, the empty-result sentence, and follow-ups that lean on history."""

from __future__ import annotations

import datetime as dt
import math
import re
from collections.abc import Iterable, Iterator, Sequence
from typing import Any

from graph_agent.graphdb.lookup import MONTHS
from guardrails import content_words, name_words, stem

_COMMON_TEXT = """
    a an the this that these those there here it its they them their theirs he him his she
    her hers we us our you your i me my yes no not none nothing nobody all any each every
    some both either neither only also just total overall in on at of for by with from to
    into onto about and or but nor as if so than then which what who whom whose when where
    why how is are was were be been being has have had do does did can could may might will
    would shall should must there's it's let here's note based according result results
    answer answers graph database query queries row rows count number numbers average sum
    total top most least more less first last next other others another
    monday tuesday wednesday thursday friday saturday sunday mr mrs ms dr
"""
COMMON_WORDS = frozenset(_COMMON_TEXT.split()) | MONTHS
"""Words that are capitalised for grammar, not because they name a thing of the graph."""

_NUMBER = re.compile(r"(?<![\w.])(\d{1,3}(?:,\d{3})+|\d+)(\.\d+)?(%?)(?![\w])")
_ORDINAL = re.compile(r"\b\d+(?:st|nd|rd|th)\b", re.IGNORECASE)
_ENUMERATOR = re.compile(r"^[ \t]*\d+[.)][ \t]+", re.MULTILINE)
_QUOTED = re.compile(r"\"([^\"\n]{1,120})\"|“([^”\n]{1,120})”|(?<!\w)'([^'\n]{1,120})'(?!\w)")
_TOKEN = re.compile(r"[^\W_](?:[\w&]|['’.-](?=\w))*")
_WORD = re.compile(r"[^\W_]+")
_PLACEHOLDER = re.compile(r"<[A-Za-z][\w ]{0,30}>")
_SENTENCE_END = re.compile(r"[.!?]\s*$")
_BULLET = re.compile(r"^\s*(?:[-*•·]|\d+[.)])\s*$")

_LEANING = re.compile(
    r"\b(?:that one|those ones|these ones|the same(?: one)?|the former|the latter|"
    r"the previous(?: ones?)?|the above|"
    r"(?:he|she|him|his|her|hers|they|them|their|theirs|it|its|those|these)\b)",
    re.IGNORECASE,
)
"""Words that point back at something named earlier ("that" alone is usually a relative)."""


# --- what the rows hold ---------------------------------------------------------------------


def _scalars(value: Any) -> Iterator[Any]:
    """Scalar values inside a value: list items, map values, node properties."""
    if isinstance(value, dict):
        for key, inner in value.items():
            if key not in ("_labels", "_type"):
                yield from _scalars(inner)
    elif isinstance(value, list | tuple | set | frozenset):
        for inner in value:
            yield from _scalars(inner)
    else:
        yield value


def _list_lengths(value: Any) -> Iterator[int]:
    if isinstance(value, list | tuple):
        yield len(value)
        for inner in value:
            yield from _list_lengths(inner)
    elif isinstance(value, dict):
        for inner in value.values():
            yield from _list_lengths(inner)


class Evidence:
    """The numbers and words a grounded answer may use: the rows' values, the row count and
    list lengths, and the text the user gave (question, query literals, column names)."""

    def __init__(
        self, rows: Sequence[Sequence[Any]], known_text: str = "", *, count_rows: bool = True
    ) -> None:
        """`count_rows=False` when the rows stopped at the row cap: their number is the cap,
        not a count the answer may state."""
        self.numbers: set[float] = {float(len(rows))} if count_rows else set()
        self.texts: list[str] = [known_text.casefold()] if known_text else []
        for row in rows:
            for value in row:
                self.numbers.update(float(n) for n in _list_lengths(value))
                for scalar in _scalars(value):
                    self._add(scalar)
        if known_text:
            self.numbers.update(n for n, _decimals in _numbers_in(known_text))

    def _add(self, scalar: Any) -> None:
        if scalar is None:
            return
        if isinstance(scalar, bool):
            self.texts.append(str(scalar).casefold())
            return
        if isinstance(scalar, int | float):
            if math.isfinite(scalar):
                self.numbers.add(abs(float(scalar)))
            return
        text = scalar.isoformat() if isinstance(scalar, dt.date | dt.time) else str(scalar)
        self.texts.append(text.casefold())
        self.numbers.update(n for n, _decimals in _numbers_in(text.replace("-", " ")))

    def has_number(self, value: float, decimals: int, *, percent: bool = False) -> bool:
        """True when some value rounds to `value` at the precision it was written with."""
        tolerance = 0.5 * 10.0**-decimals + 1e-9
        candidates = [(value, tolerance)]
        if percent:  # 45% may be a stored 0.45
            candidates.append((value / 100, tolerance / 100))
        return any(
            abs(held - wanted) <= within for held in self.numbers for wanted, within in candidates
        )

    def has_name(self, name: str) -> bool:
        """True when one held text contains the name, or every word of it."""
        folded = name.casefold()
        forms = [folded, folded[:-1]] if folded.endswith("s") and len(folded) > 3 else [folded]
        for form in forms:  # "Books" in an answer, `:Book` in the query
            pattern = re.compile(rf"(?<!\w){re.escape(form)}(?!\w)")
            words = set(_WORD.findall(form))
            for text in self.texts:
                if pattern.search(text) or (words and words <= set(_WORD.findall(text))):
                    return True
        return False


def _numbers_in(text: str) -> Iterator[tuple[float, int]]:
    """(absolute value, decimals written) of each number in a text: 1,234 and 12.50 forms."""
    for match in _NUMBER.finditer(text):
        whole, fraction, _percent = match.groups()
        value = float(whole.replace(",", "") + (fraction or ""))
        yield value, len(fraction) - 1 if fraction else 0


# --- what an answer claims ------------------------------------------------------------------


def _is_common(word: str) -> bool:
    return word.casefold().strip("'’.") in COMMON_WORDS


def _runs(text: str) -> Iterator[tuple[list[str], bool]]:
    """Runs of capitalised words, and whether each run opens a sentence."""
    run: list[str] = []
    starts_sentence = True
    run_opens = False
    previous_end = 0
    for match in _TOKEN.finditer(text):
        gap = text[previous_end : match.start()]
        previous_end = match.end()
        line_start = starts_sentence or "\n" in gap
        opens = line_start or bool(_SENTENCE_END.search(gap))
        tail = gap.rsplit("\n", 1)[-1]
        if line_start and tail.strip() and _BULLET.match(tail):
            opens = False  # a list item names a thing; its capital is not grammar
        word = match.group()
        starts_sentence = False
        capitalised = word[0].isupper()
        joined = run and capitalised and not opens and gap.strip() == ""
        if joined:
            run.append(word)
            continue
        if run:
            yield run, run_opens
            run = []
        if capitalised:
            run, run_opens = [word], opens
    if run:
        yield run, run_opens


def capitalised_names(text: str) -> list[str]:
    """Names a text gives in capitals, without grammar capitals.

    Common words are trimmed from both ends of a run ("The Matrix" → "Matrix", a part the
    rows hold either way); a single word opening a sentence is left out, since most of them
    are ordinary words ("Books by …") and the numbers beside them are still checked.
    """
    names: list[str] = []
    for run, opens in _runs(text):
        words = [w.rstrip(".") if w.endswith(".") and len(w) > 2 else w for w in run]
        words = [w[:-2] if w.endswith(("'s", "’s")) else w for w in words]
        while words and _is_common(words[0]):
            words.pop(0)
            opens = False
        while words and _is_common(words[-1]):
            words.pop()
        if not words or (opens and len(words) == 1):
            continue
        names.append(" ".join(words))
    return names


def quoted_names(text: str) -> list[str]:
    """Text inside double, curly or single quotes."""
    return [next(g for g in m.groups() if g is not None).strip() for m in _QUOTED.finditer(text)]


def unsupported_claims(answer: str, evidence: Evidence) -> list[str]:
    """Numbers and names in `answer` that the evidence does not hold (empty when grounded)."""
    text = _ENUMERATOR.sub("- ", answer)  # "1." numbers a list; it claims nothing
    text = _ORDINAL.sub(" ", text)
    missing: list[str] = []
    for match in _NUMBER.finditer(text):
        whole, fraction, percent = match.groups()
        value = float(whole.replace(",", "") + (fraction or ""))
        decimals = len(fraction) - 1 if fraction else 0
        if not evidence.has_number(value, decimals, percent=bool(percent)):
            missing.append(match.group())
    # A template placeholder copied from a prompt ("<products>") is never an answer.
    missing.extend(match.group() for match in _PLACEHOLDER.finditer(text))
    unquoted = _QUOTED.sub(" ; ", text)  # a quoted name is checked whole, not again in parts
    for name in [*quoted_names(text), *capitalised_names(unquoted)]:
        if name and not _is_common(name) and not evidence.has_name(name):
            missing.append(name)
    return missing


# --- an empty result ------------------------------------------------------------------------


def question_entities(
    question: str, hint_values: Iterable[str] = (), ignore: Iterable[str] = ()
) -> list[str]:
    """What a question names: quoted text, capitalised names, and stored values it mentions.

    `ignore` holds schema words (labels, types) that are capitalised without naming a thing.
    """
    skip = {word.casefold() for word in ignore}
    folded = question.casefold()
    found: list[str] = []
    for value in hint_values:
        if any(value.casefold() == seen.casefold() for seen in found):
            continue  # the same value held by several labels ("postgres" and "postgres")
        if value.strip() and re.search(rf"(?<!\w){re.escape(value.casefold())}(?!\w)", folded):
            found.append(value)
    for name in [*quoted_names(question), *capitalised_names(question)]:
        if name.casefold() in skip:
            continue
        if any(name.casefold() in seen.casefold() for seen in found):
            continue
        found = [seen for seen in found if seen.casefold() not in name.casefold()]
        found.append(name)
    return found


def _join(names: Sequence[str]) -> str:
    quoted = [f'"{name}"' for name in names]
    if len(quoted) <= 2:
        return " and ".join(quoted)
    return ", ".join(quoted[:-1]) + " and " + quoted[-1]


def nothing_found(entities: Sequence[str]) -> str:
    """The answer for an empty result: nothing matches, naming what the question named."""
    if not entities:
        return "The graph has nothing that matches this question."
    return f"The graph has nothing that matches this question about {_join(entities[:4])}."


# --- follow-ups that stand alone ------------------------------------------------------------


_PARTITIVE = re.compile(
    r"\b(?:of|among|from|out of)\s+(?:those|these|them|the above)\b", re.IGNORECASE
)
"""A follow-up that asks only among the previous answer ("which of those has the most …")."""


def dropped_reference(
    standalone: str, question: str, previous: str, labels: Iterable[str] = ()
) -> list[str]:
    """The words of a follow-up that restrict it to the previous answer when its rewrite lost
    that restriction: "which of those has the most admins?" after "Which computers run Windows
    Server 2003?" rewritten "Which computer has the most admins?" (the cybersecurity graph's
    playground) asked about every computer. Lost when the rewrite keeps none of the words the
    previous question had and the follow-up did not, the names of `labels` ("computers")
    aside; empty when nothing was lost, or there was nothing to keep."""
    found = [m.group().casefold() for m in _PARTITIVE.finditer(question)]
    if not found:
        return []
    aside = {stem(w) for w in content_words(question)} | {
        stem(w) for label in labels for w in name_words(label)
    }
    earlier = {stem(w) for w in _kept_words(previous)} - aside
    if not earlier or earlier & {stem(w) for w in _kept_words(standalone)}:
        return []
    return found


_SINGULAR_REFERENCE = re.compile(r"\b(?:its|it|this one|that one)\b", re.IGNORECASE)


def lost_referent(standalone: str, question: str, answer: str) -> tuple[str, str] | None:
    """The follow-up's "it" (or "its", "that one") and the one name the previous answer gave,
    when the rewrite lost it: "which destination centers does it supply?" after "• description:
    San Diego Distribution Center, count: 3" rewritten "Which destination centers does the
    distribution center supply?" (a supply-chain playground) asked about every center. None
    when the answer named no one thing (no name, or several) or the rewrite keeps its name."""
    found = _SINGULAR_REFERENCE.search(question)
    names = list(dict.fromkeys(capitalised_names(answer)))
    if found is None or len(names) != 1:
        return None
    if names[0].casefold() in standalone.casefold():
        return None
    return found.group(), names[0]


def with_referent(question: str, pronoun: str, name: str) -> str:
    """The follow-up with its first `pronoun` replaced by `name` ("its" by "<name>'s")."""
    said = name + "'s" if pronoun.casefold() == "its" else name
    text = re.sub(rf"\b{re.escape(pronoun)}\b", said, question.strip(), count=1)
    return text[:1].upper() + text[1:]


def _kept_words(text: str) -> list[str]:
    """Content words and numbers ("2003" is a condition too)."""
    return [*content_words(text), *re.findall(r"\b\d[\d.,]*\b", text)]


def leaning_words(standalone: str, question: str) -> list[str]:
    """Words in a rewritten follow-up that still point at the history with nothing named.

    A pronoun or "that one"/"the same" in the rewrite counts when the rewrite names nothing
    the original question did not (a rewrite that added a name has resolved it) or when it
    is unchanged. "that/those/these" before a noun ("those films") still leans on the history
    when that noun is all the rewrite says.
    """
    found = [m.group().casefold() for m in _LEANING.finditer(standalone)]
    if not found:
        return []
    if standalone.strip().casefold() == question.strip().casefold():
        return found
    named = {n.casefold() for n in [*capitalised_names(standalone), *quoted_names(standalone)]}
    asked = {n.casefold() for n in [*capitalised_names(question), *quoted_names(question)]}
    if named - asked:
        return []
    return found
