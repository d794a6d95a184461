"""Clause scans of one Cypher statement, and the row cap every statement gets."""

from __future__ import annotations

from collections.abc import Collection, Sequence
from dataclasses import dataclass

from guardrails import Token, matching_close, nesting, split_top_level, tokenize

AGGREGATES = frozenset(
    {"COUNT", "SUM", "AVG", "MIN", "MAX", "COLLECT", "STDEV", "STDEVP", "PERCENTILECONT",
     "PERCENTILEDISC"}
)  # fmt: skip


def is_aggregate_call(tokens: Sequence[Token], i: int) -> bool:
    """Whether the token at `i` starts an aggregate call: `count(`, `sum(`… (not `t.count`)."""
    return (
        tokens[i].is_name
        and tokens[i].text.upper() in AGGREGATES
        and i + 1 < len(tokens)
        and tokens[i + 1].is_punct("(")
        and not (i and tokens[i - 1].is_punct("."))
    )


CLAUSE_KEYWORDS = (
    "WITH", "RETURN", "MATCH", "OPTIONAL", "UNWIND", "CALL", "WHERE", "UNION", "ORDER", "SKIP",
    "LIMIT", "CREATE", "MERGE", "SET", "DELETE", "DETACH", "REMOVE", "FOREACH",
)  # fmt: skip


def forgiving_depths(tokens: Sequence[Token]) -> list[int]:
    """The bracket depth of each token as `nesting` walks it, except that a stray closing
    bracket is ignored instead of taking the rest of the statement below 0: a rule reads the
    clauses the model meant in `MATCH (a)) RETURN a`, and the engine will still refuse it."""
    lowest, depths = 0, []
    for _, _, depth in nesting(tokens):
        lowest = min(lowest, depth)
        depths.append(depth - lowest)
    return depths


def top_level_clauses(tokens: Sequence[Token]) -> list[int]:
    """Indexes of the top-level clause keywords (not `STARTS WITH`, nothing in brackets)."""
    depths = forgiving_depths(tokens)
    return [
        i
        for i, tok in enumerate(tokens)
        if depths[i] == 0
        and tok.is_keyword(*CLAUSE_KEYWORDS)
        and not (tok.is_keyword("WITH") and i and tokens[i - 1].is_keyword("STARTS", "ENDS"))
    ]


def fresh_variable(label: str, taken: Collection[str]) -> str:
    """A variable for a node of `label` that `taken` does not hold: `m`, `m2`, …"""
    base = label[:1].lower() or "n"
    candidates = [base, *(f"{base}{i}" for i in range(2, 99))]
    return next((c for c in candidates if c not in taken), "node")


def property_reads(tokens: Sequence[Token], var: str, props: Collection[str]) -> list[int]:
    """Indexes of the tokens that start a read of `var.<prop>` for a prop in `props` (not a
    read further along a chain, `x.var.prop`)."""
    return [
        k
        for k in range(len(tokens) - 2)
        if tokens[k].is_name
        and tokens[k].name == var
        and tokens[k + 1].is_punct(".")
        and tokens[k + 2].name in props
        and not (k and tokens[k - 1].is_punct("."))
    ]


def needs_limit(cypher: str) -> bool:
    """True when the statement has no LIMIT, no UNION and its final RETURN does not aggregate."""
    tokens = tokenize(cypher)
    if any(t.is_keyword("LIMIT", "UNION") for t in tokens):
        return False
    returns = [i for i, t in enumerate(tokens) if t.is_keyword("RETURN")]
    if not returns:
        return False
    tail = tokens[returns[-1] + 1 :]
    return not any(is_aggregate_call(tail, i) for i in range(len(tail)))


def _branches(tokens: list[Token]) -> list[tuple[int, int]]:
    """(first, end) token ranges of the parts of a top-level UNION (one range without UNION)."""
    ranges: list[tuple[int, int]] = []
    start = 0
    for i, tok, depth in nesting(tokens):
        if depth == 0 and tok.is_keyword("UNION"):
            ranges.append((start, i))
            start = i + 2 if i + 1 < len(tokens) and tokens[i + 1].is_keyword("ALL") else i + 1
    ranges.append((start, len(tokens)))
    return ranges


