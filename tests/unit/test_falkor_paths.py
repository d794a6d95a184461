"""The path variables the FalkorDB adapter binds so that every path is a row (falkor_paths)."""

from __future__ import annotations

import pytest

from graph_agent.graphdb.falkor_paths import with_path_variables

BOUND = [
    (
        "MATCH (r:Rack {name: 'x'})-[:HOLDS]->(m:Machine)-[:TYPE]->(t:Type) RETURN sum(t.cpu)",
        "MATCH path_1 = (r:Rack {name: 'x'})-[:HOLDS]->(m:Machine)-[:TYPE]->(t:Type) "
        "RETURN sum(t.cpu)",
    ),
    (  # each part with a relationship; a lone node and a pattern predicate stay as written
        "MATCH (a)-[:R]->(b), (b)<-[:S]-(c), (d) WHERE (a)-[:T]->(d) RETURN count(*)",
        "MATCH path_1 = (a)-[:R]->(b), path_2 = (b)<-[:S]-(c), (d) WHERE (a)-[:T]->(d) "
        "RETURN count(*)",
    ),
    (  # OPTIONAL MATCH and a later MATCH; a part bound already keeps its variable
        "MATCH p = (a)-[:R]->(b) OPTIONAL MATCH (b)<--(c) WITH b, c MATCH (c)--(x) RETURN x",
        "MATCH p = (a)-[:R]->(b) OPTIONAL MATCH path_1 = (b)<--(c) WITH b, c "
        "MATCH path_2 = (c)--(x) RETURN x",
    ),
    (  # a name the statement uses is not taken again
        "MATCH (path_1)-[:R]->(b) RETURN path_1",
        "MATCH path_2 = (path_1)-[:R]->(b) RETURN path_1",
    ),
]


@pytest.mark.parametrize(("written", "sent"), BOUND)
def test_each_fixed_length_pattern_part_gets_a_path_variable(written: str, sent: str) -> None:
    assert with_path_variables(written) == sent


@pytest.mark.parametrize(
    "written",
    [
        "MATCH (a)-[:R]->(b) RETURN *",  # the new variables would be columns
        "MATCH (a)-[:R]->(b) WITH * RETURN a",
        "MATCH (e)-[:REPORTS_TO*]->(m {name: 'x'}) RETURN e",  # reachability, not paths
        "MATCH (a) WHERE EXISTS { MATCH (a)-->(b) } RETURN a",  # inside a subquery
        "MATCH (a:A {s: 'x-y'}) RETURN a",  # no relationship; a dash in a string
        "MATCH (a)-[:R]->(b) WHERE a.name = 'unterminated RETURN a",
        "RETURN 1",
    ],
)
def test_a_statement_with_nothing_to_bind_is_sent_as_written(written: str) -> None:
    assert with_path_variables(written) == written
