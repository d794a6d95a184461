"""The read-only Cypher policy: a table of statements that must be refused or allowed."""

from __future__ import annotations

import pytest

from guardrails.cypher_policy import (
    DEFAULT_ALLOWED_PROCEDURES,
    CypherPolicy,
    PolicyResult,
    check_cypher,
    fold_word,
)

# Each write clause as a full statement; {kw} is where the keyword's casing varies.
_WRITE_TEMPLATES: list[tuple[str, str]] = [
    ("{kw} (n:Person {{name: 'x'}})", "create"),
    ("MATCH (n) WITH n {kw} (m:Copy {{id: n.id}})", "create"),
    ("{kw} (n:Person {{name: 'x'}}) RETURN n", "merge"),
    ("MATCH (n) {kw} n", "delete"),
    ("MATCH (n) {kw} n", "detach delete"),
    ("MATCH (n) {kw} n.name = 'x' RETURN n", "set"),
    ("MATCH (n) {kw} n:Admin", "set"),
    ("MATCH (n) {kw} n.name", "remove"),
    ("MATCH (n) {kw} n:Person", "remove"),
    ("{kw} (x IN [1, 2] | CREATE (:N {{v: x}}))", "foreach"),
    ("MATCH (a), (b) {kw} (a)-[:KNOWS]->(b)", "create"),
    ("MATCH (a) OPTIONAL MATCH (a)-[r]-() {kw} r", "delete"),
    ("UNWIND range(1, 10) AS i {kw} (:N {{i: i}})", "create"),
    ("MATCH (n) WITH n LIMIT 1 {kw} n += {{x: 1}}", "set"),
    ("MATCH (n) RETURN n UNION {kw} (m) RETURN m", "create"),
    ("{kw} (n)", "insert"),
]


def _casings(word: str) -> list[str]:
    mixed = "".join(c.upper() if i % 2 == 0 else c.lower() for i, c in enumerate(word))
    return [word.upper(), word.lower(), mixed]


WRITE_CASES: list[tuple[str, str]] = [
    (template.format(kw=kw), "write_clause")
    for template, keyword in _WRITE_TEMPLATES
    for kw in _casings(keyword)
]

