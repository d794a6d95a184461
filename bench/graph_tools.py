"""Graph tools benchmark: p50/p95 of resolve, card, neighbourhood and connection on the largest
vendored graph (FAERS healthcare: 11k nodes, 61k relationships) and the network graph.

    .venv/bin/python bench/graph_tools.py [--quick] [--dataset healthcare]

Each call is timed whole (wall) and by its reads alone (the adapter's run_read, so the
engine plus the client); names are drawn with a fixed seed from each label's identifying
values, pairs for connection from two of them. Prints a markdown table; `run(quick)` returns
the same figures for a suite runner.
"""

from __future__ import annotations

import argparse
import random
import shutil
import statistics
import sys
import tempfile
import time
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from graph_agent.datasets import load_dataset  # noqa: E402
from graph_agent.graphdb import GraphDB, GraphSchema, QueryResult, ValueMatch, connect  # noqa: E402
from graph_agent.graphdb.embedded import embedded_server  # noqa: E402
from graph_agent.graphdb.schema import quote_name  # noqa: E402
from graph_agent.tools import (  # noqa: E402
    GraphView,
    card,
    connection,
    hub_cap,
    neighbourhood,
    resolve,
)

SEED = 27
DATASETS = ("healthcare", "network")
TOOLS = ("resolve", "card", "neighbourhood", "connection (names)", "connection (resolved)")


class TimedGraph:
    """The adapter, with the time of every run_read and lookup_values call recorded."""

    def __init__(self, db: GraphDB) -> None:
        self.db = db
        self.url, self.dialect = db.url, db.dialect
        self.read_ms = 0.0
        self.reads = 0

    def run_read(
        self,
        cypher: str,
        params: Mapping[str, Any] | None = None,
        *,
        timeout_s: float = 10.0,
        max_rows: int = 100,
    ) -> QueryResult:
        started = time.perf_counter()
        try:
            return self.db.run_read(cypher, params, timeout_s=timeout_s, max_rows=max_rows)
        finally:
            self.read_ms += (time.perf_counter() - started) * 1000
            self.reads += 1

    def lookup_values(self, text: str, limit: int = 5) -> list[ValueMatch]:
        return self.db.lookup_values(text, limit)

    def __getattr__(self, name: str) -> Any:
        return getattr(self.db, name)


def _names(db: GraphDB, schema: GraphSchema, count: int) -> list[str]:
    """`count` identifying values drawn from up to 500 nodes of each label that has text
    names, so big labels weigh more than the handful of category nodes."""
    rng = random.Random(SEED)
    view = GraphView.of(schema)
    pool: list[str] = []
    for label, prop in view.identifying.items():
        if label in view.numbered:
            continue
        rows = db.run_read(
            f"MATCH (n:{quote_name(label)}) WHERE n.{quote_name(prop)} IS NOT NULL "
            f"RETURN DISTINCT n.{quote_name(prop)} LIMIT 500",
            max_rows=500,
        ).rows
        pool += sorted(str(r[0]) for r in rows if str(r[0]).strip())
    return [rng.choice(pool) for _ in range(count)]


def _percentiles(values: list[float]) -> dict[str, float]:
    ordered = sorted(values)
    p95 = ordered[min(len(ordered) - 1, round(0.95 * (len(ordered) - 1)))]
    return {"p50": statistics.median(ordered), "p95": p95, "max": ordered[-1]}


def _measure(graph: TimedGraph, calls: list[Callable[[], object]]) -> dict[str, Any]:
    wall, reads, counts = [], [], []
    for call in calls:
        graph.read_ms, graph.reads = 0.0, 0
        started = time.perf_counter()
        call()
        wall.append((time.perf_counter() - started) * 1000)
        reads.append(graph.read_ms)
        counts.append(graph.reads)
    return {
        "wall_ms": _percentiles(wall),
        "reads_ms": _percentiles(reads),
        "reads_per_call": statistics.mean(counts),
        "calls": len(calls),
    }


