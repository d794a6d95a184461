"""A Cypher tokenizer and a best-effort reader of the labels, types and properties a query names."""

from __future__ import annotations

import logging
import unicodedata
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from typing import Literal

logger = logging.getLogger(__name__)

TokenKind = Literal[
    "keyword",  # a bare word that is a Cypher keyword (value: upper-case)
    "identifier",  # any other bare word (value: as written)
    "quoted_identifier",  # `backtick quoted` (value: unquoted, doubled backticks folded)
    "string",  # 'single' or "double" quoted (value: unescaped)
    "number",  # 12, 1.5, .5, 1e3, 0x1F, 0o17, 1_000 (value: as written)
    "parameter",  # $name or $`quoted name` or $0 (value: the name)
    "punct",  # operators and brackets (value: as written)
    "comment",  # // line or /* block */ (only with include_comments=True)
    "error",  # an unterminated string, comment or backtick identifier (runs to the end)
]

# Words the tokenizer reports as kind "keyword". Keywords can still be names in Cypher
# (`n.count`, `:Match`), so consumers look at the position, not only the kind.
_KEYWORD_TEXT = """
    ACCESS ALL ALIAS ALTER AND ANY AS ASC ASCENDING ASSIGN BOOSTED BY CALL CASE CATALOG
    COLLECT COMMIT COMPOSITE CONCURRENT CONSTRAINT CONSTRAINTS CONTAINS COPY COUNT CREATE CSV
    CYPHER DATABASE DATABASES DEALLOCATE DEFAULT DELETE DENY DESC DESCENDING DETACH DISTINCT
    DROP DRYRUN ELSE ENABLE END ENDS EXECUTE EXISTS EXPLAIN FALSE FIELDTERMINATOR FINISH
    FOREACH FROM FULLTEXT FUNCTIONS GRANT GRAPH HEADERS IF IMMUTABLE IN INDEX INDEXES INF
    INFINITY IS JOIN KEY LIMIT LOAD LOOKUP MATCH MERGE NAN NODE NODES NONE NOT NULL OF ON
    OPTIONAL OPTIONS OR ORDER PERIODIC POINT PRIVILEGE PRIVILEGES PROCEDURES PROFILE RANGE
    REALLOCATE REMOVE RENAME REPLACE REQUIRE RETURN REVOKE ROLE ROLES ROWS SCAN SERVER
    SERVERS SET SHORTEST SHOW SINGLE SKIP START STARTS STOP TERMINATE TEXT THEN TO
    TRANSACTION TRANSACTIONS TRUE UNION UNIQUE UNWIND USE USER USERS USING VECTOR WHEN WHERE
    WITH XOR YIELD
"""
KEYWORDS: frozenset[str] = frozenset(_KEYWORD_TEXT.split())

# Two-character operators are tried before single characters, so "<=" wins over "<".
_MULTI_PUNCT = ("..", "<>", "<=", ">=", "=~", "+=", "!=", "::", "||")
_LINE_BREAKS = frozenset("\n\r\x0b\x0c\x85\u2028\u2029")
_STRING_ESCAPES = {
    "t": "\t",
    "b": "\b",
    "n": "\n",
    "r": "\r",
    "f": "\f",
    "'": "'",
    '"': '"',
    "\\": "\\",
}


@dataclass(frozen=True, slots=True)
class Token:
    """One lexical token of a Cypher statement."""

    kind: TokenKind
    text: str
    """The exact source text of the token."""
    value: str
    """The meaning: upper-case keyword, unquoted name, unescaped string, parameter name."""
    position: int
    """Offset of the first character in the source."""

    @property
    def end(self) -> int:
        """Offset just past the last character."""
        return self.position + len(self.text)

    @property
    def name(self) -> str:
        """The name as written: unquoted for `backticks`, original case for bare words."""
        return self.value if self.kind in ("quoted_identifier", "parameter") else self.text

    @property
    def is_word(self) -> bool:
        """A bare (unquoted) word: keyword or identifier."""
        return self.kind in ("keyword", "identifier")

    @property
    def is_name(self) -> bool:
        """Anything that can stand where a name is expected (bare or backtick-quoted)."""
        return self.kind in ("keyword", "identifier", "quoted_identifier")

    def is_punct(self, *texts: str) -> bool:
        """True when this is punctuation with one of the given texts."""
        return self.kind == "punct" and self.text in texts

    def is_keyword(self, *words: str) -> bool:
        """True when this is a bare word spelling one of the given keywords (any case)."""
        return self.is_word and self.text.upper() in words


