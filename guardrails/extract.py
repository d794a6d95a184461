"""Pulling the one Cypher statement out of an LLM reply: fences, stray prose, labels, semicolons."""

from __future__ import annotations

import logging
import re

from guardrails.cypher_tokens import KEYWORDS

logger = logging.getLogger(__name__)

# Words a statement can start with. Write clauses are included on purpose: extraction must
# hand a write to the policy (which refuses it with a reason), never drop it silently.
_START_WORDS = (
    "MATCH",
    "OPTIONAL",
    "WITH",
    "UNWIND",
    "RETURN",
    "CALL",
    "EXPLAIN",
    "PROFILE",
    "USE",
    "SHOW",
    "CREATE",
    "MERGE",
    "DELETE",
    "DETACH",
    "SET",
    "REMOVE",
    "DROP",
    "FOREACH",
    "LOAD",
    "USING",
    "INSERT",
    "ALTER",
    "GRANT",
    "DENY",
    "REVOKE",
    "CYPHER",
)
_START = "|".join(_START_WORDS)
_FENCE = re.compile(r"(```|~~~)(.*?)(?:\1|\Z)", re.DOTALL)
_FENCE_LANGUAGE = re.compile(r"^[ \t]*([A-Za-z0-9_+.-]*)[ \t]*\n")
_LEADING_LABEL = re.compile(
    r"^\s*(?:cypher|cypher query|query|statement)\s*(?::|\n)\s*", re.IGNORECASE
)
_LEADING_CYPHER_WORD = re.compile(rf"^\s*cypher\s+(?=(?:{_START})\b)", re.IGNORECASE)
_UPPER_START = re.compile(rf"^[ \t]*(?:{_START})\b", re.MULTILINE)
_ANY_START = re.compile(rf"^[ \t]*(?:{_START})\b", re.MULTILINE | re.IGNORECASE)
_INLINE_CODE = re.compile(rf"`((?:{_START})\b[^`]*)`", re.IGNORECASE)
_INLINE_START = re.compile(rf"(?<=:)[ \t]*((?:{_START})\b)")
_PROSE_LINE = re.compile(
    r"^\s*(?:[-*]\s+[A-Z][a-z]|\*\*|#+\s|[A-Z][a-z]+(?:'[a-z]+)?[ ,]+[a-z]+\b|[A-Z][a-z]+:\s*$)"
)


def extract_cypher(reply: str) -> str:
    """The Cypher statement in an LLM reply, or "" when there is none.

    Takes the first fenced block (a ```cypher block when there is one), otherwise the text
    from the first line that starts with a clause up to the prose that follows it; drops a
    leading "cypher"/"Query:" label, surrounding single backticks and trailing semicolons.
    Several statements stay several statements: refusing those is the policy's job.
    """
    text = _strip_inline_backticks(reply.replace("\r\n", "\n").replace("\r", "\n").strip())
    fenced = _fenced_block(text)
    text = fenced if fenced is not None else _strip_prose(text)
    text = _LEADING_LABEL.sub("", text, count=1)
    text = _LEADING_CYPHER_WORD.sub("", text, count=1)
    text = _strip_inline_backticks(text.strip())
    return text.strip().rstrip(";").rstrip() if text.strip() else ""


def _fenced_block(text: str) -> str | None:
    blocks: list[tuple[str, str]] = []
    for match in _FENCE.finditer(text):
        body = match.group(2)
        language = ""
        head = _FENCE_LANGUAGE.match(body)
        if head is not None:
            language = head.group(1).lower()
            body = body[head.end() :]
        elif re.match(r"^(cypher|neo4j|sql)\b", body, re.IGNORECASE) and "\n" not in body.strip():
            # ```cypher MATCH … ``` on one line: the language word is glued to the query.
            language, _, body = body.partition(" ")
            language = language.lower()
        blocks.append((language, body.strip()))
    blocks = [(language, body) for language, body in blocks if body]
    if not blocks:
        return None
    for language, body in blocks:
        if language in ("cypher", "neo4j", "opencypher"):
            return body
    return blocks[0][1]


def _strip_prose(text: str) -> str:
    start = _UPPER_START.search(text) or _ANY_START.search(text)
    if start is None:
        code = _INLINE_CODE.search(text)
        if code is not None:
            return code.group(1)
        inline = _INLINE_START.search(text)
        if inline is None:
            return ""  # no clause anywhere: a refusal or an explanation, not a query
        text = text[inline.start(1) :]
    else:
        text = text[start.start() :]
    kept: list[str] = []
    blank_seen = False
    for line in text.split("\n"):
        if not line.strip():
            blank_seen = True
            kept.append(line)
            continue
        if kept and (_PROSE_LINE.match(line) and not _starts_with_keyword(line)):
            break
        if blank_seen and not _continues_statement(line):
            break
        blank_seen = False
        kept.append(line)
    return "\n".join(kept).strip()


def _starts_with_keyword(line: str) -> bool:
    word = re.match(r"\s*([A-Za-z_]+)", line)
    return word is not None and word.group(1).upper() in KEYWORDS


def _continues_statement(line: str) -> bool:
    stripped = line.lstrip()
    return _starts_with_keyword(line) or stripped[:1] in "()[]{}<>-,.=+*/|:$'\"`"


def _strip_inline_backticks(text: str) -> str:
    # `MATCH (n) RETURN n` in single backticks: Markdown inline code, not a quoted name,
    # which can never start a statement.
    if len(text) > 2 and text[0] == "`" and text[-1] == "`" and text[1] != "`":
        inner = text[1:-1].strip()
        if _ANY_START.match(inner):
            return inner
    return text
