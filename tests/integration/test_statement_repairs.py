"""Statement repairs on the real graphs, through the agent: each statement below is one the
local model wrote on a dev question or in a playground trial on a dev-only graph (or its
shape, on a graph of another set), and each must come back with the gold statement's rows in
one attempt, with the rule that did it in the trace.

The scripted model writes the statement once; no correction is scripted, so a repair that did
not happen fails the question instead of being rescued by a second reply.
"""

from __future__ import annotations

import pytest

from graph_agent.agent import Agent
from graph_agent.config import AgentConfig
from graph_agent.examples import InMemoryExampleStore
from graph_agent.graphdb import GraphDB
from graph_agent.llm import LLMs
from graph_agent.repair import Phase
from graph_agent.result import AgentResult
from memory.types import Turn
from rig.scripted_llm import ScriptedChatModel, cypher_reply, evaluation_reply, guard_reply


def _rows(db: GraphDB, cypher: str) -> list[tuple[object, ...]]:
    return sorted(tuple(row) for row in db.run_read(cypher, timeout_s=30, max_rows=5000).rows)


def _agent(db: GraphDB, model: ScriptedChatModel) -> Agent:
    return Agent(db, LLMs(cypher=model, fast=model), InMemoryExampleStore(), AgentConfig())


def _ask(db: GraphDB, question: str, written: str, attempts: int = 1) -> AgentResult:
    replies = [guard_reply(), *[cypher_reply(written)] * attempts, evaluation_reply(answer="ok")]
    return _agent(db, ScriptedChatModel(replies=replies)).run(question)


CASES = [
    (
        "demo",
        "Which services are not in production?",
        "MATCH (s:Service) WHERE s.lifecycle != 'production' RETURN s.name AS name ORDER BY name",
        "MATCH (s:Service) WHERE s.lifecycle <> 'production' RETURN s.name",
        ["not-equal-operator"],
    ),
    (
        "airports",
        "Where can I fly to directly from Edinburgh?",
        "MATCH (a:Airport {iata: 'EDI'})-[:HAS_ROUTE]->(b:Airport) "
        'RETURN b.descr AS "Where can I fly to directly from Edinburgh? " ORDER BY b.descr',
        "MATCH (:Airport {iata: 'EDI'})-[:HAS_ROUTE]->(b:Airport) RETURN b.descr",
        ["string-alias"],
    ),
    (
        "demo",
        "Which teams have people on Project Atlas?",
        "MATCH (p:Person)-[:WORKS_ON]->(p2:Project {name: 'Project Atlas'})<-[:WORKS_ON]-(t:Team) "
        "RETURN DISTINCT t.name AS team ORDER BY team",
        "MATCH (t:Team)<-[:MEMBER_OF]-(:Person)-[:WORKS_ON]->(:Project {name: 'Project Atlas'}) "
        "RETURN DISTINCT t.name",
        # the road through a person, then the walk back to another person taken from the first
        ["relationship-road", "walked-back-named"],
    ),
    (
        "demo",
        "Which services depend on Elasticsearch?",
        "MATCH (s:Service)-[:DEPENDS_ON]->(t:Technology {name: 'Elasticsearch'}) "
        "RETURN DISTINCT s.name AS service ORDER BY service",
        "MATCH (s:Service)-[:USES]->(:Technology {name: 'Elasticsearch'}) RETURN s.name",
        ["relationship-road"],
    ),
    (
        "demo",
        "Which services depend on Elastic for search?",
        "MATCH (s:Service)-[:USES]->(t:Technology {name: 'Elastic'}) "
        "RETURN DISTINCT s.name AS service ORDER BY service",
        "MATCH (s:Service)-[:USES]->(:Technology {name: 'Elasticsearch'}) RETURN DISTINCT s.name",
        ["value-completed"],
    ),
    (
        "network",
        "How many machines of each type are there?",
        "MATCH (m:Machine), (m)-[:TYPE]->(t:Type) WITH t.type AS type, count(m) AS count "
        "RETURN type, count(m) AS count ORDER BY count DESC LIMIT 100",
        "MATCH (m:Machine)-[:TYPE]->(t:Type) RETURN t.type, count(m)",
        ["with-alias"],
    ),
    (
        "airports",
        "How far is the flight from Heathrow to Charles de Gaulle?",
        "MATCH (a:Airport {iata: 'LHR'})-[:HAS_ROUTE]->(a2:Airport {iata: 'CDG'}) "
        "RETURN a2.distance AS distance ORDER BY distance",
        "MATCH (:Airport {iata: 'LHR'})-[r:HAS_ROUTE]->(:Airport {iata: 'CDG'}) RETURN r.distance",
        ["relationship-property"],
    ),
    (
        "northwind",
        "Who supplies Tofu?",
        "MATCH (s:Supplier)-[:SUPPLIES]->(p:Product {productName: 'Tofu'}) "
        "RETURN s.firstName AS firstName, s.lastName AS lastName ORDER BY firstName, lastName",
        "MATCH (s:Supplier)-[:SUPPLIES]->(:Product {productName: 'Tofu'}) RETURN s.companyName",
        ["name-property"],
    ),
    (
        "northwind",
        "Who reports directly to Andrew Fuller?",
        "MATCH (e:Employee {firstName: 'Andrew', lastName: 'Fuller'})<-[:REPORTS_TO]-"
        "(e2:Employee) RETURN e2.lastName AS lastName ORDER BY lastName",
        "MATCH (:Employee {firstName: 'Andrew', lastName: 'Fuller'})<-[:REPORTS_TO]-"
        "(e:Employee) RETURN e.firstName, e.lastName",
        ["name-parts"],
    ),
    (
        "northwind",
        "Which customers ordered Chai?",
        "MATCH (c:Customer)-[:PURCHASED]->(o:Order)-[:ORDER]->(p:Product {productName: 'Chai'}) "
        "RETURN DISTINCT c.companyName AS customer ORDER BY customer",
        "MATCH (c:Customer)-[:PURCHASED]->(:Order)-[:ORDERS]->(:Product {productName: 'Chai'}) "
        "RETURN DISTINCT c.companyName",
        ["name-spelling"],
    ),
    (
        "network",
        "Which applications listen on port 8080?",
        "MATCH (a:Application)-[:LISTENS]->(p:Port {port: 8080}) RETURN a.name AS application "
        "LIMIT 5",
        "MATCH (a:Application)-[:LISTENS]->(:Port {port: 8080}) RETURN DISTINCT a.name",
        ["distinct-rows"],
    ),
    (
        "network",
        "Which software has the most versions?",
        "MATCH (s:Software)-[:DEPENDS_ON]->(v:Version) "
        "RETURN s.name AS software, count(v) AS versions ORDER BY versions DESC LIMIT 1",
        "MATCH (s:Software)-[:VERSION]->(v:Version) WITH s, count(v) AS n "
        "WITH max(n) AS top MATCH (s:Software)-[:VERSION]->(v:Version) "
        "WITH s, count(v) AS n, top WHERE n = top RETURN s.name, n",
        ["relationship-word"],
    ),
    (
        "airports",
        "Which airports have five or more runways?",
        "MATCH (a:Airport {runways: 5}) "
        "RETURN a.descr AS airport, a.runways AS runways ORDER BY runways DESC, airport",
        "MATCH (a:Airport) WHERE a.runways >= 5 RETURN a.descr, a.runways",
        ["number-comparison"],
    ),
    (
        "network",
        "Which racks hold more than 40 machines?",
        "MATCH (r:Rack)-[:HOLDS]->(m:Machine) "
        "RETURN r.name AS rack, count(m) AS machines ORDER BY machines DESC LIMIT 5",
        "MATCH (r:Rack)-[:HOLDS]->(m:Machine) WITH r, count(m) AS n WHERE n > 40 RETURN r.name, n",
        ["aggregate-bound"],
    ),
    (
        "northwind",
        "Which customers placed more than 20 orders?",
        "MATCH (c:Customer)-[:PURCHASED]->(o:Order) WITH c, count(o) AS orders "
        "RETURN c.companyName AS customer, orders ORDER BY orders DESC LIMIT 10",
        "MATCH (c:Customer)-[:PURCHASED]->(o:Order) WITH c, count(o) AS n WHERE n > 20 "
        "RETURN c.companyName, n",
        ["aggregate-bound"],
    ),
    (
        "network",
        "What operating systems do the machines in rack DC1-RCK-2-1 run?",
        "MATCH (m:Machine)-[:RUNS]->(os:OS), (m)<-[:HOLDS]-(r:Rack) "
        "WHERE r.rack = 'DC1-RCK-2-1' RETURN DISTINCT os.name AS name ORDER BY name",
        "MATCH (:Rack {name: 'DC1-RCK-2-1'})-[:HOLDS]->(:Machine)-[:RUNS]->(os:OS) "
        "RETURN DISTINCT os.name",
        ["value-property"],
    ),
    (
        "network",
        "What operating systems do the machines in rack DC1-RCK-2-1 run?",
        "MATCH (m:Machine {name: 'DC1-RCK-2-1'})-[:RUNS]->(os:OS) "
        "RETURN os.name AS name ORDER BY name LIMIT 1000",
        "MATCH (:Rack {name: 'DC1-RCK-2-1'})-[:HOLDS]->(:Machine)-[:RUNS]->(os:OS) "
        "RETURN DISTINCT os.name",
        ["value-moved", "distinct-rows"],
    ),
    (
        "network",
        "Which zone has the most racks?",
        "MATCH (z:Zone) RETURN z.name AS name, count(*) AS rack_count "
        "ORDER BY rack_count DESC LIMIT 1",
        "MATCH (r:Rack) RETURN r.zone, count(r)",
        ["counted-by-property"],  # a dev statement, every run; then the four zones tie
    ),
    (
        "network",
        "How many racks does each zone have?",
        "MATCH (z:Zone)-[:HOLDS]->(r:Rack) RETURN z.zone AS zone, count(r) AS rack_count "
        "ORDER BY rack_count DESC LIMIT 100",
        "MATCH (r:Rack) RETURN r.zone, count(r)",
        ["property-for-label"],  # a trial's statement: nothing links a Zone to a Rack
    ),
    (
        "network",
        "How many machines run Ubuntu?",
        'MATCH (m:Machine)-[:RUNS]->(os:OS {name: "Ubuntu"}) RETURN count(m) AS machine_count '
        "ORDER BY machine_count DESC LIMIT 100",
        "MATCH (m:Machine)-[:RUNS]->(:OS)-[:INSTANCE]->(:Version)<-[:VERSION]-"
        "(:Software {name: 'Ubuntu'}) RETURN count(m)",
        ["value-moved"],  # a trial's statement: each road's count is a row; only one is not 0
    ),
    (
        "network",
        "Which machines in rack DC1-RCK-2-2 run Ubuntu?",
        'MATCH (r:Rack {name: "DC1-RCK-2-2"})-[:HOLDS]->(m:Machine), (m)-[:RUNS]->(os:OS) '
        'WHERE os.name = "Ubuntu" RETURN m.name ORDER BY m.name ASC LIMIT 100',
        "MATCH (:Rack {name: 'DC1-RCK-2-2'})-[:HOLDS]->(m:Machine)-[:RUNS]->(:OS)-[:INSTANCE]->"
        "(:Version)<-[:VERSION]-(:Software {name: 'Ubuntu'}) RETURN m.name",
        ["value-moved"],  # a trial's statement: the OS a machine runs is named by its version
    ),
    (
        "network",
        "Which software depends on postgres?",
        'MATCH (s:Software)-[:DEPENDS_ON]->(v:Version {name: "postgres"}) '
        "RETURN DISTINCT s.name AS name ORDER BY s.name",
        "MATCH (s:Software)-[:DEPENDS_ON]->(:Version)<-[:VERSION]-(:Software {name: 'postgres'}) "
        "RETURN DISTINCT s.name",
        ["value-moved"],  # a dev statement: 'postgres' is one node, a Service and a Software
    ),
    (
        "network",
        "How many different operating systems run in rack DC1-RCK-1-3?",
        'MATCH (r:Rack {name: "DC1-RCK-1-3"})-[:HOLDS]->(m:Machine), (m)-[:RUNS]->(os:OS) '
        "RETURN DISTINCT os.name AS os LIMIT 1000",
        "MATCH (:Rack {name: 'DC1-RCK-1-3'})-[:HOLDS]->(:Machine)-[:RUNS]->(o:OS) "
        "RETURN count(DISTINCT o.name)",
        ["counted-list"],  # a trial's statement: OS by its initials; each machine has its own
    ),
    (
        "airports",
        "Through which airports can I get from Inverness to Athens with exactly one change?",
        "MATCH (a:Airport {descr: 'Inverness'})-[:HAS_ROUTE]->(a2:Airport)-[:HAS_ROUTE]->"
        "(a3:Airport {descr: 'Athens'}) RETURN DISTINCT a2.descr AS descr ORDER BY a2.descr",
        "MATCH (:Airport {city: 'Inverness'})-[:HAS_ROUTE]->(a2:Airport)-[:HAS_ROUTE]->"
        "(:Airport {city: 'Athens'}) RETURN DISTINCT a2.descr",
        ["value-property"],  # both cities moved: neither alone finds a row
    ),
    (
        "network",
        "Which data center has the most racks?",
        "MATCH (d:DataCenter) RETURN d.name AS name, count(*) AS rack_count "
        "ORDER BY rack_count DESC LIMIT 1",
        "MATCH (d:DataCenter)-[:CONTAINS]->(r:Rack) RETURN d.name, count(r)",
        ["counted-road"],
    ),
    (
        "airports",
        "How many different countries can you reach nonstop from Venice Marco Polo?",
        "MATCH (a:Airport {iata: 'VCE'})-[:HAS_ROUTE]->(b:Airport) "
        "RETURN DISTINCT c2.name AS name ORDER BY name LIMIT 100",
        "MATCH (:Airport {iata: 'VCE'})-[:HAS_ROUTE]->(:Airport)-[:IN_COUNTRY]->(c:Country) "
        "RETURN count(DISTINCT c)",
        ["bind-unbound-variable", "counted-list"],  # from b, the airport left open; then counted
    ),
    (
        "airports",
        "Through which airports can I get from Inverness to Athens with exactly one change?",
        'MATCH (a:Airport {city: "Inverness"})-[:HAS_ROUTE]->(a2:Airport)-[:HAS_ROUTE]->'
        '(a3:Airport {city: "Athens"}) RETURN DISTINCT a3.descr AS descr ORDER BY descr',
        "MATCH (:Airport {city: 'Inverness'})-[:HAS_ROUTE]->(a2:Airport)-[:HAS_ROUTE]->"
        "(:Airport {city: 'Athens'}) RETURN DISTINCT a2.descr",
        ["named-node-returned"],  # the dev run's statement: Athens itself returned
    ),
    (
        "airports",
        "Which countries can you reach nonstop from Venice Marco Polo?",
        "MATCH (a:Airport {iata: 'VCE'})-[:HAS_ROUTE]->(b:Airport) "
        "RETURN DISTINCT c2.name AS name ORDER BY name LIMIT 100",
        "MATCH (:Airport {iata: 'VCE'})-[:HAS_ROUTE]->(:Airport)-[:IN_COUNTRY]->(c:Country) "
        "RETURN DISTINCT c.code",
        ["bind-unbound-variable", "name-property"],  # a country is called by its code
    ),
    (
        "network",
        "Which racks hold the most machines?",
        "MATCH (r:Rack)-[:HOLDS]->(m:Machine) "
        "RETURN r.name AS name, count(m) AS count ORDER BY count DESC LIMIT 100",
        "MATCH (r:Rack)-[:HOLDS]->(m:Machine) WITH r, count(m) AS n "
        "WITH max(n) AS top MATCH (r:Rack)-[:HOLDS]->(m:Machine) "
        "WITH r, count(m) AS n, top WHERE n = top RETURN r.name, n",
        ["superlative-top-rows"],  # then ties-shown reads the racks tied for first
    ),
    (
        "network",
        "Which machines in zone two run the crm application?",
        "MATCH (m:Machine)-[:RUNS]->(a:Application {name: 'crm'}) WHERE a.zone = 2 "
        "RETURN DISTINCT m.name AS name ORDER BY name LIMIT 100",
        "MATCH (:Rack {zone: 2})-[:HOLDS]->(m:Machine)-[:RUNS]->(:Application {name: 'crm'}) "
        "RETURN DISTINCT m.name",
        ["property-through-neighbour"],  # the zone of the rack that holds the machine
    ),
    (
        "network",
        "What operating systems do the machines in rack DC1-RCK-3-4 run?",
        "MATCH (r:Rack {name: 'DC1-RCK-3-4'})-[:HOLDS]->(m:Machine) "
        "RETURN DISTINCT m.os.name AS name ORDER BY os.name",
        "MATCH (:Rack {name: 'DC1-RCK-3-4'})-[:HOLDS]->(:Machine)-[:RUNS]->(os:OS) "
        "RETURN DISTINCT os.name",
        ["label-as-property"],
    ),
    (
        "network",
        "How many machines are in each zone?",
        "MATCH (m:Machine)-[:TYPE]->(t:Type) RETURN t.zone AS zone, count(m) AS count "
        "ORDER BY count DESC LIMIT 5",
        "MATCH (r:Rack)-[:HOLDS]->(m:Machine) RETURN r.zone, count(m)",
        # no zone next to Type: the Rack next to the Machine; the type, now unread, stays
        # (unasked-hop leaves a count of rows: a hop may multiply them), and each machine
        # is counted once
        ["property-through-neighbour", "count-distinct"],
    ),
    (
        "demo",
        "Which SEV1 or SEV2 incidents are not resolved yet?",
        "MATCH (i:Incident {severity: 'SEV1' OR severity: 'SEV2'}) WHERE i.status <> 'resolved' "
        "RETURN i.key AS incident ORDER BY incident",
        "MATCH (i:Incident) WHERE i.severity IN ['SEV1', 'SEV2'] AND i.status <> 'resolved' "
        "RETURN i.key",
        ["or-in-map"],
    ),
    (
        "network",
        "Which software has more than 3 versions?",
        "MATCH (s:Software) WITH count(DISTINCT v) AS count "
        "RETURN s.name AS name, count AS count ORDER BY count DESC LIMIT 100",
        "MATCH (s:Software)-[:VERSION]->(v:Version) WITH s, count(v) AS n WHERE n > 3 "
        "RETURN s.name, n",
        # The engine runs it once the WITH keeps s; then the question's bound goes on it.
        ["with-keeps-the-node", "aggregate-bound"],
    ),
    (
        "demo",
        "Who has been with the company the longest?",
        "MATCH (p:Person) RETURN p.name AS person, p.start_date AS start "
        "ORDER BY start DESC LIMIT 1",
        "MATCH (p:Person) WHERE p.start_date IS NOT NULL RETURN p.name, p.start_date "
        "ORDER BY p.start_date LIMIT 1",
        ["superlative-sort-direction"],
    ),
    (
        # The shape of a trial statement on a graph nobody here wrote ("When did England first
        # take part?", `r.year` of PARTICIPATED_IN): the order's date read from the purchase.
        "northwind",
        "When did customer ALFKI first order?",
        "MATCH (c:Customer {customerID: 'ALFKI'})-[p:PURCHASED]->(o:Order) "
        "RETURN p.orderDate AS first ORDER BY p.orderDate LIMIT 1",
        "MATCH (:Customer {customerID: 'ALFKI'})-[:PURCHASED]->(o:Order) "
        "RETURN o.orderDate ORDER BY o.orderDate LIMIT 1",
        ["end-node-property"],
    ),
    (
        # The shape of a trial statement on a graph nobody here wrote ("Which coaches have
        # coached more than one team?" counted their squads in the WITH): the types counted.
        "network",
        "Which racks hold machines of more than five types?",
        "MATCH (r:Rack)-[:HOLDS]->(m:Machine) WITH r, count(DISTINCT m) AS n WHERE n > 5 "
        "RETURN r.name AS rack ORDER BY rack",
        "MATCH (r:Rack)-[:HOLDS]->(:Machine)-[:TYPE]->(t:Type) WITH r, count(DISTINCT t) AS n "
        "WHERE n > 5 RETURN r.name",
        ["counted-road"],
    ),
    (
        # The shape of a trial statement on a graph nobody here wrote ("Which players were
        # born before 1975?", `p.dob < '1975-01-01'`: a date against a string, nothing found).
        "northwind",
        "Which employees were born before 1955?",
        "MATCH (e:Employee) WHERE e.birthDate < '1955-01-01' RETURN e.firstName AS first, e.lastName AS last",
        "MATCH (e:Employee) WHERE e.birthDate.year < 1955 RETURN e.firstName, e.lastName",
        ["date-literal"],
    ),
    (
        "northwind",
        "Which orders did customer ALFKI place in 1998 or later?",
        "MATCH (c:Customer {customerID: 'ALFKI'})-[:PURCHASED]->(o:Order) "
        "WHERE o.orderDate >= 1998 RETURN o.orderID AS id",
        "MATCH (:Customer {customerID: 'ALFKI'})-[:PURCHASED]->(o:Order) "
        "WHERE o.orderDate >= date('1998-01-01') RETURN o.orderID",
        ["date-literal"],
    ),
    (
        # The shape of two trial statements on graphs nobody here wrote ("Who is the youngest
        # director?" sorted on the films' release year; "the youngest coach" on a
        # tournament's): the age is the one node's that has a birth date.
        "northwind",
        "Who is the youngest employee who sold to ALFKI?",
        "MATCH (e:Employee)-[:SOLD]->(o:Order)<-[:PURCHASED]-(:Customer {customerID: 'ALFKI'}) "
        "RETURN e.firstName, e.lastName, o.orderDate ORDER BY o.orderDate DESC LIMIT 1",
        "MATCH (e:Employee)-[:SOLD]->(:Order)<-[:PURCHASED]-(:Customer {customerID: 'ALFKI'}) "
        "RETURN DISTINCT e.firstName, e.lastName, e.birthDate ORDER BY e.birthDate DESC LIMIT 1",
        ["superlative-sort-direction"],
    ),
    (
        # The shape of a trial statement on the Movies graph ("Who has acted with Tom Hanks?"
        # returned Tom Hanks once per film); the engine binds each relationship once, so the
        # person named is not among the others.
        "demo",
        "Who is on the same team as Erin Garcia?",
        "MATCH (p:Person {name: 'Erin Garcia'})-[:MEMBER_OF]->(t:Team) RETURN p.name AS name",
        "MATCH (:Person {name: 'Erin Garcia'})-[:MEMBER_OF]->(:Team)<-[:MEMBER_OF]-(o:Person) "
        "WHERE o.name <> 'Erin Garcia' RETURN DISTINCT o.name",
        ["named-node-returned"],
    ),
    (
        # The shape of a Movies trial statement ("What is the earliest movie Tom Hanks acted
        # in?" came back as a year): the order is named beside its date.
        "northwind",
        "What is the most recent order of customer ALFKI?",
        "MATCH (c:Customer {customerID: 'ALFKI'})-[:PURCHASED]->(o:Order) "
        "RETURN o.orderDate AS latest ORDER BY o.orderDate DESC LIMIT 1",
        "MATCH (:Customer {customerID: 'ALFKI'})-[:PURCHASED]->(o:Order) "
        "RETURN o.orderID, o.orderDate ORDER BY o.orderDate DESC LIMIT 1",
        ["which-names-the-thing"],
    ),
    (
        # The shape of a Movies trial statement ("Who directed The Matrix?" named one of two).
        "demo",
        "Who works on Project Atlas?",
        "MATCH (p:Person)-[:WORKS_ON]->(:Project {name: 'Project Atlas'}) "
        "RETURN p.name ORDER BY p.name LIMIT 1",
        "MATCH (p:Person)-[:WORKS_ON]->(:Project {name: 'Project Atlas'}) RETURN p.name",
        ["limit-unasked"],
    ),
    (
        # The shape of a World Cup trial statement ("both 2015 and 2019" as `IN [2015, 2019]`).
        "northwind",
        "Which customers bought both Chai and Chang?",
        "MATCH (c:Customer)-[:PURCHASED]->(:Order)-[:ORDERS]->(p:Product) "
        "WHERE p.productName IN ['Chai', 'Chang'] RETURN DISTINCT c.companyName",
        "MATCH (c:Customer)-[:PURCHASED]->(:Order)-[:ORDERS]->(:Product {productName: 'Chai'}) "
        "MATCH (c)-[:PURCHASED]->(:Order)-[:ORDERS]->(:Product {productName: 'Chang'}) "
        "RETURN DISTINCT c.companyName",
        ["both-values"],
    ),
    (
        # The shape of a Movies trial statement ("What is the average rating of The
        # Replacements?" read `m.rating` of the film; reviews hold the rating).
        "northwind",
        "How many units of Chai were ordered in total?",
        "MATCH (p:Product {productName: 'Chai'}) RETURN sum(p.quantity) AS units",
        "MATCH (:Product {productName: 'Chai'})<-[o:ORDERS]-(:Order) RETURN sum(o.quantity)",
        ["relationship-property"],
    ),
    (  # a dev statement (net-zone-two-crm)
        "network",
        "Which machines in zone two run the crm application?",
        "MATCH (m:Machine)-[:RUNS]->(a:Application {name: 'crm'}), (m)<-[:HOLDS]-"
        "(r:Rack {zone: '2'}) RETURN DISTINCT m.name AS name ORDER BY name",
        "MATCH (:Rack {zone: 2})-[:HOLDS]->(m:Machine)-[:RUNS]->(:Application {name: 'crm'}) "
        "RETURN DISTINCT m.name",
        ["number-in-quotes"],
    ),
    (  # a dev item (net-interfaces-per-switch): a name the switch lacks is not its rack's
        "network",
        "How many interfaces does each switch have?",
        "MATCH (s:Switch)-[:ROUTES]->(i:Interface) RETURN s.name AS switch, count(i) AS interfaces",
        "MATCH (s:Switch)-[:ROUTES]->(i:Interface) RETURN s.ip, count(i)",
        ["name-property"],
    ),
    (  # a dev statement (ap-hop-luton-stansted), on both attempts
        "airports",
        "Which destinations are served from both Luton and Stansted?",
        "MATCH (a:Airport {descr: 'London Luton Airport'})-[:HAS_ROUTE]->(a2:Airport {descr: "
        "'London Stansted Airport'})-[:HAS_ROUTE]->(d:Airport) RETURN DISTINCT d.descr AS descr "
        "ORDER BY d.descr LIMIT 1000",
        "MATCH (:Airport {iata: 'LTN'})-[:HAS_ROUTE]->(b:Airport)<-[:HAS_ROUTE]-"
        "(:Airport {iata: 'STN'}) RETURN b.descr",
        ["both-chained"],
    ),
    (  # a dev statement (ap-order-lowest-german) less the model's `a.altitude > 0`
        "airports",
        "Which German airport is closest to sea level?",
        "MATCH (a:Airport)-[:IN_COUNTRY]->(c:Country {code: 'DE'}) RETURN a.descr AS descr "
        "ORDER BY a.altitude LIMIT 1",
        "MATCH (a:Airport)-[:IN_COUNTRY]->(:Country {code: 'DE'}) RETURN a.descr, a.altitude "
        "ORDER BY a.altitude LIMIT 1",
        ["sort-key-returned"],
    ),
    (  # a dev statement (net-xl-ram): each machine has one TYPE, bound once by the MATCH
        "network",
        "How much RAM does the xl machine type have?",
        "MATCH (t:Type {type: 'xl'})<-[:TYPE]-(m:Machine), (m)-[:TYPE]->(t2:Type) "
        "RETURN DISTINCT t2.ram AS ram",
        "MATCH (t:Type {type: 'xl'}) RETURN t.ram",
        ["walked-back"],
    ),
]