def _is_word_start(ch: str) -> bool:
    return ch.isalpha() or ch == "_"


def _is_word_part(ch: str) -> bool:
    # Format characters (zero-width space, soft hyphen, …) are identifier parts for the JVM
    # lexer Neo4j uses, so "CRE\u200bATE" is one word here too; the policy strips them.
    return ch.isalnum() or ch == "_" or _is_format_char(ch)


def _is_format_char(ch: str) -> bool:
    return unicodedata.category(ch) == "Cf"


def _scan_quoted(text: str, start: int, quote: str) -> tuple[int, str, bool]:
    """Scan a string literal from its opening quote: (end offset, unescaped value, closed)."""
    out: list[str] = []
    i = start + 1
    n = len(text)
    while i < n:
        ch = text[i]
        if ch == "\\" and i + 1 < n:
            nxt = text[i + 1]
            if nxt in _STRING_ESCAPES:
                out.append(_STRING_ESCAPES[nxt])
                i += 2
                continue
            width = 4 if nxt == "u" else 8 if nxt == "U" else 0
            digits = text[i + 2 : i + 2 + width]
            if (
                width
                and len(digits) == width
                and all(c in "0123456789abcdefABCDEF" for c in digits)
            ):
                try:
                    out.append(chr(int(digits, 16)))
                except ValueError:
                    out.append(text[i : i + 2 + width])
                i += 2 + width
                continue
            # An unknown escape keeps both characters; the engine would reject it anyway.
            out.append(ch + nxt)
            i += 2
            continue
        if ch == quote:
            return i + 1, "".join(out), True
        out.append(ch)
        i += 1
    return n, "".join(out), False


def _scan_backtick(text: str, start: int) -> tuple[int, str, bool]:
    """Scan a `quoted identifier`; a doubled backtick stands for one backtick."""
    out: list[str] = []
    i = start + 1
    n = len(text)
    while i < n:
        ch = text[i]
        if ch == "`":
            if i + 1 < n and text[i + 1] == "`":
                out.append("`")
                i += 2
                continue
            return i + 1, "".join(out), True
        out.append(ch)
        i += 1
    return n, "".join(out), False


def _scan_number(text: str, start: int) -> int:
    n = len(text)
    i = start
    if text.startswith(("0x", "0X", "0o", "0O"), i):
        i += 2
        while i < n and (text[i].isalnum() or text[i] == "_"):
            i += 1
        return i
    while i < n and (text[i].isdigit() or text[i] == "_"):
        i += 1
    # "1..3" in a variable-length pattern is 1, .., 3 — only a digit after the dot is a fraction.
    if i + 1 < n and text[i] == "." and text[i + 1].isdigit():
        i += 1
        while i < n and (text[i].isdigit() or text[i] == "_"):
            i += 1
    if i < n and text[i] in "eE":
        j = i + 1
        if j < n and text[j] in "+-":
            j += 1
        if j < n and text[j].isdigit():
            i = j
            while i < n and text[i].isdigit():
                i += 1
    # Trailing letters (e.g. "12abc") stay attached, as the engine would reject them as one.
    while i < n and _is_word_part(text[i]):
        i += 1
    return i


