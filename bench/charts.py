"""Charts: decision and render time for a 30-row result, the renderer's install size, and how
long the bot's other threads stop while charts draw (vl-convert in the bot's process, as in
0.1, against the drawing process the bot uses).

    .venv/bin/python bench/charts.py [--quick]

Prints a markdown table; `run(quick)` returns the same figures for the suite runner. The first
render (the renderer starting its JavaScript engine) is reported apart from the steady state.
"""

from __future__ import annotations

import argparse
import importlib.util
import statistics
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from bot import charts  # noqa: E402

ROUNDS = {True: 20, False: 100}
SHAPES: dict[str, tuple[list[str], list[list[Any]]]] = {
    "bar, 30 categories": (
        ["service", "dependents"],
        [[f"service-{i:02d}", (i * 37) % 50] for i in range(30)],
    ),
    "line, 30 months": (
        ["month", "incidents"],
        [[f"{2024 + i // 12}-{i % 12 + 1:02d}", (i * 7) % 13] for i in range(30)],
    ),
    "grouped bar, 30 × 2": (
        ["team", "open", "closed"],
        [[f"team-{i:02d}", i % 5, (i * 3) % 11] for i in range(30)],
    ),
}


def _percentile(samples: list[float], q: float) -> float:
    ordered = sorted(samples)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


def _install_size_mb() -> float:
    spec = importlib.util.find_spec("vl_convert")
    if spec is None or spec.origin is None:
        return 0.0
    folder = Path(spec.origin).parent
    return sum(f.stat().st_size for f in folder.rglob("*") if f.is_file()) / 1e6


def _longest_stall_ms(draw: Callable[[], object], rounds: int) -> float:
    """The longest another thread waited for the interpreter while `draw` ran `rounds` times:
    a thread that wakes every millisecond and notes the biggest gap between two wake-ups."""
    done = threading.Event()
    longest = [0.0]

    def tick() -> None:
        last = time.perf_counter()
        while not done.is_set():
            time.sleep(0.001)
            now = time.perf_counter()
            longest[0] = max(longest[0], now - last)
            last = now

    ticker = threading.Thread(target=tick)
    ticker.start()
    try:
        for _ in range(rounds):
            draw()
    finally:
        done.set()
        ticker.join()
    return longest[0] * 1000


def _stalls(question: str, quick: bool) -> dict[str, float]:
    """Other threads' longest stall while charts draw: vl-convert called in this process (it
    holds the GIL while it renders) against the drawer's child process."""
    import vl_convert

    columns, rows = SHAPES["bar, 30 categories"]
    chart_spec = charts.spec(question, columns, rows, charts.decide(columns, rows))
    rounds = 5 if quick else 20
    vl_convert.vegalite_to_png(chart_spec, scale=2.0)  # both engines started before measuring
    charts.render_png(chart_spec)
    return {
        "stall_in_process_ms": _longest_stall_ms(
            lambda: vl_convert.vegalite_to_png(chart_spec, scale=2.0), rounds
        ),
        "stall_drawer_ms": _longest_stall_ms(lambda: charts.render_png(chart_spec), rounds),
    }


def run(quick: bool = False) -> dict[str, Any]:
    question = "How many dependents does each service have?"
    started = time.perf_counter()
    charts.chart_for(question, *SHAPES["bar, 30 categories"])
    first_ms = (time.perf_counter() - started) * 1000
    shapes = []
    for name, (columns, rows) in SHAPES.items():
        decide_ms: list[float] = []
        total_ms: list[float] = []
        size = 0
        for _ in range(ROUNDS[quick]):
            t0 = time.perf_counter()
            decision = charts.decide(columns, rows)
            t1 = time.perf_counter()
            png = charts.render_png(charts.spec(question, columns, rows, decision))
            t2 = time.perf_counter()
            decide_ms.append((t1 - t0) * 1000)
            total_ms.append((t2 - t0) * 1000)
            size = len(png)
        shapes.append(
            {
                "shape": name,
                "kind": decision.kind,
                "decide_p95_ms": _percentile(decide_ms, 0.95),
                "p50_ms": statistics.median(total_ms),
                "p95_ms": _percentile(total_ms, 0.95),
                "png_kb": size / 1000,
            }
        )
    return {
        "quick": quick,
        "rounds": ROUNDS[quick],
        "first_render_ms": first_ms,
        "p95_ms": max(s["p95_ms"] for s in shapes),
        "install_mb": _install_size_mb(),
        "shapes": shapes,
    } | _stalls(question, quick)


def table(figures: dict[str, Any]) -> str:
    lines = [
        "| 30-row result | kind | decide p95 | decide + render p50 | p95 (target ≤ 300 ms) | PNG |",
        "|---|---|---:|---:|---:|---:|",
    ]
    for s in figures["shapes"]:
        lines.append(
            f"| {s['shape']} | {s['kind']} | {s['decide_p95_ms']:.2f} ms | {s['p50_ms']:.0f} ms "
            f"| {s['p95_ms']:.0f} ms | {s['png_kb']:.0f} kB |"
        )
    lines.append(
        f"\nFirst render in a process (the renderer starting): {figures['first_render_ms']:.0f} ms. "
        f"vl-convert-python installed: {figures['install_mb']:.0f} MB. "
        f"{figures['rounds']} rounds per shape."
        f"\n\nOther threads' longest stall while charts draw: "
        f"{figures['stall_in_process_ms']:.0f} ms with vl-convert in the bot's process, "
        f"{figures['stall_drawer_ms']:.0f} ms with the drawing process "
        f"({figures['stall_drawer_ms'] / max(figures['stall_in_process_ms'], 1e-9):.2f}×)."
    )
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--quick", action="store_true", help="fewer rounds")
    args = parser.parse_args()
    print(table(run(quick=args.quick)))


if __name__ == "__main__":
    main()