@pytest.mark.parametrize(
    ("graph", "question", "written", "gold", "rules"), CASES, ids=[c[1] for c in CASES]
)
def test_a_repaired_statement_gives_the_gold_rows(
    eval_graphs: dict[str, GraphDB],
    graph: str,
    question: str,
    written: str,
    gold: str,
    rules: list[str],
) -> None:
    db = eval_graphs[graph]
    expected = _rows(db, gold)
    assert expected, "the gold statement must have rows for this to mean anything"
    result = _ask(db, question, written)
    assert result.outcome == "answered" and len(result.attempts) == 1, result.attempts
    assert sorted(tuple(row) for row in result.rows) == expected
    fired = [
        f.rule for f in result.rules_fired if f.phase is not Phase.ANSWER and f.rule != "ties-shown"
    ]
    assert fired == rules


def test_a_word_the_graph_spells_otherwise_is_read_with_the_stored_value_the_model_picks(
    eval_graphs: dict[str, GraphDB],
) -> None:
    # The dev set's nw-syn-drinks: 'Drinks' where the categories are 'Beverages', …; the model
    # is asked only which stored value it means, and the statement is read with its pick.
    db = eval_graphs["northwind"]
    written = (
        "MATCH (p:Product)-[:PART_OF]->(c:Category) WHERE c.categoryName = 'Drinks' "
        "RETURN p.productName ORDER BY p.productName ASC LIMIT 100"
    )
    gold = (
        "MATCH (p:Product)-[:PART_OF]->(:Category {categoryName: 'Beverages'}) RETURN p.productName"
    )
    model = ScriptedChatModel(
        replies=[
            guard_reply(),
            cypher_reply(written),
            '{"choice": 1}',
            '{"means": true}',
            evaluation_reply(answer="ok"),
        ]
    )
    result = _agent(db, model).run("Which drinks do we sell?")
    assert "1. Beverages\n" in model.prompts[2] and ". Confections\n" in model.prompts[2]
    assert result.outcome == "answered" and len(result.attempts) == 1, result.attempts
    assert sorted(tuple(row) for row in result.rows) == _rows(db, gold) != []
    assert [f.rule for f in result.rules_fired] == ["value-chosen"]


def test_a_road_to_the_counted_label_that_finds_nothing_is_not_taken(
    eval_graphs: dict[str, GraphDB],
) -> None:
    # net-top-os-versions on a dev run: by the schema an OS has VERSIONs and machines RUN an
    # OS, but those are two kinds of OS node (`OS:Software`, `OS:Process`), so the road
    # counted-road would add finds nothing, and the counted-label note goes to the model.
    db = eval_graphs["network"]
    written = (
        "MATCH (o:OS)-[:VERSION]->(v:Version) "
        "RETURN v.name AS name, count(o) AS count ORDER BY count DESC, name LIMIT 5"
    )
    second = (
        "MATCH (m:Machine)-[:RUNS]->(o:OS) "
        "RETURN o.name AS name, count(m) AS count ORDER BY count DESC, name LIMIT 5"
    )
    replies = [guard_reply(), cypher_reply(written), cypher_reply(second), evaluation_reply()]
    result = _agent(db, ScriptedChatModel(replies=replies)).run(
        "Which operating system versions are running on the most machines?"
    )
    assert [a.stage for a in result.attempts] == ["counted_label", "ok"]
    assert "counted-road" not in [f.rule for f in result.rules_fired]
    assert result.rows and result.rows[0][1] > 1