def tokenize(cypher: str, *, include_comments: bool = False) -> list[Token]:
    """Split a Cypher statement into tokens; whitespace is dropped, comments unless asked for.

    Never raises: an unterminated string, comment or backtick identifier becomes one
    ``error`` token that runs to the end of the input.
    """
    tokens: list[Token] = []
    text = cypher
    n = len(text)
    i = 0
    while i < n:
        ch = text[i]
        if ch.isspace():
            i += 1
            continue
        start = i
        if text.startswith("//", i):
            # Any line break ends it: an engine that stops at "\r" or U+2028 would otherwise
            # run code this tokenizer took for a comment.
            end = i + 2
            while end < n and text[end] not in _LINE_BREAKS:
                end += 1
            if include_comments:
                tokens.append(Token("comment", text[i:end], text[i + 2 : end], i))
            i = end
            continue
        if text.startswith("/*", i):
            close = text.find("*/", i + 2)
            if close == -1:
                tokens.append(Token("error", text[i:], "unterminated comment", i))
                break
            if include_comments:
                tokens.append(Token("comment", text[i : close + 2], text[i + 2 : close], i))
            i = close + 2
            continue
        if ch in ("'", '"'):
            end, value, closed = _scan_quoted(text, i, ch)
            if not closed:
                tokens.append(Token("error", text[i:], "unterminated string", i))
                break
            tokens.append(Token("string", text[i:end], value, i))
            i = end
            continue
        if ch == "`":
            end, value, closed = _scan_backtick(text, i)
            if not closed:
                tokens.append(Token("error", text[i:], "unterminated quoted name", i))
                break
            tokens.append(Token("quoted_identifier", text[i:end], value, i))
            i = end
            continue
        if ch == "$" and i + 1 < n:
            nxt = text[i + 1]
            if nxt == "`":
                end, value, closed = _scan_backtick(text, i + 1)
                if not closed:
                    tokens.append(Token("error", text[i:], "unterminated quoted name", i))
                    break
                tokens.append(Token("parameter", text[i:end], value, i))
                i = end
                continue
            if _is_word_part(nxt):
                end = i + 1
                while end < n and _is_word_part(text[end]):
                    end += 1
                tokens.append(Token("parameter", text[i:end], text[i + 1 : end], i))
                i = end
                continue
        if ch.isdigit() or (
            ch == "." and i + 1 < n and text[i + 1].isdigit() and _dot_starts_number(tokens)
        ):
            end = _scan_number(text, i)
            tokens.append(Token("number", text[i:end], text[i:end], i))
            i = end
            continue
        if _is_word_start(ch) or _is_format_char(ch):
            end = i + 1
            while end < n and _is_word_part(text[end]):
                end += 1
            word = text[i:end]
            upper = word.upper()
            if upper in KEYWORDS:
                tokens.append(Token("keyword", word, upper, i))
            else:
                tokens.append(Token("identifier", word, word, i))
            i = end
            continue
        for punct in _MULTI_PUNCT:
            if text.startswith(punct, i):
                tokens.append(Token("punct", punct, punct, start))
                i += len(punct)
                break
        else:
            tokens.append(Token("punct", ch, ch, start))
            i += 1
    return tokens


def _dot_starts_number(tokens: list[Token]) -> bool:
    """A "." before a digit is a fraction (".5") unless it follows something it could index."""
    if not tokens:
        return True
    prev = tokens[-1]
    return not (prev.is_name or prev.kind == "parameter" or prev.is_punct(")", "]", "}"))


# --- bracket walks ----------------------------------------------------------------------------
# Every reader of a statement's shape walks brackets the same way, here: the three kinds count
# together (a statement the engine accepts pairs them properly; one it rejects is read as
# best it can be), and a bracket stands at the depth outside it.

_OPENING = ("(", "[", "{")
_CLOSING = (")", "]", "}")


