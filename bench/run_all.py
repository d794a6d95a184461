"""Runs every bench/*.py module's `run(quick)` and prints one markdown report, figures beside
their targets; the same figures go to bench/results/ as JSON.

    python bench/run_all.py [--quick] [--only agent,memory]

Each module runs in its own process (fixed seeds, PYTHONHASHSEED=0) with a time limit, so a
module that crashes, hangs or leaks cannot take the suite down: it becomes an error row.
"""

from __future__ import annotations

import argparse
import datetime as dt
import importlib.util
import json
import os
import platform
import random
import subprocess
import sys
import tempfile
import time
import traceback
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

BENCH = Path(__file__).resolve().parent
ROOT = BENCH.parent
RESULTS = BENCH / "results"
SEED = 1234
TIME_LIMIT_S = {True: 150.0, False: 900.0}
"""Per module; a module past it is stopped and reported as an error."""


@dataclass(frozen=True)
class Target:
    """One figure the issues set a target for, and where the benchmarks report it."""

    figure: str
    module: str
    extract: Callable[[dict[str, Any]], tuple[float, str] | None]
    """(value, note) from the module's results, or None when it has no such figure."""
    limit: float
    unit: str
    at_most: bool = True


def _path(*keys: str) -> Callable[[dict[str, Any]], tuple[float, str] | None]:
    def get(results: dict[str, Any]) -> tuple[float, str] | None:
        value: Any = results
        for key in keys:
            if not isinstance(value, dict) or key not in value:
                return None
            value = value[key]
        return (float(value), "") if isinstance(value, int | float) else None

    return get


def _retrieval_p95(
    backend: str,
) -> Callable[[dict[str, Any]], tuple[float, str] | None]:
    def get(results: dict[str, Any]) -> tuple[float, str] | None:
        rows = [
            r
            for r in results.get("retrieval", [])
            if r.get("mode") == "lexical" and r.get("backend", "sqlite") == backend
        ]
        if not rows:
            return None
        largest = max(rows, key=lambda r: r["examples"])
        note = f"lexical, {largest['examples']:,} examples"
        if largest["examples"] < 100_000:
            note += " (the target is at 100k; run without --quick)"
        return float(largest["p95_ms"]), note

    return get


def _instances_ratio(results: dict[str, Any]) -> tuple[float, str] | None:
    i = results.get("instances")
    if not isinstance(i, dict):
        return None
    note = f"{i['workers_per_process']} workers each, {i['llm_s']} s scripted LLM"
    return float(i["ratio"]), note


def _scaling(results: dict[str, Any]) -> tuple[float, str] | None:
    t = results.get("throughput")
    if not isinstance(t, dict) or not t.get("ratio"):
        return None
    # Answers/s with N threads over answers/s with one: N conversations take N/ratio
    # times as long as one conversation.
    threads = float(t.get("threads", 50))
    return threads / float(t["ratio"]), f"{threads:.0f} threads, 0.5 s scripted LLM calls"


def _rows_first_ms(results: dict[str, Any]) -> tuple[float, str] | None:
    """Event → first rows in the thread, beyond the scripted generate step's own time."""
    first = results.get("first_content")
    if not isinstance(first, dict):
        return None
    extra = float(first["first_p50_ms"]) - float(first["generate_ms"])
    return extra, f"p50, {first['generate_ms'] / 1000:.0f} s generate step"


def _schema_examples_s(results: dict[str, Any]) -> tuple[float, str] | None:
    graphs = [g for g in results.get("graphs", []) if isinstance(g, dict)]
    if not graphs:
        return None
    small = min(graphs, key=lambda g: g["nodes"])
    return float(small["generate_s"]), f"{small['nodes']:,} nodes, {small['kept']} kept"