def _single_row(items: list[Token]) -> bool:
    """True when every top-level item of a RETURN is one aggregate call (`count(x) AS n`)."""
    for a, b in split_top_level(items, 0, len(items)):
        group = items[a:b]
        if len(group) > 1 and group[0].is_keyword("DISTINCT"):
            group = group[1:]
        if len(group) < 3 or group[0].text.upper() not in AGGREGATES:
            return False
        if not group[1].is_punct("("):
            return False
        close = matching_close(group, 1)
        rest = group[close + 1 :] if close is not None else [group[0]]
        if rest and not (len(rest) == 2 and rest[0].is_keyword("AS") and rest[1].is_name):
            return False
    return True


def _cap_branch(
    tokens: list[Token], first: int, end: int, limit: int
) -> tuple[int, int, str] | None:
    """The edit that caps one UNION part's final RETURN at `limit` rows, or None when it is."""
    final_return = None
    final_limit = None
    for i, tok, depth in nesting(tokens, first, end):
        if depth != 0:
            continue
        if tok.is_keyword("RETURN"):
            final_return, final_limit = i, None
        elif tok.is_keyword("LIMIT") and final_return is not None:
            final_limit = i
        elif tok.is_keyword("WITH", "UNWIND", "MATCH", "CALL", "OPTIONAL"):
            final_return = final_limit = None
    if final_return is None or end <= first:
        return None  # a standalone CALL: the adapters' row caps apply
    last = tokens[end - 1]
    if final_limit is None:
        stop = next(
            (i for i in range(final_return + 1, end) if tokens[i].is_keyword("ORDER", "SKIP")),
            end,
        )
        if _single_row(tokens[final_return + 1 : stop]):
            return None
        return last.end, last.end, f"\nLIMIT {limit}"
    written = tokens[final_limit + 1 : end]
    literal = len(written) == 1 and written[0].kind == "number" and written[0].text.isdigit()
    if literal and int(written[0].text) <= limit:
        return None
    # A larger literal, a parameter or an expression: the cap replaces it.
    return tokens[final_limit].position, last.end, f"LIMIT {limit}"


def with_limit(cypher: str, limit: int) -> str:
    """The statement with its outermost result capped at `limit` rows.

    Every part of a top-level UNION gets `LIMIT limit` on its final RETURN (in Cypher each
    part's LIMIT is its own); a LIMIT the statement already has stays when it is a literal
    no larger than `limit` and is replaced otherwise. A RETURN of aggregates only (one row)
    is left alone. Why always: a model's own `LIMIT 3000000`, or a UNION, used to switch
    the cap off, and the engine then built millions of rows the adapter threw away.
    """
    stripped = cypher.rstrip().rstrip(";").rstrip()
    tokens = tokenize(stripped)
    edits = [
        edit
        for first, end in _branches(tokens)
        if (edit := _cap_branch(tokens, first, end, limit)) is not None
    ]
    for start, stop, text in sorted(edits, reverse=True):
        stripped = stripped[:start] + text + stripped[stop:]
    return stripped


@dataclass(frozen=True)
class Item:
    """One comma-separated item of a projection or an ORDER BY: tokens [first, end)."""

    first: int
    end: int
    alias: str | None = None
    """The name after AS (projections)."""
    descending: bool = False
    """ORDER BY keys: DESC or DESCENDING written after the expression."""
    direction: int | None = None
    """ORDER BY keys: the index of the ASC/DESC token, when one is written."""


