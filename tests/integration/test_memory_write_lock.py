"""The process-wide write lock: threads of one process queue on it, and nothing is lost."""

from __future__ import annotations

import threading
from pathlib import Path

from memory import open_memory
from memory.db import rows

THREADS = 16
CLAIMS = 100


def test_sixteen_threads_claiming_at_once_store_every_row_without_errors(tmp_path: Path) -> None:
    mem = open_memory(tmp_path / "memory.sqlite3")
    errors: list[BaseException] = []
    refused: list[str] = []
    start = threading.Barrier(THREADS)

    def claim(n: int) -> None:
        try:
            start.wait()
            for i in range(CLAIMS):
                # A claim that waited out SQLite's busy timeout would raise "database is
                # locked" (an error) or be refused: both are caught below.
                if not mem.events.claim(f"event:{n}-{i}"):
                    refused.append(f"{n}-{i}")
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


def test_short_lived_threads_do_not_leak_connections(tmp_path: Path) -> None:
    # The HTTP server answers every Slack request on a new thread; each used to keep its own
    # connection open until the process ended. Counted in the pool's own bookkeeping, not in
    # /proc's file descriptors: SQLite defers closing a file descriptor while another
    # connection of the process holds a lock on the file, so that count depends on timing.
    from memory.db import MAX_IDLE_CONNECTIONS

    path = tmp_path / "memory.sqlite3"
    mem = open_memory(path)
    try:
        for batch in range(10):
            threads = [
                threading.Thread(target=mem.events.claim, args=(f"event:{batch}-{i}",))
                for i in range(20)
            ]
            for thread in threads:
                thread.start()
            for thread in threads:
                thread.join()
        # Every thread ended and gave its connection back: the pool keeps at most its idle
        # allowance open and has closed the rest.
        assert len(mem._conns._all) <= MAX_IDLE_CONNECTIONS  # type: ignore[attr-defined]
        assert len(mem._conns._idle) == len(mem._conns._all)  # type: ignore[attr-defined]
        with mem._conns.connection() as db:  # type: ignore[attr-defined]
            assert rows(db, "SELECT count(*) AS n FROM events")[0]["n"] == 200
    finally:
        mem.close()
