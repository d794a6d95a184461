"""Reads whose cost can be seen in the text: lists built from ranges, and growing reduce().

Why in the policy and not only in the engine: FalkorDB builds a `range()` list in one
allocation that its per-query memory cap does not see (`UNWIND range(1, 1000000000)` took
the embedded server to 19 GB and the kernel killed it; `size(range(1, c * 10000000))` with a
counted `c` took 48 GB), nested comprehensions multiply (`[a IN range(1, 100000) |
range(1, 100000)]`), and a string that grows on each step of `reduce` (`s + s`,
`replace(s, 'x', 'xx')`) passes any cap before a timeout fires. The rules, each bounding what
the engine can build from one statement:

* `range()` with constant bounds builds at most MAX_LIST_SIZE elements.
* `range()` with a computed bound is allowed only when the bound is the size of something
  that already exists (`range(0, size(list) - 1)`, `length(path)`), counted as MAX_LIST_SIZE;
  any other computed bound (`c * 10000000`, a count, a property, a parameter) is refused.
* A range inside the body of a list comprehension, `reduce` or quantifier is multiplied by
  the size of the list that body runs over (a range's size, a literal list's length, or
  MAX_LIST_SIZE for data); the product stays under MAX_NESTED_ELEMENTS.
* `reduce` may not grow a string: its accumulator may not go through `replace()`, may not be
  used twice per step, and may not be concatenated (`+`) unless it starts as a number and the
  step adds no text, or starts as a list (which grows by one step's worth at a time).
* At most MAX_UNRELATED_PATTERNS patterns that share no variable are matched in one part of a
  statement (between WITHs, a WITH's carried names counting as one pattern): `MATCH (a), (b), (c) RETURN size(collect([a.id, b.id, c.id]))` builds every
  triple of nodes, and took the embedded engine to 3 GB past its per-query memory cap.
"""

from __future__ import annotations

import logging
import math
from dataclasses import dataclass

from guardrails.cypher_tokens import Token, matching_close, nesting, split_top_level

logger = logging.getLogger(__name__)

MAX_LIST_SIZE = 10_000
"""The largest list a literal `range()` may build (UNWIND, size(), comprehensions alike)."""
MAX_NESTED_ELEMENTS = 100_000
"""The most elements ranges nested in comprehensions/reduce may build together."""
MAX_UNRELATED_PATTERNS = 2
"""Patterns sharing no variable that one statement part may match (each pair multiplies)."""
_PATTERN_ENDS = frozenset(
    {"WHERE", "RETURN", "WITH", "MATCH", "OPTIONAL", "UNWIND", "CALL", "ORDER", "SKIP",
     "LIMIT", "UNION", "CREATE", "MERGE", "SET", "DELETE", "DETACH", "REMOVE", "FOREACH"}
)  # fmt: skip

# Functions a constant bound may use (the model writes toInteger('1e9') to dodge a check).
_CONVERSIONS = frozenset({"tointeger", "tofloat", "tointegerornull", "tofloatornull"})


class _NotConstant(Exception):
    """Internal: the expression depends on something other than literals."""


def _number(text: str) -> float:
    cleaned = text.replace("_", "").lower()
    try:
        if cleaned.startswith("0x"):
            return float(int(cleaned, 16))
        if cleaned.startswith("0o"):
            return float(int(cleaned[2:], 8))
        return float(cleaned)
    except ValueError:
        raise _NotConstant from None


class _Constant:
    """A tiny recursive-descent evaluator for + - * / % ^, unary minus, parentheses, toInteger."""

    def __init__(self, tokens: list[Token]) -> None:
        self.tokens = tokens
        self.i = 0

    def value(self) -> float:
        result = self._sum()
        if self.i != len(self.tokens):
            raise _NotConstant
        return result

    def _peek(self, *texts: str) -> bool:
        return self.i < len(self.tokens) and self.tokens[self.i].is_punct(*texts)

    def _sum(self) -> float:
        left = self._product()
        while self._peek("+", "-"):
            op = self.tokens[self.i].text
            self.i += 1
            right = self._product()
            left = left + right if op == "+" else left - right
        return left

    def _product(self) -> float:
        left = self._power()
        while self._peek("*", "/", "%"):
            op = self.tokens[self.i].text
            self.i += 1
            right = self._power()
            if op == "*":
                left *= right
            elif right == 0:
                raise _NotConstant
            else:
                left = left / right if op == "/" else math.fmod(left, right)
        return left

    def _power(self) -> float:
        base = self._unary()
        if self._peek("^"):
            self.i += 1
            exponent = self._power()
            try:
                return float(base**exponent)
            except (OverflowError, ZeroDivisionError):
                return math.inf
        return base

    def _unary(self) -> float:
        if self._peek("-"):
            self.i += 1
            return -self._unary()
        if self._peek("+"):
            self.i += 1
            return self._unary()
        return self._atom()

    def _atom(self) -> float:
        if self.i >= len(self.tokens):
            raise _NotConstant
        tok = self.tokens[self.i]
        if tok.kind == "number":
            self.i += 1
            return _number(tok.text)
        if tok.kind == "string":
            self.i += 1
            return _number(tok.value.strip())
        if tok.is_punct("("):
            self.i += 1
            inner = self._sum()
            if not self._peek(")"):
                raise _NotConstant
            self.i += 1
            return inner
        if (
            tok.is_word
            and tok.text.lower() in _CONVERSIONS
            and self.i + 1 < len(self.tokens)
            and self.tokens[self.i + 1].is_punct("(")
        ):
            self.i += 2
            inner = self._sum()
            if not self._peek(")"):
                raise _NotConstant
            self.i += 1
            return float(math.trunc(inner)) if "integer" in tok.text.lower() else inner
        raise _NotConstant