REFUSED: list[tuple[str, str]] = [
    *WRITE_CASES,
    # write clauses hidden behind comments, newlines, subqueries
    ("MATCH (n) /* harmless */ DELETE n", "write_clause"),
    ("MATCH (n) // just reading\nDETACH DELETE n", "write_clause"),
    ("MATCH (n)\n\tSET\n\tn.x = 1", "write_clause"),
    ("MATCH (n) CRE/**/ATE (m)", "write_clause"),  # glued pieces spell CREATE: conservative
    ("MATCH (n) DE/* x */LETE n", "write_clause"),
    ("MATCH (n) CALL { WITH n DELETE n } RETURN count(*)", "write_clause"),
    ("MATCH (n) CALL (n) { SET n.x = 1 } RETURN n", "write_clause"),
    ("MATCH (n) WHERE EXISTS { MATCH (n)-->(m) } MERGE (x:Y) RETURN x", "write_clause"),
    ("MATCH (n) ON CREATE SET n.x = 1", "write_clause"),
    ("MATCH (n) NODETACH DELETE n", "write_clause"),
    ("MATCH (n) WITH n AS x SET x.a = 1", "write_clause"),
    ("MATCH (n) FOREACH (m IN [n] | SET m.x = 1)", "write_clause"),
    ("MATCH (n) // comment ends at CR\rCREATE (m)", "write_clause"),
    ("MATCH (n) // comment ends at LS\u2028DELETE n", "write_clause"),
    ("MATCH (n) // comment ends at NEL\x85SET n.x = 1", "write_clause"),
    ("MATCH (n) RETURN n UNION SHOW USERS", "admin"),
    # unicode look-alikes and invisible characters
    ("\u0421REATE (n)", "write_clause"),  # Cyrillic С
    ("MATCH (n) D\u0415LETE n", "write_clause"),  # Cyrillic Е
    ("MATCH (n) \u0455et n.x = 1", "write_clause"),  # Cyrillic ѕ
    ("MATCH (n) \u039cERGE (m)", "write_clause"),  # Greek Μ
    ("\uff23\uff32\uff25\uff21\uff34\uff25 (n)", "write_clause"),  # fullwidth CREATE
    ("MATCH (n) \U0001d412\U0001d404\U0001d413 n.x = 1", "write_clause"),  # math bold SET
    ("CRE\u200bATE (n)", "write_clause"),  # zero-width space
    ("MATCH (n) DEL\u00adETE n", "write_clause"),  # soft hyphen
    ("MATCH (n) \u200dMERGE (m)", "write_clause"),  # zero-width joiner first
    ("MATCH (n) \ufeffREMOVE n.x", "write_clause"),  # BOM
    ("MATCH (n) \u1d04ʀᴇᴀᴛᴇ (m)", "write_clause"),  # small capitals
    ("MATCH (n) SE\u3164T n.x = 1", "write_clause"),  # Hangul filler
    # multi-statement
    ("MATCH (n) RETURN n; MATCH (m) RETURN m", "multi_statement"),
    ("MATCH (n) RETURN n; CREATE (m)", "multi_statement"),
    ("MATCH (n) RETURN n;\n\nDROP INDEX foo", "multi_statement"),
    ("RETURN 1;;RETURN 2", "multi_statement"),
    ("RETURN ';' ; RETURN 2", "multi_statement"),
    # schema and admin commands
    ("CREATE INDEX person_name FOR (n:Person) ON (n.name)", "admin"),
    ("create index ON :Person(name)", "admin"),
    ("DROP INDEX person_name", "admin"),
    ("CREATE CONSTRAINT c FOR (n:Person) REQUIRE n.id IS UNIQUE", "admin"),
    ("DROP CONSTRAINT c IF EXISTS", "admin"),
    ("CREATE FULLTEXT INDEX f FOR (n:Doc) ON EACH [n.text]", "admin"),
    ("CREATE OR REPLACE DATABASE foo", "admin"),
    ("CREATE USER bob SET PASSWORD 'x'", "admin"),
    ("DROP DATABASE neo4j", "admin"),
    ("ALTER USER neo4j SET PASSWORD 'pwned'", "admin"),
    ("GRANT ROLE admin TO bob", "admin"),
    ("DENY READ {*} ON GRAPH * TO reader", "admin"),
    ("REVOKE ROLE reader FROM bob", "admin"),
    ("START DATABASE foo", "admin"),
    ("STOP DATABASE neo4j", "admin"),
    ("RENAME ROLE a TO b", "admin"),
    ("TERMINATE TRANSACTIONS 'neo4j-transaction-1'", "admin"),
    ("SHOW USERS", "admin"),
    ("show databases", "admin"),
    ("SHOW TRANSACTIONS YIELD transactionId TERMINATE TRANSACTIONS transactionId", "admin"),
    ("EXPLAIN CREATE INDEX i FOR (n:P) ON (n.x)", "admin"),
    ("PROFILE GRANT ROLE admin TO bob", "admin"),
    ("ENABLE SERVER 'abc'", "admin"),
    ("DEALLOCATE DATABASES FROM SERVER 'abc'", "admin"),
    # database switch
    ("USE system SHOW USERS", "database_switch"),
    ("USE other MATCH (n) RETURN n", "database_switch"),
    ("MATCH (n) CALL { USE other.graph MATCH (m) RETURN m } RETURN m", "database_switch"),
    # procedures
    ("CALL apoc.cypher.runWrite('CREATE (n)', {})", "procedure"),
    ("CALL apoc.cypher.run('MATCH (n) RETURN n', {}) YIELD value RETURN value", "procedure"),
    ("CALL apoc.cypher.doIt('CREATE (n)', {})", "procedure"),
    ("CALL apoc.periodic.iterate('MATCH (n) RETURN n', 'DELETE n', {})", "procedure"),
    ("CALL apoc.create.node(['X'], {})", "procedure"),
    ("CALL apoc.load.json('http://evil/x')", "procedure"),
    ("CALL apoc.merge.node(['X'], {id: 1})", "procedure"),
    ("CALL apoc.refactor.rename.label('A', 'B')", "procedure"),
    ("CALL apoc.trigger.add('t', 'CREATE (n)', {})", "procedure"),
    ("CALL dbms.security.createUser('bob', 'pw', false)", "procedure"),
    ("CALL dbms.killQuery('q-1')", "procedure"),
    ("CALL dbms.listConfig()", "procedure"),
    ("CALL db.create.setNodeVectorProperty(n, 'v', [1.0])", "procedure"),
    ("CALL db.index.fulltext.createNodeIndex('f', ['A'], ['b'])", "procedure"),
    ("CALL db.clearQueryCaches()", "procedure"),
    ("CALL gds.pageRank.write('g', {writeProperty: 'pr'})", "procedure"),
    ("CALL gds.graph.drop('g')", "procedure"),
    ("CALL something.unknown()", "procedure"),
    ("CALL DBMS.SECURITY.CREATEUSER('a', 'b', false)", "procedure"),
    ("CALL `apoc`.`cypher`.`runWrite`('CREATE (n)', {})", "procedure"),
    ("CALL apoc . cypher . runWrite('CREATE (n)', {})", "procedure"),
    ("CALL apoc.cypher./* x */runWrite('CREATE (n)', {})", "procedure"),
    (
        "MATCH (n) CALL { CALL apoc.create.node(['X'], {}) YIELD node RETURN node } RETURN n",
        "procedure",
    ),
    ("RETURN apoc.cypher.runFirstColumnSingle('MATCH (n) RETURN n', {})", "procedure"),
    ("WITH 1 AS x RETURN dbms.components()", "procedure"),
    ("call apoc.do.when(true, 'CREATE (n)', '', {})", "procedure"),
    ("CALL ａｐｏｃ.cypher.runWrite('CREATE (n)', {})", "procedure"),
    # LOAD CSV
    ("LOAD CSV FROM 'file:///etc/passwd' AS line RETURN line", "load_csv"),
    ("load csv with headers from 'https://evil/x.csv' as row return row", "load_csv"),
    ("MATCH (n) WITH n LOAD CSV FROM 'file:///x' AS r RETURN r", "load_csv"),
    # periodic / batched transactions
    ("USING PERIODIC COMMIT 500 LOAD CSV FROM 'file:///x' AS r CREATE (:X)", "periodic"),
    ("MATCH (n) CALL { WITH n RETURN n } IN TRANSACTIONS OF 10 ROWS RETURN n", "periodic"),
    ("MATCH (n) CALL (n) { RETURN n.x AS x } IN 4 CONCURRENT TRANSACTIONS RETURN x", "periodic"),
    ("MATCH (n) CALL { RETURN 1 AS one } in transactions RETURN one", "periodic"),
    # empty and broken
    ("", "empty"),
    ("   \n\t ", "empty"),
    ("// nothing here", "empty"),
    ("/* nothing */ ;", "empty"),
    (";", "empty"),
    ("MATCH (n) RETURN 'unterminated", "syntax"),
    ("MATCH (n) /* never closed RETURN n", "syntax"),
    ("MATCH (n:`Never closed) RETURN n", "syntax"),
    # not a reading clause
    ("DESCRIBE n", "unknown_clause"),
    ("(n) RETURN n", "unknown_clause"),
    ("USING INDEX n:Person(name) MATCH (n) RETURN n", "unknown_clause"),
]

