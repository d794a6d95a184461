"""Hostile reads against the embedded engine: wall time, restarts and engine memory per form.

    .venv/bin/python bench/dos.py [--quick]

Each form goes the way the agent sends it (policy → canonical text → outer row cap →
EXPLAIN → read with QUERY_TIMEOUT_S) and straight to the engine (policy bypassed), where
only the engine's own limits hold: its per-query caps and, for forms that allocate past them,
its address-space limit (ENGINE_MEMORY_LIMIT_MB), which aborts it; the adapter then restarts
it from its saved data. Memory is the redis-server's peak RSS (VmHWM) before and during the
form, sampled while it runs, so the peak of an engine that died is kept. A last row kills the
engine (kill -9) and times the first read that has the data back. Prints a markdown table;
`run(quick)` returns the figures.
"""

from __future__ import annotations

import argparse
import concurrent.futures
import contextlib
import os
import shutil
import signal
import sys
import tempfile
import threading
import time
from pathlib import Path
from types import TracebackType
from typing import Any, NamedTuple

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from graph_agent.demo import load_demo  # noqa: E402
from graph_agent.graphdb import GraphError, connect  # noqa: E402
from graph_agent.graphdb.embedded import EmbeddedServer, embedded_server  # noqa: E402
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
KILL_9_TARGET_S = 10.0
"""From kill -9 of the engine to a read that has its data again."""


class Form(NamedTuple):
    """One hostile read; `needs_limit` when, sent to the engine alone, it would allocate until
    something stops it: it goes there only under the engine's address-space limit."""

    name: str
    cypher: str
    needs_limit: bool


FORMS = (
    Form("huge range", "UNWIND range(1, 1000000000) AS x RETURN count(x)", True),
    Form("size(range())", "RETURN size(range(1, 10000000000))", True),
    Form("size(range()) 400M", "RETURN size(range(1, 400000000))", True),
    Form(
        "cartesian collect",
        "MATCH (a), (b), (c) RETURN size(collect([a.id, b.id, c.id])) AS n",
        False,
    ),
    Form("string doubling", "RETURN size(reduce(s = 'x', i IN range(1, 40) | s + s))", True),
    Form(
        "3M rows under LIMIT",
        "MATCH (a), (b), (c) RETURN a.id, b.id, c.id LIMIT 3000000",
        False,
    ),
    # Raw, it crashed the engine (not its memory): now one restart, like any other death.
    Form("comment in procedure name", "CALL db./**/labels() YIELD label RETURN label", False),
    # Issue 30: each aborted the engine (48 GB, 2.8 GB, 6.5 GB) past the per-query memory cap.
    Form(
        "computed range bound",
        "MATCH (n) WITH count(n) AS c RETURN size(range(1, c * 10000000))",
        True,
    ),
    Form(
        "computed range bound, unwound",
        "MATCH (n) WITH count(n) AS c UNWIND range(1, c * c) AS x RETURN count(x)",
        True,
    ),
    Form(
        "replace growth in reduce",
        "RETURN reduce(s = 'x', i IN range(1, 40) | replace(s, 'x', 'xx'))",
        True,
    ),
    Form(
        "concatenation growth in reduce",
        "RETURN size(reduce(s = '', i IN range(1, 10000) | s + 'xxxxxxxxxxxxxxxxxxxxxxxxxxxxxx'))",
        True,
    ),
    Form("nested ranges", "RETURN [a IN range(1, 100000) | range(1, 100000)]", True),
    Form(
        "nested ranges under the cap",
        "RETURN size([a IN range(1, 10000) | range(1, 10000)])",
        True,
    ),
    Form(
        "range per collected value",
        "MATCH (n) WITH collect(n.id) AS ids RETURN size([x IN ids | range(1, 10000)])",
        True,
    ),
)


def _peak_mb(pid: int) -> float:
    with contextlib.suppress(OSError):
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024
    return 0.0


def _reset_peak(pid: int) -> None:
    # Writing 5 to clear_refs resets VmHWM to the current RSS (Linux 4.0+).
    with contextlib.suppress(OSError):
        Path(f"/proc/{pid}/clear_refs").write_text("5")


class PeakSampler:
    """The engine's VmHWM before a form and its highest value while the form runs, polled so
    that the peak of an engine that dies (and is restarted) during the form is kept."""

    def __init__(self, server: EmbeddedServer, every_s: float = 0.01) -> None:
        self._server = server
        self._every_s = every_s
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._poll, daemon=True)
        self.before_mb = 0.0
        self.peak_mb = 0.0

    def __enter__(self) -> PeakSampler:
        pid = self._server.pid
        if pid is not None:
            _reset_peak(pid)
            self.before_mb = self.peak_mb = _peak_mb(pid)
        self._thread.start()
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self._stop.set()
        self._thread.join()

    def _poll(self) -> None:
        while not self._stop.wait(self._every_s):
            pid = self._server.pid
            if pid is not None:
                self.peak_mb = max(self.peak_mb, _peak_mb(pid))


def _policy(cypher: str) -> str:
    verdict = check_cypher(cypher)
    return "allows" if verdict.allowed else f"refuses ({verdict.category})"


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
    restarts = server.restarts
    with PeakSampler(server) as memory:
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
            # No policy and no outer cap: only the engine's own limits.
            outcome = _read(db, form.cypher)
            seconds = time.perf_counter() - started
    return {
        "form": form.name,
        "policy": _policy(form.cypher),
        "layer": layer,
        "outcome": outcome,
        "seconds": seconds,
        "restarts": server.restarts - restarts,
        "engine_before_mb": memory.before_mb,
        "engine_peak_mb": memory.peak_mb,
    }


