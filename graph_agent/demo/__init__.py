"""The demo "engineering organisation" graph: loading it into any GraphDB, and telling if it is there."""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import Any

from graph_agent.demo.generator import LABELS, DemoGenerator, DemoSizes
from graph_agent.graphdb.protocol import GraphDB, SupportsIndexes, batched
from graph_agent.graphdb.schema import quote_name

logger = logging.getLogger(__name__)

BATCH_ROWS = 5000
FULLTEXT = (
    ("Person", "name"),
    ("Team", "name"),
    ("Service", "name"),
    ("Repository", "name"),
    ("Project", "name"),
    ("Technology", "name"),
    ("Incident", "title"),
)
Progress = Callable[[int, int], None]


@dataclass(frozen=True)
class DemoStats:
    """What load_demo wrote."""

    nodes: int
    relationships: int
    seconds: float
    scale: int
    seed: int


def _batches(
    rows: Iterable[dict[str, Any]], size: int = BATCH_ROWS
) -> Iterator[list[dict[str, Any]]]:
    return batched(rows, size)


def _rel_rows(rows: Iterable[dict[str, Any]]) -> Iterator[dict[str, Any]]:
    for row in rows:
        yield {
            "s": row["s"],
            "t": row["t"],
            "p": {k: v for k, v in row.items() if k not in ("s", "t")},
        }


def is_loaded(db: GraphDB) -> bool:
    """True when the demo graph (its fixed technology set) is in `db`."""
    result = db.run_read(
        "MATCH (t:Technology {name: 'PostgreSQL'}) RETURN count(t)", timeout_s=10, max_rows=1
    )
    return bool(result.rows and result.rows[0][0])


def load_demo(
    db: GraphDB,
    scale: int = 300,
    seed: int = 7,
    progress: Progress | None = None,
) -> DemoStats:
    """Write the demo graph (about `scale` nodes) into `db` in UNWIND batches.

    The same scale and seed always give the same graph. The graph is not cleared first.
    """
    started = time.perf_counter()
    gen = DemoGenerator(scale, seed)
    sizes: DemoSizes = gen.sizes
    # Relationships run at roughly 2.3 per node; the estimate only drives the progress bar.
    total = sizes.total + int(sizes.total * 2.3)
    done = 0

    def advance(n: int) -> None:
        nonlocal done
        done = min(total, done + n)
        if progress is not None:
            progress(done, total)

    indexes = db if isinstance(db, SupportsIndexes) else None
    if indexes is not None:
        for label in LABELS:
            indexes.create_index(label, "id")

    def write_nodes(label: str, rows: Iterable[dict[str, Any]]) -> int:
        written = 0
        for batch in _batches(rows):
            written += db.write_batches(
                f"UNWIND $rows AS r CREATE (n:{quote_name(label)}) SET n = r", [batch]
            )
            advance(len(batch))
        return written

    def write_rels(rel_type: str, start: str, end: str, rows: Iterable[dict[str, Any]]) -> int:
        cypher = (
            f"UNWIND $rows AS r MATCH (a:{quote_name(start)} {{id: r.s}}) "
            f"MATCH (b:{quote_name(end)} {{id: r.t}}) "
            f"CREATE (a)-[x:{quote_name(rel_type)}]->(b) SET x = r.p"
        )
        written = 0
        for batch in _batches(_rel_rows(rows)):
            written += db.write_batches(cypher, [batch])
            advance(len(batch))
        return written

    incidents: list[tuple[int, str]] = []

    def strip_service(rows: Iterable[dict[str, Any]]) -> Iterator[dict[str, Any]]:
        for i, row in enumerate(rows):
            incidents.append((i, row.pop("_service")))
            yield row

    nodes = 0
    nodes += write_nodes("Technology", gen.technologies())
    nodes += write_nodes("Team", gen.teams())
    nodes += write_nodes("Person", gen.people())
    nodes += write_nodes("Service", gen.services())
    nodes += write_nodes("Repository", gen.repositories())
    nodes += write_nodes("Project", gen.projects())
    nodes += write_nodes("OnCallRotation", gen.rotations())
    nodes += write_nodes("Incident", strip_service(gen.incidents()))

    rels = 0
    rels += write_rels("MEMBER_OF", "Person", "Team", gen.member_of())
    rels += write_rels("REPORTS_TO", "Person", "Person", gen.reports_to())
    rels += write_rels("OWNS", "Team", "Service", gen.owns_service())
    rels += write_rels("OWNS", "Team", "Repository", gen.owns_repository())
    rels += write_rels("OWNS", "Team", "OnCallRotation", gen.owns_rotation())
    rels += write_rels("DEPENDS_ON", "Service", "Service", gen.depends_on())
    uses: dict[str, list[dict[str, Any]]] = {"Service": [], "Repository": []}
    for start, row in gen.uses():
        uses[start].append(row)
    for start, rows in uses.items():
        rels += write_rels("USES", start, "Technology", rows)
    rels += write_rels("ON_CALL_FOR", "Person", "OnCallRotation", gen.on_call())
    rels += write_rels("COVERS", "OnCallRotation", "Service", gen.covers())
    rels += write_rels("WORKS_ON", "Person", "Project", gen.works_on())
    links: dict[str, list[dict[str, Any]]] = {"AFFECTED": [], "RESPONDED_TO": []}
    for rel_type, row in gen.incident_links(incidents):
        links[rel_type].append(row)
    rels += write_rels("AFFECTED", "Incident", "Service", links["AFFECTED"])
    rels += write_rels("RESPONDED_TO", "Person", "Incident", links["RESPONDED_TO"])

    if indexes is not None:
        for label, prop in FULLTEXT:
            indexes.create_fulltext_index(label, prop)
    if progress is not None:
        progress(total, total)
    seconds = time.perf_counter() - started
    logger.info("Demo graph loaded: %d nodes, %d relationships in %.1fs", nodes, rels, seconds)
    return DemoStats(nodes=nodes, relationships=rels, seconds=seconds, scale=scale, seed=seed)


def seed_examples_path() -> Path:
    """The demo graph's verified example questions (`seed_examples.yaml`)."""
    return Path(str(resources.files("graph_agent.demo").joinpath("seed_examples.yaml")))


__all__ = ["DemoStats", "is_loaded", "load_demo", "seed_examples_path"]
