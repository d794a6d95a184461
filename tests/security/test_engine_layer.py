"""The engine alone: `run_read` on the real embedded FalkorDB, policy bypassed, never writes."""

from __future__ import annotations

import pytest

from graph_agent.graphdb.errors import GraphError, NotReadOnlyError
from graph_agent.graphdb.falkor import FalkorGraph
from tests.security.conftest import (
    CONNECTION_MARKERS,
    GraphFingerprint,
    Ledger,
    Outcome,
    graph_fingerprint,
)
from tests.security.corpus import WITH_CYPHER, HostileInput


@pytest.fixture(scope="module")
def baseline(demo_copy: FalkorGraph) -> GraphFingerprint:
    """The copy's fingerprint before any input ran."""
    return graph_fingerprint(demo_copy)


def test_the_fingerprint_sees_a_one_property_change(
    demo_copy: FalkorGraph, scratch_db: FalkorGraph
) -> None:
    """The checksum is only worth something if a real write changes it."""
    scratch_db.run_write("CREATE (:Thing {name: 'a'})-[:REL {w: 1}]->(:Thing {name: 'b'})")
    before = graph_fingerprint(scratch_db)
    scratch_db.run_write("MATCH ()-[r:REL]->() SET r.w = 2")
    after = graph_fingerprint(scratch_db)
    assert (before.nodes, before.relationships) == (after.nodes, after.relationships) == (2, 1)
    assert before.checksum != after.checksum
    scratch_db.run_write("CREATE INDEX FOR (t:Thing) ON (t.name)")
    assert graph_fingerprint(scratch_db).checksum != after.checksum


@pytest.mark.parametrize("item", WITH_CYPHER, ids=lambda item: item.id)
def test_run_read_never_writes_even_without_the_policy(
    item: HostileInput, demo_copy: FalkorGraph, baseline: GraphFingerprint, ledger: Ledger
) -> None:
    assert item.cypher is not None
    error: GraphError | None = None
    try:
        result = demo_copy.run_read(item.cypher, timeout_s=5.0, max_rows=50)
        verdict, detail = "ran", f"{len(result.rows)} rows"
    except NotReadOnlyError as exc:
        error, verdict, detail = exc, "refused", "not read-only"
    except GraphError as exc:
        error, verdict, detail = exc, "rejected", type(exc).__name__
    after = graph_fingerprint(demo_copy)
    mutated = after != baseline
    ledger.record(Outcome(item.id, "engine", verdict, mutated, detail))
    assert not mutated, f"{item.id} changed the graph through run_read: {baseline} -> {after}"
    if item.writes:
        assert verdict != "ran", f"{item.id}: the engine ran a write in a read-only query"
    if error is not None:
        # The adapter's errors may reach a log or a correction prompt; no connection strings.
        assert not any(marker in str(error) for marker in CONNECTION_MARKERS), str(error)
