"""Hostile reads against the embedded engine: wall time and engine memory per form, crashes.

    .venv/bin/python bench/dos.py [--quick]

Each form goes the way the agent sends it (policy → canonical text → outer row cap →
EXPLAIN → read with QUERY_TIMEOUT_S) and, where the engine can bound it on its own, to the
engine alone (policy bypassed). Memory is the redis-server's peak RSS during the form (the
peak is reset before each one). Prints a markdown table; `run(quick)` returns the figures.
"""

from __future__ import annotations

import argparse
import concurrent.futures
import contextlib
import shutil
import sys
import tempfile
import time
from pathlib import Path
from typing import Any, NamedTuple

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from graph_agent.demo import load_demo  # noqa: E402
from graph_agent.graphdb import GraphError, connect  # noqa: E402
from graph_agent.graphdb.embedded import embedded_server  # noqa: E402
from graph_agent.graphdb.falkor import FalkorGraph  # noqa: E402
from graph_agent.nodes import READ_GRACE_S  # noqa: E402
from graph_agent.statement import with_limit  # noqa: E402
from guardrails.cypher_policy import check_cypher  # noqa: E402

QUERY_TIMEOUT_S = 10.0
"""The default QUERY_TIMEOUT_S; a form's wall time must stay under it + 2 s."""
WALL_TARGET_S = QUERY_TIMEOUT_S + 2.0
MEMORY_TARGET_MB = 1024.0
"""Engine peak RSS: the 512 MiB per-query cap plus the server and the graph, with room."""
MAX_ROWS = 1000


class Form(NamedTuple):
    """One hostile read; `engine_alone` when the engine's own limits can be tried on it."""

    name: str
    cypher: str
    engine_alone: bool


FORMS = (
    Form("huge range", "UNWIND range(1, 1000000000) AS x RETURN count(x)", False),
    Form("size(range())", "RETURN size(range(1, 10000000000))", False),
    Form("size(range()) 400M", "RETURN size(range(1, 400000000))", False),
    Form(
        "cartesian collect",
        "MATCH (a), (b), (c) RETURN size(collect([a.id, b.id, c.id])) AS n",
        True,
    ),
    Form("string doubling", "RETURN size(reduce(s = 'x', i IN range(1, 40) | s + s))", False),
    Form(
        "3M rows under LIMIT",
        "MATCH (a), (b), (c) RETURN a.id, b.id, c.id LIMIT 3000000",
        True,
    ),
    Form("comment in procedure name", "CALL db./**/labels() YIELD label RETURN label", True),
    # Issue 30: each aborted the engine (48 GB, 2.8 GB, 6.5 GB) past the per-query memory cap.
    # Never engine_alone: without the policy they take the machine down, not just the engine.
    Form(
        "computed range bound",
        "MATCH (n) WITH count(n) AS c RETURN size(range(1, c * 10000000))",
        False,
    ),
    Form(
        "computed range bound, unwound",
        "MATCH (n) WITH count(n) AS c UNWIND range(1, c * c) AS x RETURN count(x)",
        False,
    ),
    Form(
        "replace growth in reduce",
        "RETURN size(reduce(s = 'x', i IN range(1, 40) | replace(s, 'x', 'xx')))",
        False,
    ),
    Form(
        "concatenation growth in reduce",
        "RETURN size(reduce(s = '', i IN range(1, 10000) | s + 'xxxxxxxxxxxxxxxxxxxxxxxxxxxxxx'))",
        False,
    ),
    Form("nested ranges", "RETURN size([a IN range(1, 100000) | range(1, 100000)])", False),
    Form(
        "nested ranges under the cap",
        "RETURN size([a IN range(1, 10000) | range(1, 10000)])",
        False,
    ),
    Form(
        "range per collected value",
        "MATCH (n) WITH collect(n.id) AS ids RETURN size([x IN ids | range(1, 10000)])",
        False,
    ),
)