ALLOWED: list[str] = [
    "MATCH (n) RETURN n",
    "MATCH (n) RETURN n;",
    "MATCH (n) RETURN n ;  \n",
    "MATCH (n) RETURN n; // trailing comment",
    "MATCH (n) RETURN n;\u200b\ufeff",
    "  match (n:Person) return n.name limit 5  ",
    # keywords inside strings, comments, backticks and parameters
    "MATCH (n {name: 'Create Corp'}) RETURN n",
    'MATCH (n) WHERE n.name = "DETACH DELETE everything" RETURN n',
    "MATCH (n) WHERE n.note CONTAINS 'it\\'s; DROP DATABASE neo4j' RETURN n",
    'MATCH (n) WHERE n.q = "say \\"SET\\" now; CREATE (x)" RETURN n',
    "MATCH (n:`Delete`) RETURN n",
    "MATCH (n:`CREATE`)-[:`MERGE`]->(m) RETURN m.`SET`",
    "MATCH (n) RETURN n.name AS `DROP DATABASE`",
    "MATCH (n) WHERE n.name = $create RETURN n",
    "MATCH (n) WHERE n.x IN $`delete me` RETURN n",
    "MATCH (n) // CREATE (m)\nRETURN n",
    "MATCH (n) /* DETACH DELETE n; */ RETURN n",
    "MATCH (n) RETURN n /* ; MATCH (m) RETURN m */",
    # write keywords used as names
    "MATCH (n) RETURN n.set, n.delete, n.create AS remove",
    "MATCH (n:Merge) RETURN n",
    "MATCH (n:Person|Delete) RETURN n",
    "MATCH (n:Person&!Drop) RETURN n",
    "MATCH (n {create: 1, set: 2}) RETURN n",
    "MATCH (set:Setting) RETURN set.name",
    "MATCH (n) RETURN {delete: n.x, merge: 1} AS m",
    "MATCH (start:Station)-[:ROUTE]->(end:Station) RETURN start.name, end.name",
    "MATCH (n) WHERE n.status = 'stop' RETURN n",
    "MATCH (u:User)-[:USES]->(t:Tool) RETURN u.name, t.name",
    # reading clauses and subqueries
    "OPTIONAL MATCH (n:Person) RETURN count(n)",
    "WITH 1 AS x RETURN x",
    "UNWIND [1, 2, 3] AS x RETURN x",
    "RETURN 1",
    "MATCH (n) CALL { WITH n MATCH (n)-->(m) RETURN m } RETURN m",
    "MATCH (n) CALL (n) { MATCH (n)-->(m) RETURN count(m) AS c } RETURN n.name, c",
    "MATCH (n) WHERE EXISTS { MATCH (n)-[:OWNS]->(:Service) } RETURN n",
    "MATCH (n) RETURN n.name, COUNT { (n)-->() } AS degree",
    "MATCH (n) RETURN COLLECT { MATCH (n)-->(m) RETURN m.name } AS names",
    "MATCH (n) RETURN n UNION MATCH (m) RETURN m AS n",
    "MATCH p = shortestPath((a:P)-[*..5]-(b:P)) RETURN length(p)",
    "MATCH (a)-[r:KNOWS*1..3]->(b) RETURN a, b",
    "MATCH (n) RETURN [x IN n.tags WHERE x <> '' | toUpper(x)] AS tags",
    "MATCH (n) RETURN CASE WHEN n.x > 1 THEN 'big' ELSE 'small' END",
    "MATCH (n) RETURN date.truncate('month', n.created) AS month",
    "MATCH (n) RETURN duration.between(n.a, n.b)",
    "MATCH (n) RETURN apoc.text.join(n.tags, ', ')",
    # prefixes
    "EXPLAIN MATCH (n) RETURN n",
    "PROFILE MATCH (n) RETURN n",
    "CYPHER runtime=slotted MATCH (n) RETURN n",
    "CYPHER 5 MATCH (n) RETURN n",
    "CYPHER name='Create' limit=3 MATCH (n {name: $name}) RETURN n LIMIT $limit",
    # allowed procedures
    "CALL db.labels()",
    "CALL db.labels() YIELD label RETURN label",
    "CALL db.relationshipTypes()",
    "CALL db.propertyKeys()",
    "CALL db.schema.visualization()",
    "CALL db.schema.nodeTypeProperties()",
    "CALL db.indexes()",
    "CALL db.constraints()",
    "CALL db.meta.stats()",
    "CALL db.index.fulltext.queryNodes('names', 'postgres') YIELD node, score RETURN node.name",
    "CALL db.index.fulltext.queryRelationships('r', 'x') YIELD relationship RETURN relationship",
    "CALL db.idx.fulltext.queryNodes('Person', 'bob') YIELD node RETURN node.name",
    "MATCH (n) CALL db.labels() YIELD label RETURN n, label",
    # unicode text in names and strings is fine
    "MATCH (n:Société {nom: 'Crème brûlée'}) RETURN n.nom",
    "MATCH (n) WHERE n.name = 'СREATE' RETURN n",
    "MATCH (n:人) RETURN n.名前",
]