@pytest.mark.parametrize(
    ("question", "road"),
    [
        # The question says the written type: the road through the rotations it links.
        ("Which teams is Erin Garcia on call for?", "-[:ON_CALL_FOR]->(:OnCallRotation)<-[:OWNS]-"),
        # It says the direct relationship: that one replaces the written type.
        ("Which teams is Erin Garcia a member of?", "-[:MEMBER_OF]->"),
    ],
)
def test_a_relationship_the_question_says_keeps_its_road_through_a_third_label(
    eval_graphs: dict[str, GraphDB], question: str, road: str
) -> None:
    # The shape of a trial statement on a graph nobody here wrote ("Which user has answered
    # the most questions?" written `(u:User)-[:ANSWERED]->(q:Question)` was put on the one
    # direct relationship, ASKED): a person is on call for rotations that teams own.
    db = eval_graphs["demo"]
    written = (
        "MATCH (p:Person {name: 'Erin Garcia'})-[:ON_CALL_FOR]->(t:Team) RETURN t.name AS team"
    )
    result = _ask(db, question, written)
    assert result.outcome == "answered" and len(result.attempts) == 1, result.attempts
    assert road in result.cypher and result.rows == [["Checkout"]]
    assert [f.rule for f in result.rules_fired if f.phase is not Phase.ANSWER] == [
        "relationship-road"
    ]


@pytest.mark.parametrize(
    ("graph", "question", "written", "gold", "stage", "notes", "rule"),
    [
        (  # hop-search-reports, a dev item: the engineering managers' reports, the Search
            # team left out. The value lookup finds 'Search', a Team's name, said word for word.
            "demo",
            "Who reports to the engineering manager of the Search team?",
            "MATCH (e:Person {title: 'Engineering Manager'})<-[:REPORTS_TO]-(r:Person) "
            "RETURN DISTINCT r.name AS person ORDER BY person",
            "MATCH (m:Person {title: 'Engineering Manager'})-[:MEMBER_OF]->(:Team {name: "
            "'Search'}) MATCH (p:Person)-[:REPORTS_TO]->(m) RETURN p.name AS person ORDER BY person",
            "left_out_value",
            ["The question names (t:Team {name: 'Search'}), which the statement never uses"],
            "value-left-out",
        ),
        (  # nw-hop-fuller-all-reports, a dev item: answered in one call with Andrew Fuller.
            "northwind",
            "Who works under Andrew Fuller, directly or indirectly?",
            'MATCH (e:Employee) WHERE e.firstName = "Andrew" AND e.lastName = "Fuller" '
            "RETURN e.firstName AS firstName, e.lastName AS lastName",
            "MATCH (e:Employee)-[:REPORTS_TO*1..5]->(:Employee {firstName: 'Andrew', "
            "lastName: 'Fuller'}) RETURN DISTINCT e.firstName, e.lastName",
            "named_echo",
            [
                "The rows only repeat Andrew, Fuller, which the question itself names",
                "(:Employee)-[:REPORTS_TO]->(:Employee)",
            ],
            "named-echo",
        ),
    ],
    ids=["a value left out", "the named person echoed"],
)
def test_rows_that_cannot_answer_get_one_correction(
    eval_graphs: dict[str, GraphDB],
    graph: str,
    question: str,
    written: str,
    gold: str,
    stage: str,
    notes: list[str],
    rule: str,
) -> None:
    db = eval_graphs[graph]
    replies = [guard_reply(), cypher_reply(written), cypher_reply(gold)]
    model = ScriptedChatModel(replies=[*replies, evaluation_reply(answer="ok")])
    result = _agent(db, model).run(question)
    assert [a.stage for a in result.attempts] == [stage, "ok"]
    assert all(note in model.prompts[2] for note in notes), model.prompts[2]
    assert sorted(tuple(r) for r in result.rows) == _rows(db, gold) != []
    assert rule in [f.rule for f in result.rules_fired]


# A graph as a CSV import with no types leaves it (the Star Wars trial's shape): heights and
# masses are text, some "unknown", a mass written with a thousands comma.
_TEXT_NUMBERS = (
    "CREATE (tat:Planet {name: 'Tatooine'}), (nab:Planet {name: 'Naboo'}), "
    "(:Character {name: 'Luke', height: '172', mass: '77'})-[:HOMEWORLD]->(tat), "
    "(:Character {name: 'Owen', height: '178', mass: '120'})-[:HOMEWORLD]->(tat), "
    "(:Character {name: 'Yoda', height: '66', mass: '17'})-[:HOMEWORLD]->(nab), "
    "(:Character {name: 'Jabba', height: '175', mass: '1,358'})-[:HOMEWORLD]->(tat), "
    "(:Character {name: 'Yarael', height: '264', mass: 'unknown'})-[:HOMEWORLD]->(nab), "
    "(:Character {name: 'Arvel', height: 'unknown', mass: 'unknown'})-[:HOMEWORLD]->(nab)"
)


@pytest.mark.parametrize(
    ("question", "written", "rows"),
    [
        (
            "Who is the tallest character?",
            "MATCH (c:Character) RETURN c.name AS name, c.height AS height "
            "ORDER BY height DESC LIMIT 1",
            [("Yarael", "264")],
        ),
        (
            "Who is the heaviest character?",
            "MATCH (c:Character) RETURN c.name, c.mass ORDER BY c.mass DESC LIMIT 1",
            [("Jabba", "1,358")],
        ),
        (
            "Which characters are taller than 170?",
            "MATCH (c:Character) WHERE c.height > 170 RETURN c.name ORDER BY c.name",
            [("Jabba",), ("Luke",), ("Owen",), ("Yarael",)],
        ),
        (
            "What is the average mass of the characters from Tatooine?",
            "MATCH (c:Character)-[:HOMEWORLD]->(:Planet {name: 'Tatooine'}) RETURN avg(c.mass)",
            [(pytest.approx((77 + 120 + 1358) / 3),)],
        ),
    ],
    ids=["sorted, by alias", "sorted, a thousands comma", "compared", "averaged"],
)
def test_numbers_stored_as_text_are_read_as_numbers(
    scratch_db: GraphDB, question: str, written: str, rows: list[tuple[object, ...]]
) -> None:
    scratch_db.run_write(_TEXT_NUMBERS)
    result = _ask(scratch_db, question, written)
    assert result.outcome == "answered", result.attempts
    assert [tuple(row) for row in result.rows] == rows
    assert "numbers-as-text" in [f.rule for f in result.rules_fired]


def test_the_others_who_share_the_named_node_are_returned_with_it(scratch_db: GraphDB) -> None:
    # "the same planet as Luke" written as Luke's planet alone (the Star Wars trial).
    scratch_db.run_write(_TEXT_NUMBERS)
    result = _ask(
        scratch_db,
        "Which characters are from the same planet as Luke?",
        "MATCH (c:Character)-[:HOMEWORLD]->(p:Planet) WHERE c.name = 'Luke' RETURN p.name",
    )
    assert result.outcome == "answered", result.attempts
    assert sorted(tuple(row) for row in result.rows) == [
        ("Jabba", "Tatooine"),
        ("Owen", "Tatooine"),
    ]
    assert "named-node-returned" in [f.rule for f in result.rules_fired]


_FILMS = (
    "CREATE (tat:Planet {name: 'Tatooine'}), (nab:Planet {name: 'Naboo'}), "
    "(tpm:Film {title: 'The Phantom Menace', created: 2}), (anh:Film {title: 'A New Hope', "
    "created: 1}), (falcon:Starship {name: 'Falcon'}), (nab)-[:APPEARED_IN]->(tpm), "
    "(tat)-[:APPEARED_IN]->(tpm), (tat)-[:APPEARED_IN]->(anh), "
    "(:Character {name: 'Padme'})-[:HOMEWORLD]->(nab), (:Character {name: 'Jar Jar'})"
    "-[:HOMEWORLD]->(nab), (:Character {name: 'Luke'})-[:HOMEWORLD]->(tat), "
    "(:Character {name: 'Qui-Gon'})-[:HOMEWORLD]->(tat), "
    "(han:Character {name: 'Han'}), (chewie:Character {name: 'Chewie'}), "
    "(han)-[:PILOT]->(falcon), (chewie)-[:PILOT]->(falcon), (han)-[:APPEARED_IN]->(anh), "
    "(chewie)-[:APPEARED_IN]->(anh), (chewie)-[:APPEARED_IN]->(tpm)"
)


@pytest.mark.parametrize(
    ("more", "question", "written", "rows", "rule"),
    [
        (
            # Naboo "appeared in" the film, so the film's whole cast came back.
            "MATCH (c:Character), (f:Film {title: 'The Phantom Menace'}) "
            "WHERE c.name IN ['Padme', 'Jar Jar', 'Qui-Gon'] CREATE (c)-[:APPEARED_IN]->(f)",
            "Which characters from Naboo appeared in The Phantom Menace?",
            "MATCH (p:Planet {name: 'Naboo'})-[:APPEARED_IN]->(f:Film {title: 'The Phantom "
            "Menace'})<-[:APPEARED_IN]-(c:Character) RETURN c.name",
            [("Jar Jar",), ("Padme",)],
            "named-node-linked",
        ),
        (
            # The Falcon's pilots' films, sorted by when each film node was made.
            "",
            "Which films did the pilots of the Falcon appear in?",
            "MATCH (:Starship {name: 'Falcon'})<-[:PILOT]-(c:Character)-[:APPEARED_IN]->(f:Film) "
            "RETURN f.title ORDER BY f.created DESC LIMIT 100",
            [("A New Hope",), ("The Phantom Menace",)],
            "distinct-rows",
        ),
    ],
    ids=["a named node tied only to another", "repeats under a sort nobody asked for"],
)
def test_the_star_wars_trials_films_questions_are_repaired(
    scratch_db: GraphDB,
    more: str,
    question: str,
    written: str,
    rows: list[tuple[object, ...]],
    rule: str,
) -> None:
    scratch_db.run_write(_FILMS)
    if more:
        scratch_db.run_write(more)
    result = _ask(scratch_db, question, written)
    assert result.outcome == "answered", result.attempts
    assert sorted(tuple(row) for row in result.rows) == rows
    assert rule in [f.rule for f in result.rules_fired]


def test_an_average_of_numbers_as_text_sorted_descending_puts_the_unknown_last(
    scratch_db: GraphDB,
) -> None:
    scratch_db.run_write(_TEXT_NUMBERS)
    scratch_db.run_write(  # a planet whose only character's mass is unknown: an average of null
        "CREATE (:Character {name: 'Zed', height: 'unknown', mass: 'unknown'})"
        "-[:HOMEWORLD]->(:Planet {name: 'Kamino'})"
    )
    result = _ask(
        scratch_db,
        "Which planet's characters are the heaviest on average?",
        "MATCH (c:Character)-[:HOMEWORLD]->(p:Planet) RETURN p.name AS planet, avg(c.mass) AS mass "
        "ORDER BY mass DESC LIMIT 1",
    )
    assert result.outcome == "answered", result.attempts
    assert [row[0] for row in result.rows] == ["Tatooine"]
    fired = [f for f in result.rules_fired if f.rule == "numbers-as-text"]
    assert fired and "mass IS NULL, mass DESC" in (fired[0].cypher or "")


def test_which_x_has_the_most_y_grouped_by_y_names_the_x(scratch_db: GraphDB) -> None:
    # The Star Wars trial: "Which film has the most planets?" named the planet in most films.
    scratch_db.run_write(_FILMS)
    result = _ask(
        scratch_db,
        "Which film has the most planets?",
        "MATCH (f:Film)<-[:APPEARED_IN]-(p:Planet) RETURN p.name AS planet, count(*) AS planets "
        "ORDER BY planets DESC LIMIT 1",
    )
    assert result.outcome == "answered", result.attempts
    assert [tuple(row) for row in result.rows] == [("The Phantom Menace", 2)]
    assert "which-names-the-thing" in [f.rule for f in result.rules_fired]


def test_a_property_a_schema_rewrite_moved_goes_through_the_statement_rules_again(
    scratch_db: GraphDB,
) -> None:
    # The Star Wars trial: the crew read from PILOT, moved to the starship (where it is text)
    # after numbers-as-text had run, was sorted as text: "unknown" first.
    scratch_db.run_write(
        "CREATE (falcon:Starship {name: 'Falcon', crew: '4'}), "
        "(:Character {name: 'Han'})-[:PILOT]->(falcon), "
        "(:Character {name: 'Chewie'})-[:PILOT]->(falcon), "
        "(:Character {name: 'Piett'})-[:PILOT]->(:Starship {name: 'Executor', crew: '279,144'}), "
        "(:Character {name: 'Luke'})-[:PILOT]->(:Starship {name: 'X-wing', crew: '1'}), "
        "(:Character {name: 'Wedge'})-[:PILOT]->(:Starship {name: 'Scout', crew: 'unknown'})"
    )
    result = _ask(
        scratch_db,
        "Which piloted starship has the largest crew?",
        "MATCH (c:Character)-[p:PILOT]->(s:Starship) RETURN s.name AS starship, p.crew AS crew "
        "ORDER BY crew DESC LIMIT 1",
    )
    assert result.outcome == "answered", result.attempts
    assert [tuple(row) for row in result.rows] == [("Executor", "279,144")]
    fired = [f.rule for f in result.rules_fired]
    assert fired.index("end-node-property") < fired.index("numbers-as-text"), fired


# The POLE trial's shapes: people called by a name and a surname, locations by their address,
# vehicles by a registration no two share (no name property), years stored as text, crimes
# that occur at locations lying in areas, on dates stored as day/month/year text; who knows
# whom stored once, in either direction.
_POLICE = (
    "CREATE (home:Location {address: '178 Polding Street'}), "
    "(:Location {address: '6 Gypsy Lane'}), (:Location {address: '1 Mill Road'}), "
    "(:Location {address: '9 High Street'}), (:Location {address: '2 Bridge Row'}), "
    "(todd:Person {name: 'Todd', surname: 'Hamilton'})-[:CURRENT_ADDRESS]->(home), "
    "(todd)-[:KNOWS]->(:Person {name: 'Jessica', surname: 'Kelly'}), "
    "(:Person {name: 'Ann', surname: 'Long'})-[:KNOWS]->(todd), "
    "(:Person {name: 'Benjamin', surname: 'Hamilton'})-[:CURRENT_ADDRESS]->(home), "
    "(:Vehicle {reg: 'RY52 APF', make: 'Toyota', year: '2005'}), "
    "(:Vehicle {reg: 'RH42 TAB', make: 'Jaguar', year: '1992'}), "
    "(:Vehicle {reg: 'AB12 CDE', make: 'Ford', year: '1926'}), "
    "(:Vehicle {reg: 'XY99 ZZZ', make: 'Ford', year: '2011'}), "
    "(:Vehicle {reg: 'LM01 NOP', make: 'Toyota', year: 'unknown'}), "
    "(wn3:Area {areaCode: 'WN3'}), (ol1:Area {areaCode: 'OL1'}), (sgt:Officer {name: 'Uri'}), "
    "(home)-[:LOCATION_IN_AREA]->(wn3), "
    "(:Crime {type: 'Drugs', date: '24/08/2017'})-[:OCCURRED_AT]->(home), "
    "(:Crime {type: 'Burglary', date: '9/08/2017'})-[:OCCURRED_AT]->(home), "
    "(c3:Crime {type: 'Drugs', date: '31/07/2017'})-[:OCCURRED_AT]->(lane:Location "
    "{address: '7 Gypsy Lane'})-[:LOCATION_IN_AREA]->(ol1), (c3)-[:INVESTIGATED_BY]->(sgt)"
)