class Statement:
    """One Cypher statement tokenised once, with bracket depths, its top-level clauses, the
    items of its final RETURN and ORDER BY, and edits made by token position.

    Rules that read or change a statement's shape use this instead of scanning the text
    again with their own bracket counting."""

    def __init__(self, cypher: str) -> None:
        self.text = cypher
        self.tokens = tokenize(cypher)
        self.depths = forgiving_depths(self.tokens)
        """Bracket depth of each token (see `forgiving_depths`)."""
        self.clauses = top_level_clauses(self.tokens)

    def keyword_at(self, clause: int) -> str:
        return self.tokens[clause].text.upper()

    def clause_end(self, clause: int) -> int:
        """The token index where the clause starting at `clause` ends."""
        later = [c for c in self.clauses if c > clause]
        return later[0] if later else len(self.tokens)

    def last(self, keyword: str) -> int | None:
        """The last top-level clause with this keyword."""
        found = [c for c in self.clauses if self.keyword_at(c) == keyword]
        return found[-1] if found else None

    @property
    def has_union(self) -> bool:
        return any(self.keyword_at(c) == "UNION" for c in self.clauses)

    def _split(self, first: int, end: int) -> list[tuple[int, int]]:
        depth = self.depths[first] if first < len(self.tokens) else 0
        parts, start = [], first
        for i in range(first, end):
            if self.depths[i] == depth and self.tokens[i].is_punct(","):
                parts.append((start, i))
                start = i + 1
        parts.append((start, end))
        return [(a, b) for a, b in parts if a < b]

    def final_return(self) -> tuple[int, list[Item]] | None:
        """The final RETURN's keyword index and its items (DISTINCT skipped)."""
        at = self.last("RETURN")
        if at is None:
            return None
        return at, self.projection(at)

    def sole_return(self) -> tuple[int, list[Item]] | None:
        """The final RETURN of a statement of one query part, its keyword index and items; None
        where a WITH or a UNION may hide what the RETURN reads, or there is no RETURN."""
        if self.has_union or self.last("WITH") is not None:
            return None
        return self.final_return()

    def projection(self, at: int) -> list[Item]:
        """The items of the RETURN or WITH clause whose keyword is token `at` (DISTINCT
        skipped), each with its alias."""
        first = at + 1
        if first < len(self.tokens) and self.tokens[first].is_keyword("DISTINCT"):
            first += 1
        items = []
        for a, b in self._split(first, self.clause_end(at)):
            alias = None
            if b - a >= 3 and self.tokens[b - 2].is_keyword("AS") and self.tokens[b - 1].is_name:
                alias, b = self.tokens[b - 1].name, b - 2
            items.append(Item(a, b, alias))
        return items

    def order_keys(self) -> list[Item]:
        """The keys of the last top-level ORDER BY."""
        at = self.last("ORDER")
        if at is None or at + 1 >= len(self.tokens) or not self.tokens[at + 1].is_keyword("BY"):
            return []
        keys = []
        for a, b in self._split(at + 2, self.clause_end(at)):
            last = self.tokens[b - 1]
            if last.is_keyword("ASC", "ASCENDING", "DESC", "DESCENDING") and b - 1 > a:
                keys.append(
                    Item(a, b - 1, descending=last.text.upper().startswith("DESC"), direction=b - 1)
                )
            else:
                keys.append(Item(a, b))
        return keys

    def source(self, first: int, end: int) -> str:
        """The text of tokens [first, end)."""
        if first >= end:
            return ""
        return self.text[self.tokens[first].position : self.tokens[end - 1].end]

    def words(self, item: Item) -> list[str]:
        return [t.text for t in self.tokens[item.first : item.end]]

    def aggregates(self, item: Item) -> bool:
        """Whether the item (or sort key) calls an aggregate: `count(p)`, `sum(r.x) / 2`."""
        return any(is_aggregate_call(self.tokens, i) for i in range(item.first, item.end))

    def edited(self, edits: Sequence[tuple[int, int, str]]) -> str:
        """The text with (start offset, stop offset, replacement) edits applied."""
        text = self.text
        for start, stop, new in sorted(edits, reverse=True):
            text = text[:start] + new + text[stop:]
        return text


def distinct_read(cypher: str) -> str | None:
    """The statement with its final RETURN made DISTINCT; None when it already is, returns an
    aggregate, has a UNION, or sorts by something it does not return (which DISTINCT
    forbids)."""
    statement = Statement(cypher)
    returned = statement.final_return()
    if returned is None or statement.has_union:
        return None
    at, items = returned
    tokens = statement.tokens
    if at + 1 < len(tokens) and tokens[at + 1].is_keyword("DISTINCT"):
        return None
    if any(is_aggregate_call(tokens, i) for i in range(at, statement.clause_end(at))):
        return None
    shown = {statement.source(item.first, item.end) for item in items}
    shown |= {item.alias for item in items if item.alias}
    order = statement.last("ORDER")
    if order is not None and order > at:
        for key in statement.order_keys():
            if statement.source(key.first, key.end) not in shown:
                return None
    keyword = tokens[at]
    return statement.edited([(keyword.end, keyword.end, " DISTINCT")])


