"""What a per-restriction view would cost on the embedded engine (issue 30's stronger design).

    .venv/bin/python bench/restricted_view.py [--quick]

A restricted channel would read a copy of the graph in which its hidden labels, relationship
types and properties do not exist, so that no statement could return them. On FalkorDB that
is `GRAPH.COPY` and then deleting what the channel may not see, redone whenever the source
changes. This measures, on the largest vendored graph (healthcare) and the demo graph, for a
restriction hiding the label with the most nodes' neighbours, one relationship type and one
property: the copy's time, the time to strip it, and the engine memory the copy adds.

Prints a markdown table; `run(quick)` returns the same figures for a suite runner.
"""

from __future__ import annotations

import argparse
import shutil
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from graph_agent.datasets import load_dataset  # noqa: E402
from graph_agent.demo import load_demo  # noqa: E402
from graph_agent.graphdb import connect  # noqa: E402
from graph_agent.graphdb.embedded import embedded_server  # noqa: E402
from graph_agent.graphdb.falkor import FalkorGraph  # noqa: E402
from graph_agent.graphdb.schema import quote_name  # noqa: E402


def _used_memory(db: FalkorGraph) -> int:
    """The engine's used_memory (bytes), from INFO memory."""
    return int(db._client.connection.info("memory")["used_memory"])


def _restriction(db: FalkorGraph) -> tuple[str, str, tuple[str, str]]:
    """A restriction like a real one: the second-largest label, the most common relationship
    type not touching it, and a string property of the largest label."""
    schema = db.schema()
    labels = sorted(schema.labels, key=lambda lb: -lb.count)
    hidden_label = labels[1].name if len(labels) > 1 else labels[0].name
    rels = sorted(
        (r for r in schema.relationships if hidden_label not in (r.start, r.end)),
        key=lambda r: -r.count,
    )
    hidden_type = rels[0].type if rels else schema.relationships[0].type
    biggest = labels[0]
    prop = next(
        (p.name for p in biggest.properties if "STRING" in p.types), biggest.properties[0].name
    )
    return hidden_label, hidden_type, (biggest.name, prop)


def _measure(db: FalkorGraph, graph: str) -> dict[str, Any]:
    label, rel_type, (owner, prop) = _restriction(db)
    view = f"{graph}__view"
    client = db._client
    if view in client.list_graphs():
        client.connection.execute_command("GRAPH.DELETE", view)
    before = _used_memory(db)
    started = time.perf_counter()
    client.connection.execute_command("GRAPH.COPY", graph, view)
    copied = time.perf_counter()
    copy = client.select_graph(view)
    copy.query(f"MATCH (n:{quote_name(label)}) DETACH DELETE n")
    copy.query(f"MATCH ()-[r:{quote_name(rel_type)}]->() DELETE r")
    copy.query(f"MATCH (n:{quote_name(owner)}) REMOVE n.{quote_name(prop)}")
    stripped = time.perf_counter()
    after = _used_memory(db)
    nodes = db.run_read("MATCH (n) RETURN count(n)").rows[0][0]
    view_nodes = copy.ro_query("MATCH (n) RETURN count(n)").result_set[0][0]
    client.connection.execute_command("GRAPH.DELETE", view)
    return {
        "nodes": nodes,
        "view_nodes": view_nodes,
        "hidden": f"{label}, [{rel_type}], {owner}.{prop}",
        "copy_s": copied - started,
        "strip_s": stripped - copied,
        "memory_before_mb": before / 2**20,
        "memory_added_mb": (after - before) / 2**20,
    }


def run(quick: bool = False) -> dict[str, Any]:
    """The copy's cost on the demo graph and on the largest vendored graph."""
    data_dir = Path(tempfile.mkdtemp(prefix="cypherbot-bench-view-"))
    figures: dict[str, Any] = {"quick": quick}
    try:
        demo = connect("embedded", data_dir=data_dir, graph_name="demo")
        assert isinstance(demo, FalkorGraph)
        load_demo(demo)
        figures["demo"] = _measure(demo, "demo")
        if not quick:
            big = connect("embedded", data_dir=data_dir, graph_name="healthcare")
            assert isinstance(big, FalkorGraph)
            load_dataset(big, "healthcare")
            figures["healthcare"] = _measure(big, "healthcare")
    finally:
        embedded_server(data_dir).stop()
        shutil.rmtree(data_dir, ignore_errors=True)
    return figures


def table(figures: dict[str, Any]) -> str:
    lines = [
        "| graph | nodes | hidden | copy | strip | view nodes | engine memory | view adds |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for name, f in figures.items():
        if not isinstance(f, dict):
            continue
        lines.append(
            f"| {name} | {f['nodes']:,} | {f['hidden']} | {f['copy_s'] * 1000:.0f} ms | "
            f"{f['strip_s'] * 1000:.0f} ms | {f['view_nodes']:,} | "
            f"{f['memory_before_mb']:.1f} MB | {f['memory_added_mb']:.1f} MB |"
        )
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--quick", action="store_true", help="the demo graph only")
    print(table(run(quick=parser.parse_args().quick)))


if __name__ == "__main__":
    main()
