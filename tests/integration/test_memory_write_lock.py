"""The process-wide write lock: threads of one process queue on it, and nothing is lost."""

from __future__ import annotations

import threading
import time
from pathlib import Path

from memory import open_memory
from memory.db import rows

THREADS = 16
CLAIMS = 100


def test_sixteen_threads_claiming_at_once_store_every_row_without_errors(tmp_path: Path) -> None:
    mem = open_memory(tmp_path / "memory.sqlite3")
    errors: list[BaseException] = []
    refused: list[str] = []
    slowest = [0.0] * THREADS
    start = threading.Barrier(THREADS)

    def claim(n: int) -> None:
        try:
            start.wait()
            for i in range(CLAIMS):
                began = time.perf_counter()
                if not mem.events.claim(f"event:{n}-{i}"):
                    refused.append(f"{n}-{i}")
                slowest[n] = max(slowest[n], time.perf_counter() - began)
        except BaseException as exc:  # the test reports every failure, not just the first
            errors.append(exc)

    threads = [threading.Thread(target=claim, args=(n,)) for n in range(THREADS)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(120)
    try:
        assert not errors, errors[:3]
        assert not refused, refused[:5]
        assert not any(thread.is_alive() for thread in threads)
        [count] = mem._conns.read(lambda db: rows(db, "SELECT count(*) AS n FROM events"))
        assert count["n"] == THREADS * CLAIMS
        # Queued on a Python lock, no claim should wait anywhere near SQLite's busy timeout.
        assert max(slowest) < 5.0, f"slowest claim took {max(slowest):.2f} s"
    finally:
        mem.close()


def test_two_memories_on_one_file_share_the_lock(tmp_path: Path) -> None:
    path = tmp_path / "memory.sqlite3"
    first, second = open_memory(path), open_memory(path)
    try:
        assert first._conns._write_lock is second._conns._write_lock
        assert first.events.claim("event:1") and not second.events.claim("event:1")
    finally:
        first.close()
        second.close()