@pytest.mark.parametrize(("cypher", "category"), REFUSED)
def test_refused(cypher: str, category: str) -> None:
    result = check_cypher(cypher)
    assert not result.allowed, cypher
    assert result.category == category, (cypher, result)
    assert result.reason


@pytest.mark.parametrize("cypher", ALLOWED)
def test_allowed(cypher: str) -> None:
    result = check_cypher(cypher)
    assert result == PolicyResult(allowed=True), (cypher, result)


def test_the_table_is_big_enough() -> None:
    assert len(REFUSED) + len(ALLOWED) >= 80


@pytest.mark.parametrize(
    ("cypher", "keyword"),
    [
        ("MERGE (n:X)", "MERGE"),
        ("MATCH (n) DETACH DELETE n", "DETACH DELETE"),
        ("MATCH (n) SET n.x = 1", "SET"),
        ("\u0421REATE (n)", "CREATE"),
    ],
)
def test_reason_names_the_clause(cypher: str, keyword: str) -> None:
    result = check_cypher(cypher)
    assert result.reason == f"the statement contains {keyword}, which writes to the graph"
    assert result.details["keyword"] == keyword


def test_reason_names_the_procedure() -> None:
    result = check_cypher("CALL apoc.cypher.runWrite('x', {})")
    assert result.details["procedure"] == "apoc.cypher.runWrite"
    assert "apoc.cypher.runWrite" in (result.reason or "")