def _bench_dataset(data_dir: Path, name: str, calls: int) -> dict[str, Any]:
    db = connect("embedded", data_dir=data_dir, graph_name=f"bench_{name}")
    try:
        load_dataset(db, name)
        schema = db.schema()
        nodes, rels = db.counts()
        graph = TimedGraph(db)
        names = _names(db, schema, 2 * calls)
        started = time.perf_counter()
        db.lookup_values("warm the value catalog")
        catalog_s = time.perf_counter() - started
        for text in names[:5]:  # plan caches and the catalog, as in a running bot
            resolve(graph, schema, text)  # type: ignore[arg-type]
        entities = [resolve(graph, schema, text).entity for text in names]  # type: ignore[arg-type]
        known = [e for e in entities if e is not None]
        pairs = list(zip(known[0::2], known[1::2], strict=False))
        tools: dict[str, list[Callable[[], object]]] = {
            "resolve": [lambda t=t: resolve(graph, schema, t) for t in names[:calls]],  # type: ignore[arg-type]
            "card": [lambda e=e: card(graph, schema, e) for e in known[:calls]],  # type: ignore[arg-type]
            "neighbourhood": [lambda e=e: neighbourhood(graph, schema, e) for e in known[:calls]],  # type: ignore[arg-type]
            "connection (names)": [
                lambda a=a, b=b: connection(graph, schema, a.name, b.name)  # type: ignore[arg-type]
                for a, b in pairs[:calls]
            ],
            "connection (resolved)": [
                lambda a=a, b=b: connection(graph, schema, a, b)  # type: ignore[arg-type]
                for a, b in pairs[:calls]
            ],
        }
        figures: dict[str, Any] = {
            "nodes": nodes,
            "relationships": rels,
            "hub_cap": hub_cap(schema),
            "catalog_s": catalog_s,
            "tools": {tool: _measure(graph, made) for tool, made in tools.items()},
        }
        found = [connection(graph, schema, a, b) for a, b in pairs[:calls]]  # type: ignore[arg-type]
        figures["connected_share"] = sum(bool(c.routes) for c in found) / max(1, len(found))
        return figures
    finally:
        db.close()


def run(quick: bool = False, datasets: tuple[str, ...] = DATASETS) -> dict[str, Any]:
    """Every measurement; `quick` makes 20 calls per tool instead of 100."""
    data_dir = Path(tempfile.mkdtemp(prefix="cypherbot-bench-tools-"))
    calls = 20 if quick else 100
    try:
        return {
            "quick": quick,
            **{name: _bench_dataset(data_dir, name, calls) for name in datasets},
        }
    finally:
        embedded_server(data_dir).stop()
        shutil.rmtree(data_dir, ignore_errors=True)


def table(figures: dict[str, Any]) -> str:
    lines = [
        "| graph | tool | calls | reads/call | reads p50 | reads p95 | wall p50 | wall p95 |",
        "|---|---|---|---|---|---|---|---|",
    ]
    notes = []
    for name, data in figures.items():
        if not isinstance(data, dict):
            continue
        for tool in TOOLS:
            f = data["tools"][tool]
            lines.append(
                f"| {name} | {tool} | {f['calls']} | {f['reads_per_call']:.1f} | "
                f"{f['reads_ms']['p50']:.1f} ms | {f['reads_ms']['p95']:.1f} ms | "
                f"{f['wall_ms']['p50']:.1f} ms | {f['wall_ms']['p95']:.1f} ms |"
            )
        notes.append(
            f"{name}: {data['nodes']:,} nodes, {data['relationships']:,} relationships, hub cap "
            f"{data['hub_cap']}, value catalog {data['catalog_s']:.2f} s, "
            f"{data['connected_share']:.0%} of pairs connected within 4 hops"
        )
    return "\n".join([*lines, "", *notes])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--quick", action="store_true", help="20 calls per tool, not 100")
    parser.add_argument("--dataset", action="append", choices=DATASETS, help="repeatable")
    args = parser.parse_args()
    print(table(run(quick=args.quick, datasets=tuple(args.dataset or DATASETS))))


if __name__ == "__main__":
    main()