TARGETS = [
    Target("LLM calls per question, happy path (max)", "agent",
           _path("routes", "happy_path_max_calls"), 3, "calls"),
    Target("generate prompt pruned / full (60 labels)", "agent",
           _path("pruning", "mean_ratio_chars"), 0.40, "ratio"),
    Target("agent non-LLM time per question, p95", "agent",
           _path("routes", "non_llm_ms_p95"), 50, "ms"),
    Target("Slack end-to-end overhead per question, p95", "slack",
           _path("overhead", "p95_ms"), 50, "ms"),
    Target("Slack ack latency, 20 concurrent events, p99", "slack",
           _path("ack", "p99_ms"), 100, "ms"),
    Target("Slack ack latency in Socket Mode, 20 concurrent events, p99", "slack",
           _path("ack_socket", "p99_ms"), 100, "ms"),
    Target("Slack /cypherbot ack, example store 2 s slow, p99", "slack",
           _path("command_slow_store", "http", "p99_ms"), 100, "ms"),
    Target("Slack /cypherbot ack in Socket Mode, example store 2 s slow, p99", "slack",
           _path("command_slow_store", "socket", "p99_ms"), 100, "ms"),
    Target("50 conversations' time / one conversation's", "slack", _scaling, 2, "×"),
    Target("event → first rows in the thread, beyond the generate step", "slack",
           _rows_first_ms, 300, "ms"),
    Target("example retrieval similar(), p95", "memory", _retrieval_p95("sqlite"), 10, "ms"),
    Target("example retrieval on PostgreSQL, p95", "memory", _retrieval_p95("postgresql"),
           20, "ms"),
    Target("answers/s, two bot processes / one (shared PostgreSQL)", "memory",
           _instances_ratio, 1.8, "×", at_most=False),
    Target("hostile read wall time, worst form (QUERY_TIMEOUT_S + 2 s)", "dos",
           _path("worst_seconds"), 12, "s"),
    Target("engine peak memory during hostile reads", "dos",
           _path("worst_engine_peak_mb"), 1024, "MB"),
    Target("engine crashes during hostile reads", "dos", _path("crashes"), 0, "crashes"),
    Target("engine back with its data after kill -9", "dos", _path("kill9_back_seconds"), 10,
           "s"),
    Target("graph tool read, largest graph (healthcare), connection p95", "graph_tools",
           _path("healthcare", "tools", "connection (resolved)", "wall_ms", "p95"),
           200, "ms"),
    Target("schema examples generated, demo graph", "schema_examples",
           _schema_examples_s, 5, "s"),
    Target("chart decision + render, 30 rows, p95", "charts", _path("p95_ms"), 300, "ms"),
]  # fmt: skip


def modules() -> list[str]:
    """Every benchmark module next to this file (not this runner, not private files)."""
    return sorted(
        p.stem for p in BENCH.glob("*.py") if p.stem != "run_all" and not p.stem.startswith("_")
    )


