"""The FalkorDB adapter against the real embedded server: schema, validate, run_read, lookup, errors."""

from __future__ import annotations

from pathlib import Path

import pytest

from graph_agent.graphdb import (
    CypherSyntaxError,
    GraphDB,
    NotReadOnlyError,
    QueryTimeoutError,
    schema_fingerprint,
    schema_text,
)

# A cartesian product: the engine checks its deadline between records. (UNWIND range(1, 1e8)
# is not a good probe: FalkorDB builds the whole list before it looks at the clock.)
SLOW = "MATCH (a:Person), (b:Person), (c:Person), (d:Person) RETURN count(*)"


def test_ping_names_the_engine_and_version(demo_db: GraphDB) -> None:
    assert demo_db.ping().startswith("FalkorDB ")
    assert "FalkorDB" in demo_db.dialect


def test_schema_of_the_demo_graph(demo_db: GraphDB) -> None:
    schema = demo_db.schema()
    names = {label.name for label in schema.labels}
    assert {"Person", "Team", "Service", "Repository", "Technology", "Incident", "Project"} <= names
    patterns = {(r.start, r.type, r.end) for r in schema.relationships}
    assert ("Person", "MEMBER_OF", "Team") in patterns
    assert ("Service", "DEPENDS_ON", "Service") in patterns
    assert ("Team", "OWNS", "Repository") in patterns
    incident = schema.label("Incident")
    assert incident is not None and incident.count > 0
    severity = next(p for p in incident.properties if p.name == "severity")
    assert set(severity.sample_values) == {"SEV1", "SEV2", "SEV3", "SEV4"}
    service = schema.label("Service")
    assert service is not None
    tier = next(p for p in service.properties if p.name == "tier")
    assert tier.types == ("INTEGER", "NULL")
    person = schema.label("Person")
    assert person is not None
    assert next(p for p in person.properties if p.name == "name").sample_values == ()


def test_schema_include_exclude_and_sampling_cap(demo_db: GraphDB) -> None:
    only = demo_db.schema(include=["Person", "Team"])
    assert {label.name for label in only.labels} == {"Person", "Team"}
    assert {(r.start, r.end) for r in only.relationships} <= {
        ("Person", "Team"),
        ("Person", "Person"),
    }
    without = demo_db.schema(exclude=["Person"], sample=5)
    assert "Person" not in {label.name for label in without.labels}
    assert all("Person" not in (r.start, r.end) for r in without.relationships)


def test_a_pattern_the_capped_sample_missed_keeps_its_relationship_properties(
    scratch_db: GraphDB,
) -> None:
    # One type between several label pairs: the first relationships of the type are all
    # Character -> Character, so a sample capped below their number never reaches a Group's.
    scratch_db.run_write(
        "UNWIND range(1, 12) AS i CREATE (:Character {name: 'c' + toString(i)})"
        "-[:RELATED_TO {weight: i}]->(:Character {name: 'd' + toString(i)})"
    )
    scratch_db.run_write(
        "CREATE (:Group {name: 'Elves'})-[:RELATED_TO {weight: 26}]->(:Character {name: 'x'})"
    )
    schema = scratch_db.schema(sample=5)
    weights = {
        (r.start, r.end): [p.name for p in r.properties]
        for r in schema.relationships
        if r.type == "RELATED_TO"
    }
    assert weights == {("Character", "Character"): ["weight"], ("Group", "Character"): ["weight"]}
    assert "(:Group)-[:RELATED_TO {weight: INTEGER}]->(:Character)" in schema_text(schema)


def test_a_label_every_node_of_which_carries_another_is_a_kind_of_it(scratch_db: GraphDB) -> None:
    # A learning graph's courses: each is also a Web or a Classroom course (one node, two labels).
    scratch_db.run_write(
        "CREATE (:Course:Web {name: 'Course2'}), (:Course:Web {name: 'Course4'}), "
        "(:Course:Classroom {name: 'Course1'}), (:Person {name: 'Ada'})"
    )
    schema = scratch_db.schema()
    within = {label.name: label.within for label in schema.labels}
    assert within == {"Classroom": ("Course",), "Course": (), "Person": (), "Web": ("Course",)}
    text = schema_text(schema)
    assert "(:Web) [2 nodes, each also :Course: match (x:Course:Web)]" in text
    # A channel that cannot see Course is not told of it.
    hidden = scratch_db.schema(exclude=["Course"])
    assert all(label.within == () for label in hidden.labels)
    assert "Course" not in schema_text(hidden)


