"""Reads whose cost can be seen in the text: huge literal ranges and self-doubling reduce().

Why in the policy and not only in the engine: FalkorDB builds a `range()` list in one
allocation that its per-query memory cap does not see (`UNWIND range(1, 1000000000)` took
the embedded server to 19 GB and the kernel killed it), and a string that doubles on each
step of `reduce` grows past any cap before a timeout fires. Only literal (constant) sizes
are judged: `range(0, size(list) - 1)` depends on data and is left to the engine's limits.
"""

from __future__ import annotations

import logging
import math

from guardrails.cypher_tokens import Token

logger = logging.getLogger(__name__)

MAX_LIST_SIZE = 100_000
"""The largest list a literal `range()` may build (UNWIND, size(), comprehensions alike)."""

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
    """Top-level comma-separated arguments of the call whose "(" is at open_idx, and the ")"."""
    args: list[list[Token]] = [[]]
    depth = 0
    j = open_idx
    while j < len(tokens):
        tok = tokens[j]
        if tok.is_punct("(", "[", "{"):
            depth += 1
            if depth > 1:
                args[-1].append(tok)
        elif tok.is_punct(")", "]", "}"):
            depth -= 1
            if depth == 0:
                return args, j
            args[-1].append(tok)
        elif tok.is_punct(",") and depth == 1:
            args.append([])
        elif depth >= 1:
            args[-1].append(tok)
        j += 1
    return args, len(tokens)


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


def _doubling_reduce(tokens: list[Token], open_idx: int) -> bool:
    """`reduce(acc = …, x IN list | … acc … acc …)`: the accumulator used twice per step."""
    args, close = _call_arguments(tokens, open_idx)
    if not args or not args[0] or not args[0][0].is_name:
        return False
    accumulator = args[0][0].name
    body = tokens[open_idx + 1 : close]
    bar = next((k for k, t in enumerate(body) if t.is_punct("|")), None)
    if bar is None:
        return False
    uses = 0
    for k in range(bar + 1, len(body)):
        tok = body[k]
        prev = body[k - 1]
        if tok.is_name and tok.name == accumulator and not prev.is_punct(".", ":"):
            uses += 1
    return uses >= 2


def cost_problem(tokens: list[Token], max_list: int = MAX_LIST_SIZE) -> str | None:
    """Why the statement would exhaust the engine, as a sentence for the model, or None."""
    for i in range(len(tokens)):
        if _is_function(tokens, i, "range"):
            args, _ = _call_arguments(tokens, i + 1)
            size = range_size(args)
            if size is not None and size > max_list:
                shown = "an unbounded" if math.isinf(size) else f"a {size:,.0f}-element"
                return (
                    f"range() would build {shown} list (at most {max_list:,} here); "
                    "count or aggregate the graph's own data instead of generating numbers"
                )
        elif _is_function(tokens, i, "reduce") and _doubling_reduce(tokens, i + 1):
            return (
                "reduce() uses its accumulator twice per step, so the value doubles each "
                "time and exhausts memory; use the accumulator once per step"
            )
    return None