@pytest.mark.parametrize(
    ("question", "written", "rows", "rule"),
    [
        (
            "What is the oldest vehicle?",
            "MATCH (v:Vehicle) RETURN v.year AS year ORDER BY year ASC LIMIT 1",
            [("AB12 CDE", "1926")],
            "which-names-the-thing",
        ),
        (
            "Who lives at the same address as Todd Hamilton?",
            "MATCH (p:Person {name: 'Todd', surname: 'Hamilton'})-[:CURRENT_ADDRESS]->"
            "(l:Location) RETURN l.address",
            [("Benjamin", "Hamilton", "178 Polding Street")],
            "named-node-returned",
        ),
        (
            "Which area has the most crimes?",
            "MATCH (a:Area)-[r:INVESTIGATED_BY]->(c:Crime) RETURN a.areaCode AS area, "
            "count(*) AS crime_count ORDER BY crime_count DESC LIMIT 1",
            [("WN3", 2)],
            "relationship-road",
        ),
        (
            "What is the most recent crime?",
            "MATCH (c:Crime) RETURN c.type AS type, c.date AS date ORDER BY date DESC LIMIT 1",
            [("Drugs", "24/08/2017")],  # as text, "9/08/2017" sorts first
            "dates-as-text",
        ),
        (
            "How many crimes were there in August 2017?",
            "MATCH (c:Crime) WHERE c.date STARTS WITH '2017-08' RETURN count(c) AS crimes",
            [(2,)],
            "dates-as-text",
        ),
        (
            "Who does Todd Hamilton know?",
            "MATCH (t:Person {name: 'Todd', surname: 'Hamilton'})-[:KNOWS]->(p:Person) "
            "RETURN p.name AS name, p.surname AS surname ORDER BY name",
            [("Ann", "Long"), ("Jessica", "Kelly")],
            "reciprocal-relationship",
        ),
        (
            "List the vehicles made before 2006, sorted by year.",
            "MATCH (v:Vehicle) WHERE v.year < '2006' RETURN v.reg AS reg ORDER BY v.year",
            [("AB12 CDE", "1926"), ("RH42 TAB", "1992"), ("RY52 APF", "2005")],
            "sort-key-returned",
        ),
    ],
    ids=[
        "a node without a name, called by its key",
        "the same address",
        "the one road",
        "the latest date stored as text",
        "a month of dates stored as text",
        "a tie stored once, read both ways",
        "the measure a ranking ranks by",
    ],
)
def test_the_pole_trials_questions_are_repaired(
    scratch_db: GraphDB, question: str, written: str, rows: list[tuple[object, ...]], rule: str
) -> None:
    _repaired_on(scratch_db, _POLICE, question, written, rows, rule)


def _repaired_on(
    db: GraphDB, graph: str, question: str, written: str, rows: list[tuple[object, ...]], rule: str
) -> None:
    """The trial graph written, the question asked with the model's statement: answered with
    `rows`, by `rule`."""
    db.run_write(graph)
    result = _ask(db, question, written)
    assert result.outcome == "answered", [(a.error, a.stage) for a in result.attempts]
    assert [tuple(row) for row in result.rows] == rows
    assert rule in [f.rule for f in result.rules_fired]


# The entity-resolution trial's shapes (neo4j-graph-examples, a streaming service): users called
# by a first and a last name, in a state; movies in one genre each; how often a user watched a
# movie on the relationship.
_WATCHING = (
    "CREATE (horror:Genre {name: 'Horror'}), (comedy:Genre {name: 'Comedy'}), "
    "(drama:Genre {name: 'Drama'}), "
    "(old:Movie {title: 'Old', year: 2021})-[:HAS]->(horror), "
    "(us:Movie {title: 'Us', year: 2019})-[:HAS]->(horror), "
    "(dear:Movie {title: 'Dear John', year: 2010})-[:HAS]->(drama), "
    "(enchanted:Movie {title: 'Enchanted', year: 2007})-[:HAS]->(comedy), "
    "(knocked:Movie {title: 'Knocked Up', year: 2007})-[:HAS]->(comedy), "
    "(cam:User {firstName: 'Cam', lastName: 'Wakeling', state: 'Virginia'}), "
    "(dot:User {firstName: 'Dorette', lastName: 'Burbidge', state: 'Virginia'}), "
    "(kip:User {firstName: 'Kippy', lastName: 'Butterfill', state: 'Ohio'}), "
    "(cam)-[:WATCHED {watchCount: 2}]->(old), (cam)-[:WATCHED {watchCount: 1}]->(us), "
    "(dot)-[:WATCHED {watchCount: 3}]->(old), (dot)-[:WATCHED {watchCount: 1}]->(dear), "
    "(kip)-[:WATCHED {watchCount: 4}]->(us), (kip)-[:WATCHED {watchCount: 1}]->(enchanted), "
    "(kip)-[:WATCHED {watchCount: 2}]->(knocked), "
    "(home:IpAddress {address: '159.20.53.178'}), (cam)-[:USES]->(home), (dot)-[:USES]->(home), "
    "(kip)-[:USES]->(:IpAddress {address: '16.129.236.37'}), "
    "(:User {firstName: 'Gris', lastName: 'Paulsen', state: 'Ohio'})-[:USES]->"
    "(:IpAddress {address: '103.186.31.19'}), "
    "(:User {firstName: 'Mandy', lastName: 'Lillo', state: 'Ohio'})-[:USES]->"
    "(:IpAddress {address: '163.107.178.72'})"
)


@pytest.mark.parametrize(
    ("question", "written", "rows", "rule"),
    [
        (
            "How many users from Virginia watched a horror movie?",
            "MATCH (u:User {state: 'Virginia'})-[:WATCHED]->(m:Movie)-[:HAS]->"
            "(g:Genre {name: 'Horror'}) RETURN COUNT(u) AS numUsers",
            [(2,)],  # Cam watched two horror films: counted twice, 3
            "count-distinct",
        ),
        (
            "How many users watched a movie from 2007?",
            "MATCH (u:User)-[w:WATCHED]->(m:Movie) WHERE m.year = 2007 RETURN count(u)",
            [(1,)],  # Kippy watched both films of 2007: a year pins no film, 2
            "count-distinct",
        ),
        (
            "How many comedies are there?",
            "MATCH (g:Genre {name: 'Comedy'}) RETURN count(g)",
            [(2,)],
            "named-node-counted",
        ),
        (
            "What genres are there?",
            "MATCH (g:Genre) RETURN count(g) AS genreCount",
            [("Comedy",), ("Drama",), ("Horror",)],
            "count-unasked",
        ),
        (
            "How many users watched a movie from 2007?",
            "MATCH (u:User)-[w:WATCHED {watchCount: INTEGER}]->(m:Movie) "
            "WHERE w.watchCount > 0 AND m.year = 2007 RETURN COUNT(u)",
            [(1,)],
            "type-as-value",
        ),
        (
            "Which state has the most users?",
            "MATCH (u:User)-[r:USES]->(ip:IpAddress) WITH ip.state AS state, COUNT(u) AS "
            "userCount RETURN state, userCount ORDER BY userCount DESC LIMIT 1",
            [("Ohio", 3)],  # another user of the same address: Virginia, 2
            "property-through-neighbour",
        ),
        (
            "How many times did Dorette Burbidge watch each of the movies she watched?",
            "MATCH (u:User {firstName: 'Dorette', lastName: 'Burbidge'})-[:WATCHED]->(m:Movie) "
            "RETURN m.title AS title, count(*) AS watchCount ORDER BY watchCount DESC",
            [("Old", 3), ("Dear John", 1)],
            "stored-count",
        ),
        (
            "What is the average watch count?",
            "MATCH (u:User)-[:WATCHED]->(m:Movie) RETURN avg(r.watchCount) AS avgWatchCount",
            [(2.0,)],  # 14 views over 7 relationships
            "bind-unbound-relationship",
        ),
        (
            "Who watched the most horror movies?",
            "MATCH (u:User)-[:WATCHED]->(m:Movie)-[:HAS]->(:Genre {name: 'Horror'}) RETURN "
            "u.firstName, u.lastName, count(m) AS films ORDER BY films DESC LIMIT 100",
            [("Cam", "Wakeling", 2)],  # every user in order: Dorette and Kippy too
            "superlative-one-row",
        ),
    ],
    ids=[
        "a user once, not once per film",
        "a user once, the films filtered by a year",
        "the films of a genre",
        "the genres listed",
        "a type name copied from the schema",
        "the neighbour matched already",
        "the times stored on the relationship",
        "the relationship read and never named",
        "who, the most: one",
    ],
)
def test_the_movie_watching_trials_questions_are_repaired(
    scratch_db: GraphDB, question: str, written: str, rows: list[tuple[object, ...]], rule: str
) -> None:
    _repaired_on(scratch_db, _WATCHING, question, written, rows, rule)


# The FinCEN trial's shapes (neo4j-graph-examples/fincen): filings with an amount, a begin and
# an end date (the end also kept as the import's text), called by a plain `id`; banks
# (entities) file them, originate and receive the money.
_FILINGS = (
    "CREATE (uk:Country {name: 'United Kingdom', code: 'GBR'}), "
    "(ru:Country {name: 'Russia', code: 'RUS'}), (sg:Country {name: 'Singapore', code: 'SGP'}), "
    "(lv:Country {name: 'Latvia', code: 'LVA'}), "
    "(sc:Entity {name: 'Standard Chartered Plc'}), "
    "(bny:Entity {name: 'The Bank of New York Mellon Corp.'}), "
    "(cimb:Entity {name: 'CIMB Bank Berhad'})-[:COUNTRY]->(sg), "
    "(ablv:Entity {name: 'ABLV Bank'})-[:COUNTRY]->(lv), "
    "(barc:Entity {name: 'Barclays Bank Plc'})-[:COUNTRY]->(uk), "
    "(rosb:Entity {name: 'Rosbank'})-[:COUNTRY]->(ru), "
    "(bny)-[:FILED]->(:Filing {id: '1001', amount: 500.0, begin: date('2015-03-25'), end: date('2015-09-25'), end_date: 'Sep 25, 2015'})"
    "-[:ORIGINATOR]->(cimb), "
    "(sc)-[:FILED]->(f2:Filing {id: '1002', amount: 900.0, begin: date('2016-06-01'), end: date('2016-04-01'), end_date: 'Apr 1, 2016'})"
    "-[:ORIGINATOR]->(ablv), "
    "(sc)-[:FILED]->(f3:Filing {id: '1003', amount: 300.0, begin: date('2016-11-20'), end: date('2016-12-30'), end_date: 'Dec 30, 2016'})"
    "-[:ORIGINATOR]->(ablv), "
    "(bny)-[:FILED]->(f4:Filing {id: '1004', amount: 800.0, begin: date('2014-01-10'), end: date('2014-06-10'), end_date: 'Jun 10, 2014'})"
    "-[:ORIGINATOR]->(cimb), "
    "(sc)-[:FILED]->(f5:Filing {id: '1005', amount: 100.0, begin: date('2017-02-02'), end: date('2017-08-01'), end_date: 'Aug 1, 2017'})"
    "-[:ORIGINATOR]->(cimb), "
    "(f2)-[:BENEFITS]->(barc), (f3)-[:BENEFITS]->(rosb), (f4)-[:BENEFITS]->(rosb), "
    "(f5)-[:BENEFITS]->(barc)"
)


@pytest.mark.parametrize(
    ("question", "written", "rows", "rule"),
    [
        (
            "Which filing has the largest amount?",
            "MATCH (f:Filing) RETURN f.amount ORDER BY f.amount DESC LIMIT 1",
            [("1002", 900.0)],  # the amount alone
            "which-names-the-thing",
        ),
        (
            "In which countries are the beneficiary banks of filings filed by Standard "
            "Chartered Plc?",
            "MATCH (e:Entity {name: 'Standard Chartered Plc'})-[:FILED]->(f:Filing)-[:BENEFITS]"
            "->(b:Entity)-[:COUNTRY]->(c:Country) RETURN c.name AS country ORDER BY country",
            [("Russia",), ("United Kingdom",)],  # the United Kingdom twice
            "distinct-rows",
        ),
        (
            "Which originator bank sent the most money in total?",
            "MATCH (e:Entity)-[:FILED]->(f:Filing)-[:ORIGINATOR]->(o:Entity) "
            "WITH e, o, sum(f.amount) AS total RETURN o.name AS bank, total "
            "ORDER BY total DESC LIMIT 1",
            [("CIMB Bank Berhad", 1400.0)],  # per filer too: one filer's 1,300
            "grouping-key-unused",
        ),
        (
            "How many filings began in 2016?",
            "MATCH (e:Entity)-[:FILED]->(f:Filing) WHERE f.begin = date('2016-01-01') "
            "RETURN count(DISTINCT f) AS filings",
            [(2,)],  # New Year's Day alone: none
            "year-as-first-day",
        ),
        (
            "Which filings filed by Standard Chartered Plc ended in 2016?",
            "MATCH (e:Entity {name: 'Standard Chartered Plc'})-[:FILED]->(f:Filing) "
            "WHERE f.end_date = '2016' RETURN f.id AS id ORDER BY id",
            [("1002",), ("1003",)],  # the text, "Apr 1, 2016", is never '2016'
            "text-twin",
        ),
        (
            "Which filing has the smallest amount?",
            "MATCH (f:Filing) RETURN f.amount ASC LIMIT 1",
            [("1005", 100.0)],  # rejected by the engine
            "direction-in-return",
        ),
        (
            "Which filings did Standard Chartered Plc file in 2016?",
            "MATCH (e:Entity {name: 'Standard Chartered Plc'})-[:FILED]->"
            "(f:Filing {begin: date('2016-01-01')}) RETURN f.id AS id ORDER BY id",
            [("1002",), ("1003",)],  # New Year's Day alone: none
            "year-as-first-day",
        ),
    ],
    ids=[
        "which filing: called by its id",
        "in which: each country once",
        "a total per bank, not per filer and bank",
        "a year, not its first day",
        "the date, not its copy as text",
        "a direction written in the RETURN",
        "a year's first day in the node's map",
    ],
)
def test_the_fincen_trials_questions_are_repaired(
    scratch_db: GraphDB, question: str, written: str, rows: list[tuple[object, ...]], rule: str
) -> None:
    _repaired_on(scratch_db, _FILINGS, question, written, rows, rule)


# The cybersecurity trial's shapes (neo4j-graph-examples/cybersecurity, an Active Directory
# export): users and computers are members of groups, organisational units contain them,
# computers hold users' sessions; a user's last logon and password change are epoch seconds
# under glued lower-case names, and one user has never logged on (no `lastlogon`).
_DIRECTORY = (
    "CREATE (admins:Group {name: 'DOMAIN ADMINS@CORP.LOCAL'}), "
    "(users:Group {name: 'DOMAIN USERS@CORP.LOCAL'}), (it:Group {name: 'IT@CORP.LOCAL'}), "
    "(:Group {name: 'PRINTERS@CORP.LOCAL'}), "
    "(ou1:OU {name: 'CA_USERS@CORP.LOCAL'}), (ou2:OU {name: 'TX_COMPUTERS@CORP.LOCAL'}), "
    "(ana:User {name: 'ANA@CORP.LOCAL', lastlogon: 1639751774, pwdlastset: 1609388917}), "
    "(bo:User {name: 'BO@CORP.LOCAL', lastlogon: 1639588060, pwdlastset: 1627788282}), "
    "(cy:User {name: 'CY@CORP.LOCAL', pwdlastset: 1619000000}), "
    "(c1:Computer {name: 'COMP1.CORP.LOCAL'}), (c2:Computer {name: 'COMP2.CORP.LOCAL'}), "
    "(ana)-[:MEMBER_OF]->(admins), (ana)-[:MEMBER_OF]->(users), (bo)-[:MEMBER_OF]->(users), "
    "(cy)-[:MEMBER_OF]->(users), (cy)-[:MEMBER_OF]->(it), (c1)-[:MEMBER_OF]->(it), "
    "(ou1)-[:CONTAINS]->(ana), (ou1)-[:CONTAINS]->(bo), (ou1)-[:CONTAINS]->(cy), "
    "(ou2)-[:CONTAINS]->(c1), (ou2)-[:CONTAINS]->(c2), "
    "(c1)-[:HAS_SESSION]->(ana), (c1)-[:HAS_SESSION]->(cy), (c2)-[:HAS_SESSION]->(bo)"
)


