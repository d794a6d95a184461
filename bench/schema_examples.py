"""Schema-example generation: time and examples kept per shape on the demo graph (~300 and ~100k nodes).

    .venv/bin/python bench/schema_examples.py [--quick]

Prints a markdown table; `run(quick)` returns the same figures for a suite runner. `--quick`
skips the 100k-node graph.
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

# The running bot has the agent (and LangGraph) loaded already; keep that import out of timings.
import graph_agent.agent  # noqa: E402, F401
from graph_agent.demo import load_demo  # noqa: E402
from graph_agent.graphdb import connect  # noqa: E402
from graph_agent.graphdb.embedded import embedded_server  # noqa: E402
from graph_agent.graphdb.falkor import FalkorGraph  # noqa: E402
from graph_agent.schema_examples import DEFAULT_CAP, SHAPES, generate_schema_examples  # noqa: E402

SCHEMA_SAMPLE = 1000
SCALES = {True: (300,), False: (300, 100_000)}


def _measure(data_dir: Path, scale: int) -> dict[str, Any]:
    db = connect("embedded", data_dir=data_dir, graph_name=f"bench_schema_{scale}")
    assert isinstance(db, FalkorGraph)
    try:
        db.drop_graph()
        stats = load_demo(db, scale=scale)
        started = time.perf_counter()
        schema = db.schema(sample=SCHEMA_SAMPLE)
        schema_s = time.perf_counter() - started
        report = generate_schema_examples(db, schema, cap_per_shape=DEFAULT_CAP)
        return {
            "scale": scale,
            "nodes": stats.nodes,
            "relationships": stats.relationships,
            "schema_s": schema_s,
            "generate_s": report.seconds,
            "queries": report.queries,
            "tried": sum(report.tried.values()),
            "kept": len(report.kept),
            "per_shape": report.per_shape(),
            "tried_per_shape": {shape: report.tried.get(shape, 0) for shape in SHAPES},
        }
    finally:
        db.drop_graph()
        db.close()


def run(quick: bool = False) -> dict[str, Any]:
    """Generate on each demo size; `quick` measures only the ~300-node graph."""
    data_dir = Path(tempfile.mkdtemp(prefix="cypherbot-bench-schema-"))
    try:
        graphs = [_measure(data_dir, scale) for scale in SCALES[quick]]
    finally:
        embedded_server(data_dir).stop()
        shutil.rmtree(data_dir, ignore_errors=True)
    return {"quick": quick, "cap_per_shape": DEFAULT_CAP, "graphs": graphs}


def table(figures: dict[str, Any]) -> str:
    graphs = figures["graphs"]
    head = "| | " + " | ".join(f"{g['nodes']:,} nodes" for g in graphs) + " |"
    lines = [head, "|---|" + "---:|" * len(graphs)]

    def row(name: str, cells: list[str]) -> None:
        lines.append(f"| {name} | " + " | ".join(cells) + " |")

    row("relationships", [f"{g['relationships']:,}" for g in graphs])
    row("schema() (sample 1000)", [f"{g['schema_s']:.2f} s" for g in graphs])
    row("generation (sampling + candidates)", [f"{g['generate_s']:.2f} s" for g in graphs])
    row("graph queries", [str(g["queries"]) for g in graphs])
    row("candidates run / kept", [f"{g['tried']} / {g['kept']}" for g in graphs])
    for shape in SHAPES:
        row(
            f"kept: {shape} (cap {figures['cap_per_shape']})",
            [f"{g['per_shape'][shape]} of {g['tried_per_shape'][shape]}" for g in graphs],
        )
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--quick", action="store_true", help="skip the 100k-node graph")
    args = parser.parse_args()
    print(table(run(quick=args.quick)))


if __name__ == "__main__":
    main()