def _worst(runs: list[dict[str, Any]]) -> dict[str, Any]:
    """One row for the repeats of a form on a layer: worst wall time, all restarts, top peak."""
    worst = max(runs, key=lambda r: r["seconds"])
    return worst | {
        "restarts": sum(r["restarts"] for r in runs),
        "engine_peak_mb": max(r["engine_peak_mb"] for r in runs),
        "repeats": len(runs),
    }


def _back_after_kill_9(db: FalkorGraph, nodes: int) -> dict[str, Any]:
    """Kill the engine and time the first read through the same adapter that has the data."""
    server = db._server
    assert server is not None and server.pid is not None
    restarts = server.restarts
    started = time.perf_counter()
    os.kill(server.pid, signal.SIGKILL)
    outcome = "never back"
    while time.perf_counter() - started < 60:
        try:
            if db.counts()[0] == nodes:
                outcome = f"back with {nodes:,} nodes"
                break
        except GraphError:
            # A read that reached the dying engine is not re-sent; the next one is.
            continue
    return {
        "form": "kill -9, then a read",
        "policy": "n/a",
        "layer": "engine",
        "outcome": outcome,
        "seconds": time.perf_counter() - started,
        "restarts": server.restarts - restarts,
        "engine_before_mb": 0.0,
        "engine_peak_mb": 0.0,
        "repeats": 1,
    }


def run(quick: bool = False) -> dict[str, Any]:
    """Every form through the agent's path and to the engine alone; then kill -9 recoveries."""
    data_dir = Path(tempfile.mkdtemp(prefix="cypherbot-dos-"))
    repeats = 1 if quick else 3
    rows: list[dict[str, Any]] = []
    skipped: list[str] = []
    kills: list[dict[str, Any]] = []
    try:
        db = connect("embedded", data_dir=data_dir, graph_name="dos")
        assert isinstance(db, FalkorGraph) and db._server is not None
        server = db._server
        # Every form that crashes the engine costs a restart; the guard is not what is measured.
        server.restarts_per_minute = 1_000
        load_demo(db, scale=300 if quick else 1000)
        db.persist()  # what a restart comes back with
        nodes, _ = db.counts()
        for form in FORMS:
            rows.append(_worst([_measure(db, form, "path") for _ in range(repeats)]))
            if form.needs_limit and server.memory_limit is None:
                skipped.append(form.name)
                continue
            rows.append(_worst([_measure(db, form, "engine") for _ in range(repeats)]))
        kills = [_back_after_kill_9(db, nodes) for _ in range(repeats)]
        rows.append(_worst(kills))
        limit = server.memory_limit
    finally:
        embedded_server(data_dir).stop()
        shutil.rmtree(data_dir, ignore_errors=True)
    path = [r for r in rows if r["layer"] == "path"]
    alone = [r for r in rows if r["layer"] == "engine" and r["policy"] != "n/a"]
    return {
        "quick": quick,
        "repeats": repeats,
        "graph_nodes": nodes,
        "query_timeout_s": QUERY_TIMEOUT_S,
        "memory_limit_mb": None if limit is None else limit // (1024 * 1024),
        "forms": rows,
        "skipped_without_limit": skipped,
        # What a question waits for and costs: the agent's path. The engine alone is the
        # backstop under a policy that missed a form.
        "worst_seconds": max(r["seconds"] for r in path),
        "worst_engine_peak_mb": max(r["engine_peak_mb"] for r in path),
        "crashes": sum(r["restarts"] for r in path),
        "worst_engine_alone_seconds": max((r["seconds"] for r in alone), default=0.0),
        "worst_engine_alone_peak_mb": max((r["engine_peak_mb"] for r in alone), default=0.0),
        "engine_alone_restarts": sum(r["restarts"] for r in alone),
        "kill9_back_seconds": max(k["seconds"] for k in kills),
    }


def table(figures: dict[str, Any]) -> str:
    limit = figures["memory_limit_mb"]
    lines = [
        f"Demo graph of {figures['graph_nodes']:,} nodes; QUERY_TIMEOUT_S = "
        f"{figures['query_timeout_s']:.0f} s; engine memory limit "
        f"{'none' if limit is None else f'{limit:,} MB'}; worst of {figures['repeats']} run(s). "
        f"Targets: wall ≤ {WALL_TARGET_S:.0f} s on the agent's path, engine peak ≤ "
        f"{MEMORY_TARGET_MB:.0f} MB there, no restart there; after kill -9, back with data "
        f"≤ {KILL_9_TARGET_S:.0f} s. The engine alone (no policy, no outer cap, no wait limit) "
        "shows the backstop: its own caps, the memory limit and a restart.",
        "",
        "| form | policy | layer | outcome | worst wall s | restarts | engine MB before | "
        "engine peak MB |",
        "|---|---|---|---|---:|---:|---:|---:|",
    ]
    for r in figures["forms"]:
        lines.append(
            f"| {r['form']} | {r['policy']} | {r['layer']} | {r['outcome']} | "
            f"{r['seconds']:.2f} | {r['restarts']} | {r['engine_before_mb']:.0f} | "
            f"{r['engine_peak_mb']:.0f} |"
        )
    if figures["skipped_without_limit"]:
        lines += [
            "",
            "Not sent to the engine alone (no memory limit on this platform): "
            + ", ".join(figures["skipped_without_limit"]),
        ]
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--quick", action="store_true", help="a smaller demo graph")
    args = parser.parse_args()
    print(table(run(quick=args.quick)))


if __name__ == "__main__":
    main()