@pytest.mark.parametrize(
    ("question", "written", "rows", "rule"),
    [
        (
            "Which group has the most members?",
            "MATCH (g:Group) RETURN g.name AS group_name, count(*) AS member_count "
            "ORDER BY member_count DESC LIMIT 1",
            [("DOMAIN USERS@CORP.LOCAL", 3)],  # each group once: 1 for every group
            "lone-node-counted",
        ),
        (
            "Which computer has the most sessions?",
            "MATCH (c:Computer) WITH c, count(c) AS sessions ORDER BY sessions DESC LIMIT 1 "
            "RETURN c.name AS computer, sessions",
            [("COMP1.CORP.LOCAL", 2)],  # each computer once: a tie of ones
            "lone-node-counted",
        ),
        (
            "Which user logged on most recently?",
            "MATCH (u:User) RETURN u.name AS name, u.lastlogon AS lastlogon "
            "ORDER BY lastlogon DESC LIMIT 1",
            [("ANA@CORP.LOCAL", 1639751774)],  # the user who never logged on sorts first
            "nulls-last",
        ),
        (
            "Which group has the fewest members?",
            "MATCH (g:Group)<-[:MEMBER_OF]-(m) RETURN g.name AS grp, count(m) AS members "
            "ORDER BY members LIMIT 1",
            [("PRINTERS@CORP.LOCAL", 0)],  # no member: matched by no path
            "fewest-with-none",
        ),
        (
            "Which computer has the fewest sessions?",
            "MATCH (c:Computer) WITH c, count(DISTINCT s) AS sessions ORDER BY sessions LIMIT 1 "
            "RETURN c.name AS computer, sessions",
            [("COMP2.CORP.LOCAL", 1)],  # `s` bound by nothing: the engine refuses it
            "lone-node-counted",
        ),
    ],
    ids=[
        "a count per group alone is 1",
        "a verb counts the ends",
        "no value is not the latest",
        "the fewest: none",
        "a count of a name nothing binds",
    ],
)
def test_the_cybersecurity_trials_questions_are_repaired(
    scratch_db: GraphDB, question: str, written: str, rows: list[tuple[object, ...]], rule: str
) -> None:
    _repaired_on(scratch_db, _DIRECTORY, question, written, rows, rule)


# The supply-chain trial's shapes (neo4j-examples/supply-chain-demo): distribution centers
# (called by their description; a number as id) linked to each other and supplying
# destination centers (two labels alike but for one word, both with a city and a country; the
# distance on the relationship), trucks and the systems that report on them.
_SUPPLY = (
    "CREATE (sd:DistributionCenter {id: 22, description: 'San Diego Distribution Center', "
    "city: 'San Diego', country: 'EEUU'}), "
    "(ph:DistributionCenter {id: 28, description: 'Phoenix Distribution Center', "
    "city: 'Phoenix', country: 'EEUU'}), "
    "(:DistributionCenter {id: 23, description: 'Toronto Distribution Center', "
    "city: 'Toronto', country: 'Canada'}), "
    "(:DistributionCenter {id: 20, description: 'Vancouver Distribution Center', "
    "city: 'Vancouver', country: 'Canada'}), "
    "(ma:DistributionCenter {id: 1, description: 'Madrid Distribution Center', "
    "city: 'Madrid', country: 'Spain'})-[:LINKED {distance: 1264.8}]->"
    "(:DistributionCenter {id: 2, description: 'London Distribution Center', "
    "city: 'London', country: 'UK'}), "
    "(mo:DestinationCenter {description: 'Montreal Center', city: 'Montreal', country: 'Canada'}), "
    "(la:DestinationCenter {description: 'Los Angeles Center', city: 'Los Angeles', "
    "country: 'EEUU'}), "
    "(da:DestinationCenter {description: 'Dallas Center', city: 'Dallas', country: 'EEUU'}), "
    "(sd)-[:SUPPLY_TO {distance: 180.5}]->(la), (sd)-[:SUPPLY_TO {distance: 1700.2}]->(da), "
    "(sd)-[:LINKED {distance: 180.5}]->(la), "
    "(ph)-[:SUPPLY_TO {distance: 1420.0}]->(da), "
    "(t1:Truck {id: '1421412P'}), (t2:Truck {id: '1421413P'}), "
    "(:System {name: 'Cooling System', failure: false})-[:SYSTEM]->(t1), "
    "(:System {name: 'Engine System', failure: true})-[:SYSTEM]->(t1), "
    "(:System {name: 'Cooling System', failure: false})-[:SYSTEM]->(t2)"
)


@pytest.mark.parametrize(
    ("question", "written", "rows", "rule"),
    [
        (
            "Which distribution centers are in Canada?",
            "MATCH (d:DestinationCenter {country: 'Canada'}) RETURN d.city AS city ORDER BY city",
            [("Toronto",), ("Vancouver",)],  # Montreal, a destination center
            "named-label",
        ),
        (
            "Which distribution center supplies the most destination centers?",
            "MATCH (d:DistributionCenter)-[r:SUPPLY_TO {distance: NULL}]->(dc:DestinationCenter) "
            "RETURN d.city AS city, count(dc) AS supplied ORDER BY supplied DESC LIMIT 1",
            [("San Diego", 2)],  # a map entry equal to null: nothing
            "null-in-map",
        ),
        (
            "Which distribution center supplies the most destination centers?",
            "MATCH (d:DistributionCenter)-[:SUPPLY_TO]->(dc:DistributionCenter) "
            "RETURN d.city AS city, count(dc) AS supplied ORDER BY supplied DESC LIMIT 1",
            [("San Diego", 2)],  # no centre supplies another distribution center
            "named-label",
        ),
        (
            "How many destination centers does each distribution center supply?",
            "MATCH (dc:DistributionCenter)-[:SUPPLY_TO]->(dc2:DestinationCenter) "
            "RETURN dc2.country AS country, count(DISTINCT dc2) AS supplied ORDER BY supplied DESC",
            [("San Diego Distribution Center", 2), ("Phoenix Distribution Center", 1)],
            "which-names-the-thing",  # grouped by the supplied centers' country
        ),
        (
            "Which centers is Madrid linked to?",
            "MATCH (d:DestinationCenter {city: 'Madrid'})-[:LINKED]-(o) RETURN o.city AS city",
            [("London",)],  # Madrid is a distribution center's city
            "value-label",
        ),
        (
            "Which centers is Madrid linked to?",
            "MATCH (d:DestinationCenter {city: 'Madrid'}) "
            "OPTIONAL MATCH (d)-[r:LINKED]->(dc:DestinationCenter) RETURN dc.city AS city",
            [("London",)],  # refused: no LINKED between destination centers
            "misfit-value-label",
        ),
        (
            "Which centers is Madrid linked to?",
            "MATCH (d:DistributionCenter {city: 'Madrid'})-[:LINKED {distance: 0}]->(dc) "
            "RETURN dc.city AS city",
            [("London",)],  # no link is 0 long
            "unsaid-number",
        ),
        (
            "Which distribution centers supply no destination center?",
            "MATCH (d:DistributionCenter)-[r:SUPPLY_TO]->(dc:DestinationCenter) "
            "WHERE dc.city IS NULL RETURN dc",
            [
                ("London Distribution Center",),
                ("Madrid Distribution Center",),
                ("Toronto Distribution Center",),
                ("Vancouver Distribution Center",),
            ],  # a matched path has its end: nothing
            "absent-link",
        ),
        (
            "Which destination centers does no distribution center supply?",
            "MATCH (dc:DestinationCenter)<-[:SUPPLY_TO]-(d:DistributionCenter) "
            "RETURN dc.city AS city",
            [("Montreal Center",)],  # the "no" left out: every supplied one
            "absent-link",
        ),
        (
            "How many systems does each truck have?",
            "MATCH (t:Truck)<-[:SYSTEM]-(s:System) RETURN count(DISTINCT s) AS systems "
            "ORDER BY systems DESC",
            [("1421412P", 2), ("1421413P", 1)],  # one total: 3
            "which-names-the-thing",
        ),
    ],
    ids=[
        "a look-alike label",
        "a null in a map",
        "both named, one misplaced",
        "each one's count grouped by the other",
        "a value under a look-alike label",
        "a value under a look-alike label, refused",
        "a number nobody said",
        "none of a label as a null",
        "none of a label left out",
        "a count of each",
    ],
)
def test_the_supply_chain_trials_questions_are_repaired(
    scratch_db: GraphDB, question: str, written: str, rows: list[tuple[object, ...]], rule: str
) -> None:
    _repaired_on(scratch_db, _SUPPLY, question, written, rows, rule)


# The Game of Thrones trial's shapes (neo4j-examples/game-of-thrones, fed from An API of Ice
# and Fire): houses in regions and sworn to other houses, people allied with houses, most of
# them with no culture.
_THRONES = (
    "CREATE (reach:Region {name: 'The Reach'}), (north:Region {name: 'The North'}), "
    "(crown:Region {name: 'The Crownlands'}), "
    "(tyrell:House {name: 'House Tyrell of Highgarden'})-[:IN_REGION]->(reach), "
    "(florent:House {name: 'House Florent of Brightwater Keep'})-[:IN_REGION]->(reach), "
    "(tarly:House {name: 'House Tarly of Horn Hill'})-[:IN_REGION]->(reach), "
    "(stark:House {name: 'House Stark of Winterfell'})-[:IN_REGION]->(north), "
    '(baratheon:House {name: "House Baratheon of King\'s Landing"})-[:IN_REGION]->(crown), '
    "(florent)-[:SWORN_TO]->(tyrell), (tarly)-[:SWORN_TO]->(tyrell), "
    "(tyrell)-[:SWORN_TO]->(baratheon), (tyrell)-[:LED_BY]->(:Person {name: 'Mace Tyrell'}), "
    "(:Person {name: 'Willas Tyrell'})-[:HEIR_TO]->(tyrell), "
    "(:Seat {name: 'Highgarden'})-[:SEAT_OF]->(tyrell), (:Seat {name: 'Horn Hill'})-[:SEAT_OF]->(tarly), "
    "(:Person {name: 'Jon Snow', culture: 'Northmen'})-[:ALLIED_WITH]->(stark), "
    "(:Person {name: 'Arya Stark', culture: 'Northmen'})-[:ALLIED_WITH]->(stark), "
    "(:Person {name: 'Randyll Tarly', culture: 'Reach'})-[:ALLIED_WITH]->(tarly), "
    "(:Person {name: 'Addam'}), (:Person {name: 'Aemon'}), (:Person {name: 'Alys'})"
)


@pytest.mark.parametrize(
    ("question", "written", "rows", "rule"),
    [
        (
            "Which region has the most houses?",
            "MATCH (r:Region) WITH r, count(*) AS houseCount ORDER BY houseCount DESC LIMIT 1 "
            "RETURN r.name AS region",
            [("The Reach",)],  # a count per region alone is 1: any region
            "lone-node-counted",
        ),
        (
            "Which culture do most characters belong to?",
            "MATCH (p:Person) RETURN count(p) AS count, p.culture AS culture "
            "ORDER BY count DESC LIMIT 1",
            [(2, "Northmen")],  # the three with no culture came first
            "null-group",
        ),
        (
            "Which culture do most characters belong to?",
            "MATCH (p:Person) RETURN p.culture GROUP BY p.culture ORDER BY count(*) DESC LIMIT 1",
            [("Northmen", 2)],  # refused by the engine; then the group of nothing first
            "sql-group-by",
        ),
        (
            "Which houses are sworn to House Tyrell of Highgarden?",
            "MATCH (h:House {name: 'House Tyrell of Highgarden'})-[:SWORN_TO]->(h2:House) "
            "RETURN h2.name AS house ORDER BY house",
            [("House Florent of Brightwater Keep",), ("House Tarly of Horn Hill",)],
            "relationship-word-order",  # written the other way: Tyrell's own overlord
        ),
        (
            "How many houses in the Reach that are sworn to House Tyrell of Highgarden have a seat?",
            "MATCH (:House {name: 'House Tyrell of Highgarden'})<-[:SWORN_TO]-(h2:House)"
            "-[:IN_REGION]->(r:Region {name: 'The Reach'})<-[:IN_REGION]-(:House)"
            "<-[:SEAT_OF]-(s:Seat) RETURN count(DISTINCT h2) AS houses",
            [(1,)],  # any house's seat in the Reach: both
            "walked-back-named",
        ),
        (
            "Who is the current lord of House Tyrell of Highgarden?",
            "MATCH (h:House {name: 'House Tyrell of Highgarden'}) RETURN h.ledBy.name AS lord",
            [("Mace Tyrell",)],  # no property ledBy: the relationship LED_BY
            "label-as-property",
        ),
        (
            "Which house has the most heirs?",
            "MATCH (h:House) WITH h, count(h.heirs) AS heirCount ORDER BY heirCount DESC LIMIT 1 "
            "RETURN h.name AS house",
            [("House Tyrell of Highgarden",)],  # no property heirs: the relationship HEIR_TO
            "label-as-property",
        ),
    ],
    ids=[
        "a label counted, no relationship named",
        "a group of nothing first",
        "SQL's GROUP BY",
        "word order",
        "walked back through a named middle",
        "a relationship read as a property",
        "a relationship counted as a property",
    ],
)
def test_the_thrones_trials_questions_are_repaired(
    scratch_db: GraphDB, question: str, written: str, rows: list[tuple[object, ...]], rule: str
) -> None:
    _repaired_on(scratch_db, _THRONES, question, written, rows, rule)


# The foodmart trial's shapes (neo4j-examples/neo4j-foodmart-dataset's import, its CSV columns
# kept as text where the script keeps them): stores of a type with true/false departments and
# text dates, customers born on ISO dates written as text, products priced as text.
_FOODMART = (
    "CREATE (super:StoreType {name: 'Supermarket'}), (small:StoreType {name: 'Small Grocery'}), "
    "(:Store {name: 'Store 1', coffee_bar: false, florist: false, sqft: 23593, manager: 'Jones', "
    "last_remodel_date: '1990-12-05 00:00:00'})-[:OF_TYPE]->(super), "
    "(:Store {name: 'Store 2', coffee_bar: true, florist: true, sqft: 21244, manager: 'Smith', "
    "last_remodel_date: '1973-06-04 00:00:00'})-[:OF_TYPE]->(small), "
    "(:Store {name: 'Store 3', coffee_bar: true, florist: false, "
    "last_remodel_date: '1997-11-10 00:00:00'})-[:OF_TYPE]->(super), "
    "(:Customer {fullname: 'Sheri Nowmer', birthdate: '1961-08-26'}), "
    "(:Customer {fullname: 'Derrick Whelply', birthdate: '1915-07-03'}), "
    "(:Customer {fullname: 'Jeanne Derry', birthdate: '1915-07-03'}), "
    "(:Customer {fullname: 'Hershel Cerino', birthdate: '1980-12-24'}), "
    "(:Product {name: 'Washington Berry Juice', SRP: '2.8500'}), "
    "(:Product {name: 'Carlson Strawberry Yogurt', SRP: '3.9800'}), "
    "(:Product {name: 'Better Chicken Soup', SRP: '3.9800'}), "
    "(:Product {name: 'Washington Mango Drink', SRP: '0.7400'})"
)


