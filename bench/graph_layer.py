"""Graph-layer benchmarks: demo load time, schema() time with the sampling cap, run_read overhead,
what binding path variables (graph_agent/graphdb/falkor_paths.py) costs a count over a chain, and
what comparing the relationships of a MATCH (graph_agent/graphdb/falkor_uniqueness.py) costs a
count of the people who share a team.

    .venv/bin/python bench/graph_layer.py [--quick]

Prints a markdown table; `run(quick)` returns the same figures for a suite runner.
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from graph_agent.demo import load_demo  # noqa: E402
from graph_agent.graphdb import connect  # noqa: E402
from graph_agent.graphdb.embedded import embedded_server  # noqa: E402
from graph_agent.graphdb.falkor import FalkorGraph  # noqa: E402

SCHEMA_SAMPLE = 1000
ONE_ROW = "MATCH (t:Technology {name: $name}) RETURN t.name, t.category"
CHAIN = "MATCH (p:Person)-[:MEMBER_OF]->(t:Team)-[:OWNS]->(r:Repository) RETURN count(*)"
"""Two hops whose middle node nothing reads: the engine's fused traversal as written."""
CO_LINK = "MATCH (p:Person)-[:MEMBER_OF]->(t:Team)<-[:MEMBER_OF]-(o:Person) RETURN count(*)"
"""Two hops of one type: as written, the engine also walks each membership back to its person."""


def _load(data_dir: Path, graph: str, scale: int) -> tuple[FalkorGraph, float, int]:
    db = connect("embedded", data_dir=data_dir, graph_name=graph)
    assert isinstance(db, FalkorGraph)
    db.drop_graph()
    started = time.perf_counter()
    stats = load_demo(db, scale=scale)
    return db, time.perf_counter() - started, stats.nodes


def _schema_seconds(db: FalkorGraph) -> float:
    started = time.perf_counter()
    db.schema(sample=SCHEMA_SAMPLE)
    return time.perf_counter() - started


def _overhead(db: FalkorGraph, repeats: int) -> tuple[float, float]:
    """Median ms of run_read vs the raw client's ro_query for the same 1-row query."""
    raw_graph = db._graph
    params = {"name": "PostgreSQL"}
    for _ in range(20):
        db.run_read(ONE_ROW, params)
        raw_graph.ro_query(ONE_ROW, params, timeout=10_000)
    ours, raw = [], []
    for _ in range(repeats):
        t0 = time.perf_counter()
        db.run_read(ONE_ROW, params)
        t1 = time.perf_counter()
        raw_graph.ro_query(ONE_ROW, params, timeout=10_000)
        t2 = time.perf_counter()
        ours.append((t1 - t0) * 1000)
        raw.append((t2 - t1) * 1000)
    return statistics.median(ours), statistics.median(raw)


def _against_raw(db: FalkorGraph, statement: str, key: str, repeats: int) -> dict[str, Any]:
    """Median ms of run_read (as the adapter rewrites it) vs the raw client's ro_query (as
    written) for `statement`, and the count each gives, under `key`_… names."""
    raw_graph = db._graph
    ours_count = db.run_read(statement, timeout_s=60).rows[0][0]
    raw_count = raw_graph.ro_query(statement, timeout=60_000).result_set[0][0]
    ours, raw = [], []
    for _ in range(repeats):
        t0 = time.perf_counter()
        db.run_read(statement, timeout_s=60)
        t1 = time.perf_counter()
        raw_graph.ro_query(statement, timeout=60_000)
        t2 = time.perf_counter()
        ours.append((t1 - t0) * 1000)
        raw.append((t2 - t1) * 1000)
    ours_ms, raw_ms = statistics.median(ours), statistics.median(raw)
    return {
        f"{key}_ms": ours_ms,
        f"{key}_raw_ms": raw_ms,
        f"{key}_ratio": ours_ms / raw_ms,
        f"{key}_count": ours_count,
        f"{key}_raw_count": raw_count,
    }