def without_order(cypher: str) -> str | None:
    """The statement without its final ORDER BY (the RETURN's sort); None when it has none
    after its final RETURN."""
    statement = Statement(cypher)
    returned, order = statement.final_return(), statement.last("ORDER")
    if returned is None or order is None or order < returned[0]:
        return None
    tokens = statement.tokens
    end = statement.clause_end(order)
    stop = tokens[end].position if end < len(tokens) else len(cypher)
    return (cypher[: tokens[order].position] + cypher[stop:]).rstrip()


def label_places(tokens: Sequence[Token], labels: Collection[str]) -> list[Token]:
    """The tokens that write one of `labels` as a label (`:Label`), in order."""
    return [
        t
        for i, t in enumerate(tokens)
        if t.is_name and t.name in labels and i and tokens[i - 1].is_punct(":")
    ]


def binding(tokens: Sequence[Token], var: str) -> int | None:
    """The index of the "(" that first binds `var` with a label (`(var:Label`)."""
    return next(
        (
            k
            for k in range(len(tokens) - 2)
            if tokens[k].is_punct("(") and tokens[k + 1].name == var and tokens[k + 2].is_punct(":")
        ),
        None,
    )


def node_has_more(tokens: Sequence[Token], var: str) -> bool:
    """Whether the node pattern binding `var` holds more than `var:Label` (a map, a second
    label)."""
    for k, tok in enumerate(tokens):
        if tok.is_name and tok.name == var and k and tokens[k - 1].is_punct("("):
            return not (
                k + 3 < len(tokens)
                and tokens[k + 1].is_punct(":")
                and tokens[k + 2].is_name
                and tokens[k + 3].is_punct(")")
            )
    return True


def match_end(tokens: Sequence[Token], var: str) -> int | None:
    """Where the MATCH clause that first binds `var` (`(var:Label`) ends: the offset of the
    next clause keyword, or a large number at the end; None when no MATCH binds it."""
    bound = binding(tokens, var)
    if bound is None:
        return None
    clauses = top_level_clauses(tokens)
    before = [k for k in clauses if k < bound]
    if not before or not tokens[before[-1]].is_keyword("MATCH"):
        return None
    after = [k for k in clauses if k > bound]
    return tokens[after[0]].position if after else 1 << 30


def clause_at(statement: Statement, offset: int) -> int | None:
    """The top-level clause whose text holds `offset`."""
    tokens = statement.tokens
    return next((c for c in reversed(statement.clauses) if tokens[c].position <= offset), None)


def add_condition(cypher: str, node_at: int, condition: str) -> str | None:
    """`condition` added to the WHERE of the MATCH holding the node pattern at offset
    `node_at` (the WHERE it has, in brackets, or a new one); None when no MATCH holds it."""
    statement = Statement(cypher)
    holding = clause_at(statement, node_at)
    if holding is None or statement.keyword_at(holding) != "MATCH":
        return None
    edits = where_edits(statement, holding, condition)
    return None if edits is None else statement.edited(edits)


def where_edits(
    statement: Statement, clause: int, condition: str
) -> list[tuple[int, int, str]] | None:
    """The edits that put `condition` in the WHERE after the clause at `clause` (ANDed with
    the one there, which goes in brackets, or a new WHERE); None when that WHERE is empty."""
    tokens = statement.tokens
    end = statement.clause_end(clause)
    if end < len(tokens) and statement.keyword_at(end) == "WHERE":
        stop = statement.clause_end(end)
        if stop <= end + 1:
            return None
        first, last = tokens[end + 1].position, tokens[stop - 1].end
        return [(first, first, f"{condition} AND ("), (last, last, ")")]
    last = tokens[end - 1].end
    return [(last, last, f" WHERE {condition}")]