@pytest.mark.parametrize(
    ("question", "written", "rows", "rule"),
    [
        (
            "Which stores have a coffee bar?",
            "MATCH (s:Store)-[:OF_TYPE]->(st:StoreType {name: 'Coffee Bar'}) "
            "RETURN s.name AS store ORDER BY store",
            [("Store 2",), ("Store 3",)],  # no store type is called so: the store's flag
            "value-is-a-flag",
        ),
        (
            "Who manages the largest store?",
            "MATCH (s:Store) ORDER BY s.sqft DESC LIMIT 1 RETURN s.manager AS manager",
            [("Jones", 23593)],  # refused by the engine: sorted before the RETURN
            "order-before-return",
        ),
        (
            "Which stores have a florist?",
            "MATCH (s:Store)-[:HAS]->(f:Florist) RETURN s.name AS store ORDER BY store",
            [("Store 2",)],  # no Florist label: having one is the flag being true
            "property-for-label",
        ),
        (
            "Which store was remodeled most recently?",
            "MATCH (s:Store)-[:LAST_REMODEL_DATE]->(d:Date) RETURN s.name AS store, d.date AS day "
            "ORDER BY day DESC LIMIT 1",
            [("Store 3", "1997-11-10 00:00:00")],  # no such relationship: the store's property
            "property-for-label",
        ),
        (
            "Who is the oldest customer?",
            "MATCH (c:Customer) RETURN c.fullname AS name, c.birthdate AS born "
            "ORDER BY born DESC LIMIT 1",
            [("Derrick Whelply", "1915-07-03"), ("Jeanne Derry", "1915-07-03")],  # ISO text
            "superlative-sort-direction",
        ),
        (
            "What is the most expensive product?",
            "MATCH (p:Product) RETURN p.name AS name, p.SRP AS price ORDER BY p.SRP DESC LIMIT 1",
            [("Carlson Strawberry Yogurt", "3.9800"), ("Better Chicken Soup", "3.9800")],
            "ties-shown",  # read as a number (numbers-as-text), two at the top price
        ),
    ],
    ids=[
        "a value that names a flag",
        "sorted before the RETURN",
        "a label that names a flag",
        "a relationship that names a property",
        "ISO dates as text",
        "ties of a price read as a number",
    ],
)
def test_the_foodmart_trials_questions_are_repaired(
    scratch_db: GraphDB, question: str, written: str, rows: list[tuple[object, ...]], rule: str
) -> None:
    _repaired_on(scratch_db, _FOODMART, question, written, rows, rule)


# The LOTR co-occurrence trial's shapes (neo4j-examples/cytoscape-graph-viz-lotr): characters of
# a race, places and groups, each mentioned `freqsum` times; a pair that appears together is
# one RELATED_TO, pointing whichever way the source listed it.
_LOTR = (
    "CREATE (frodo:Character {name: 'Frodo', race: 'hobbit', gender: 'male', freqsum: 2040}), "
    "(sam:Character {name: 'Sam', race: 'hobbit', gender: 'male', freqsum: 1400}), "
    "(arwen:Character {name: 'Arwen', race: 'elves', gender: 'female', freqsum: 51}), "
    "(gimli:Character {name: 'Gimli', race: 'dwarf', gender: 'male', freqsum: 403}), "
    "(gloin:Character {name: 'Gloin', race: 'dwarf', gender: 'male', freqsum: 52}), "
    "(shelob:Character {name: 'Shelob', race: 'animal', gender: 'female', freqsum: 40}), "
    "(mordor:Place {name: 'Mordor', freqsum: 265}), (shire:Place {name: 'Shire', freqsum: 411}), "
    "(elves:Group {name: 'Elves', race: 'elves', freqsum: 292}), "
    "(dwarves:Group {name: 'Dwarves', race: 'dwarf', freqsum: 122}), "
    "(frodo)-[:RELATED_TO {weight: 533}]->(sam), (frodo)-[:RELATED_TO {weight: 48}]->(mordor), "
    "(frodo)-[:RELATED_TO {weight: 45}]->(elves), "
    "(mordor)-[:RELATED_TO {weight: 34}]->(sam), (frodo)-[:RELATED_TO {weight: 104}]->(shire), "
    "(elves)-[:RELATED_TO {weight: 20}]->(gimli), (dwarves)-[:RELATED_TO {weight: 18}]->(gimli), "
    "(gimli)-[:RELATED_TO {weight: 24}]->(gloin), (gimli)-[:RELATED_TO {weight: 34}]->(frodo), "
    "(gimli)-[:RELATED_TO {weight: 19}]->(sam), (gloin)-[:RELATED_TO {weight: 9}]->(frodo), "
    "(shelob)-[:RELATED_TO {weight: 15}]->(sam), (sam)-[:RELATED_TO {weight: 5}]->(arwen)"
)


@pytest.mark.parametrize(
    ("question", "written", "rows", "rule"),
    [
        (
            "Which character is mentioned most often?",
            "MATCH (c:Character) RETURN c.name, count(*) AS freqsum ORDER BY freqsum DESC LIMIT 1",
            [("Frodo", 2040)],  # a count per character alone is 1: the number each stores
            "lone-node-counted",
        ),
        (
            "Which groups is Gimli related to?",
            "MATCH (c:Character {name: 'Gimli'})-[:RELATED_TO]->(g:Group) "
            "RETURN g.name AS name ORDER BY name",
            [("Dwarves",), ("Elves",)],  # each pair stored once, either way round
            "reciprocal-relationship",
        ),
        (
            "Which female characters are there?",
            "MATCH (c:Character {gender: 'female'}) RETURN count(c) AS female_characters",
            [("Arwen",), ("Shelob",)],  # a list asked, a count given
            "count-unasked",
        ),
        (
            "Which dwarf is related to the most characters?",
            "MATCH (c:Character {race: 'dwarf'})-[:RELATED_TO]-(c2:Character) "
            "RETURN c2.name, count(*) AS n ORDER BY n DESC LIMIT 1",
            [("Gimli", 3)],  # grouped by the other character: the dwarf asked about instead
            "which-names-the-thing",
        ),
        (
            "How many characters are related to both Frodo and Gimli?",
            "MATCH (f:Character {name: 'Frodo'})-[:RELATED_TO]-(c:Character)-[:RELATED_TO]-"
            "(g:Character {name: 'Gimli'}) RETURN count(DISTINCT f) AS n",
            [(2,)],  # Frodo counted (1): the character between them instead (Sam, Gloin)
            "named-node-counted",
        ),
        (
            "Which elf is mentioned least?",
            "MATCH (c:Character {race: 'elf'}) RETURN c.name AS name, c.freqsum AS n "
            "ORDER BY n LIMIT 1",
            [("Arwen", 51)],  # the race is stored in the plural
            "value-completed",
        ),
    ],
    ids=[
        "a count per node where it stores the number",
        "a reciprocal tie between two labels",
        "a value before the label",
        "the asked thing a value",
        "a named node counted",
        "a value in the other number",
    ],
)
def test_the_lotr_trials_questions_are_repaired(
    scratch_db: GraphDB, question: str, written: str, rows: list[tuple[object, ...]], rule: str
) -> None:
    _repaired_on(scratch_db, _LOTR, question, written, rows, rule)


# The conference-schedule trial's shapes (neo4j-examples/oscon-graph): speakers speak at events,
# each event at a venue and in categories, one category called "Events" and one event type
# "Event", the words a question says for the Event label.
_OSCON = (
    "CREATE (ada:Speaker {name: 'Ada'}), (bob:Speaker {name: 'Bob'}), "
    "(:Speaker {name: 'Cornelius'}), "
    "(ballroom:Venue {name: 'Ballroom'}), (d136:Venue {name: 'D136'}), "
    "(events:Category {name: 'Events'}), (keynotes:Category {name: 'Keynotes'}), "
    "(kids:Event {name: 'Kids Day', type: 'Event', time_start: '2014-07-20 10:00:00'}), "
    "(party:Event {name: 'Party', type: 'Event', time_start: '2014-07-23 19:00:00'}), "
    "(git:Event {name: 'Git Essentials', type: 'tutorial', time_start: '2014-07-20 09:00:00'}), "
    "(open:Event {name: 'Opening', type: 'Keynote', time_start: '2014-07-22 09:00:00'}), "
    "(dart:Event {name: 'Dart', type: 'session', time_start: '2014-07-23 17:00:00'}), "
    "(kids)-[:AT_VENUE]->(d136), (party)-[:AT_VENUE]->(ballroom), "
    "(git)-[:AT_VENUE]->(d136), (open)-[:AT_VENUE]->(ballroom), (dart)-[:AT_VENUE]->(d136), "
    "(kids)-[:HAS_CATEGORY]->(events), (party)-[:HAS_CATEGORY]->(events), "
    "(open)-[:HAS_CATEGORY]->(keynotes), (open)-[:HAS_CATEGORY]->(events), "
    "(ada)-[:SPEAKS_AT]->(git), (ada)-[:SPEAKS_AT]->(open), (bob)-[:SPEAKS_AT]->(dart)"
)


@pytest.mark.parametrize(
    ("question", "written", "rows", "rule"),
    [
        (
            "Which venue hosts the most events?",
            "MATCH (c:Category {name: 'Events'})<-[:HAS_CATEGORY]-(e:Event)-[:AT_VENUE]->"
            "(v:Venue) RETURN v.name AS venue, count(*) AS n ORDER BY n DESC LIMIT 1",
            [("D136", 3)],  # not the Ballroom, which hosts one of the category "Events"
            "label-word-as-value",
        ),
        (
            "What is the earliest event?",
            "MATCH (e:Event {type: 'Event'}) RETURN e.name AS name, e.time_start AS starts "
            "ORDER BY starts LIMIT 1",
            [("Git Essentials", "2014-07-20 09:00:00")],  # of every event, not of type "Event"
            "label-word-as-value",
        ),
        (
            "Which event starts first?",
            "MATCH (e:Event)-[:AT_VENUE]->(v:Venue) WHERE e.type = 'Event' "
            "RETURN e.name AS name, v.name AS venue ORDER BY e.time_start LIMIT 1",
            [("Git Essentials", "D136", "2014-07-20 09:00:00")],  # the WHERE's one comparison
            "label-word-as-value",
        ),
        (
            "Which category has the fewest events?",
            "MATCH (c:Category {name: 'Events'}) OPTIONAL MATCH (c)<-[:HAS_CATEGORY]-(e:Event) "
            "RETURN c.name AS category, count(e) AS n ORDER BY n LIMIT 1",
            [("Keynotes", 1)],  # the asked node's filter goes, the node stays
            "label-word-as-value",
        ),
        (
            "Which events are in both the Events and Keynotes categories?",
            "MATCH (c1:Category {name: 'Events'})<-[:HAS_CATEGORY]-(e:Event) "
            "MATCH (c2:Category {name: 'Keynotes'})<-[:HAS_CATEGORY]-(e) "
            "WHERE c1.name = c2.name RETURN e.name AS name",
            [("Opening",)],  # two names that are never equal: nothing came back
            "pins-compared",
        ),
        (
            "Which speaker has the longest name?",
            "MATCH (s:Speaker) RETURN s.name AS name ORDER BY length(s.name) DESC LIMIT 1",
            [("Cornelius",)],  # the engine refuses `length` of a string
            "length-of-text",
        ),
        (
            "Which event has the longest title?",
            "MATCH (e:Event) ORDER BY size(e.name) DESC LIMIT 1",
            [("Git Essentials",)],  # no RETURN, sorted by a function of the name
            "missing-return",
        ),
        (
            "Which events have no speaker?",
            "MATCH (c:Category {name: 'Events'})<-[:HAS_CATEGORY]-(e:Event)<-[:SPEAKS_AT]-"
            "(s:Speaker) WHERE s IS NULL RETURN e.name AS name ORDER BY name",
            [("Kids Day",), ("Party",)],  # a matched speaker is never missing
            "absent-link",
        ),
    ],
    ids=[
        "a category named as the label",
        "a type named as the label",
        "a type compared in the where",
        "the asked node named as the label",
        "two names compared",
        "the length of a text",
        "no return, sorted by a measure",
        "a missing end",
    ],
)
def test_the_conference_trials_questions_are_repaired(
    scratch_db: GraphDB, question: str, written: str, rows: list[tuple[object, ...]], rule: str
) -> None:
    _repaired_on(scratch_db, _OSCON, question, written, rows, rule)


def test_a_label_word_beside_a_stored_value_describes_and_names_nothing(
    scratch_db: GraphDB,
) -> None:
    """ "Who are the keynote speakers?" is asked of speakers: the category called "Keynotes"
    is no speaker's name, so no card of it answers (the trial's answer was the category's
    card); the statement is read."""
    scratch_db.run_write(_OSCON)
    result = _ask(
        scratch_db,
        "Who are the keynote speakers?",
        "MATCH (c:Category {name: 'Keynotes'})<-[:HAS_CATEGORY]-(e:Event)<-[:SPEAKS_AT]-"
        "(s:Speaker) RETURN DISTINCT s.name AS name ORDER BY name",
    )
    assert result.outcome == "answered" and result.tool is None
    assert [tuple(row) for row in result.rows] == [("Ada",)]


# The cloud-infrastructure trial's shapes (neo4j-examples/graphgists, mdm/aws-infrastructure):
# regions offer services; a Price is what one region charges for one EC2 instance type; an
# instance type's family is stored as text ending in "instances" for two of the families.
_CLOUD = (
    "CREATE (oregon:Region {name: 'Oregon'}), (tokyo:Region {name: 'Tokyo'}), "
    "(beijing:Region {name: 'Beijing'}), (asia:Continent {name: 'Asia'}), "
    "(tokyo)-[:IS_LOCATED_IN]->(asia), (beijing)-[:IS_LOCATED_IN]->(asia), "
    "(oregon)-[:IS_LOCATED_IN]->(:Continent {name: 'North America'}), "
    "(ec2:Service {name: 'EC2'}), (s3:Service {name: 'S3'}), (redshift:Service {name: 'Redshift'}), "
    "(oregon)-[:OFFERS_SERVICE]->(ec2), (oregon)-[:OFFERS_SERVICE]->(s3), "
    "(oregon)-[:OFFERS_SERVICE]->(redshift), (tokyo)-[:OFFERS_SERVICE]->(ec2), "
    "(tokyo)-[:OFFERS_SERVICE]->(redshift), (beijing)-[:OFFERS_SERVICE]->(ec2), "
    "(small:EC2InstanceType {name: 'm1.small', family: 'general purpose', memory: 1.7}), "
    "(big:EC2InstanceType {name: 'cr1.8xlarge', family: 'Memory optimized', memory: 244}), "
    "(gpu:EC2InstanceType {name: 'g2.2xlarge', family: 'GPU instances', memory: 15}), "
    "(small)-[:IS_EC2_INSTANCE_TYPE]->(ec2), (big)-[:IS_EC2_INSTANCE_TYPE]->(ec2), "
    "(gpu)-[:IS_EC2_INSTANCE_TYPE]->(ec2), "
    "(oregon)-[:CHARGES]->(:Price {cost_per_hour: 0.06})-[:FOR_INSTANCE]->(small), "
    "(tokyo)-[:CHARGES]->(:Price {cost_per_hour: 0.09})-[:FOR_INSTANCE]->(small), "
    "(oregon)-[:CHARGES]->(:Price {cost_per_hour: 3.5})-[:FOR_INSTANCE]->(big), "
    "(tokyo)-[:CHARGES]->(:Price {cost_per_hour: 4.1})-[:FOR_INSTANCE]->(big)"
)