def constant_value(tokens: list[Token]) -> float | None:
    """The value of an expression made only of literals, or None when it depends on data."""
    if not tokens:
        return None
    try:
        return _Constant(tokens).value()
    except (_NotConstant, OverflowError, RecursionError):
        return None


def _call_arguments(tokens: list[Token], open_idx: int) -> tuple[list[list[Token]], int]:
    """Top-level comma-separated arguments of the call whose "(" is at open_idx, and the ")"
    (len(tokens) when it is not closed)."""
    close = matching_close(tokens, open_idx)
    end = len(tokens) if close is None else close
    return [tokens[a:b] for a, b in split_top_level(tokens, open_idx + 1, end)], end


def _is_function(tokens: list[Token], i: int, name: str) -> bool:
    tok = tokens[i]
    prev = tokens[i - 1] if i else None
    return (
        tok.is_word
        and tok.text.lower() == name
        and i + 1 < len(tokens)
        and tokens[i + 1].is_punct("(")
        and not (prev is not None and prev.is_punct(".", ":"))
    )


def range_size(args: list[list[Token]]) -> float | None:
    """Elements a `range(start, end[, step])` builds, when every argument is a constant."""
    if len(args) not in (2, 3):
        return None
    start, end = constant_value(args[0]), constant_value(args[1])
    step = constant_value(args[2]) if len(args) == 3 else 1.0
    if start is None or end is None or step is None or step == 0:
        return None
    if math.isinf(start) or math.isinf(end):
        return math.inf
    return max(0.0, math.floor((end - start) / step) + 1)


def _depth_zero(tokens: list[Token], *texts: str) -> int | None:
    """Index of the first punctuation in texts outside any bracket of `tokens`, or None."""
    return next(
        (k for k, tok, depth in nesting(tokens) if depth == 0 and tok.is_punct(*texts)), None
    )


_COMPARISONS = ("<", ">", "<=", ">=", "=", "<>", "!=")


def _uses(tokens: list[Token], name: str) -> int:
    """Uses of `name` as a value; one side of a comparison (`x > m`) builds nothing."""
    count = 0
    for k, tok in enumerate(tokens):
        if not tok.is_name or tok.name != name:
            continue
        prev = tokens[k - 1] if k else None
        nxt = tokens[k + 1] if k + 1 < len(tokens) else None
        if prev is not None and prev.is_punct(".", ":"):
            continue
        if (prev is not None and prev.is_punct(*_COMPARISONS)) or (
            nxt is not None and nxt.is_punct(*_COMPARISONS)
        ):
            continue
        count += 1
    return count


@dataclass(frozen=True)
class _Reduce:
    accumulator: str
    init: list[Token]
    body: list[Token]


def _reduce_parts(tokens: list[Token], open_idx: int) -> _Reduce | None:
    """`reduce(acc = init, x IN list | body)` taken apart, or None when it has another shape."""
    args, _ = _call_arguments(tokens, open_idx)
    if len(args) != 2 or len(args[0]) < 3 or not args[0][0].is_name:
        return None
    if not args[0][1].is_punct("="):
        return None
    bar = _depth_zero(args[1], "|")
    if bar is None:
        return None
    return _Reduce(args[0][0].name, args[0][2:], args[1][bar + 1 :])


def _doubling_reduce(tokens: list[Token], open_idx: int) -> bool:
    """`reduce(acc = …, x IN list | … acc … acc …)`: the accumulator used twice per step."""
    parts = _reduce_parts(tokens, open_idx)
    return parts is not None and _uses(parts.body, parts.accumulator) >= 2


