"""A restricted channel's statement judged by the engine's own plan (EXPLAIN), not its text.

The policy reads names in the text; the plan says what the engine will touch. In a channel
that hides labels or relationship types, two plan steps can reach hidden data whatever the
text says: a scan of every node (FalkorDB's `All Node Scan`, Neo4j's `AllNodesScan`) and a
variable-length traversal with no relationship type (`[@anon_0*1..3]`), whose intermediate
nodes may carry any label. Either refuses the statement with a note the correction step can
use. What plans do not show: FalkorDB prints a single hop's relationship type in no plan step,
so single hops stay the binding checker's (guardrails/cypher_bindings.py) to judge.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from guardrails.cypher_policy import CypherPolicy

_ALL_NODES = frozenset({"allnodescan", "allnodesscan"})
_VARIABLE_LENGTH = re.compile(r"\[[^\]:]*\*[^\]]*\]")
"""A variable-length relationship in a plan line without a type: `[@anon_0*1..2]`."""


def _operator(line: str) -> str:
    return line.split("|", 1)[0].strip().replace(" ", "").split("@", 1)[0].lower()


def plan_problem(plan: Iterable[str], policy: CypherPolicy | None) -> str | None:
    """Why the plan may reach what `policy` hides, for the model; None when it cannot (or the
    channel hides nothing). `plan` is the EXPLAIN output, one step per line (or the operator
    names alone, as Neo4j's summary gives them)."""
    if policy is None or not (policy.hidden_labels or policy.hidden_rel_types):
        return None
    for line in plan:
        operator = _operator(line)
        if operator in _ALL_NODES:
            return (
                "the engine would scan every node, hidden ones included; start each pattern "
                "from a labelled node, e.g. MATCH (n:Label)"
            )
        if "variablelength" in operator and _VARIABLE_LENGTH.search(line):
            return (
                "a variable-length path without a relationship type may pass through nodes "
                "this channel cannot see; name the type, e.g. -[:TYPE*1..3]->"
            )
    return None
