"""Label tricks in a restricted channel, as data: each form, whether the policy allows it, and
whether the engine (policy bypassed) returns something the channel may not see.

The channel hides label `Incident`, property `Person.email` and type `REPORTS_TO` (the red
team's channel, issue 30). A form "leaks" when its rows on the demo graph differ from its rows
on a copy of the graph with the hidden data deleted: what it returns depends on hidden data.
`leaks=None` marks forms the embedded FalkorDB does not parse (EXISTS/COUNT subqueries, which
Neo4j runs): the policy must still refuse them for Neo4j.
"""

from __future__ import annotations

from typing import NamedTuple


class Form(NamedTuple):
    id: str
    cypher: str
    allowed: bool
    leaks: bool | None
    """On the real engine without the policy: True (returns hidden data), False (returns only
    what the channel may see), None (the embedded engine does not run it)."""


OR_TRUE = "MATCH (i) WHERE i:Person OR true"

# The red team's forms (issue 30) and their variants: UNION branches, CALL subqueries, WITH
# aliases, OPTIONAL MATCH, pattern comprehensions and predicates, EXISTS/COUNT subqueries.
REFUSED: tuple[Form, ...] = (
    Form("or-true-titles", f"{OR_TRUE} RETURN DISTINCT i.title AS title LIMIT 50", False, True),
    Form(
        "union-second-branch-unlabelled",
        "MATCH (i:Person) RETURN i.title AS t UNION MATCH (i) WHERE i.title IS NOT NULL "
        "RETURN i.title AS t",
        False,
        True,
    ),
    Form(
        "or-true-with-prefix",
        "MATCH (i) WHERE (i:Person OR true) AND i.id STARTS WITH 'incid' RETURN i.id, i.title",
        False,
        True,
    ),
    Form("or-true-count", f"{OR_TRUE} RETURN count(i) AS n", False, True),
    Form(
        "or-true-grouped-status", f"{OR_TRUE} RETURN i.status AS status, count(*) AS n", False, True
    ),
    Form("true-or-label", "MATCH (i) WHERE true OR i:Person RETURN count(i) AS n", False, True),
    Form(
        "label-in-case",
        "MATCH (i) RETURN CASE WHEN i:Person THEN i.name ELSE i.title END AS x",
        False,
        True,
    ),
    Form(
        "union-all-branch",
        f"MATCH (p:Person) RETURN p.title AS t UNION ALL {OR_TRUE} RETURN i.title AS t",
        False,
        True,
    ),
    Form(
        "union-count-branch",
        "MATCH (p:Person) RETURN count(p) AS n UNION MATCH (i) WHERE i.severity IS NOT NULL "
        "RETURN count(i) AS n",
        False,
        True,
    ),
    Form(
        "call-subquery",
        f"CALL {{ {OR_TRUE} RETURN i.title AS t }} RETURN DISTINCT t",
        False,
        True,
    ),
    Form(
        "call-subquery-count",
        "CALL { MATCH (i) WHERE i.id STARTS WITH 'incid' RETURN count(i) AS n } RETURN n",
        False,
        True,
    ),
    Form(
        "call-shadows-outer-variable",
        "MATCH (i:Person) WITH i LIMIT 1 CALL { MATCH (i) WHERE i.id STARTS WITH 'incid' "
        "RETURN i.title AS t } RETURN t",
        False,
        True,
    ),
    Form(
        "call-subquery-union",
        "CALL { MATCH (p:Person) RETURN p.title AS t UNION "
        f"{OR_TRUE} RETURN i.title AS t }} RETURN DISTINCT t",
        False,
        True,
    ),
    Form(
        "call-imports-then-unlabelled",
        "MATCH (p:Person) WITH p LIMIT 1 CALL { WITH p MATCH (i) "
        "WHERE i.id STARTS WITH 'incid' RETURN i.title AS t } RETURN DISTINCT t",
        False,
        True,
    ),
    Form("with-alias", f"{OR_TRUE} WITH i AS p RETURN DISTINCT p.title AS t", False, True),
    Form("with-star", f"{OR_TRUE} WITH * RETURN DISTINCT i.title AS t", False, True),
    Form(
        "with-drops-binding",
        "MATCH (p:Person) WITH count(p) AS people MATCH (p) RETURN people, count(p) AS n",
        False,
        True,
    ),
    Form(
        "with-drops-binding-then-reads",
        "MATCH (p:Person) WITH p.name AS name LIMIT 1 MATCH (p) "
        "WHERE p.id STARTS WITH 'incid' RETURN p.title",
        False,
        True,
    ),
    Form(
        "collected-then-unwound",
        f"{OR_TRUE} WITH collect(i) AS xs UNWIND xs AS y RETURN DISTINCT y.title AS t",
        False,
        True,
    ),
    Form(
        "optional-match-unlabelled",
        "MATCH (p:Person) WITH p LIMIT 1 OPTIONAL MATCH (i) WHERE i.id STARTS WITH 'incid' "
        "RETURN i.title",
        False,
        True,
    ),
    Form(
        "optional-match-far-end",
        "MATCH (p:Person) OPTIONAL MATCH (p)-[:RESPONDED_TO]->(x) RETURN DISTINCT x.title AS t",
        False,
        True,
    ),
    Form(
        "far-end-labelled-in-where",
        "MATCH (p:Person)-[:RESPONDED_TO]->(x) WHERE x:Person OR true RETURN DISTINCT x.title",
        False,
        True,
    ),
    Form(
        "label-after-first-mention",
        "MATCH (i), (p:Person) WHERE i = p OR true RETURN count(DISTINCT i) AS n",
        False,
        True,
    ),
    Form(
        "pattern-comprehension",
        "MATCH (p:Person) RETURN p.name, [(p)-[:RESPONDED_TO]->(x) | x.title] AS titles",
        False,
        True,
    ),
    Form(
        "pattern-comprehension-count",
        "MATCH (p:Person) RETURN sum(size([(p)-[:RESPONDED_TO]->(x) | x.status])) AS n",
        False,
        True,
    ),
    Form(
        "pattern-predicate-anonymous",
        "MATCH (p:Person) WHERE (p)-[:RESPONDED_TO]->() RETURN count(p) AS n",
        False,
        True,
    ),
    Form(
        "anonymous-far-end",
        "MATCH (p:Person)-[:RESPONDED_TO]->() RETURN p.name, count(*) AS n",
        False,
        True,
    ),
    Form(
        "typed-variable-length-unlabelled-end",
        "MATCH (a:Person)-[:RESPONDED_TO*1..2]-(b) RETURN DISTINCT b.title AS t",
        False,
        True,
    ),
    Form(
        "shortest-path-unlabelled-end",
        "MATCH (a:Person {id: 'person-2'}), (b) WHERE b.id STARTS WITH 'incid' "
        "RETURN b.title, length(shortestPath((a)-[:RESPONDED_TO*1..2]->(b))) AS hops",
        False,
        True,
    ),
    Form(
        "untyped-relationship",
        "MATCH (a:Person)-->(b:Person) RETURN a.name, b.name",
        False,
        True,
    ),
    Form(
        "exists-subquery",
        "MATCH (p:Person) WHERE EXISTS { MATCH (p)-[:RESPONDED_TO]->(i) "
        "WHERE i.severity = 'SEV1' } RETURN p.name",
        False,
        None,
    ),
    Form(
        "count-subquery",
        "MATCH (p:Person) RETURN p.name, COUNT { (p)-[:RESPONDED_TO]->() } AS incidents",
        False,
        None,
    ),
    Form(
        "collect-subquery",
        "MATCH (p:Person) RETURN COLLECT { MATCH (p)-[:RESPONDED_TO]->(x) RETURN x.title } AS t",
        False,
        None,
    ),
    Form(
        "call-scope-clause-unlabelled",
        "MATCH (p:Person) CALL (p) { MATCH (x) WHERE x.id STARTS WITH 'incid' "
        "RETURN x.title AS t } RETURN t",
        False,
        None,
    ),
    Form(
        "is-label-first-node-comprehension",
        "MATCH (p:Person) RETURN size([(p IS Person)-[:RESPONDED_TO]->(i) | i.title]) AS n",
        False,
        None,
    ),
    Form(
        "quantified-path",
        "MATCH (a:Person) ((x)-[:RESPONDED_TO]->(y)){1,2} (b:Person) RETURN count(*) AS n",
        False,
        None,
    ),
)

