"""Every matched pattern bound to a path variable, so that FalkorDB keeps one row per path.

FalkorDB's planner fuses the hops of a pattern whose middle node no later clause reads into
one traversal that records whether an end is *reachable*, not by how many paths: on the network
graph `MATCH (:Rack {name: 'DC1-RCK-1-1'})-[:HOLDS]->(m:Machine)-[:TYPE]->(t:Type) RETURN
sum(t.cpu)` gives 63 (one row per machine type) where the rack's 41 machines have 137 CPUs, and
`count(*)` gives 6. The same happens to one-hop parts joined on a node (`(r)-[:HOLDS]->(m),
(m)-[:TYPE]->(t)`), and to parallel relationships between two nodes (upstream issues
FalkorDB#2470, #2132, #248; found in the fifteenth session's check of a trial answer). A path
variable on the pattern keeps every path, so the adapter binds one to each pattern part of a
MATCH that has a fixed-length relationship and none yet. The statement a person sees, and
Neo4j's, are never rewritten; a statement that returns `*` is left as written (the new
variables would become columns). What it costs a count over a chain: bench/graph_layer.py.
"""

from __future__ import annotations

import functools
from collections.abc import Sequence

from guardrails import Token, nesting, split_top_level, tokenize

PART_ENDS = (
    "WHERE", "RETURN", "WITH", "MATCH", "OPTIONAL", "UNWIND", "CALL", "UNION", "ORDER", "SKIP",
    "LIMIT", "CREATE", "MERGE", "SET", "DELETE", "DETACH", "REMOVE", "FOREACH",
)  # fmt: skip
PATH_PREFIX = "path_"


def with_path_variables(cypher: str) -> str:
    """`cypher` with `path_N = ` before every top-level MATCH pattern part that matches a
    relationship and binds no path variable yet; unchanged when there is none, when it returns
    `*`, or when it cannot be read."""
    read = readable(cypher)
    if read is None:
        return cypher
    tokens, depths = read
    taken = {t.value.casefold() for t in tokens if t.kind == "identifier"}
    starts: list[int] = []
    for i, tok in enumerate(tokens):
        if depths[i] != 0 or not tok.is_keyword("MATCH"):
            continue
        end = next(
            (
                j
                for j in range(i + 1, len(tokens))
                if depths[j] == 0 and tokens[j].is_keyword(*PART_ENDS)
            ),
            len(tokens),
        )
        starts += [
            first
            for first, stop in split_top_level(tokens, i + 1, end)
            if _unbound_relationship_pattern(tokens[first:stop])
        ]
    if not starts:
        return cypher
    names = fresh_names(len(starts), taken, PATH_PREFIX)
    text = cypher
    for at, name in sorted(zip(starts, names, strict=True), reverse=True):
        position = tokens[at].position
        text = f"{text[:position]}{name} = {text[position:]}"
    return text


@functools.lru_cache(maxsize=32)
def readable(cypher: str) -> tuple[tuple[Token, ...], tuple[int, ...]] | None:
    """The statement's tokens and each one's bracket depth, for a rewrite before the engine;
    None when it cannot be read whole (an unclosed string or bracket) or returns `*` (new
    variables would become columns). Kept for the last few statements: both engine rewrites
    read each statement, and the second mostly gets it unchanged from the first."""
    tokens = tuple(tokenize(cypher))
    if any(t.kind == "error" for t in tokens):
        return None
    depths = tuple(depth for _, _, depth in nesting(list(tokens)))
    if min(depths, default=0) < 0 or returns_star(tokens, depths):
        return None
    return tokens, depths


def returns_star(tokens: Sequence[Token], depths: Sequence[int]) -> bool:
    return any(
        depths[i] == 0
        and tok.is_keyword("RETURN", "WITH")
        and i + 1 < len(tokens)
        and tokens[i + 1].is_punct("*")
        for i, tok in enumerate(tokens)
    )


def _unbound_relationship_pattern(part: Sequence[Token]) -> bool:
    """A pattern part that starts with a node and holds a relationship (`-` outside its
    nodes' and relationships' brackets), with no `p =` before it and no variable-length hop:
    `-[:REPORTS_TO*]->` asks whether an end is reached, and enumerating every path of it (what
    a path variable makes the engine do) can take far longer than the answer is worth."""
    if not part or not part[0].is_punct("("):
        return False
    walked = list(nesting(part))
    variable_length = any(depth == 1 and tok.is_punct("*") for _, tok, depth in walked)
    return not variable_length and any(depth == 0 and tok.is_punct("-") for _, tok, depth in walked)


def fresh_names(count: int, taken: set[str], prefix: str) -> list[str]:
    """`count` names `prefix1`, `prefix2`, ... that are not in `taken` (case-folded)."""
    names: list[str] = []
    n = 1
    while len(names) < count:
        name = f"{prefix}{n}"
        if name not in taken:
            names.append(name)
        n += 1
    return names