def test_schema_text_and_fingerprint(demo_db: GraphDB) -> None:
    schema = demo_db.schema()
    text = schema_text(schema)
    assert "(:Person)-[:MEMBER_OF" in text and "]->(:Team)" in text
    assert '"SEV1"' in text
    assert "tier: INTEGER (may be null)" in text
    pruned = schema_text(schema, labels=["Service", "Technology"])
    assert "(:Service)-[:USES]->(:Technology)" in pruned and "Person" not in pruned
    assert schema_fingerprint(schema) == schema_fingerprint(demo_db.schema(sample=50))
    assert len(schema_fingerprint(schema)) == 12


def test_validate_good_and_bad(demo_db: GraphDB) -> None:
    good = demo_db.validate("MATCH (p:Person) RETURN p.name LIMIT 3")
    assert good.ok and good.read_only is True
    bad = demo_db.validate("MATCH (p:Person RETURN p")
    assert not bad.ok
    assert bad.error is not None and "Invalid input" in bad.error
    assert bad.position == 16
    unknown = demo_db.validate("MATCH (p:Person) RETURN q")
    assert not unknown.ok and unknown.error is not None and "'q' not defined" in unknown.error
    write = demo_db.validate("MATCH (p:Person) SET p.x = 1")
    assert write.ok and write.read_only is False


def test_run_read_with_params_and_entities(demo_db: GraphDB) -> None:
    result = demo_db.run_read(
        "MATCH (t:Technology {name: $name}) RETURN t, t.aliases AS aliases", {"name": "PostgreSQL"}
    )
    assert result.columns == ["t", "aliases"]
    node = result.rows[0][0]
    assert node["_labels"] == ["Technology"] and node["name"] == "PostgreSQL"
    assert "Postgres" in result.rows[0][1]
    assert result.elapsed_ms > 0 and not result.truncated
    path = demo_db.run_read("MATCH p = (:Person)-[:MEMBER_OF]->(:Team) RETURN p LIMIT 1").rows[0][0]
    assert path["_relationships"][0]["_type"] == "MEMBER_OF"
    dates = demo_db.run_read("RETURN date('2024-05-01') AS d").rows
    assert dates == [["2024-05-01"]]


def test_max_rows_truncates(demo_db: GraphDB) -> None:
    result = demo_db.run_read("MATCH (p:Person) RETURN p.name", max_rows=5)
    assert len(result.rows) == 5 and result.truncated
    exact = demo_db.run_read("MATCH (t:Team) RETURN t.name LIMIT 3", max_rows=3)
    assert len(exact.rows) == 3 and not exact.truncated


def test_timeout_is_enforced_by_the_engine(demo_db: GraphDB) -> None:
    # The engine stops SLOW (minutes of work) with its own timeout error; how soon is a
    # figure for bench/, not an assertion on a shared machine.
    with pytest.raises(QueryTimeoutError, match="timed out"):
        demo_db.run_read(SLOW, timeout_s=0.2)
    assert demo_db.run_read("RETURN 1 AS one").rows == [[1]]  # and it is usable right after


def test_write_is_refused_and_graph_unchanged(demo_db: GraphDB) -> None:
    before = demo_db.counts()
    with pytest.raises(NotReadOnlyError, match="writes"):
        demo_db.run_read("CREATE (:Person {name: 'Mallory'})")
    with pytest.raises(NotReadOnlyError):
        demo_db.run_read("MATCH (p:Person) DETACH DELETE p")
    assert demo_db.counts() == before


def test_syntax_error_carries_engine_message(demo_db: GraphDB) -> None:
    with pytest.raises(CypherSyntaxError) as caught:
        demo_db.run_read("MATCH (p:Person RETURN p")
    assert "Invalid input" in caught.value.engine_message
    assert caught.value.position == 16


@pytest.mark.parametrize(
    ("phrase", "label", "value"),
    [
        ("Which services use Postgres?", "Technology", "PostgreSQL"),
        ("what runs on k8s", "Technology", "Kubernetes"),
        ("golang services", "Technology", "Go"),
        ("the payments team", "Team", "Payments"),
        ("sev1 incidents", "Incident", "SEV1"),
        ("checkout service", "Service", "checkout-service"),
    ],
)
def test_lookup_values_finds_synonyms(
    demo_db: GraphDB, phrase: str, label: str, value: str
) -> None:
    matches = demo_db.lookup_values(phrase, limit=5)
    assert (label, value) in {(m.label, m.value) for m in matches}, matches
    assert matches == sorted(matches, key=lambda m: -m.score)