def nesting(
    tokens: Sequence[Token], first: int = 0, end: int | None = None, *, backward: bool = False
) -> Iterator[tuple[int, Token, int]]:
    """(index, token, bracket depth) for each token of tokens[first:end], in order, or from
    the last one back with `backward`.

    The depth counts the brackets opened since the walk began and not yet closed; a bracket
    is at the depth outside it, so walking `f(a, [b])` gives `f`, `(` and `)` depth 0, `a`,
    `,` and `[` depth 1, `b` depth 2. A bracket the walk did not see open (a stray `)`;
    walking backward, the `(` of a group around the range) takes the depth below 0, so
    nothing after it reads as top level.
    """
    stop = len(tokens) if end is None else end
    opens, closes = (_CLOSING, _OPENING) if backward else (_OPENING, _CLOSING)
    depth = 0
    for i in range(stop - 1, first - 1, -1) if backward else range(first, stop):
        tok = tokens[i]
        if tok.is_punct(*closes):
            depth -= 1
            yield i, tok, depth
        else:
            yield i, tok, depth
            if tok.is_punct(*opens):
                depth += 1


def matching_close(tokens: Sequence[Token], open_idx: int) -> int | None:
    """Index of the bracket that closes the one opened at `open_idx`, or None."""
    return next((i for i, _, depth in nesting(tokens, open_idx + 1) if depth < 0), None)


def matching_open(tokens: Sequence[Token], close_idx: int) -> int | None:
    """Index of the bracket that the one at `close_idx` closes, or None."""
    return next(
        (i for i, _, depth in nesting(tokens, 0, close_idx, backward=True) if depth < 0), None
    )


def enclosing(tokens: Sequence[Token], at: int) -> Iterator[int]:
    """Indexes of the opening brackets around the token at `at`, innermost first."""
    lowest = 0
    for i, _, depth in nesting(tokens, 0, at, backward=True):
        if depth < lowest:
            lowest = depth
            yield i


def split_top_level(
    tokens: Sequence[Token], first: int, end: int, separator: str = ","
) -> list[tuple[int, int]]:
    """The [start, end) ranges of tokens[first:end] between separators outside any bracket
    opened in it: `a, f(b, c), d` gives three. Always at least one range, possibly empty."""
    parts, start = [], first
    for i, tok, depth in nesting(tokens, first, end):
        if depth == 0 and tok.is_punct(separator):
            parts.append((start, i))
            start = i + 1
    parts.append((start, end))
    return parts


@dataclass
class ReferencedNames:
    """The names a query mentions, for schema validation and per-channel restrictions."""

    labels: set[str] = field(default_factory=set)
    """Node labels in patterns and label predicates (`n:Label`)."""
    rel_types: set[str] = field(default_factory=set)
    """Relationship types in relationship patterns."""
    properties: set[str] = field(default_factory=set)
    """Property keys after `.` on a variable, in map projections and in pattern maps."""
    patterns: list[tuple[str | None, str, str | None, str]] = field(default_factory=list)
    """(left label, rel type, right label, direction "->", "<-" or "-") in the order written;
    a label is None when neither the pattern nor an earlier binding of the variable names it."""
    variables: dict[str, str] = field(default_factory=dict)
    """Node variables and the first label a pattern gives them (`(a:Airport)` → a: Airport)."""
    accesses: list[tuple[str, str]] = field(default_factory=list)
    """(variable, property) for each `variable.property` read, in the order written."""
    rel_variables: dict[str, str] = field(default_factory=dict)
    """Relationship variables of one type and that type (`-[r:PARTICIPATED_IN]->` → r:
    PARTICIPATED_IN)."""


# `{` after these opens a subquery (statements inside), not a map.
_SUBQUERY_OPENERS = frozenset({"CALL", "EXISTS", "COUNT", "COLLECT"})
_LABEL_EXPR_PUNCT = ("|", "&", "!", "%", "(", ")", ":")


