"""Slack work after the ack: a bounded worker pool that runs each delivery once (persisted claims).

Why our own pool rather than Bolt's lazy listeners: lazy listeners exist for FaaS (they
re-invoke the app) and, in a long-running process, run on Bolt's listener executor, whose
queue is unbounded and which knows nothing of our dedupe. Here the listener does only the
cheap part inside the request — filter, check the delivery's keys (`event:<id>`,
`msg:<channel>:<ts>`) against this process's recent keys, enqueue — and returns, so Bolt acks
in milliseconds in HTTP and Socket Mode alike (`process_before_response=True`: nothing of
ours runs after the response). The worker then claims the keys in the memory database before
any work: that persisted claim is what holds across processes and restarts (a retry after a
crash finds the claim, or its expired lease, there). Keeping the database out of the ack
matters: under a burst, acks that waited for SQLite's write lock behind busy workers took
0.2-0.9 s. The pool bounds concurrent questions (`WORKERS`) and queued ones, answers "busy"
kindly when full, marks claims done only when the work finished (so a retry of an attempt
that died is answered once its lease expires), and can be drained and waited on in tests.
Work submitted while a transport dispatches and sends its response (`after_response`) starts
only once the response is out, so Slack has the ack before any call the work makes.
"""

from __future__ import annotations

import contextvars
import logging
import queue
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Protocol

logger = logging.getLogger(__name__)

LEASE_S = 120.0
"""How long a claim protects work in progress by default (CLAIM_LEASE_S); a retry after that
re-runs a dead attempt."""
TTL_S = 3600.0
"""How long a handled key is remembered (Slack retries for ~5 minutes)."""
RECENT_SWEEP_AT = 10_000
"""Forget expired in-process keys once this many are held."""


class EventClaims(Protocol):
    """The memory store of processed deliveries (`memory.events`)."""

    def claim(self, key: str, *, lease_s: float = 120, ttl_s: float = 3600) -> bool: ...

    def done(self, key: str) -> None: ...

    def release(self, key: str) -> None: ...