def test_lookup_values_on_nothing_alike(demo_db: GraphDB) -> None:
    assert demo_db.lookup_values("zzzz qqqq") == []


def test_scratch_db_writes_and_lookup_through_fulltext(scratch_db: GraphDB) -> None:
    from graph_agent.graphdb.falkor import FalkorGraph
    from graph_agent.graphdb.lookup import CATALOG_CAP

    assert isinstance(scratch_db, FalkorGraph)
    rows = [{"name": f"Member {i}"} for i in range(CATALOG_CAP + 10)]
    rows.append({"name": "Science Fiction Club"})
    assert scratch_db.write_batches("UNWIND $rows AS r CREATE (n:Club) SET n = r", [rows]) == len(
        rows
    )
    scratch_db.create_fulltext_index("Club", "name")
    matches = scratch_db.lookup_values("any science fiction clubs?")
    assert matches and matches[0].value == "Science Fiction Club"
    assert scratch_db.counts() == (len(rows), 0)


def test_validate_works_on_a_graph_that_was_never_written(
    demo_db: GraphDB, graph_data_dir: Path
) -> None:
    from graph_agent.graphdb import connect

    db = connect("embedded", data_dir=graph_data_dir, graph_name="never_written_validate")
    try:
        assert db.validate("RETURN 1").ok
        bad = db.validate("MATCH (n:P RETURN n")
        assert not bad.ok and bad.error and "Invalid input" in bad.error
        assert db.counts() == (0, 0)
    finally:
        db.close()


def test_every_path_is_a_row_though_its_middle_node_is_never_read(scratch_db: GraphDB) -> None:
    # Two paths from a to c (FalkorDB#2470): the engine's fused traversal counted one, and
    # summed a rack's CPUs once per machine type instead of once per machine.
    scratch_db.run_write(
        "CREATE (a:A), (b1:B), (b2:B), (c:C), (a)-[:R]->(b1), (a)-[:R]->(b2), "
        "(b1)-[:R]->(c), (b2)-[:R]->(c)"
    )
    for statement in (
        "MATCH (:A)-[:R]->()-[:R]->(:C) RETURN count(*)",
        "MATCH (:A)-[:R]->(b:B)-[:R]->(:C) RETURN count(*)",
        "MATCH (a:A)-[:R]->(b:B), (b)-[:R]->(c:C) RETURN count(*)",
    ):
        assert scratch_db.run_read(statement).rows == [[2]], statement


def test_a_sum_over_a_chain_counts_every_machine(eval_graphs: dict[str, GraphDB]) -> None:
    db = eval_graphs["network"]
    chain = "MATCH (:Rack {name: 'DC1-RCK-1-1'})-[:HOLDS]->(m:Machine)-[:TYPE]->(t:Type) "
    per_machine = db.run_read(chain + "RETURN m.name, t.cpu", max_rows=1000).rows
    assert len(per_machine) > len({cpu for _, cpu in per_machine})  # types repeat
    total = db.run_read(chain + "RETURN sum(t.cpu)").rows[0][0]
    assert total == sum(cpu for _, cpu in per_machine)


def test_no_relationship_is_walked_twice_within_a_match(scratch_db: GraphDB) -> None:
    # Cypher binds each relationship of a MATCH once; FalkorDB walked one back (FalkorDB#694),
    # so the people who acted with Tom included Tom, and a director's other film the same film.
    scratch_db.run_write(
        "CREATE (tom:Person {name: 'Tom'}), (meg:Person {name: 'Meg'}), (m:Movie {title: 'M'}), "
        "(n:Movie {title: 'N'}), (tom)-[:ACTED_IN]->(m), (meg)-[:ACTED_IN]->(m), "
        "(tom)-[:ACTED_IN]->(n), (tom)-[:DIRECTED]->(n)"
    )
    co_actors = "MATCH (:Person {name: 'Tom'})-[:ACTED_IN]->(:Movie)<-[:ACTED_IN]-(o) RETURN o.name"
    assert scratch_db.run_read(co_actors).rows == [["Meg"]]
    assert scratch_db.run_read(
        "MATCH (p:Person {name: 'Tom'})-->(m)<--(o) WHERE m.title = 'M' OR m.title = 'N' "
        "RETURN o.name ORDER BY o.name"
    ).rows == [["Meg"], ["Tom"], ["Tom"]]  # to N and back by the other relationship, each way
    assert scratch_db.run_read(
        "MATCH (:Movie {title: 'M'})<-[:ACTED_IN]-(p)-[:ACTED_IN]->(other) RETURN other.title"
    ).rows == [["N"]]