def _load(name: str) -> Any:
    spec = importlib.util.spec_from_file_location(f"bench_{name}", BENCH / f"{name}.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def child(name: str, quick: bool, out: Path) -> int:
    """Run one module in this process and write {results, seconds} or {error} to `out`."""
    random.seed(SEED)
    started = time.perf_counter()
    try:
        results = _load(name).run(quick=quick)
        payload: dict[str, Any] = {"results": results}
    except BaseException as exc:  # any failure of the module is the report's, not ours
        payload = {"error": f"{type(exc).__name__}: {exc}", "traceback": traceback.format_exc()}
    payload["seconds"] = time.perf_counter() - started
    out.write_text(json.dumps(payload, default=str))
    return 0


def run_module(name: str, quick: bool) -> dict[str, Any]:
    """One module in a child process; never raises."""
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "result.json"
        cmd = [sys.executable, str(Path(__file__)), "--child", name, "--out", str(out)]
        started = time.perf_counter()
        try:
            proc = subprocess.run(
                cmd + (["--quick"] if quick else []),
                cwd=ROOT,
                env={**os.environ, "PYTHONHASHSEED": "0"},
                capture_output=True,
                text=True,
                timeout=TIME_LIMIT_S[quick],
            )
        except subprocess.TimeoutExpired:
            return {
                "error": f"no result within {TIME_LIMIT_S[quick]:.0f} s (stopped)",
                "seconds": time.perf_counter() - started,
            }
        if out.exists():
            payload: dict[str, Any] = json.loads(out.read_text())
            return payload
        tail = (proc.stderr or proc.stdout or "").strip().splitlines()[-3:]
        return {
            "error": f"exited with code {proc.returncode}: {' | '.join(tail)[:300]}",
            "seconds": time.perf_counter() - started,
        }


def _fmt(value: float, unit: str) -> str:
    if unit == "ratio":
        return f"{value:.2f}"
    if unit == "×":
        return f"{value:.2f}×"
    if unit == "calls":
        return f"{value:.0f}"
    return f"{value:.1f} {unit}"


def target_rows(runs: dict[str, dict[str, Any]]) -> list[dict[str, Any]]:
    rows = []
    for t in TARGETS:
        row: dict[str, Any] = {
            "figure": t.figure,
            "module": t.module,
            "target": f"{'≤' if t.at_most else '≥'} {_fmt(t.limit, t.unit)}",
            "value": None,
            "note": "",
        }
        run = runs.get(t.module)
        if run is None:
            row["status"] = "not measured"
            row["note"] = f"bench/{t.module}.py not run"
        elif "error" in run:
            row["status"] = "error"
            row["note"] = f"bench/{t.module}.py failed"
        else:
            found = t.extract(run.get("results") or {})
            if found is None:
                row["status"] = "not measured"
                row["note"] = f"bench/{t.module}.py reports no such figure"
            else:
                value, note = found
                met = value <= t.limit if t.at_most else value >= t.limit
                row.update(value=value, note=note, status="met" if met else "NOT met")
        rows.append(row)
    return rows


def _flatten(value: Any, prefix: str = "") -> list[tuple[str, str]]:
    """Key paths and printable values of a module's results, for modules without a table."""
    if isinstance(value, dict):
        out: list[tuple[str, str]] = []
        for key, item in value.items():
            out += _flatten(item, f"{prefix}.{key}" if prefix else str(key))
        return out
    if isinstance(value, list) and value and all(isinstance(v, dict) for v in value):
        out = []
        for i, item in enumerate(value):
            out += _flatten(item, f"{prefix}[{i}]")
        return out
    if isinstance(value, float):
        return [(prefix, f"{value:,.3f}")]
    return [(prefix, str(value))]


def module_markdown(name: str, results: dict[str, Any]) -> str:
    """The module's own table when it has one (`_markdown`, `markdown` or `table`), else
    every figure as a key/value table."""
    try:
        module = _load(name)
        for attr in ("_markdown", "markdown", "table"):
            render = getattr(module, attr, None)
            if callable(render):
                return str(render(results))
    except Exception:  # a broken renderer must not hide the figures
        pass
    lines = ["| figure | value |", "|---|---:|"]
    lines += [f"| {key} | {value} |" for key, value in _flatten(results)]
    return "\n".join(lines)


def report(runs: dict[str, dict[str, Any]], quick: bool, seconds: float) -> str:
    rows = target_rows(runs)
    mark = {"met": "✅ met", "NOT met": "❌ not met", "error": "⚠️ error"}
    out = [
        f"# cypherbot benchmarks ({'quick' if quick else 'full'} run)",
        "",
        f"{dt.datetime.now(dt.UTC):%Y-%m-%d %H:%M} UTC · {platform.python_implementation()} "
        f"{platform.python_version()} · {os.cpu_count()} CPUs · {platform.system()} · "
        f"{seconds:.0f} s in total · seed {SEED}",
        "",
        "## Targets",
        "",
        "| figure | measured | target | status | note |",
        "|---|---:|---:|---|---|",
    ]
    for r in rows:
        value = "-" if r["value"] is None else _fmt(r["value"], _unit(r["figure"]))
        status = mark.get(r["status"], r["status"])
        out.append(f"| {r['figure']} | {value} | {r['target']} | {status} | {r['note']} |")
    out += ["", "## Modules", "", "| module | status | seconds |", "|---|---|---:|"]
    for name, run in runs.items():
        status = "ok" if "error" not in run else f"error: {run['error']}"
        out.append(f"| {name} | {status.replace('|', '/')} | {run.get('seconds', 0):.1f} |")
    for name, run in runs.items():
        if "error" in run:
            continue
        # The module's own headings sit one level below its section.
        body = module_markdown(name, run.get("results") or {})
        body = "\n".join("#" + line if line.startswith("#") else line for line in body.splitlines())
        out += ["", f"## {name}", "", body]
    return "\n".join(out) + "\n"


def _unit(figure: str) -> str:
    return next(t.unit for t in TARGETS if t.figure == figure)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="reduced sizes, under 2 minutes")
    parser.add_argument("--only", help="comma-separated module names (default: all)")
    parser.add_argument("--child", help=argparse.SUPPRESS)
    parser.add_argument("--out", type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.child:
        return child(args.child, args.quick, args.out)
    names = modules()
    if args.only:
        wanted = {n.strip() for n in args.only.split(",")}
        names = [n for n in names if n in wanted]
    started = time.perf_counter()
    runs: dict[str, dict[str, Any]] = {}
    for name in names:
        print(f"… bench/{name}.py", file=sys.stderr, flush=True)
        runs[name] = run_module(name, args.quick)
        state = "error" if "error" in runs[name] else "done"
        print(f"  {state} in {runs[name].get('seconds', 0):.0f} s", file=sys.stderr, flush=True)
    seconds = time.perf_counter() - started
    text = report(runs, args.quick, seconds)
    print(text)
    RESULTS.mkdir(exist_ok=True)
    stamp = dt.datetime.now(dt.UTC).strftime("%Y%m%dT%H%M%SZ")
    payload = {
        "quick": args.quick,
        "seconds": seconds,
        "seed": SEED,
        "created": stamp,
        "targets": target_rows(runs),
        "modules": runs,
    }
    for path in (RESULTS / f"{stamp}-{'quick' if args.quick else 'full'}.json",
                 RESULTS / "latest.json"):  # fmt: skip
        path.write_text(json.dumps(payload, indent=2, default=str))
    print(f"Figures written to {RESULTS / 'latest.json'}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
