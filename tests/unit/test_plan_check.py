"""guardrails.plan_problem: a restricted channel's statement judged by the engine's plan."""

from __future__ import annotations

import pytest

from guardrails import CypherPolicy, plan_problem

HIDES_A_LABEL = CypherPolicy(hidden_labels=frozenset({"Incident"}))
HIDES_A_TYPE = CypherPolicy(hidden_rel_types=frozenset({"REPORTS_TO"}))
HIDES_A_KEY = CypherPolicy(hidden_properties=frozenset({"email"}))

ALL_NODES = ("Results", "Project", "All Node Scan | (n)")
UNTYPED_PATH = (
    "Results",
    "Conditional Traverse | (b:Team)->(b:Team)",
    "Conditional Variable Length Traverse | (a)-[@anon_0*1..2]->(b)",
    "Node By Label Scan | (a:Person)",
)
TYPED_PATH = (
    "Results",
    "Conditional Variable Length Traverse | (a)-[@anon_0:MEMBER_OF*1..3]->(b)",
    "Node By Label Scan | (a:Person)",
)
ONE_HOP = ("Results", "Conditional Traverse | (a)->(b)", "Node By Label Scan | (a:Person)")


@pytest.mark.parametrize("policy", [HIDES_A_LABEL, HIDES_A_TYPE])
def test_every_node_scanned_or_an_untyped_path_is_refused(policy: CypherPolicy) -> None:
    assert "every node" in (plan_problem(ALL_NODES, policy) or "")
    assert "variable-length" in (plan_problem(UNTYPED_PATH, policy) or "")


def test_neo4j_operator_names_count_too() -> None:
    assert plan_problem(("produceresults", "allnodesscan"), HIDES_A_LABEL) is not None
    assert plan_problem(("produceresults", "nodebylabelscan"), HIDES_A_LABEL) is None


@pytest.mark.parametrize("plan", [TYPED_PATH, ONE_HOP])
def test_typed_paths_and_labelled_starts_pass(plan: tuple[str, ...]) -> None:
    assert plan_problem(plan, HIDES_A_LABEL) is None


@pytest.mark.parametrize("policy", [None, CypherPolicy(), HIDES_A_KEY])
def test_channels_hiding_no_label_or_type_are_not_judged_by_plan(
    policy: CypherPolicy | None,
) -> None:
    assert plan_problem(ALL_NODES, policy) is None