# Honest reads that must keep working in the restricted channel; on the engine they see the
# same rows as on the graph without the hidden data.
ALLOWED: tuple[Form, ...] = (
    Form(
        "label-test-on-a-bound-node",
        "MATCH (p:Person) WHERE p:Person OR p.title IS NOT NULL RETURN count(p) AS n",
        True,
        False,
    ),
    Form(
        "with-alias-keeps-binding", "MATCH (p:Person) WITH p AS q RETURN count(q) AS n", True, False
    ),
    Form(
        "carried-into-a-second-match",
        "MATCH (p:Person) WITH p MATCH (p)-[:MEMBER_OF]->(t:Team) "
        "RETURN t.name AS team, count(p) AS n ORDER BY team",
        True,
        False,
    ),
    Form(
        "union-of-labelled-branches",
        "MATCH (p:Person) RETURN p.title AS t UNION MATCH (x:Team) RETURN x.name AS t",
        True,
        False,
    ),
    Form(
        "call-with-import",
        "MATCH (p:Person) CALL { WITH p MATCH (p)-[:MEMBER_OF]->(t:Team) RETURN t.name AS team } "
        "RETURN team, count(p) AS n ORDER BY team",
        True,
        False,
    ),
    Form(
        "call-own-labels",
        "CALL { MATCH (s:Service) RETURN count(s) AS n } RETURN n",
        True,
        False,
    ),
    Form(
        "pattern-comprehension-labelled",
        "MATCH (p:Person) RETURN sum(size([(p)-[:MEMBER_OF]->(t:Team) | t.name])) AS n",
        True,
        False,
    ),
    Form(
        "pattern-predicate-labelled",
        "MATCH (p:Person) WHERE (p)-[:MEMBER_OF]->(:Team) RETURN count(p) AS n",
        True,
        False,
    ),
    Form(
        "optional-match-labelled",
        "MATCH (t:Team) OPTIONAL MATCH (t)-[:OWNS]->(s:Service) "
        "RETURN t.name AS team, count(s) AS n ORDER BY team",
        True,
        False,
    ),
    Form(
        "typed-path-between-labelled-nodes",
        "MATCH route = (a:Service)-[:DEPENDS_ON*1..3]->(b:Service) "
        "RETURN count(*) AS paths, max(length(route)) AS longest",
        True,
        False,
    ),
    Form(
        "starts-with-is-no-clause",
        "MATCH (s:Service) WHERE s.name STARTS WITH 'b' WITH s MATCH (s)<-[:OWNS]-(t:Team) "
        "RETURN count(t) AS n",
        True,
        False,
    ),
    Form(
        "fulltext-node-in-a-pattern",
        "CALL db.idx.fulltext.queryNodes('Team', 'search') YIELD node "
        "MATCH (node)-[:OWNS]->(s:Service) RETURN count(s) AS n",
        True,
        False,
    ),
    Form(
        "exists-subquery-labelled",
        "MATCH (p:Person) WHERE EXISTS { MATCH (p)-[:MEMBER_OF]->(t:Team) } RETURN p.name",
        True,
        None,
    ),
)

FORMS = REFUSED + ALLOWED