def _growing_reduce(tokens: list[Token], open_idx: int) -> str | None:
    """How a reduce() grows a string step by step (replace or concatenation), or None."""
    parts = _reduce_parts(tokens, open_idx)
    if parts is None or not _uses(parts.body, parts.accumulator):
        return None
    body = parts.body
    for k, tok in enumerate(body):
        if (
            tok.is_word
            and tok.text.lower() == "replace"
            and k + 1 < len(body)
            and body[k + 1].is_punct("(")
        ):
            args, _ = _call_arguments(body, k + 1)
            if any(_uses(arg, parts.accumulator) for arg in args):
                return "replace()"
    if not any(tok.is_punct("+") for tok in body):
        return None
    if parts.init and parts.init[0].is_punct("["):
        return None  # a list grows by one step's worth each time; the range rules bound steps
    numeric = constant_value(parts.init) is not None and not any(
        tok.kind == "string" for tok in parts.init
    )
    adds_text = any(
        tok.kind == "string" or (tok.is_word and tok.text.lower() == "tostring") for tok in body
    )
    if numeric and not adds_text:
        return None
    return "concatenation (+)"


_SIZE_FUNCTIONS = frozenset({"size", "length"})


def _data_bounded(arg: list[Token]) -> bool:
    """`size(x)`, `length(p)`, optionally ± a small constant: a bound the data already holds."""
    if len(arg) < 3 or not (
        arg[0].is_word and arg[0].text.lower() in _SIZE_FUNCTIONS and arg[1].is_punct("(")
    ):
        return False
    _, close = _call_arguments(arg, 1)
    rest = arg[close + 1 :]
    if not rest:
        return True
    if not rest[0].is_punct("+", "-"):
        return False
    offset = constant_value(rest[1:])
    return offset is not None and abs(offset) <= MAX_LIST_SIZE


_ITERATORS = frozenset({"reduce", "any", "all", "none", "single", "extract", "filter"})


@dataclass
class _Brackets:
    """For each token, the "(" / "[" that most closely encloses it, and where brackets close."""

    parent: list[int]
    close: dict[int, int]


def _brackets(tokens: list[Token]) -> _Brackets:
    stack: list[int] = []
    found = _Brackets([], {})
    for j, tok in enumerate(tokens):
        found.parent.append(stack[-1] if stack else -1)
        if tok.is_punct("(", "[", "{"):
            stack.append(j)
        elif tok.is_punct(")", "]", "}") and stack:
            found.close[stack.pop()] = j
    return found


def _iteration_source(tokens: list[Token], open_idx: int, end: int) -> tuple[int, int] | None:
    """The list a comprehension/quantifier/reduce opened at open_idx runs over: (start, end)."""
    j = open_idx + 1
    if (
        tokens[open_idx].is_punct("(")
        and open_idx
        and tokens[open_idx - 1].text.lower() == "reduce"
    ):
        comma = _depth_zero(tokens[j:end], ",")
        if comma is None:
            return None
        j += comma + 1
    if not (j + 1 < end and tokens[j].is_name and tokens[j + 1].is_keyword("IN")):
        return None
    start = j + 2
    stop = next(
        (
            k
            for k, tok, depth in nesting(tokens, start, end)
            if depth == 0 and (tok.is_punct("|") or tok.is_keyword("WHERE"))
        ),
        end,
    )
    return start, stop


def _list_size(tokens: list[Token], start: int, end: int, max_list: int) -> float:
    """How many elements the list expression tokens[start:end] can hold, at most."""
    span = tokens[start:end]
    if span and _is_function(tokens, start, "range"):
        args, close = _call_arguments(tokens, start + 1)
        if close == end - 1:
            size = range_size(args)
            return float(max_list) if size is None else size
    if span and span[0].is_punct("[") and span[-1].is_punct("]"):
        inner = span[1:-1]
        if not inner:
            return 0.0
        if not (len(inner) > 1 and inner[1].is_keyword("IN")) and _depth_zero(inner, "|") is None:
            return float(len(split_top_level(inner, 0, len(inner))))
    return float(max_list)


def _nesting_factor(tokens: list[Token], i: int, shape: _Brackets, max_list: int) -> float:
    """The product of the list sizes the enclosing comprehensions run the token at i over."""
    factor = 1.0
    o = shape.parent[i]
    while o >= 0:
        opener = tokens[o]
        end = shape.close.get(o, len(tokens))
        iterates = opener.is_punct("[") or (
            opener.is_punct("(")
            and o > 0
            and tokens[o - 1].is_word
            and tokens[o - 1].text.lower() in _ITERATORS
        )
        if iterates:
            source = _iteration_source(tokens, o, end)
            if source is not None and i >= source[1]:
                factor *= _list_size(tokens, source[0], source[1], max_list)
        o = shape.parent[o]
    return factor