def test_show_only_when_allowed() -> None:
    policy = CypherPolicy(allow_show=True)
    assert check_cypher("SHOW INDEXES", policy).allowed
    assert check_cypher("SHOW INDEXES YIELD name RETURN name", policy).allowed
    assert not check_cypher(
        "SHOW TRANSACTIONS YIELD transactionId TERMINATE TRANSACTIONS transactionId", policy
    ).allowed
    assert not check_cypher("SHOW INDEXES", CypherPolicy()).allowed


def test_allow_list_can_be_widened_but_never_list_wins() -> None:
    policy = CypherPolicy(allowed_procedures=DEFAULT_ALLOWED_PROCEDURES | {"apoc.*"})
    assert check_cypher("CALL apoc.meta.schema() YIELD value RETURN value", policy).allowed
    assert not check_cypher("CALL apoc.cypher.runWrite('CREATE (n)', {})", policy).allowed
    assert not check_cypher("CALL apoc.periodic.iterate('a', 'b', {})", policy).allowed
    assert not check_cypher("CALL apoc.meta.schema()").allowed


def test_policy_accepts_lists_and_stays_hashable() -> None:
    policy = CypherPolicy(hidden_labels=["Salary"], hidden_properties=["Person.salary"])  # type: ignore[arg-type]
    assert policy.hidden_labels == frozenset({"Salary"})
    assert hash(policy) == hash(
        CypherPolicy(
            hidden_labels=frozenset({"Salary"}), hidden_properties=frozenset({"Person.salary"})
        )
    )


