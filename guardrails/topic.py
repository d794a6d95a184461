"""The topic guard's structured decision and lenient parsing of JSON objects in LLM replies."""

from __future__ import annotations

import json
import logging
import re
from typing import Any, Literal, TypeVar

from pydantic import BaseModel, ValidationError, field_validator

from guardrails.cypher_tokens import matching_close, tokenize

logger = logging.getLogger(__name__)

T = TypeVar("T", bound=BaseModel)

Scope = Literal["in_scope", "out_of_scope", "needs_clarification"]

# Spellings models use for the three scopes, after lower-casing and mapping " "/"-" to "_".
_SCOPE_ALIASES: dict[str, Scope] = {
    "in_scope": "in_scope",
    "inscope": "in_scope",
    "in": "in_scope",
    "yes": "in_scope",
    "true": "in_scope",
    "answerable": "in_scope",
    "out_of_scope": "out_of_scope",
    "outofscope": "out_of_scope",
    "out": "out_of_scope",
    "no": "out_of_scope",
    "false": "out_of_scope",
    "off_topic": "out_of_scope",
    "needs_clarification": "needs_clarification",
    "need_clarification": "needs_clarification",
    "clarification": "needs_clarification",
    "clarify": "needs_clarification",
    "ambiguous": "needs_clarification",
    "unclear": "needs_clarification",
}


class DecisionParseError(ValueError):
    """The reply holds no valid object; the message is the JSON or pydantic error, for a repair."""


class ScopeDecision(BaseModel):
    """What the guard decided about one (follow-up) question."""

    standalone_question: str = ""
    """The question rewritten to stand alone ("" when the model left it out: keep the original)."""
    scope: Scope
    """Whether the graph can answer it."""
    reason: str = ""
    """Why, in a few words (for logs and the refusal)."""
    clarification: str | None = None
    """The question to ask back when scope is needs_clarification."""

    @field_validator("scope", mode="before")
    @classmethod
    def _normalise_scope(cls, value: Any) -> Any:
        if isinstance(value, bool):
            return "in_scope" if value else "out_of_scope"
        if isinstance(value, str):
            key = re.sub(r"[\s\-]+", "_", value.strip().lower())
            return _SCOPE_ALIASES.get(key, value)
        return value

    @field_validator("standalone_question", "reason", mode="before")
    @classmethod
    def _none_is_empty(cls, value: Any) -> Any:
        return "" if value is None else value

    @field_validator("clarification", mode="before")
    @classmethod
    def _blank_is_none(cls, value: Any) -> Any:
        if isinstance(value, str) and not value.strip():
            return None
        return value


def fallback_decision(question: str) -> ScopeDecision:
    """The safe default when no decision could be parsed: in scope, question unchanged."""
    return ScopeDecision(
        standalone_question=question,
        scope="in_scope",
        reason="fallback: the guard's reply could not be parsed",
    )


def parse_decision(reply: str) -> ScopeDecision:
    """The guard's decision from its reply; raises DecisionParseError (see parse_json_object)."""
    return parse_json_object(reply, ScopeDecision)


def parse_json_object(reply: str, model: type[T]) -> T:
    """The first JSON object in an LLM reply, validated as `model`.

    Lenient about what models do to JSON: ```json fences, prose before and after, single
    quotes, trailing commas, unquoted keys, Python's True/False/None, // comments. Raises
    DecisionParseError whose message is the JSON or validation error, so that the caller can
    send it back for one repair attempt.
    """
    candidate = _object_text(reply)
    try:
        data = json.loads(candidate)
    except json.JSONDecodeError:
        repaired = _repair(candidate)
        try:
            data = json.loads(repaired)
        except json.JSONDecodeError as error:
            raise DecisionParseError(f"the reply is not valid JSON: {error}") from error
    if not isinstance(data, dict):
        raise DecisionParseError(f"expected a JSON object, got {type(data).__name__}")
    try:
        return model.model_validate(data)
    except ValidationError as error:
        raise DecisionParseError(str(error)) from error


def _object_text(reply: str) -> str:
    """The text of the first balanced {…} in the reply (inside a fence when there is one)."""
    text = reply.strip()
    fence = re.search(r"```[A-Za-z0-9_-]*[ \t]*\n?(.*?)(?:```|\Z)", text, re.DOTALL)
    if fence is not None and "{" in fence.group(1):
        text = fence.group(1)
    start = text.find("{")
    if start == -1:
        raise DecisionParseError("the reply holds no JSON object (no '{' found)")
    # Near-JSON is lexically Cypher: strings in either quote with backslash escapes, and //
    # comments, so the Cypher tokenizer keeps a brace inside them from counting.
    tokens = tokenize(text[start:])
    close = matching_close(tokens, 0)
    if close is None:
        # Unbalanced (a cut-off reply): hand over what there is and let the parser say why.
        return text[start:]
    return text[start : start + tokens[close].end]


_PYTHON_WORDS = {"True": "true", "False": "false", "None": "null"}


def _repair(text: str) -> str:
    """Rewrite near-JSON (Python dict literals, JS object literals) into JSON."""
    out: list[str] = []
    i = 0
    n = len(text)
    while i < n:
        ch = text[i]
        if ch in ("'", '"'):
            end, value = _read_string(text, i)
            out.append(json.dumps(value, ensure_ascii=False))
            i = end
            continue
        if text.startswith("//", i):
            newline = text.find("\n", i)
            i = n if newline == -1 else newline
            continue
        if ch == ",":
            j = i + 1
            while j < n and text[j].isspace():
                j += 1
            if j < n and text[j] in "}]":
                i += 1  # a trailing comma
                continue
        if ch.isalpha() or ch == "_":
            j = i
            while j < n and (text[j].isalnum() or text[j] == "_"):
                j += 1
            word = text[i:j]
            k = j
            while k < n and text[k].isspace():
                k += 1
            if k < n and text[k] == ":" and _previous_significant(out) in ("{", ","):
                out.append(json.dumps(word))  # an unquoted key
            else:
                out.append(_PYTHON_WORDS.get(word, word))
            i = j
            continue
        out.append(ch)
        i += 1
    return "".join(out)


def _previous_significant(out: list[str]) -> str:
    for piece in reversed(out):
        stripped = piece.strip()
        if stripped:
            return stripped[-1]
    return ""


def _read_string(text: str, start: int) -> tuple[int, str]:
    """Read a '…' or "…" literal with backslash escapes: (end offset, value)."""
    quote = text[start]
    out: list[str] = []
    i = start + 1
    n = len(text)
    escapes = {"n": "\n", "t": "\t", "r": "\r", "b": "\b", "f": "\f", "/": "/"}
    while i < n:
        ch = text[i]
        if ch == "\\" and i + 1 < n:
            nxt = text[i + 1]
            if nxt == "u" and re.fullmatch(r"[0-9a-fA-F]{4}", text[i + 2 : i + 6]):
                out.append(chr(int(text[i + 2 : i + 6], 16)))
                i += 6
                continue
            out.append(escapes.get(nxt, nxt))
            i += 2
            continue
        if ch == quote:
            return i + 1, "".join(out)
        out.append(ch)
        i += 1
    return n, "".join(out)
