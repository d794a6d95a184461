"""Checks and small rewrites of one Cypher statement: schema names, directions, an added LIMIT."""

from __future__ import annotations

from dataclasses import dataclass, field

from graph_agent.graphdb.protocol import GraphSchema
from guardrails.cypher_tokens import Token, referenced_names, tokenize

AGGREGATES = frozenset(
    {"COUNT", "SUM", "AVG", "MIN", "MAX", "COLLECT", "STDEV", "STDEVP", "PERCENTILECONT",
     "PERCENTILEDISC"}
)  # fmt: skip


@dataclass
class SchemaCheck:
    """The verdict of `check_schema`: the (possibly direction-corrected) statement and problems."""

    cypher: str
    problems: list[str] = field(default_factory=list)
    """Why the statement cannot run on this schema; empty when it can."""
    corrections: list[str] = field(default_factory=list)
    """What was fixed automatically (relationship directions)."""


def _fits(want: str | None, have: str) -> bool:
    return want is None or want == have


def check_schema(cypher: str, schema: GraphSchema) -> SchemaCheck:
    """Unknown labels, relationship types and properties; directions the schema never has.

    A relationship written against the only direction the schema allows is flipped in place
    when every use of that type in the statement is reversed; otherwise it is a problem.
    """
    names = referenced_names(cypher)
    labels = {label.name for label in schema.labels}
    types = {rel.type for rel in schema.relationships}
    props = {p.name for label in schema.labels for p in label.properties}
    props |= {p.name for rel in schema.relationships for p in rel.properties}
    check = SchemaCheck(cypher=cypher)
    if unknown := sorted(names.labels - labels):
        check.problems.append(
            f"unknown label(s) {', '.join(unknown)}; labels are: {', '.join(sorted(labels))}"
        )
    if unknown := sorted(names.rel_types - types):
        check.problems.append(
            f"unknown relationship type(s) {', '.join(unknown)}; "
            f"types are: {', '.join(sorted(types))}"
        )
    if unknown := sorted(names.properties - props):
        check.problems.append(f"unknown propert(y/ies) {', '.join(unknown)}")

    reversed_types: set[str] = set()
    kept_types: set[str] = set()
    for left, rel_type, right, direction in names.patterns:
        if direction == "-" or rel_type not in types:
            continue
        start, end = (left, right) if direction == "->" else (right, left)
        known = [r for r in schema.relationships if r.type == rel_type]
        if any(_fits(start, r.start) and _fits(end, r.end) for r in known):
            kept_types.add(rel_type)
        elif any(_fits(end, r.start) and _fits(start, r.end) for r in known):
            reversed_types.add(rel_type)
        else:
            allowed = ", ".join(f"(:{r.start})-[:{r.type}]->(:{r.end})" for r in known)
            check.problems.append(
                f"no ({':' + start if start else ''})-[:{rel_type}]->({':' + end if end else ''})"
                f" in the graph; it has {allowed}"
            )
    for rel_type in sorted(reversed_types):
        known = [r for r in schema.relationships if r.type == rel_type]
        allowed = ", ".join(f"(:{r.start})-[:{r.type}]->(:{r.end})" for r in known)
        if rel_type in kept_types:
            check.problems.append(f"wrong direction for {rel_type}: the graph has {allowed}")
            continue
        check.cypher = flip_relationships(check.cypher, rel_type)
        check.corrections.append(f"reversed {rel_type} to match {allowed}")
    return check


def _rel_groups(tokens: list[Token]) -> list[tuple[list[str], list[Token], list[Token]]]:
    """Each `-[...]-` relationship: (types, arrow tokens on the left, arrow tokens on the right)."""
    groups = []
    for i, tok in enumerate(tokens):
        if not tok.is_punct("[") or i == 0 or not tokens[i - 1].is_punct("-"):
            continue
        left = [tokens[i - 1]]
        if i >= 2 and tokens[i - 2].is_punct("<"):
            left.insert(0, tokens[i - 2])
        elif not (i >= 2 and tokens[i - 2].is_punct(")")):
            continue
        depth, k, rel_types = 0, i, []
        while k < len(tokens):
            if tokens[k].is_punct("["):
                depth += 1
            elif tokens[k].is_punct("]"):
                depth -= 1
                if depth == 0:
                    break
            elif (
                tokens[k].is_punct(":", "|")
                and depth == 1
                and k + 1 < len(tokens)
                and tokens[k + 1].is_name
            ):
                rel_types.append(tokens[k + 1].value)
            k += 1
        if k + 1 >= len(tokens) or not tokens[k + 1].is_punct("-"):
            continue
        right = [tokens[k + 1]]
        if k + 2 < len(tokens) and tokens[k + 2].is_punct(">"):
            right.append(tokens[k + 2])
        groups.append((rel_types, left, right))
    return groups


def flip_relationships(cypher: str, rel_type: str) -> str:
    """Reverse the arrow of every directed `-[:rel_type]-` in the statement."""
    edits: list[tuple[int, int, str]] = []  # (start, end, replacement)
    for rel_types, left, right in _rel_groups(tokenize(cypher)):
        if rel_type not in rel_types:
            continue
        points_right = len(right) == 2
        points_left = len(left) == 2
        if points_right == points_left:
            continue
        if points_right:
            edits.append((left[0].position, left[0].position, "<"))
            edits.append((right[1].position, right[1].end, ""))
        else:
            edits.append((left[0].position, left[0].end, ""))
            edits.append((right[-1].end, right[-1].end, ">"))
    for start, end, text in sorted(edits, reverse=True):
        cypher = cypher[:start] + text + cypher[end:]
    return cypher


def needs_limit(cypher: str) -> bool:
    """True when the statement has no LIMIT, no UNION and its final RETURN does not aggregate."""
    tokens = tokenize(cypher)
    if any(t.is_keyword("LIMIT", "UNION") for t in tokens):
        return False
    returns = [i for i, t in enumerate(tokens) if t.is_keyword("RETURN")]
    if not returns:
        return False
    tail = tokens[returns[-1] + 1 :]
    for i, tok in enumerate(tail[:-1]):
        if tok.is_name and tok.text.upper() in AGGREGATES and tail[i + 1].is_punct("("):
            return False
    return True


def with_limit(cypher: str, limit: int) -> str:
    """The statement with `LIMIT limit` appended when `needs_limit`, else unchanged."""
    stripped = cypher.rstrip().rstrip(";").rstrip()
    return f"{stripped}\nLIMIT {limit}" if needs_limit(stripped) else stripped