HIDDEN = CypherPolicy(
    hidden_labels=frozenset({"Incident"}),
    hidden_rel_types=frozenset({"PAID"}),
    hidden_properties=frozenset({"Person.salary"}),
)


@pytest.mark.parametrize(
    "cypher",
    [
        "MATCH (i:Incident) RETURN i.title",
        "MATCH (i:incident) RETURN i.title",
        "MATCH (n) WHERE n:Incident RETURN n",
        "MATCH (n:`Incident`) RETURN n",
        "MATCH (n:Service|Incident) RETURN n",
        "MATCH (p:Person) RETURN p.salary",
        "MATCH (p:Person) RETURN p.`salary`",
        "MATCH (p:Person {salary: 100}) RETURN p.name",
        "MATCH (p:Person) RETURN p {.name, .salary}",
        "MATCH (p) RETURN p['salary']",
        "MATCH (p) RETURN p['sal' + 'ary']",
        "MATCH (p:Person) RETURN properties(p)",
        "MATCH (p:Person) RETURN keys(p)",
        "MATCH (p:Person) RETURN p {.*}",
        "MATCH (n) RETURN labels(n), count(*)",
        "MATCH (n) WHERE 'Incident' IN labels(n) RETURN n",
        "MATCH (a)-[:PAID]->(b) RETURN a, b",
        "MATCH (a)-[r]->(b) RETURN type(r)",
        "CALL db.labels()",
        "CALL db.schema.visualization()",
        "MATCH (n:$($label)) RETURN n",
    ],
)
def test_hidden_names_are_refused(cypher: str) -> None:
    result = check_cypher(cypher, HIDDEN)
    assert not result.allowed, cypher
    assert result.category == "hidden_label", (cypher, result)


@pytest.mark.parametrize(
    "cypher",
    [
        "MATCH (p:Person) RETURN p.name",
        "MATCH (s:Service)<-[:OWNS]-(t:Team) RETURN s.name, t.name",
        "MATCH (p:Person) RETURN collect(p.name)[0]",
        "MATCH (p:Person) RETURN p.name ORDER BY p.name LIMIT 3",
        "CALL db.index.fulltext.queryNodes('names', 'x') YIELD node RETURN node.name",
    ],
)
def test_visible_names_are_allowed_in_a_restricted_channel(cypher: str) -> None:
    assert check_cypher(cypher, HIDDEN).allowed, check_cypher(cypher, HIDDEN)


@pytest.mark.parametrize(
    ("word", "folded"),
    [
        ("create", "CREATE"),
        ("\u0421REATE", "CREATE"),
        ("\uff23\uff32\uff25\uff21\uff34\uff25", "CREATE"),
        ("CRE\u200bATE", "CREATE"),
        ("\u0455\u0435t", "SET"),
        ("Société", "SOCIÉTÉ"),
    ],
)
def test_fold_word(word: str, folded: str) -> None:
    assert fold_word(word) == folded


def test_never_raises_on_garbage() -> None:
    for text in ["\x00\x01", "'" * 1001, "`", "$", "/*", "\\", "MATCH (n" * 1000, "🙂" * 50]:
        assert isinstance(check_cypher(text), PolicyResult)


def test_huge_input_is_judged_without_recursion_limits() -> None:
    # How fast it is belongs to the benchmarks; here: a 120,000-character statement is
    # tokenized and judged (no recursion error, no give-up) and keeps its meaning.
    text = "MATCH (n) WHERE n.name = 'x' " + "AND n.x = 1 " * 10_000 + "RETURN n"
    verdict = check_cypher(text)
    assert verdict.allowed
    assert verdict.canonical is not None and verdict.canonical.count("AND n.x = 1") == 10_000
