"""Public example graphs besides the demo (Northwind, air routes, FDA adverse events, a network): data, loaders."""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from dataclasses import dataclass

from graph_agent.datasets import airports, healthcare, network, northwind
from graph_agent.datasets.loading import Progress
from graph_agent.graphdb.protocol import GraphDB

logger = logging.getLogger(__name__)


@dataclass(frozen=True)
class Dataset:
    """A public graph (its CSV files, or a generator of its model), with the loader that writes it."""

    name: str
    title: str
    source: str
    """The repository the data comes from (see the SOURCE.md beside its files)."""
    probe: str
    """A read-only query whose first cell is positive when the dataset is loaded."""
    load: Callable[[GraphDB, Progress | None], tuple[int, int]]


@dataclass(frozen=True)
class DatasetStats:
    """What load_dataset wrote."""

    name: str
    nodes: int
    relationships: int
    seconds: float


DATASETS: dict[str, Dataset] = {
    "northwind": Dataset(
        name="northwind",
        title="Northwind retail graph",
        source="https://github.com/neo4j-graph-examples/northwind",
        probe=northwind.PROBE,
        load=northwind.load,
    ),
    "airports": Dataset(
        name="airports",
        title="European air routes graph",
        source="https://github.com/neo4j-graph-examples/airport-routes",
        probe=airports.PROBE,
        load=airports.load,
    ),
    "healthcare": Dataset(
        name="healthcare",
        title="FDA adverse-event reports graph (FAERS)",
        source="https://github.com/neo4j-graph-examples/healthcare-analytics",
        probe=healthcare.PROBE,
        load=healthcare.load,
    ),
    "network": Dataset(
        name="network",
        title="Data-centre network graph (generated)",
        source="https://github.com/neo4j-graph-examples/network-management",
        probe=network.PROBE,
        load=network.load,
    ),
}


def get_dataset(name: str) -> Dataset:
    """The dataset called `name`; ValueError naming the known ones otherwise."""
    try:
        return DATASETS[name]
    except KeyError:
        known = ", ".join(sorted(DATASETS))
        raise ValueError(f"Unknown dataset {name!r}; known datasets: {known}") from None


def is_loaded(db: GraphDB, name: str) -> bool:
    """True when the dataset called `name` is in `db`."""
    result = db.run_read(get_dataset(name).probe, timeout_s=10, max_rows=1)
    return bool(result.rows and result.rows[0][0])


def load_dataset(db: GraphDB, name: str, progress: Progress | None = None) -> DatasetStats:
    """Write the dataset called `name` into `db` in UNWIND batches. The graph is not cleared first."""
    dataset = get_dataset(name)
    started = time.perf_counter()
    nodes, rels = dataset.load(db, progress)
    seconds = time.perf_counter() - started
    logger.info(
        "Dataset %s loaded: %d nodes, %d relationships in %.1fs", name, nodes, rels, seconds
    )
    return DatasetStats(name=name, nodes=nodes, relationships=rels, seconds=seconds)


__all__ = ["DATASETS", "Dataset", "DatasetStats", "get_dataset", "is_loaded", "load_dataset"]
