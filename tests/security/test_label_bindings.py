"""Restrictions by construction: every node bound by an allowed label in its own pattern.

Policy level: each form of `restricted_forms` is refused or allowed as its table says, with
feedback the correction step can use. Engine level (policy bypassed): each refused form really
returns hidden data from the embedded FalkorDB (its rows differ from the rows of the same
statement on a copy of the graph with the hidden data deleted), and each allowed form returns
exactly what that copy returns.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from graph_agent.graphdb import connect
from graph_agent.graphdb.errors import GraphError
from graph_agent.graphdb.falkor import FalkorGraph
from guardrails.cypher_policy import RESTRICTION_CATEGORIES, CypherPolicy, check_cypher
from tests.security.conftest import plant_injections
from tests.security.restricted_forms import ALLOWED, FORMS, REFUSED, Form
from tests.security.test_restricted_values import RESTRICTED

# The same hidden names, one kind at a time: the node rules need hidden labels, the type rules
# hidden types.
LABELS_ONLY = CypherPolicy(hidden_labels=frozenset({"Incident"}))
TYPES_ONLY = CypherPolicy(hidden_rel_types=frozenset({"REPORTS_TO"}))
PROPERTIES_ONLY = CypherPolicy(hidden_properties=frozenset({"Person.email"}))

# Deleting what the restricted channel hides gives the graph as that channel should see it.
HIDE = (
    "MATCH (i:Incident) DETACH DELETE i",
    "MATCH ()-[r:REPORTS_TO]->() DELETE r",
    "MATCH (n) WHERE n.email IS NOT NULL SET n.email = NULL",
)


def test_the_table_covers_the_red_team_forms_and_their_variants() -> None:
    ids = {form.id for form in FORMS}
    assert len(ids) == len(FORMS), "form ids are unique"
    for needed in ("or-true-titles", "union-second-branch-unlabelled", "or-true-with-prefix"):
        assert needed in ids
    for variant in ("union", "call", "with", "optional", "comprehension", "exists"):
        assert any(variant in form.id for form in REFUSED), variant
    assert all(not form.allowed for form in REFUSED)
    assert all(form.allowed for form in ALLOWED)


@pytest.mark.parametrize("form", FORMS, ids=lambda form: form.id)
def test_the_policy_decides_as_the_table_says(form: Form) -> None:
    verdict = check_cypher(form.cypher, RESTRICTED)
    assert verdict.allowed is form.allowed, (form.id, verdict.reason)
    if not verdict.allowed:
        assert verdict.category in RESTRICTION_CATEGORIES, verdict
        reason = verdict.reason or ""
        assert "e.g." in reason and len(reason) < 300, reason
        assert "Incident" not in reason and "REPORTS_TO" not in reason, reason


@pytest.mark.parametrize("form", FORMS, ids=lambda form: form.id)
def test_unrestricted_channels_are_unchanged(form: Form) -> None:
    """Only restrictions tighten: with nothing hidden, every form is allowed as before."""
    assert check_cypher(form.cypher).allowed, form.id


@pytest.mark.parametrize(
    ("cypher", "labels_only", "types_only", "properties_only"),
    [
        # A node without a label is a problem only when labels are hidden.
        ("MATCH (i) WHERE i:Person OR true RETURN count(i)", False, True, True),
        ("MATCH (p:Person)-[:MEMBER_OF]->() RETURN count(p)", False, True, True),
        # An untyped relationship only when types are hidden (its ends are bound).
        ("MATCH (a:Person)-->(b:Team) RETURN a.name, b.name", True, False, True),
        # An untyped variable-length one passes through unlabelled nodes.
        ("MATCH (a:Service)-[*1..2]->(b:Service) RETURN count(*)", False, False, True),
        ("MATCH (a:Service)-[:DEPENDS_ON*1..2]->(b:Service) RETURN count(*)", True, True, True),
    ],
)
def test_each_rule_follows_what_the_channel_hides(
    cypher: str, labels_only: bool, types_only: bool, properties_only: bool
) -> None:
    assert check_cypher(cypher, LABELS_ONLY).allowed is labels_only
    assert check_cypher(cypher, TYPES_ONLY).allowed is types_only
    assert check_cypher(cypher, PROPERTIES_ONLY).allowed is properties_only


@pytest.mark.parametrize(
    "cypher",
    [
        "MATCH (i) WHERE i:Person OR true RETURN i.title",
        "MATCH (i:Person) RETURN i.title AS t UNION MATCH (i) RETURN i.title AS t",
        "MATCH (p:Person)-[:RESPONDED_TO]->() RETURN count(p)",
    ],
)
def test_the_feedback_says_how_to_bind(cypher: str) -> None:
    reason = check_cypher(cypher, RESTRICTED).reason or ""
    assert "allowed label in its own pattern" in reason, reason
    assert ":Label)" in reason, reason


@pytest.mark.parametrize(
    "cypher",
    [
        "MATCH (n" * 400 + ")" * 400 + " RETURN 1",
        "MATCH (a:Person)-[:X]->(b:Person RETURN a.name",
        "MATCH (a:Person) WHERE a.x = [1, (2] RETURN a.name",
        "MATCH (a:Person) RETURN " + "[" * 5000 + "1" + "]" * 5000,
    ],
)
def test_odd_statements_are_refused_not_raised(cypher: str) -> None:
    verdict = check_cypher(cypher, RESTRICTED)
    assert not verdict.allowed and verdict.reason


def test_deep_but_sound_nesting_is_judged() -> None:
    cypher = "MATCH (a:Person) RETURN " + "(" * 300 + "a.level" + ")" * 300 + " AS x"
    assert check_cypher(cypher, RESTRICTED).allowed


# --- the engine, policy bypassed ---------------------------------------------------------------


@pytest.fixture(scope="module")
def hidden_removed(graph_data_dir: Path, demo_copy: FalkorGraph) -> Iterator[FalkorGraph]:
    """The demo graph (with the same planted values as demo_copy) minus what the channel hides."""
    from graph_agent.demo import load_demo

    db = connect("embedded", data_dir=graph_data_dir, graph_name="security_label_bindings_view")
    assert isinstance(db, FalkorGraph)
    db.drop_graph()
    load_demo(db)
    plant_injections(db)
    for statement in HIDE:
        db.run_write(statement)
    yield db
    db.drop_graph()
    db.close()


def _rows(db: FalkorGraph, cypher: str) -> list[str]:
    result = db.run_read(cypher, timeout_s=60.0, max_rows=100_000)
    return sorted(repr(row) for row in result.rows)


def _engine_forms(*, leaks: bool) -> list[Form]:
    return [form for form in FORMS if form.leaks is leaks]


@pytest.mark.parametrize("form", _engine_forms(leaks=True), ids=lambda form: form.id)
def test_each_refused_form_returns_hidden_data_without_the_policy(
    form: Form, demo_copy: FalkorGraph, hidden_removed: FalkorGraph
) -> None:
    full = _rows(demo_copy, form.cypher)
    seen = _rows(hidden_removed, form.cypher)
    assert full != seen, f"{form.id} does not depend on hidden data: {full[:3]}"
    assert not check_cypher(form.cypher, RESTRICTED).allowed


@pytest.mark.parametrize("form", _engine_forms(leaks=False), ids=lambda form: form.id)
def test_each_allowed_form_sees_only_what_the_channel_may_see(
    form: Form, demo_copy: FalkorGraph, hidden_removed: FalkorGraph
) -> None:
    assert _rows(demo_copy, form.cypher) == _rows(hidden_removed, form.cypher), form.id
    assert check_cypher(form.cypher, RESTRICTED).allowed


@pytest.mark.parametrize("form", [f for f in FORMS if f.leaks is None], ids=lambda f: f.id)
def test_forms_marked_unsupported_are_rejected_by_the_embedded_engine(
    form: Form, demo_copy: FalkorGraph
) -> None:
    """If FalkorDB learns one of these, the test says so: mark it and compare it like the rest."""
    error: Any = None
    try:
        demo_copy.run_read(form.cypher, timeout_s=60.0, max_rows=10)
    except GraphError as exc:
        error = exc
    assert error is not None, f"{form.id} now runs on the embedded engine"