class Delivery:
    """Runs accepted Slack deliveries on `workers` threads, each key once."""

    def __init__(
        self,
        claims: EventClaims,
        *,
        workers: int,
        queue_limit: int | None = None,
        lease_s: float = LEASE_S,
    ) -> None:
        self._claims = claims
        self._lease_s = lease_s
        # Fixed threads, all started now: a ThreadPoolExecutor starts its threads on demand,
        # inside submit(), i.e. inside the ack, where waiting for a new thread to get the GIL
        # from busy workers cost up to 0.1 s per event in a burst.
        self._queue: queue.SimpleQueue[_Work | None] = queue.SimpleQueue()
        self._threads = [
            threading.Thread(target=self._work, name=f"bot-work-{n}", daemon=True)
            for n in range(max(1, workers))
        ]
        for thread in self._threads:
            thread.start()
        self._capacity = max(1, workers) + (
            queue_limit if queue_limit is not None else 50 * workers
        )
        self._in_flight = 0
        self._idle = threading.Condition()
        self._closed = False
        self._recent: dict[str, float] = {}
        """Keys accepted by this process, with the monotonic time they may be forgotten."""

    def submit(
        self,
        keys: Sequence[str],
        job: Callable[[], None],
        *,
        on_busy: Callable[[], None] | None = None,
        wanted: Callable[[], bool] | None = None,
    ) -> bool:
        """Queue `job` unless one of `keys` was accepted here already (a retry, or the twin
        mention/message event) — then nothing runs. No database call: see the module note.

        `wanted` is a check that needs I/O (a database read), run by the worker before it
        claims the keys: when it answers False, nothing is claimed and nothing runs. A full
        pool calls `on_busy` only for a delivery that is wanted."""
        now = time.monotonic()
        with self._idle:
            if len(self._recent) > RECENT_SWEEP_AT:
                self._recent = {k: t for k, t in self._recent.items() if t > now}
            if any(self._recent.get(key, 0.0) > now for key in keys):
                logger.debug("skipping %s: already accepted", keys[0] if keys else "?")
                return False
            for key in keys:
                self._recent[key] = now + TTL_S
            full = self._closed or self._in_flight >= self._capacity
            if not full:
                self._in_flight += 1
        if full:
            logger.warning("worker pool full: declining a delivery")
            if on_busy is not None:
                reply = on_busy if wanted is None else _if_wanted(wanted, on_busy)
                busy = threading.Thread(target=_safely, args=(reply,), daemon=True)
                _start(busy.start)
            return False
        item = _Work(list(keys), job, wanted)
        _start(lambda: self._queue.put(item))
        return True

    def _work(self) -> None:
        while (item := self._queue.get()) is not None:
            self._run(item)

    def _run(self, work: _Work) -> None:
        try:
            if work.wanted is not None and not _is_wanted(work.wanted, work.keys):
                return
            claimed = self._claim(work.keys)
            if claimed is None:
                return
            _safely(work.job)
            for key in claimed:
                try:
                    self._claims.done(key)
                except Exception:
                    logger.exception("could not mark %s done", key)
        finally:
            with self._idle:
                self._in_flight -= 1
                self._idle.notify_all()

    def _claim(self, keys: list[str]) -> list[str] | None:
        """Claim every key in the memory database; None (and nothing held) when another
        process, or this one before a restart, has handled or is handling the delivery."""
        claimed: list[str] = []
        try:
            for key in keys:
                if not self._claims.claim(key, lease_s=self._lease_s, ttl_s=TTL_S):
                    logger.debug("skipping %s: handled or in progress elsewhere", key)
                    for earlier in claimed:
                        self._claims.release(earlier)
                    return None
                claimed.append(key)
        except Exception:
            logger.exception("could not claim %s; answering anyway", keys)
        return claimed

    @property
    def in_flight(self) -> int:
        with self._idle:
            return self._in_flight

    def wait_idle(self, timeout: float = 30.0) -> bool:
        """Block until nothing is queued or running; False on timeout."""
        with self._idle:
            return self._idle.wait_for(lambda: self._in_flight == 0, timeout)

    def shutdown(self, wait: bool = True) -> None:
        """Stop taking work; the threads finish what is queued, then end."""
        with self._idle:
            if self._closed:
                return
            self._closed = True
        for _ in self._threads:
            self._queue.put(None)
        if wait:
            for thread in self._threads:
                thread.join()


_held: contextvars.ContextVar[list[Callable[[], None]] | None] = contextvars.ContextVar(
    "held_work", default=None
)
"""The starts of work submitted inside `after_response`, run when it ends."""


@contextmanager
def after_response() -> Iterator[None]:
    """Start the work submitted inside the block only when the block ends. Each transport
    wraps its dispatch and the sending of its response in it: Bolt sends the ack only after
    the listener returns, and a worker started at `submit` raced it (and sometimes called
    `assistant.threads.setStatus` first)."""
    held: list[Callable[[], None]] = []
    token = _held.set(held)
    try:
        yield
    finally:
        _held.reset(token)
        for start in held:
            start()


def _start(start: Callable[[], None]) -> None:
    """Now, or when the enclosing `after_response` block ends."""
    held = _held.get()
    if held is None:
        start()
    else:
        held.append(start)


@dataclass(frozen=True)
class _Work:
    """A queued delivery: its keys, its job, and the check that decides whether it runs."""

    keys: list[str]
    job: Callable[[], None]
    wanted: Callable[[], bool] | None = None


def _is_wanted(wanted: Callable[[], bool], keys: list[str]) -> bool:
    """The check's answer; a check that fails counts as not wanted: a thread the bot may
    never have been in gets no reply rather than, while the store is down, an error."""
    try:
        return bool(wanted())
    except Exception:
        logger.exception("could not check whether %s is wanted; skipping it", keys)
        return False


def _if_wanted(wanted: Callable[[], bool], reply: Callable[[], None]) -> Callable[[], None]:
    def maybe() -> None:
        if _is_wanted(wanted, []):
            reply()

    return maybe


def _safely(job: Callable[[], None]) -> None:
    try:
        job()
    except Exception:
        logger.exception("delivery job failed")