def _bracket_kinds(tokens: list[Token]) -> list[str]:
    """For each token, the innermost open bracket kind: "", "(", "rel", "[", "map", "pmap", "sub".

    "pmap" is a property map inside a node or relationship pattern (`(n:Person {name: 'x'})`),
    whose keys are property keys; other maps' keys are just output names.
    """
    stack: list[str] = []
    kinds: list[str] = []
    for idx, tok in enumerate(tokens):
        kinds.append(stack[-1] if stack else "")
        prev = tokens[idx - 1] if idx else None
        if tok.is_punct("("):
            stack.append("(")
        elif tok.is_punct("["):
            stack.append("rel" if prev is not None and prev.is_punct("-") else "[")
        elif tok.is_punct("{"):
            enclosing = stack[-1] if stack else ""
            if prev is not None and (prev.is_keyword(*_SUBQUERY_OPENERS) or prev.is_punct(")")):
                stack.append("sub")
            elif (
                enclosing in ("(", "rel")
                and prev is not None
                and (prev.is_name or prev.is_punct("(", "["))
            ):
                stack.append("pmap")
            else:
                stack.append("map")
        elif tok.is_punct(")", "]", "}") and stack:
            stack.pop()
    return kinds


def _label_names_after(tokens: list[Token], colon: int) -> tuple[list[str], int]:
    """Names in a label/type expression starting after the ':' at `colon`: (names, next index)."""
    names: list[str] = []
    for j, tok, depth in nesting(tokens, colon + 1):
        if depth < 0:
            return names, j  # the `)` of a group the expression is in
        if tok.is_name and (j == colon + 1 or tokens[j - 1].is_punct(*_LABEL_EXPR_PUNCT)):
            names.append(tok.name)
        elif not tok.is_punct(*_LABEL_EXPR_PUNCT):
            return names, j
    return names, len(tokens)


def _collect_names(tokens: list[Token], names: ReferencedNames) -> dict[str, str]:
    """Fill labels, rel types and properties; return the first label bound to each variable."""
    kinds = _bracket_kinds(tokens)
    bindings: dict[str, str] = {}
    i = 0
    while i < len(tokens):
        tok = tokens[i]
        prev = tokens[i - 1] if i else None
        nxt = tokens[i + 1] if i + 1 < len(tokens) else None
        if tok.is_keyword("CALL") and nxt is not None and nxt.is_name:
            # A procedure name (db.labels) is not a property access; skip the dotted chain.
            i += 2
            while i + 1 < len(tokens) and tokens[i].is_punct(".") and tokens[i + 1].is_name:
                i += 2
            continue
        if tok.is_punct(":") and kinds[i] not in ("map", "pmap") and prev is not None:
            if prev.is_punct("::"):
                i += 1
                continue
            found, end = _label_names_after(tokens, i)
            if kinds[i] == "rel":
                names.rel_types.update(found)
                if len(found) == 1 and prev.is_name and prev.kind != "keyword":
                    names.rel_variables.setdefault(prev.name, found[0])
            else:
                names.labels.update(found)
                if found and prev.is_name and prev.kind != "keyword":
                    bindings.setdefault(prev.name, found[0])
            i = max(end, i + 1)
            continue
        if tok.is_punct(":") and kinds[i] in ("map", "pmap"):
            # The ":" between a map key and its value; the key was handled below.
            i += 1
            continue
        if tok.is_name and kinds[i] in ("map", "pmap") and nxt is not None and nxt.is_punct(":"):
            if kinds[i] == "pmap" and prev is not None and prev.is_punct("{", ","):
                names.properties.add(tok.name)
            i += 1
            continue
        if tok.is_punct(".") and nxt is not None and nxt.is_name and prev is not None:
            # A dotted chain followed by "(" is a namespaced function (date.truncate(...)).
            j = i
            while j + 1 < len(tokens) and tokens[j].is_punct(".") and tokens[j + 1].is_name:
                j += 2
            is_function = j < len(tokens) and tokens[j].is_punct("(")
            if not is_function:
                # Map projection `n {.name}` or property access `n.name` / `(x).name`.
                names.properties.update(tokens[k + 1].name for k in range(i, j, 2))
            i = j
            continue
        i += 1
    return bindings


