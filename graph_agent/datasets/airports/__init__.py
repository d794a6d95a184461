"""European air routes, from neo4j-graph-examples/airport-routes: airports, cities, regions, countries."""

from __future__ import annotations

from typing import Any

from graph_agent.datasets.loading import GraphWriter, Kind, Progress, Rel, read_csv
from graph_agent.graphdb.protocol import GraphDB

PACKAGE = "graph_agent.datasets.airports"
PROBE = "MATCH (a:Airport {iata: 'LHR'})-[:HAS_ROUTE]->(:Airport) RETURN count(a)"
"""Returns a positive count when the air-routes graph is loaded."""

KINDS = {
    "id": Kind.INT,
    "runways": Kind.INT,
    "longest": Kind.INT,
    "altitude": Kind.INT,
    "lat": Kind.FLOAT,
    "lon": Kind.FLOAT,
    "dist": Kind.INT,
}
FULLTEXT = (("Airport", "descr"), ("City", "name"))
# Nodes plus relationships, roughly; it only drives the progress bar.
_ESTIMATE = 19300


def _pairs(airports: list[dict[str, Any]], start: str, end: str) -> list[Rel]:
    """Distinct (start value, end value) pairs: a city with two airports is linked once."""
    seen = dict.fromkeys((a[start], a[end]) for a in airports if start in a and end in a)
    return [Rel(s, t) for s, t in seen]


def load(db: GraphDB, progress: Progress | None = None) -> tuple[int, int]:
    """Write the European air-routes graph into `db`; return (nodes, relationships) written."""
    writer = GraphWriter(db, _ESTIMATE, progress)
    airports = read_csv(PACKAGE, "airports.csv", KINDS)
    routes = read_csv(PACKAGE, "routes.csv", KINDS)
    for label, key in (("Airport", "iata"), ("City", "name"), ("Region", "name")):
        writer.index(label, key)
    writer.index("Country", "code")

    # Region and country of an airport live on their own nodes, as in the original model;
    # the city's name stays on the airport too (the original keeps it as `city`).
    writer.nodes_of(
        "Airport",
        ({k: v for k, v in a.items() if k not in ("region", "country")} for a in airports),
    )
    writer.nodes_of("City", ({"name": n} for n in dict.fromkeys(a["city"] for a in airports)))
    writer.nodes_of("Region", ({"name": n} for n in dict.fromkeys(a["region"] for a in airports)))
    writer.nodes_of("Country", ({"code": c} for c in dict.fromkeys(a["country"] for a in airports)))

    airport, city = ("Airport", "iata"), ("City", "name")
    region, country = ("Region", "name"), ("Country", "code")
    writer.rels_of("IN_CITY", airport, city, _pairs(airports, "iata", "city"))
    writer.rels_of("IN_REGION", airport, region, _pairs(airports, "iata", "region"))
    writer.rels_of("IN_COUNTRY", airport, country, _pairs(airports, "iata", "country"))
    writer.rels_of("IN_REGION", city, region, _pairs(airports, "city", "region"))
    writer.rels_of("IN_COUNTRY", city, country, _pairs(airports, "city", "country"))
    writer.rels_of("IN_COUNTRY", region, country, _pairs(airports, "region", "country"))
    writer.rels_of(
        "HAS_ROUTE",
        airport,
        airport,
        (Rel(r["src"], r["dest"], {"distance": r["dist"]}) for r in routes),
    )
    for label, prop in FULLTEXT:
        writer.fulltext(label, prop)
    writer.finish()
    return writer.nodes, writer.relationships
