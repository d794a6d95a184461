"""Slack work after the ack: a bounded worker pool that runs each delivery once (persisted claims).

Why our own pool rather than Bolt's lazy listeners: lazy listeners exist for FaaS (they
re-invoke the app) and, in a long-running process, run on Bolt's listener executor, whose
queue is unbounded and which knows nothing of our dedupe. Here the listener does the cheap,
synchronous part inside the request (filter, claim `event:<id>` and `msg:<channel>:<ts>` in
the memory database, enqueue) and returns, so Bolt acks in milliseconds in HTTP and Socket
Mode alike (`process_before_response=True`: nothing of ours runs after the response). The
pool bounds concurrent questions (`WORKERS`) and queued ones, answers "busy" kindly when
full, marks claims done only when the work finished (so a retry of an attempt that died is
answered once its lease expires), and can be drained on shutdown and waited on in tests.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Protocol

logger = logging.getLogger(__name__)

LEASE_S = 120.0
"""How long a claim protects work in progress; a retry after that re-runs a dead attempt."""
TTL_S = 3600.0
"""How long a handled key is remembered (Slack retries for ~5 minutes)."""


class EventClaims(Protocol):
    """The memory store of processed deliveries (`memory.events`)."""

    def claim(self, key: str, *, lease_s: float = 120, ttl_s: float = 3600) -> bool: ...

    def done(self, key: str) -> None: ...

    def release(self, key: str) -> None: ...


class Delivery:
    """Runs accepted Slack deliveries on `workers` threads, each key once."""

    def __init__(
        self, claims: EventClaims, *, workers: int, queue_limit: int | None = None
    ) -> None:
        self._claims = claims
        self._pool = ThreadPoolExecutor(max_workers=max(1, workers), thread_name_prefix="bot-work")
        self._capacity = max(1, workers) + (
            queue_limit if queue_limit is not None else 50 * workers
        )
        self._in_flight = 0
        self._idle = threading.Condition()
        self._closed = False

    def submit(
        self,
        keys: Sequence[str],
        job: Callable[[], None],
        *,
        on_busy: Callable[[], None] | None = None,
    ) -> bool:
        """Claim every key and queue `job`; False when a key was already handled or claimed
        (a retry or the twin mention/message event) — then nothing runs."""
        claimed: list[str] = []
        for key in keys:
            if not self._claims.claim(key, lease_s=LEASE_S, ttl_s=TTL_S):
                for earlier in claimed:
                    self._claims.release(earlier)
                logger.debug("skipping %s: already handled or in progress", key)
                return False
            claimed.append(key)
        with self._idle:
            full = self._closed or self._in_flight >= self._capacity
            if not full:
                self._in_flight += 1
        if full:
            logger.warning("worker pool full: declining a delivery")
            for key in claimed:
                self._claims.done(key)
            if on_busy is not None:
                threading.Thread(target=_safely, args=(on_busy,), daemon=True).start()
            return False
        self._pool.submit(self._run, claimed, job)
        return True

    def _run(self, keys: list[str], job: Callable[[], None]) -> None:
        try:
            _safely(job)
            for key in keys:
                try:
                    self._claims.done(key)
                except Exception:
                    logger.exception("could not mark %s done", key)
        finally:
            with self._idle:
                self._in_flight -= 1
                self._idle.notify_all()

    @property
    def in_flight(self) -> int:
        with self._idle:
            return self._in_flight

    def wait_idle(self, timeout: float = 30.0) -> bool:
        """Block until nothing is queued or running; False on timeout."""
        with self._idle:
            return self._idle.wait_for(lambda: self._in_flight == 0, timeout)

    def shutdown(self, wait: bool = True) -> None:
        with self._idle:
            self._closed = True
        self._pool.shutdown(wait=wait)


def _safely(job: Callable[[], None]) -> None:
    try:
        job()
    except Exception:
        logger.exception("delivery job failed")