def _node_at(tokens: list[Token], open_idx: int) -> tuple[str | None, str | None]:
    """(variable, first label) of the node pattern whose "(" is at open_idx."""
    var: str | None = None
    j = open_idx + 1
    if j < len(tokens) and tokens[j].is_name:
        var = tokens[j].name
        j += 1
    if j < len(tokens) and tokens[j].is_punct(":"):
        found, _ = _label_names_after(tokens, j)
        if found:
            return var, found[0]
    return var, None


def _rel_at(tokens: list[Token], close_idx: int) -> tuple[list[str], str, int] | None:
    """Parse a relationship after the ")" at close_idx: (types, direction, index of next "(")."""
    j = close_idx + 1
    left_arrow = False
    if j < len(tokens) and tokens[j].is_punct("<"):
        left_arrow = True
        j += 1
    if not (j < len(tokens) and tokens[j].is_punct("-")):
        return None
    j += 1
    types: list[str] = []
    if j < len(tokens) and tokens[j].is_punct("["):
        close = matching_close(tokens, j)
        if close is None:
            return None
        for k, tok, depth in nesting(tokens, j + 1, close):
            if tok.is_punct(":") and depth == 0 and not types:
                types, _ = _label_names_after(tokens, k)
        j = close + 1
        if not (j < len(tokens) and tokens[j].is_punct("-")):
            return None
        j += 1
    elif j < len(tokens) and tokens[j].is_punct("-"):
        j += 1
    else:
        return None
    right_arrow = False
    if j < len(tokens) and tokens[j].is_punct(">"):
        right_arrow = True
        j += 1
    if not (j < len(tokens) and tokens[j].is_punct("(")):
        return None
    direction = "-" if left_arrow == right_arrow else "<-" if left_arrow else "->"
    return types, direction, j


def _accesses(tokens: list[Token]) -> list[tuple[str, str]]:
    """`a.name` reads: a plain variable, a dot, a name, and no "(" after (not `date.truncate(`)
    and no dot before (not the middle of a chain or a procedure name)."""
    found: list[tuple[str, str]] = []
    for i in range(1, len(tokens) - 1):
        var, dot, prop = tokens[i - 1], tokens[i], tokens[i + 1]
        if not (
            dot.is_punct(".") and prop.is_name and var.kind in ("identifier", "quoted_identifier")
        ):
            continue
        before = tokens[i - 2] if i >= 2 else None
        after = tokens[i + 2] if i + 2 < len(tokens) else None
        if (before is not None and before.is_punct(".")) or (
            after is not None and after.is_punct("(", ".")
        ):
            continue
        if before is not None and before.is_keyword("CALL"):
            continue
        found.append((var.name, prop.name))
    return found


def referenced_names(cypher: str) -> ReferencedNames:
    """Labels, relationship types, property keys and relationship patterns a query names.

    Best effort and never raises: it reads tokens, not a full parse tree. A pattern's label
    comes from the node pattern itself or, failing that, from the variable's label elsewhere
    in the query (`MATCH (p:Person) … MATCH (p)-[:OWNS]->(s)` gives ("Person", "OWNS", None,
    "->")). Untyped relationships (`-->`) give no pattern.
    """
    tokens = [t for t in tokenize(cypher) if t.kind != "error"]
    names = ReferencedNames()
    bindings = _collect_names(tokens, names)
    names.variables = dict(bindings)
    names.accesses = _accesses(tokens)
    for idx, tok in enumerate(tokens):
        if not tok.is_punct(")"):
            continue
        rel = _rel_at(tokens, idx)
        if rel is None:
            continue
        types, direction, right_open = rel
        left_open = matching_open(tokens, idx)
        if left_open is None or not types:
            continue
        left_var, left_label = _node_at(tokens, left_open)
        right_var, right_label = _node_at(tokens, right_open)
        if left_label is None and left_var is not None:
            left_label = bindings.get(left_var)
        if right_label is None and right_var is not None:
            right_label = bindings.get(right_var)
        for rel_type in types:
            names.patterns.append((left_label, rel_type, right_label, direction))
    return names