def _pattern_parts(tokens: list[Token]) -> list[list[set[str]]]:
    """Per UNION branch and per WITH-separated part of it, the comma-separated MATCH patterns,
    each as the set of node variables it names (an anonymous node is a pattern of its own).
    A WITH starts a new part whose first "pattern" is every name the WITH carries (together:
    a count carried on is one row, and carried nodes were already counted before it)."""
    segments: list[list[set[str]]] = [[]]
    in_match = False
    part: set[str] | None = None
    carried: set[str] | None = None
    for i, tok, depth in nesting(tokens):
        if depth == 0 and tok.is_keyword("UNION"):
            segments.append([])
            in_match, part, carried = False, None, None
        elif (
            depth == 0
            and tok.is_keyword("WITH")
            and not (i and tokens[i - 1].is_keyword("STARTS", "ENDS"))
        ):
            carried = set()
            segments.append([carried])
            in_match, part = False, None
        elif depth == 0 and tok.is_keyword("MATCH"):
            in_match, part, carried = True, set(), None
            segments[-1].append(part)
        elif depth == 0 and tok.is_word and tok.text.upper() in _PATTERN_ENDS:
            in_match, part, carried = False, None, None
        elif depth == 0 and in_match and tok.is_punct(","):
            part = set()
            segments[-1].append(part)
        elif depth == 0 and in_match and part is not None and tok.is_punct("("):
            nxt = tokens[i + 1] if i + 1 < len(tokens) else None
            named = nxt is not None and nxt.is_name and not nxt.is_punct()
            part.add(nxt.name if named and nxt is not None else f"#{i}")
        elif carried is not None and tok.is_name:
            carried.add(tok.name)
    return [[p for p in segment if p] for segment in segments]


def _unrelated_patterns(tokens: list[Token]) -> int:
    """The most groups of patterns, in one part of the statement, that share no variable."""
    most = 0
    for parts in _pattern_parts(tokens):  # one UNION branch or WITH-separated part
        groups: list[set[str]] = []
        for part in parts:
            joined = [g for g in groups if g & part]
            merged = set(part).union(*joined)
            groups = [g for g in groups if not g & part] + [merged]
        most = max(most, len(groups))
    return most


def cost_problem(tokens: list[Token], max_list: int = MAX_LIST_SIZE) -> str | None:
    """Why the statement would exhaust the engine, as a sentence for the model, or None."""
    if (unrelated := _unrelated_patterns(tokens)) > MAX_UNRELATED_PATTERNS:
        return (
            f"it matches {unrelated} patterns that share no variable, so the engine pairs every "
            "match of each with every match of the others; link them through relationships, or "
            "count each one in its own step (MATCH (a:A) WITH count(a) AS n MATCH …)"
        )
    shape: _Brackets | None = None
    for i in range(len(tokens)):
        if _is_function(tokens, i, "range"):
            args, _ = _call_arguments(tokens, i + 1)
            size = range_size(args)
            if size is None:
                if len(args) not in (2, 3) or not all(
                    constant_value(arg) is not None or _data_bounded(arg) for arg in args
                ):
                    return (
                        "range() with a computed bound can build a list of any size; use "
                        f"literal bounds (at most {max_list:,} elements), e.g. range(1, 10), or "
                        "the size of a list you have, e.g. range(0, size(xs) - 1)"
                    )
                size = float(max_list)
            elif size > max_list:
                shown = "an unbounded" if math.isinf(size) else f"a {size:,.0f}-element"
                return (
                    f"range() would build {shown} list (at most {max_list:,} here); count or "
                    "aggregate the graph's own data instead, e.g. count(n), or use a smaller range"
                )
            shape = shape or _brackets(tokens)
            total = size * _nesting_factor(tokens, i, shape, max_list)
            if total > MAX_NESTED_ELEMENTS:
                return (
                    f"range() inside a list comprehension or reduce() would build about "
                    f"{total:,.0f} elements (at most {MAX_NESTED_ELEMENTS:,}); use one level of "
                    "iteration over small lists, e.g. [x IN range(1, 10) | x * 2]"
                )
        elif _is_function(tokens, i, "reduce"):
            if _doubling_reduce(tokens, i + 1):
                return (
                    "reduce() uses its accumulator twice per step, so the value doubles each "
                    "time and exhausts memory; use the accumulator once per step"
                )
            growth = _growing_reduce(tokens, i + 1)
            if growth is not None:
                return (
                    f"reduce() grows a string by {growth} on each step, which can exhaust "
                    "memory; aggregate instead, e.g. sum(), count() or collect()"
                )
    return None
