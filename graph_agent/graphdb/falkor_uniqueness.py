"""Every relationship of a MATCH a different one, as Cypher has it, on FalkorDB too.

Cypher never binds one relationship twice within a MATCH clause, so `MATCH (p:Person {name:
'Tom Hanks'})-[:ACTED_IN]->(m)<-[:ACTED_IN]-(o)` finds the people who acted *with* him. FalkorDB
walks the same relationship back: on the Movies graph that statement lists Tom Hanks himself
once for each of his twelve films, and "the other films of The Matrix's directors" include The
Matrix (upstream FalkorDB#694, #1469, #1944, #2441; its maintainers' advice is to compare the
relationships by hand; seen in the nineteenth session's trial on the Movies graph). So the
adapter names each fixed-length relationship of a MATCH that could be bound twice and adds `r1
<> r2` for each pair to the clause's WHERE. A pair whose types cannot be the same (`:DIRECTED`
and `:ACTED_IN`) needs nothing. Variable-length hops are left as written (their variable is a
list), as is a statement that returns `*` (the new names would become columns). The statement a
person sees, and Neo4j's, are never rewritten. What it costs a count of the people who share a
team: bench/graph_layer.py.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from graph_agent.graphdb.falkor_paths import PART_ENDS, fresh_names, readable
from guardrails import Token, nesting

REL_PREFIX = "rel_"

_CLAUSE_STARTS = tuple(word for word in PART_ENDS if word != "WHERE")


@dataclass(frozen=True, slots=True)
class _Hop:
    name: str | None  # as written, or None for an anonymous relationship
    types: frozenset[str]  # empty: any type
    insert_at: int  # where a name goes in the statement's text
    bracketed: bool  # `-[...]-` rather than `--`


def with_distinct_relationships(cypher: str) -> str:
    """`cypher` with `WHERE r1 <> r2` for each pair of fixed-length relationships of a MATCH
    clause that could be the same one, naming the anonymous ones; unchanged when no clause has
    such a pair, when it returns `*`, or when it cannot be read."""
    read = readable(cypher)
    if read is None:
        return cypher
    tokens, depths = read
    clauses = []
    for i, tok in enumerate(tokens):
        if depths[i] != 0 or not tok.is_keyword("MATCH"):
            continue
        end = _next_keyword(tokens, depths, i + 1, PART_ENDS)
        hops = _hops(tokens, depths, i + 1, end)
        pairs = [
            (a, b)
            for n, a in enumerate(hops)
            for b in hops[n + 1 :]
            if (a.name is None or a.name != b.name)
            and (not a.types or not b.types or a.types & b.types)
        ]
        if pairs:
            clauses.append((end, pairs))
    if not clauses:
        return cypher
    taken = {t.value.casefold() for t in tokens if t.kind in ("identifier", "quoted_identifier")}
    anonymous = [hop for _, pairs in clauses for pair in pairs for hop in pair if hop.name is None]
    unique = list(dict.fromkeys(anonymous))
    names = dict(zip(unique, fresh_names(len(unique), taken, REL_PREFIX), strict=True))
    inserts: list[tuple[int, str]] = [
        (hop.insert_at, name if hop.bracketed else f"[{name}]") for hop, name in names.items()
    ]
    for end, pairs in clauses:
        condition = " AND ".join(f"{a.name or names[a]} <> {b.name or names[b]}" for a, b in pairs)
        if end + 1 < len(tokens) and tokens[end].is_keyword("WHERE"):
            stop = _next_keyword(tokens, depths, end + 1, _CLAUSE_STARTS)
            inserts.append((tokens[end].end, f" {condition} AND"))
            inserts.append((tokens[end + 1].position, "("))
            inserts.append((tokens[stop - 1].end, ")"))
        else:
            inserts.append((tokens[end - 1].end, f" WHERE {condition}"))
    text = cypher
    for position, piece in sorted(inserts, key=lambda insert: insert[0], reverse=True):
        text = f"{text[:position]}{piece}{text[position:]}"
    return text


def _next_keyword(
    tokens: Sequence[Token], depths: Sequence[int], first: int, words: tuple[str, ...]
) -> int:
    return next(
        (j for j in range(first, len(tokens)) if depths[j] == 0 and tokens[j].is_keyword(*words)),
        len(tokens),
    )


def _hops(tokens: Sequence[Token], depths: Sequence[int], first: int, end: int) -> list[_Hop]:
    """The fixed-length relationships written at the top level of tokens[first:end]."""
    hops = []
    for i in range(first, end - 1):
        tok, after = tokens[i], tokens[i + 1]
        if depths[i] != 0 or not tok.is_punct("-"):
            continue
        if after.is_punct("-") and after.position == tok.end:
            hops.append(_Hop(None, frozenset(), after.position, bracketed=False))
        elif after.is_punct("["):
            hop = _bracketed(tokens, i + 1)
            if hop is not None:
                hops.append(hop)
    return hops


def _bracketed(tokens: Sequence[Token], open_idx: int) -> _Hop | None:
    """The relationship `[name:A|B {...}]` opened at `open_idx`; None for a variable-length one
    or one this reader does not follow."""
    inside = []
    for _, tok, depth in nesting(tokens, open_idx + 1):
        if depth < 0:
            break
        if depth == 0:
            inside.append(tok)
    if any(tok.is_punct("*") for tok in inside):
        return None
    at = 0
    name = None
    if inside and inside[0].is_name:
        name = inside[0].text
        at = 1
    types: set[str] = set()
    if at < len(inside) and inside[at].is_punct(":"):
        at += 1
        while at < len(inside) and inside[at].is_name:
            types.add(inside[at].name)
            at += 1
            if at < len(inside) and inside[at].is_punct("|", ":"):
                at += 1
            else:
                break
    if at < len(inside) and not inside[at].is_punct("{"):
        return None  # a label expression this reader does not follow (`!A`, `%`, ...)
    return _Hop(name, frozenset(types), tokens[open_idx].end, bracketed=True)