@pytest.mark.parametrize(
    ("question", "written", "rows", "rule"),
    [
        (
            "Which services are not offered in Beijing?",
            "MATCH (r:Region {name: 'Beijing'})-[:OFFERS_SERVICE]->(s:Service) "
            "RETURN s.name AS name ORDER BY name",
            [("Redshift",), ("S3",)],  # not the one Beijing offers
            "negation-unwritten",
        ),
        (
            "Which services are offered in Oregon but not in Tokyo?",
            "MATCH (r:Region {name: 'Oregon'})-[:OFFERS_SERVICE]->(s:Service) "
            "OPTIONAL MATCH (r:Region {name: 'Tokyo'})-[:OFFERS_SERVICE]->(s) "
            "WHERE s IS NOT NULL AND r.name <> 'Tokyo' RETURN s.name AS name ORDER BY name",
            [("S3",)],  # the OPTIONAL MATCH filtered nothing: all three came back
            "negation-unwritten",
        ),
        (
            "Which services does Tokyo not offer?",
            "MATCH (r:Region {name: 'Tokyo'})-[:OFFERS_SERVICE]->(s:Service) "
            "WHERE NOT s.name IS NOT NULL RETURN s.name AS name ORDER BY name",
            [("S3",)],  # a null test of the service: nothing came back
            "negation-unwritten",
        ),
        (
            "Which services are offered in Oregon but not in Tokyo?",
            "MATCH (r:Region {name: 'Oregon'})-[:OFFERS_SERVICE]->(s:Service), "
            "(r2:Region {name: 'Tokyo'})-[:OFFERS_SERVICE]->(s) WHERE r2.name IS NULL "
            "RETURN s.name AS name",
            [("S3",)],  # Tokyo matched and tested for null: nothing came back
            "negation-unwritten",
        ),
        (
            "Which regions are not in Asia?",
            "MATCH (r:Region) WHERE r.name <> 'Asia' RETURN r.name AS name ORDER BY name",
            [("Oregon",)],  # every region came back: no region is called Asia
            "value-denied-next-door",
        ),
        (
            "Which memory optimized instance has the least memory?",
            "MATCH (e:EC2InstanceType {family: 'Memory optimized'}) "
            "RETURN e.memory AS memory ORDER BY memory LIMIT 1",
            [("cr1.8xlarge", 244)],  # "instance" says EC2InstanceType: the one named
            "which-names-the-thing",
        ),
        (
            "What does a cr1.8xlarge cost per hour in Tokyo?",
            "MATCH (r:Region {name: 'Tokyo'})-[:OFFERS_SERVICE]->(s:Service)"
            "<-[:IS_EC2_INSTANCE_TYPE]-(e:EC2InstanceType {name: 'cr1.8xlarge'}) "
            "RETURN e.cost_per_hour AS cost",
            [(4.1,)],  # Tokyo's price, not Oregon's too
            "property-through-neighbour",
        ),
        (
            "What is the most expensive instance in Oregon?",
            "MATCH (r:Region {name: 'Oregon'})-[:CHARGES]->(p:Price)-[:FOR_INSTANCE]->"
            "(e:EC2InstanceType) RETURN p.cost_per_hour AS cost ORDER BY cost DESC LIMIT 1",
            [("cr1.8xlarge", 3.5)],  # the instance named, not the price alone
            "which-names-the-thing",
        ),
        (
            "Which EC2 instance type has the most memory?",
            "MATCH (e:EC2InstanceType) RETURN e.memory AS memory ORDER BY memory DESC LIMIT 1",
            [("cr1.8xlarge", 244)],  # "EC2 instance type" says the label EC2InstanceType
            "which-names-the-thing",
        ),
    ],
    ids=[
        "a denied link",
        "but not, as an optional match",
        "a denied link tried as a null test",
        "the denied node tested for null",
        "a continent compared with a region's name",
        "which instance, by the last word of its label",
        "a price between a region and an instance",
        "a superlative on the instance's price",
        "a label with a number in its name",
    ],
)
def test_the_cloud_trials_questions_are_repaired(
    scratch_db: GraphDB, question: str, written: str, rows: list[tuple[object, ...]], rule: str
) -> None:
    _repaired_on(scratch_db, _CLOUD, question, written, rows, rule)


def test_a_value_met_only_through_a_labels_words_is_no_hint(scratch_db: GraphDB) -> None:
    """ "Which EC2 instance type has the most memory?" shares only "instance" (a word of the
    label's name) with the family "GPU instances": the trial's model pinned that family from
    the hint. A question that says the family gets it."""
    scratch_db.run_write(_CLOUD)
    written = "MATCH (e:EC2InstanceType) RETURN e.name AS name, e.memory AS memory"
    shown = []
    for question in (
        "Which EC2 instance type has the most memory?",
        "Which GPU instances are there?",
    ):
        model = ScriptedChatModel(
            replies=[guard_reply(), cypher_reply(written), evaluation_reply(answer="ok")]
        )
        _agent(scratch_db, model).run(question)
        shown.append("GPU instances" in model.prompts[1])
    assert shown == [False, True]


# The competence-management trial's shapes (neo4j-examples/graphgists, recommendation/
# Competence_Management): employees work as a role now and worked as others before, each
# with how many years on the relationship; they endorse skills at a level.
_COMPETENCE = (
    "CREATE (one:Employee {name: 'Employee 1'}), (two:Employee {name: 'Employee 2'}), "
    "(four:Employee {name: 'Employee 4'}), "
    "(r1:Role {name: 'Role 1'}), (r4:Role {name: 'Role 4'}), (r6:Role {name: 'Role 6'}), "
    "(one)-[:WORKS_AS {duration: 2}]->(r1), (two)-[:WORKS_AS {duration: 3}]->(r1), "
    "(four)-[:WORKS_AS {duration: 1}]->(r4), (four)-[:WORKED_AS {duration: 5}]->(r6), "
    "(skill:Personal_Skill {name: 'Personal Skill 1'}), "
    "(two)-[:ENDORSES {level: 4.0}]->(skill), (four)-[:ENDORSES {level: 2.0}]->(skill)"
)


def test_a_relationships_number_read_as_a_chain_is_read_from_the_relationship(
    scratch_db: GraphDB,
) -> None:
    """ "Which employee has worked in their current role the longest?" written with
    `e.works_as.duration`: WORKS_AS holds the years (WORKED_AS, the role before, is a
    look-alike), so the relationship is matched and read; the trial's statement wrote
    `worked_as` and was declined twice for a property nothing has."""
    _repaired_on(
        scratch_db,
        _COMPETENCE,
        "Which employee has worked in their current role the longest?",
        "MATCH (e:Employee) RETURN e.name AS employee, e.works_as.duration AS years "
        "ORDER BY years DESC LIMIT 1",
        [("Employee 2", 3)],
        "label-as-property",
    )


def test_a_noun_of_a_relationships_verb_is_no_missing_data(scratch_db: GraphDB) -> None:
    """ "What is the average endorsement level …?" was declined on the trial ("The graph has no
    data on endorsement") twice, although ENDORSES holds the level: the word is ENDORSES's
    noun, so the same wrong statement written twice is no reason to stop: the third, right,
    is read."""
    scratch_db.run_write(_COMPETENCE)
    question = "What is the average endorsement level for Personal Skill 1?"
    wrong = (
        "MATCH (s:Personal_Skill {name: 'Personal Skill 1'})<-[:HAS_SKILL]-(e:Employee) "
        "RETURN avg(e.endorsement) AS level"
    )
    right = (
        "MATCH (e:Employee)-[r:ENDORSES]->(s:Personal_Skill {name: 'Personal Skill 1'}) "
        "RETURN avg(r.level) AS level"
    )
    model = ScriptedChatModel(
        replies=[
            guard_reply(),
            cypher_reply(wrong),
            cypher_reply(wrong),
            cypher_reply(right),
            evaluation_reply(answer="ok"),
        ]
    )
    result = _agent(scratch_db, model).run(question)
    assert result.outcome == "answered", result.answer
    assert [tuple(row) for row in result.rows] == [(3.0,)]


def test_a_topic_word_a_glued_name_holds_is_asked(scratch_db: GraphDB) -> None:
    """ "password" is a general topic (declined before the model on a graph without the word);
    `pwdlastset` holds its short form, so the question is the graph's."""
    scratch_db.run_write(_DIRECTORY)
    result = _ask(
        scratch_db,
        "Which user changed their password longest ago?",
        "MATCH (u:User) RETURN u.name AS name ORDER BY u.pwdlastset LIMIT 1",
    )
    assert result.outcome == "answered", result.answer
    assert [tuple(row) for row in result.rows] == [("ANA@CORP.LOCAL", 1609388917)]


# The books and drugs trials' shapes (graphgists uc-search/books and medical/DoctorFinder, as
# their setup writes them): books in genres, some in a series, set in places, written by people
# called by a name and a surname, two made into films, no year on a book (a Time node holds
# it); specialisations that may prescribe drug classes, one class prescribed by none, two
# curing asthma at ages held on CURES, drugs in classes.
_SHELVES = (
    "CREATE (hp:Book {title: 'Harry Potter'}), (thief:Book {title: 'The Book Thief'}), "
    "(tom:Book {title: 'Tom Sawyer'}), (hp)-[:IS_PART_OF]->(:BookSeries {title: 'Harry Potter'}), "
    "(fiction:Genre {name: 'fiction'}), (hp)-[:OF_TYPE]->(fiction), "
    "(thief)-[:OF_TYPE]->(fiction), (tom)-[:OF_TYPE]->(:Genre {name: 'novel'}), "
    "(hp)-[:WHERE_ACTION]->(:Place {cityName: 'London'}), "
    "(thief)-[:WHERE_ACTION]->(:Place {country: 'Germany'}), "
    "(hp)-[:WHEN_PUBLISHED]->(:Time {year: '1997'}), "
    "(hp)-[:WRITTEN_BY]->(:Person {name: 'J. K.', surname: 'Rowling'}), "
    "(tom)-[:WRITTEN_BY]->(:Person {name: 'Mark', surname: 'Twain'}), "
    "(thief)-[:WRITTEN_BY]->(:Person {name: 'Markus', surname: 'Zusak'}), "
    "(hp)-[:MADE_INTO]->(:Movie {title: 'Harry Potter'}), "
    "(thief)-[:MADE_INTO]->(:Movie {title: 'The Book Thief'}), "
    "(cort:DrugClass {name: 'Corticosteroids'}), (bron:DrugClass {name: 'Bronchodilators'}), "
    "(:DrugClass {name: 'Xanthine'}), "
    "(:DoctorSpecialization {name: 'Physician'})-[:CAN_PRESCRIBE]->(cort), "
    "(:DoctorSpecialization {name: 'Angiologist'})-[:CAN_PRESCRIBE]->(bron), "
    "(asthma:Pathology {name: 'Asthma'}), "
    "(cort)-[:CURES {age_min: 5, age_max: 18}]->(asthma), "
    "(bron)-[:CURES {age_min: 18, age_max: 60}]->(asthma), "
    "(:Drug {name: 'Budesonide'})-[:BELONGS_TO_CLASS]->(cort), "
    "(:Drug {name: 'Salbutamol'})-[:BELONGS_TO_CLASS]->(bron), "
    "(:Drug {name: 'Formoterol'})-[:BELONGS_TO_CLASS]->(bron)"
)


@pytest.mark.parametrize(
    ("question", "written", "rows", "rule"),
    [
        (
            "Which books take place in London?",
            "MATCH (p:Place {cityName: 'London'})<-[:WHERE_ACTION]-(b:Book) "
            "RETURN b.title AS title ORDER BY b.year DESC",
            [("Harry Potter",)],  # refused by the schema check, sent back unchanged
            "sort-unasked",
        ),
        (
            "Which books are fiction?",
            "MATCH (g:Genre {name: 'fiction'})<-[:OF_TYPE]-(b:Book)-[:IS_PART_OF]->"
            "(s:BookSeries) RETURN b.title AS title ORDER BY title",
            [("Harry Potter",), ("The Book Thief",)],  # only the one in a series came back
            "unasked-hop",
        ),
        (
            "Which books did Mark Twain write?",
            "MATCH (b:Book)-[:WRITTEN_BY]->(p:Person {name: 'Mark Twain'}) RETURN b.title AS title",
            [("Tom Sawyer",)],  # nobody's name is the whole name: nothing came back
            "value-property",
        ),
        (
            "Which drug classes are not prescribed by any specialization?",
            "MATCH (d:DoctorSpecialization)-[:CAN_PRESCRIBE]->(c:DrugClass) "
            "WHERE NOT (c)<-[:CAN_PRESCRIBE]-(d) RETURN c.name AS name",
            [("Xanthine",)],  # matched and denied the other way round: nothing came back
            "negation-contradicted",
        ),
        (
            "Which drug classes are not prescribed by any specialization?",
            "MATCH (d:DoctorSpecialization)-[:CAN_PRESCRIBE]->(c:DrugClass) "
            "WHERE NOT (c)-[:MAY_PRESCRIBE]->(d) RETURN c.name AS name",
            [("Xanthine",)],  # the denied type invented: the denial seen once it is put right
            "negation-contradicted",
        ),
        (
            "Which drug classes can treat asthma?",
            "MATCH (p:Pathology {name: 'Asthma'})<-[:CURES]-(d:DrugClass)<-[:BELONGS_TO_CLASS]-"
            "(d2:Drug) RETURN DISTINCT d2.name AS name",
            [("Bronchodilators",), ("Corticosteroids",)],  # not the drugs of the classes
            "asked-label-returned",
        ),
        (
            "Which books were written by J. K. Rowling and made into a movie?",
            "MATCH (b:Book)-[:WRITTEN_BY]->(p:Person {name: 'J. K.', surname: 'Rowling'})"
            "-[:MADE_INTO]->(m:Movie) RETURN b.title AS title",
            [("Harry Potter",)],  # the film's hop chained from the person: refused twice
            "hop-on-its-node",
        ),
        (
            "Which books were not made into a movie?",
            "MATCH (b:Book)-[:MADE_INTO]->(m:Movie) RETURN b.title AS title",
            [("Tom Sawyer",)],  # the two that were made into one came back
            "absent-link",
        ),
    ],
    ids=[
        "a sort on a year no book holds",
        "a hop to a series nobody asked for",
        "a whole name over a name and a surname",
        "a denial written the other way round",
        "a denial of an invented type",
        "the classes asked, not their drugs",
        "a hop chained from the wrong node",
        "not made into a movie",
    ],
)
def test_the_books_and_drugs_trials_questions_are_repaired(
    scratch_db: GraphDB, question: str, written: str, rows: list[tuple[object, ...]], rule: str
) -> None:
    _repaired_on(scratch_db, _SHELVES, question, written, rows, rule)


