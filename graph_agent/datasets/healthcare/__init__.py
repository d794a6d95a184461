"""FDA adverse-event reports (FAERS), from neo4j-graph-examples/healthcare-analytics: cases, drugs, reactions."""

from __future__ import annotations

from typing import Any

from graph_agent.datasets.loading import GraphWriter, Kind, Progress, Rel, read_csv
from graph_agent.graphdb.protocol import GraphDB

PACKAGE = "graph_agent.datasets.healthcare"
PROBE = "MATCH (d:Drug {name: 'REVLIMID'})<-[:IS_PRIMARY_SUSPECT]-(:Case) RETURN count(d)"
"""Returns a positive count when the adverse-event graph is loaded."""

KINDS = {
    "primaryid": Kind.INT,
    "age": Kind.INT,
    "drugSequence": Kind.INT,
    "doseAmount": Kind.FLOAT,
    "startYear": Kind.INT,
    "endYear": Kind.INT,
}
ROLES = {
    "Primary Suspect": "IS_PRIMARY_SUSPECT",
    "Secondary Suspect": "IS_SECONDARY_SUSPECT",
    "Concomitant": "IS_CONCOMITANT",
    "Interacting": "IS_INTERACTING",
}
"""A drug's role in a case is the type of the Case-to-Drug relationship, as in the original."""
KEYS = {
    "Case": "primaryid",
    "Manufacturer": "manufacturerName",
    "AgeGroup": "ageGroup",
    "Outcome": "code",
    "Reaction": "description",
    "ReportSource": "code",
    "Drug": "name",
    "Therapy": "primaryid",
}
FULLTEXT = (
    ("Drug", "name"),
    ("Reaction", "description"),
    ("Manufacturer", "manufacturerName"),
    ("Outcome", "outcome"),
    ("ReportSource", "name"),
)
# Nodes plus relationships, roughly; it only drives the progress bar.
_ESTIMATE = 72900


def _distinct(rows: list[dict[str, Any]], *columns: str) -> list[dict[str, Any]]:
    """One mapping per distinct value of the first column (the key), first row's values kept."""
    found: dict[Any, dict[str, Any]] = {}
    for row in rows:
        found.setdefault(row[columns[0]], {c: row[c] for c in columns if c in row})
    return list(found.values())


def load(db: GraphDB, progress: Progress | None = None) -> tuple[int, int]:
    """Write the adverse-event graph into `db`; return (nodes, relationships) written."""
    writer = GraphWriter(db, _ESTIMATE, progress)
    cases = read_csv(PACKAGE, "demographics.csv", KINDS)
    drug_rows = read_csv(PACKAGE, "drugs_indication.csv", KINDS)
    outcomes = read_csv(PACKAGE, "outcomes.csv", KINDS)
    reactions = read_csv(PACKAGE, "reactions.csv", KINDS)
    sources = read_csv(PACKAGE, "report_sources.csv", KINDS)
    therapies = read_csv(PACKAGE, "therapies.csv", KINDS)
    for label, key in KEYS.items():
        writer.index(label, key)

    # The case keeps its demographics; `sex` is called `gender` on it, as in the original.
    writer.nodes_of(
        "Case",
        (
            {
                **{k: v for k, v in c.items() if k not in ("manufacturerName", "ageGroup", "sex")},
                **({"gender": c["sex"]} if "sex" in c else {}),
            }
            for c in cases
        ),
        dates=("eventDate", "reportDate"),
    )
    writer.nodes_of("Manufacturer", _distinct(cases, "manufacturerName"))
    writer.nodes_of("AgeGroup", _distinct(cases, "ageGroup"))
    writer.nodes_of("Outcome", _distinct(outcomes, "code", "outcome"))
    writer.nodes_of("Reaction", _distinct(reactions, "description"))
    writer.nodes_of("ReportSource", _distinct(sources, "code", "name"))
    # A drug's substance is the first one any report gives for that name.
    substance: dict[str, str] = {}
    for row in drug_rows:
        if "primarySubstabce" in row:
            substance.setdefault(row["name"], row["primarySubstabce"])
    drugs = {row["name"]: None for row in drug_rows}
    writer.nodes_of(
        "Drug",
        (
            {"name": n, **({"primarySubstabce": substance[n]} if n in substance else {})}
            for n in drugs
        ),
    )
    writer.nodes_of("Therapy", _distinct(therapies, "primaryid"))

    def node(label: str) -> tuple[str, str]:
        return (label, KEYS[label])

    case = node("Case")
    writer.rels_of(
        "REGISTERED",
        node("Manufacturer"),
        case,
        (Rel(c["manufacturerName"], c["primaryid"]) for c in cases),
    )
    writer.rels_of(
        "FALLS_UNDER", case, node("AgeGroup"), (Rel(c["primaryid"], c["ageGroup"]) for c in cases)
    )
    writer.rels_of(
        "RESULTED_IN", case, node("Outcome"), (Rel(o["primaryid"], o["code"]) for o in outcomes)
    )
    writer.rels_of(
        "HAS_REACTION",
        case,
        node("Reaction"),
        (Rel(r["primaryid"], r["description"]) for r in reactions),
    )
    writer.rels_of(
        "REPORTED_BY",
        case,
        node("ReportSource"),
        (Rel(s["primaryid"], s["code"]) for s in sources),
    )
    details = ("drugSequence", "route", "doseAmount", "doseUnit", "indication")
    for role, rel_type in ROLES.items():
        writer.rels_of(
            rel_type,
            case,
            node("Drug"),
            (
                Rel(d["primaryid"], d["name"], {k: d[k] for k in details if k in d})
                for d in drug_rows
                if d["role"] == role
            ),
        )
    writer.rels_of(
        "RECEIVED",
        case,
        node("Therapy"),
        (Rel(t["primaryid"], t["primaryid"]) for t in _distinct(therapies, "primaryid")),
    )
    # A therapy line names its drug in free text; as in the original, only a name that is
    # exactly a Drug node's name links (a handful of lines name no reported drug).
    writer.rels_of(
        "PRESCRIBED",
        node("Therapy"),
        node("Drug"),
        (
            Rel(
                t["primaryid"],
                t["drugName"],
                {k: t[k] for k in ("drugSequence", "startYear", "endYear") if k in t},
            )
            for t in therapies
            if t["drugName"] in drugs
        ),
    )
    for label, prop in FULLTEXT:
        writer.fulltext(label, prop)
    writer.finish()
    return writer.nodes, writer.relationships
