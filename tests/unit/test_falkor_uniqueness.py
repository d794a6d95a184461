"""The relationship comparisons the FalkorDB adapter adds so that a MATCH never walks one
relationship twice (falkor_uniqueness)."""

from __future__ import annotations

import pytest

from graph_agent.graphdb.falkor_uniqueness import with_distinct_relationships

COMPARED = [
    (  # a co-link through a shared node: the anonymous relationships get names
        "MATCH (p:Person {name: 'Tom'})-[:ACTED_IN]->(m)<-[:ACTED_IN]-(o) RETURN o.name",
        "MATCH (p:Person {name: 'Tom'})-[rel_1:ACTED_IN]->(m)<-[rel_2:ACTED_IN]-(o) "
        "WHERE rel_1 <> rel_2 RETURN o.name",
    ),
    (  # untyped and bracketless hops; the WHERE already there is kept whole
        "MATCH (a)-->(b)<--(c) WHERE a.x = 1 OR c.y = 2 RETURN a",
        "MATCH (a)-[rel_1]->(b)<-[rel_2]-(c) WHERE rel_1 <> rel_2 AND (a.x = 1 OR c.y = 2) "
        "RETURN a",
    ),
    (  # a name as written; types that may overlap; each MATCH on its own
        "MATCH (a)-[r:R]->(b), (c)-[:R|S]->(b) WITH a MATCH (a)-[:T]->(x)-[:T]->(y) "
        "WHERE x.n > 1 RETURN y",
        "MATCH (a)-[r:R]->(b), (c)-[rel_1:R|S]->(b) WHERE r <> rel_1 WITH a "
        "MATCH (a)-[rel_2:T]->(x)-[rel_3:T]->(y) WHERE rel_2 <> rel_3 AND (x.n > 1) RETURN y",
    ),
    (  # OPTIONAL MATCH, a quoted name, a property map, a name the statement holds already
        "OPTIONAL MATCH (rel_1)-[`my r`:R]->(b)<-[:R {w: 1}]-(c) RETURN c",
        "OPTIONAL MATCH (rel_1)-[`my r`:R]->(b)<-[rel_2:R {w: 1}]-(c) WHERE `my r` <> rel_2 "
        "RETURN c",
    ),
]


@pytest.mark.parametrize(("written", "sent"), COMPARED)
def test_relationships_that_could_be_one_are_compared(written: str, sent: str) -> None:
    assert with_distinct_relationships(written) == sent


@pytest.mark.parametrize(
    "written",
    [
        "MATCH (a)-[:R]->(b)-[:S]->(c) RETURN c",  # types that cannot be the same
        "MATCH (a)-[:R*1..3]->(b)-[:R]->(c) RETURN c",  # a variable-length hop: a list
        "MATCH (a)-[:R]->(b)-[:R]->(c) RETURN *",  # the new names would be columns
        "MATCH (a)-[:R]->(b) WHERE (b)-[:R]->(a) RETURN a",  # one relationship in the MATCH
        "MATCH (a) WHERE EXISTS { MATCH (a)-->()-->(b) } RETURN a",  # inside a subquery
        "MATCH (a)-[:R]->(b)-[:R]->(c) WHERE a.name = 'unterminated RETURN a",
        "RETURN 1",
    ],
)
def test_a_statement_with_no_pair_to_compare_is_sent_as_written(written: str) -> None:
    assert with_distinct_relationships(written) == written