def test_a_whole_name_held_over_two_properties_is_named_so_though_nothing_matches(
    scratch_db: GraphDB,
) -> None:
    # A playground follow-up on the books trial: 'Mark Twain' found nothing, and a close
    # stored value was then chosen for it ('Markus', another author), which found rows.
    scratch_db.run_write(_SHELVES)
    result = _ask(
        scratch_db,
        "Which books were written by Mark Twain and made into a movie?",
        "MATCH (b:Book)-[:WRITTEN_BY]->(p:Person {name: 'Mark Twain'}), "
        "(b)-[:MADE_INTO]->(m:Movie) RETURN b.title AS title",
    )
    assert result.outcome == "no_data" and result.rows == []
    assert result.cypher is not None and "{name: 'Mark', surname: 'Twain'}" in result.cypher
    assert [f.rule for f in result.rules_fired if f.phase is Phase.EXECUTE] == ["value-property"]


# The drug classification trial's shape (graphgists medical/central_hospital_of_asturias, as its
# setup writes it): a national classifier of anatomic areas, the mechanisms of action in each, their active ingredients,
# each ingredient's posologies (a code and a name), each posology's specialities.
_FORMULARY = (
    "CREATE (c:AnatomicFunctionalArea {code: 'C', name: 'Cardiovascular system'}), "
    "(b:AnatomicFunctionalArea {code: 'B', name: 'Blood and blood-forming organs'}), "
    "(atc:NationalClassifier {name: 'ATC'}), (atc)-[:HAS_ANATOMIC_FUNCTIONAL_AREA]->(c), "
    "(atc)-[:HAS_ANATOMIC_FUNCTIONAL_AREA]->(b), "
    "(c)-[:MECHANISM_OF_ACTION]->(m3:MechanismOfAction {name: 'Antiarrhythmics. Class III'}), "
    "(b)-[:MECHANISM_OF_ACTION]->(mb:MechanismOfAction "
    "{name: 'Antithrombotic:Heparin and derivatives'}), "
    "(m3)-[:HAS_ACTIVE_INGREDIENT]->(dr:ActiveIngredient {name: 'Dronedarone'}), "
    "(mb)-[:HAS_ACTIVE_INGREDIENT]->(bm:ActiveIngredient {name: 'Bemiparina'}), "
    "(mb)-[:HAS_ACTIVE_INGREDIENT]->(:ActiveIngredient {name: 'Dalteparin'}), "
    "(dr)-[:HAS_POSOLOGY]->(d4:Posology {code: 'A01201', name: 'Dronedarone 400 mg tablets'}), "
    "(bm)-[:HAS_POSOLOGY]->(b3:Posology {code: 'A00336', name: 'Bemiparina 3500 UI'}), "
    "(bm)-[:HAS_POSOLOGY]->(:Posology {code: 'A00337', name: 'Bemiparina 5000 UI'}), "
    "(d4)-[:HAS_PHARMACEUTICAL_SPECIALITY]->(:PharmaceuticalSpeciality "
    "{name: 'Multaq 60 tablets', price: '105'}), "
    "(b3)-[:HAS_PHARMACEUTICAL_SPECIALITY]->(:PharmaceuticalSpeciality "
    "{name: 'Hibor 3500 UI', price: '160'})"
)


@pytest.mark.parametrize(
    ("question", "written", "rows", "rule"),
    [
        (
            "Which anatomic functional area does Multaq 60 tablets belong to?",
            "MATCH (a:AnatomicFunctionalArea)-[r:HAS_ANATOMIC_FUNCTIONAL_AREA]->"
            "(p:PharmaceuticalSpeciality {name: 'Multaq 60 tablets'}) RETURN a.name AS name",
            [("Cardiovascular system",)],  # a type of no road, four hops apart: refused twice
            "relationship-road",
        ),
        (
            "Which posologies does Bemiparina have?",
            "MATCH (a:ActiveIngredient {name: 'Bemiparina'})-[:HAS_POSOLOGY]->(p:Posology) "
            "RETURN p.code AS code ORDER BY code",
            [("Bemiparina 3500 UI", "A00336"), ("Bemiparina 5000 UI", "A00337")],  # codes alone
            "which-names-the-thing",
        ),
        (
            "What is the most expensive pharmaceutical speciality in the blood and blood-forming "
            "organs area?",
            "MATCH (a:AnatomicFunctionalArea {name: 'Blood and blood-forming organs'})"
            "<-[:HAS_ANATOMIC_FUNCTIONAL_AREA]-(n:NationalClassifier) WHERE n.price IS NOT NULL "
            "RETURN n.price ORDER BY n.price DESC LIMIT 1",
            [("160",)],  # the classifier holds no price: refused twice
            "asked-label-holds-it",
        ),
    ],
    ids=[
        "a road four hops long",
        "the codes of the posologies, not their names",
        "a price read from a node that has none",
    ],
)
def test_the_formulary_trials_questions_are_repaired(
    scratch_db: GraphDB, question: str, written: str, rows: list[tuple[object, ...]], rule: str
) -> None:
    _repaired_on(scratch_db, _FORMULARY, question, written, rows, rule)


def test_a_lower_case_word_beside_its_label_is_a_value_hint(scratch_db: GraphDB) -> None:
    # The formulary trial: "the antithrombotic mechanism of action" was no value hint (a word in
    # lower case is a word), and the model listed every mechanism's ingredients; shown the
    # value, the local model filtered on it in one call.
    scratch_db.run_write(_FORMULARY)
    question = "What are the active ingredients of the antithrombotic mechanism of action?"
    filtered = (
        "MATCH (m:MechanismOfAction {name: 'Antithrombotic:Heparin and derivatives'})"
        "-[:HAS_ACTIVE_INGREDIENT]->(a:ActiveIngredient) RETURN a.name AS name ORDER BY name"
    )
    model = ScriptedChatModel(
        replies=[guard_reply(), cypher_reply(filtered), evaluation_reply(answer="ok")]
    )
    result = _agent(scratch_db, model).run(question)
    generate = next(p for p in model.prompts if "MechanismOfAction" in p)
    hint = '(:MechanismOfAction {name: "Antithrombotic:Heparin and derivatives"})'
    assert hint in generate, generate
    assert result.rows == [["Bemiparina"], ["Dalteparin"]]


# The bank-fraud trial's shape (graphgists fraud/bank-fraud-detection, as its setup writes it):
# account holders called by a first and a last name, two holding unsecured loans with an APR.
_RING = (
    "CREATE (jane:AccountHolder {FirstName: 'Jane', LastName: 'Appleseed', UniqueId: 'JaneA'}), "
    "(matt:AccountHolder {FirstName: 'Matt', LastName: 'Smith', UniqueId: 'MattSmith'}), "
    "(:AccountHolder {FirstName: 'John', LastName: 'Doe', UniqueId: 'JohnDoe'}), "
    "(jane)-[:HAS_UNSECUREDLOAN]->(:UnsecuredLoan {AccountNumber: '4567-0', APR: 0.0541, "
    "LoanAmount: 12000.0}), "
    "(matt)-[:HAS_UNSECUREDLOAN]->(:UnsecuredLoan {AccountNumber: '5678-0', APR: 0.0341, "
    "LoanAmount: 22000.0})"
)


@pytest.mark.parametrize(
    ("question", "written", "rows", "rule"),
    [
        (
            "Who has the largest unsecured loan?",
            "MATCH (ah:AccountHolder)-[:HAS_UNSECUREDLOAN]->(ul:UnsecuredLoan) "
            "RETURN ul.AccountNumber, ul.LoanAmount ORDER BY ul.LoanAmount DESC LIMIT 1",
            [("Matt", "Smith", "5678-0", 22000.0)],  # the loan came back, not its holder
            "which-names-the-thing",
        ),
        (
            "Who has the lowest APR?",
            "MATCH (ah:AccountHolder)-[:HAS_UNSECUREDLOAN]->(ul:UnsecuredLoan) "
            "RETURN ul.APR ORDER BY ul.APR ASC LIMIT 1",
            [("Matt", "Smith", 0.0341)],  # unasked-hop had dropped the holder: the APR alone
            "which-names-the-thing",
        ),
    ],
    ids=["the loan, not its holder", "the holder kept for a who"],
)
def test_the_bank_fraud_trials_questions_are_repaired(
    scratch_db: GraphDB, question: str, written: str, rows: list[tuple[object, ...]], rule: str
) -> None:
    _repaired_on(scratch_db, _RING, question, written, rows, rule)


# A Yellowstone food web's shapes (neo4j-examples/graphgists uc-search/yellowstone-gist):
# animals called by an `Entity`, in a `Group`; who preys on whom; what a beaver pond is a
# habitat for. And a learning graph's (mdm/Organizational_learning): every course is also a
# web or a classroom course, one node with two labels.
_FOOD_WEB = (
    "CREATE (wolf:Animal {Entity: 'Wolves', Group: 'Mammal'}), "
    "(deer:Animal {Entity: 'Deers', Group: 'Mammal'}), "
    "(coyote:Animal {Entity: 'Coyotes', Group: 'Mammal'}), "
    "(rabbit:Animal {Entity: 'Rabbits', Group: 'Mammal'}), "
    "(bear:Animal {Entity: 'Bears', Group: 'Mammal'}), "
    "(duck:Animal {Entity: 'Ducks', Group: 'Bird'}), "
    "(otter:Animal {Entity: 'River Otters', Group: 'Mammal'}), "
    "(fish:Animal {Entity: 'Fishes', Group: 'Fish'}), "
    "(pond:Landscape {Entity: 'Beaver Ponds'}), "
    "(wolf)-[:PREY_ON]->(deer), (wolf)-[:PREY_ON]->(coyote), (wolf)-[:PREY_ON]->(rabbit), "
    "(coyote)-[:PREY_ON]->(rabbit), (bear)-[:PREY_ON]->(deer), "
    "(pond)-[:HABITAT_FOR]->(duck), (pond)-[:HABITAT_FOR]->(otter), (pond)-[:HABITAT_FOR]->(fish)"
)
_COURSES = (
    "CREATE (c1:Course:Classroom {name: 'Course1'}), (c2:Course:Web {name: 'Course2'}), "
    "(c3:Course:Classroom {name: 'Course3'}), (c4:Course:Web {name: 'Course4'}), "
    "(:LearningItem {name: 'LearningItem1'})-[:FULFILLED_BY]->(c1), "
    "(:LearningItem {name: 'LearningItem2'})-[:FULFILLED_BY]->(c2), "
    "(:LearningItem {name: 'LearningItem3'})-[:FULFILLED_BY]->(c3), "
    "(:LearningItem {name: 'LearningItem4'})-[:FULFILLED_BY]->(c4), "
    "(cert1:Certification {name: 'Cert1'}), (cert2:Certification {name: 'Cert2'}), "
    "(cert3:Certification {name: 'Cert3'}), "
    "(cert2)-[:IS_PREREQUISITE]->(cert1), (cert1)-[:IS_PREREQUISITE]->(cert3), "
    "(pos1:Position {name: 'Position1'})-[:REQUIRES]->(cert2), "
    "(pos2:Position {name: 'Position2'})-[:REQUIRES]->(cert1), "
    "(:Person {name: 'Person1'})-[:HOLDS_POSITION]->(pos1), "
    "(:Person {name: 'Person2'})-[:HOLDS_POSITION]->(pos2), "
    "(p3:Person {name: 'Person3'})-[:HOLDS_POSITION]->(pos2), "
    "(p3)-[:COMPLETED]->(c1)"
)


@pytest.mark.parametrize(
    ("graph", "question", "written", "rows", "rule"),
    [
        (
            _FOOD_WEB,
            "Which animal preys on the most animals?",
            "MATCH (a:Animal)-[r:PREY_ON]->(p:Animal) "
            "RETURN p.Entity AS prey, count(r) AS prey_count ORDER BY prey_count DESC LIMIT 1",
            [("Wolves", 3)],  # the prey preyed on by the most (deer and rabbits, two each)
            "which-names-the-thing",
        ),
        (
            _FOOD_WEB,
            "Which mammals live in beaver ponds?",
            "MATCH (l:Landscape {Entity: 'Beaver Ponds'})-[:HABITAT_FOR]->"
            "(a:Animal {Group: 'Mammal'}) RETURN DISTINCT a.Group AS Group_",
            [("River Otters",)],  # 'Mammal', the value the statement filters on
            "which-names-the-thing",
        ),
        (
            _COURSES,
            "Which courses are web courses?",
            "MATCH (c:Course)-[:FULFILLED_BY]->(w:Web) RETURN c.name ORDER BY c.name",
            [("Course2",), ("Course4",)],  # relationship-road's course-item-course road: none
            "one-node-two-labels",
        ),
        (
            _COURSES,
            "How many people hold a position?",
            "MATCH (p:Person)-[:HOLDS_POSITION]->(p2:Position) "
            "RETURN count(DISTINCT p2.name) AS number_of_people_holding",
            [(3,)],  # the two positions counted
            "counted-other-label",
        ),
        (
            _COURSES,
            "Which certification is Cert2 a prerequisite for?",
            "MATCH (c:Certification {name: 'Cert2'})<-[:IS_PREREQUISITE]-(c2:Certification) "
            "RETURN c2.name",
            [("Cert1",)],  # Cert2's own prerequisite: none
            "relationship-word-order",
        ),
        (
            _COURSES,
            "Which courses has nobody completed?",
            "MATCH (p:Person)-[:COMPLETED]->(c:Course) WHERE c.name IS NULL RETURN c.name",
            [("Course2",), ("Course3",), ("Course4",)],  # a matched course's name is never null
            "absent-link",
        ),
    ],
    ids=[
        "the predator, not the prey",
        "the mammals, not their group",
        "one node, two labels",
        "the people counted, not their positions",
        "a prerequisite for, said apart",
        "nobody",
    ],
)
def test_the_food_web_and_learning_trials_questions_are_repaired(
    scratch_db: GraphDB,
    graph: str,
    question: str,
    written: str,
    rows: list[tuple[object, ...]],
    rule: str,
) -> None:
    _repaired_on(scratch_db, graph, question, written, rows, rule)


def test_a_follow_up_answered_by_the_statement_before_it_gets_one_correction(
    scratch_db: GraphDB,
) -> None:
    # The playground thread on the food web: "what do they eat?" came back as the same animals.
    scratch_db.run_write(
        _FOOD_WEB + ", (fish)-[:FOOD_FOR]->(otter), (:Plant {Entity: 'Willow'})-[:FOOD_FOR]->(duck)"
    )
    before = (
        "MATCH (l:Landscape {Entity: 'Beaver Ponds'})-[:HABITAT_FOR]->(a:Animal) "
        "RETURN a.Entity AS Entity ORDER BY Entity"
    )
    history = [
        Turn(
            question="Which animals live in beaver ponds?",
            standalone_question="Which animals live in beaver ponds?",
            cypher=before + "\nLIMIT 100",
            answer="Ducks, Fishes and River Otters.",
        )
    ]
    standalone = "What do the animals living in beaver ponds eat?"
    eaten = (
        "MATCH (l:Landscape {Entity: 'Beaver Ponds'})-[:HABITAT_FOR]->(a:Animal)"
        "<-[:FOOD_FOR]-(f) RETURN a.Entity AS eater, f.Entity AS food ORDER BY eater"
    )
    model = ScriptedChatModel(
        replies=[
            guard_reply(standalone=standalone),
            cypher_reply(before),
            cypher_reply(eaten),
            evaluation_reply(answer="ok"),
        ]
    )
    result = _agent(scratch_db, model).run("what do they eat?", history=history)
    assert [a.stage for a in result.attempts] == ["previous_again", "ok"]
    assert 'this question asks something else ("What do the animals' in model.prompts[2]
    assert [tuple(r) for r in result.rows] == [("Ducks", "Willow"), ("River Otters", "Fishes")]
    assert "previous-statement-again" in [f.rule for f in result.rules_fired]