def run(quick: bool = False) -> dict[str, Any]:
    """Run every measurement; `quick` skips the 1M-node graph."""
    data_dir = Path(tempfile.mkdtemp(prefix="cypherbot-bench-"))
    figures: dict[str, Any] = {"quick": quick, "schema_sample": SCHEMA_SAMPLE}
    try:
        db, seconds, nodes = _load(data_dir, "bench_1k", 1_000)
        figures["load_1k_s"], figures["load_1k_nodes"] = seconds, nodes
        ours, raw = _overhead(db, 300 if quick else 1000)
        figures["run_read_ms"], figures["raw_ms"], figures["overhead_ratio"] = ours, raw, ours / raw
        db.drop_graph()

        db, seconds, nodes = _load(data_dir, "bench_100k", 100_000)
        figures["load_100k_s"], figures["load_100k_nodes"] = seconds, nodes
        figures["schema_100k_s"] = _schema_seconds(db)
        figures |= _against_raw(db, CHAIN, "chain", 10 if quick else 30)
        figures |= _against_raw(db, CO_LINK, "co_link", 10 if quick else 30)
        db.drop_graph()

        if not quick:
            db, seconds, nodes = _load(data_dir, "bench_1m", 1_000_000)
            figures["load_1m_s"], figures["load_1m_nodes"] = seconds, nodes
            figures["schema_1m_s"] = _schema_seconds(db)
            db.drop_graph()
    finally:
        server = embedded_server(data_dir)
        server.stop()
        shutil.rmtree(data_dir, ignore_errors=True)
    return figures


def table(figures: dict[str, Any]) -> str:
    rows = [
        (
            "demo load, ~1k nodes",
            f"{figures['load_1k_s']:.2f} s ({figures['load_1k_nodes']:,} nodes)",
        ),
        (
            "demo load, ~100k nodes",
            f"{figures['load_100k_s']:.1f} s ({figures['load_100k_nodes']:,} nodes)",
        ),
        (
            f"schema(sample={figures['schema_sample']}), 100k nodes",
            f"{figures['schema_100k_s']:.2f} s",
        ),
    ]
    if "schema_1m_s" in figures:
        rows.insert(
            2,
            (
                "demo load, ~1M nodes",
                f"{figures['load_1m_s']:.1f} s ({figures['load_1m_nodes']:,} nodes)",
            ),
        )
        rows.append(
            (
                f"schema(sample={figures['schema_sample']}), 1M nodes",
                f"{figures['schema_1m_s']:.2f} s",
            )
        )
    rows.append(
        (
            "run_read vs raw ro_query, 1-row query (median)",
            f"{figures['run_read_ms']:.3f} ms vs {figures['raw_ms']:.3f} ms = {figures['overhead_ratio']:.2f}x",
        )
    )
    rows.append(
        (
            "count over a two-hop chain, 100k nodes: path variables bound vs as written (median)",
            f"{figures['chain_ms']:.1f} ms vs {figures['chain_raw_ms']:.1f} ms = "
            f"{figures['chain_ratio']:.2f}x; counts {figures['chain_count']:,} vs "
            f"{figures['chain_raw_count']:,}",
        )
    )
    rows.append(
        (
            "count of people sharing a team, 100k nodes: relationships compared vs as written "
            "(median)",
            f"{figures['co_link_ms']:.1f} ms vs {figures['co_link_raw_ms']:.1f} ms = "
            f"{figures['co_link_ratio']:.2f}x; counts {figures['co_link_count']:,} vs "
            f"{figures['co_link_raw_count']:,}",
        )
    )
    lines = ["| measurement | result |", "|---|---|"] + [f"| {a} | {b} |" for a, b in rows]
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--quick", action="store_true", help="skip the 1M-node graph")
    args = parser.parse_args()
    print(table(run(quick=args.quick)))


if __name__ == "__main__":
    main()
