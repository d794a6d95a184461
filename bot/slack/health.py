"""`/healthz`'s dependency checks: each on its own thread, one run at a time per dependency, reported after a bounded wait.

A check may block for as long as its dependency does (a paused graph engine holds a read
for ever: no client timeout fires on a process that is stopped, not gone). So `/healthz`
never waits for a check longer than `wait_s` (under a second): it starts a run of every check
not already running, waits up to `wait_s` for the runs in flight, and reports a check still
running after that as `"status": "slow"` — not ok, with how long it has been running and its
last finished result — while the run goes on. Requests meanwhile wait on that same run rather
than start another, so a hung dependency costs one thread, not one per request; the first
request after it ends starts a fresh run. The threads are daemon threads: a check that never
returns must not keep the process from exiting.

Why a bounded wait rather than answering from the last known state at once: a load balancer
asking after an outage deserves a fresh answer, and a healthy check (a ping, a SQLite read)
takes milliseconds, far inside the wait.
"""

from __future__ import annotations

import asyncio
import logging
import threading
import time
from collections.abc import Callable, Mapping
from concurrent.futures import Future
from dataclasses import dataclass
from typing import Any

logger = logging.getLogger(__name__)

HealthCheck = Callable[[], object]
"""Raises when the thing it checks is down; its return value (e.g. a version) is reported."""

Report = dict[str, Any]


@dataclass
class _Run:
    """One run of a check in flight."""

    future: Future[Report]
    started: float


class HealthChecks:
    """The state of every check between `/healthz` requests: the run in flight and the last
    finished result of each."""

    def __init__(self, wait_s: float) -> None:
        self.wait_s = wait_s
        self._lock = threading.Lock()
        self._running: dict[str, _Run] = {}
        self._last: dict[str, tuple[Report, float]] = {}

    async def check(self, checks: Mapping[str, HealthCheck]) -> tuple[bool, Report]:
        """(all ok, a report per check) within about `wait_s`, whatever the checks do."""
        runs = self._start(checks)
        pending = [asyncio.wrap_future(r.future) for r in runs.values() if not r.future.done()]
        if pending:
            # Not wait_for: a run that outlives the wait is left to finish, not cancelled.
            await asyncio.wait(pending, timeout=self.wait_s)
        return self._report(runs)

    def _start(self, checks: Mapping[str, HealthCheck]) -> dict[str, _Run]:
        """The run of each check: the one in flight, or a new one on its own thread."""
        runs: dict[str, _Run] = {}
        with self._lock:
            for name, check in checks.items():
                run = self._running.get(name)
                if run is None:
                    run = self._running[name] = _Run(Future(), time.monotonic())
                    threading.Thread(
                        target=self._run,
                        args=(name, check, run),
                        name=f"health-{name}",
                        daemon=True,
                    ).start()
                runs[name] = run
        return runs

    def _run(self, name: str, check: HealthCheck, run: _Run) -> None:
        try:
            value = check()
            result: Report = {"ok": True, **({"detail": str(value)} if value else {})}
        except Exception as exc:
            result = {"ok": False, "error": type(exc).__name__}
            logger.warning("health check %s failed: %s", name, exc)
        with self._lock:
            self._last[name] = (result, time.monotonic())
            if self._running.get(name) is run:
                del self._running[name]
        if not run.future.done():  # nothing cancels it; a guard, not a case
            run.future.set_result(result)

    def _report(self, runs: Mapping[str, _Run]) -> tuple[bool, Report]:
        report: Report = {}
        now = time.monotonic()
        for name, run in runs.items():
            if run.future.done():
                report[name] = run.future.result()
                continue
            slow: Report = {"ok": False, "status": "slow", "running_s": round(now - run.started, 1)}
            with self._lock:
                last = self._last.get(name)
            if last is not None:
                result, at = last
                slow["last"] = {**result, "age_s": round(now - at, 1)}
            logger.warning("health check %s still running after %.1f s", name, now - run.started)
            report[name] = slow
        return all(r["ok"] for r in report.values()), report