def _peak_mb(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024
    return 0.0


def _reset_peak(pid: int) -> None:
    # Writing 5 to clear_refs resets VmHWM to the current RSS (Linux 4.0+).
    with contextlib.suppress(OSError):
        Path(f"/proc/{pid}/clear_refs").write_text("5")


def _through_the_agent_path(db: FalkorGraph, cypher: str) -> str:
    verdict = check_cypher(cypher)
    if not verdict.allowed:
        return f"refused by policy ({verdict.category})"
    # The agent sends a commented statement back to the model first; the canonical text is
    # what runs once the model drops the comment, so that is what is measured here.
    text = verdict.canonical or cypher
    capped = check_cypher(with_limit(text, MAX_ROWS)).canonical or text
    validation = db.validate(capped)
    if not validation.ok:
        return "refused by EXPLAIN"
    return _read(db, capped)


def _read(db: FalkorGraph, cypher: str) -> str:
    try:
        result = db.run_read(cypher, timeout_s=QUERY_TIMEOUT_S, max_rows=MAX_ROWS)
    except GraphError as exc:
        return f"stopped: {type(exc).__name__}"
    return f"{len(result.rows)} rows" + (" (truncated)" if result.truncated else "")


def _measure(db: FalkorGraph, form: Form, layer: str) -> dict[str, Any]:
    server = db._server
    assert server is not None
    pid = server.pid
    assert pid is not None
    _reset_peak(pid)
    started = time.perf_counter()
    if layer == "path":
        # As the agent's execute step: it stops waiting READ_GRACE_S after the timeout.
        with concurrent.futures.ThreadPoolExecutor(max_workers=1) as pool:
            future = pool.submit(_through_the_agent_path, db, form.cypher)
            try:
                outcome = future.result(timeout=QUERY_TIMEOUT_S + READ_GRACE_S)
            except concurrent.futures.TimeoutError:
                outcome = "stopped: the question stopped waiting"
            seconds = time.perf_counter() - started
            # Leaving the pool waits for the engine to finish, so forms do not overlap.
    else:
        # No policy and no outer cap: only the engine's own limits (RESULTSET_SIZE, memory).
        outcome = _read(db, form.cypher)
        seconds = time.perf_counter() - started
    crashed = server.pid != pid
    peak = 0.0 if crashed else _peak_mb(pid)
    return {
        "form": form.name,
        "layer": layer,
        "outcome": outcome,
        "seconds": seconds,
        "engine_peak_mb": peak,
        "crashed": crashed,
    }


def run(quick: bool = False) -> dict[str, Any]:
    """Every form through the agent's path, and the engine-boundable ones to the engine alone."""
    data_dir = Path(tempfile.mkdtemp(prefix="cypherbot-dos-"))
    rows: list[dict[str, Any]] = []
    try:
        db = connect("embedded", data_dir=data_dir, graph_name="dos")
        assert isinstance(db, FalkorGraph)
        load_demo(db, scale=300 if quick else 1000)
        nodes, _ = db.counts()
        for form in FORMS:
            rows.append(_measure(db, form, "path"))
            if form.engine_alone:
                # The comment form goes in canonical text: raw, it is the engine crash itself.
                alone = Form(form.name, check_cypher(form.cypher).canonical or "", True)
                rows.append(_measure(db, alone if "/*" in form.cypher else form, "engine"))
    finally:
        embedded_server(data_dir).stop()
        shutil.rmtree(data_dir, ignore_errors=True)
    return {
        "quick": quick,
        "graph_nodes": nodes,
        "query_timeout_s": QUERY_TIMEOUT_S,
        "forms": rows,
        # What a question waits for: the agent's path; the engine alone is shown for reference.
        "worst_seconds": max(r["seconds"] for r in rows if r["layer"] == "path"),
        "worst_engine_alone_seconds": max(r["seconds"] for r in rows if r["layer"] == "engine"),
        "worst_engine_peak_mb": max(r["engine_peak_mb"] for r in rows),
        "crashes": sum(1 for r in rows if r["crashed"]),
    }


def table(figures: dict[str, Any]) -> str:
    lines = [
        f"Demo graph of {figures['graph_nodes']:,} nodes; QUERY_TIMEOUT_S = "
        f"{figures['query_timeout_s']:.0f} s; targets: wall ≤ {WALL_TARGET_S:.0f} s on the "
        f"agent's path, engine peak ≤ {MEMORY_TARGET_MB:.0f} MB, no crash. The engine alone "
        "(no policy, no outer cap, no wait limit) is shown for reference.",
        "",
        "| form | layer | outcome | wall s | engine peak MB | crashed |",
        "|---|---|---|---:|---:|---|",
    ]
    for r in figures["forms"]:
        lines.append(
            f"| {r['form']} | {r['layer']} | {r['outcome']} | {r['seconds']:.2f} | "
            f"{r['engine_peak_mb']:.0f} | {'YES' if r['crashed'] else 'no'} |"
        )
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--quick", action="store_true", help="a smaller demo graph")
    args = parser.parse_args()
    print(table(run(quick=args.quick)))


if __name__ == "__main__":
    main()
