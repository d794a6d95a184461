"""Connections to the memory database: one per thread, WAL, and retried writes under contention."""

from __future__ import annotations

import contextlib
import logging
import os
import random
import sqlite3
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager
from pathlib import Path
from typing import Any, Protocol, TypeVar

from sqlite_utils import Database

from memory.errors import MemoryStoreError
from memory.migrations import KNOWN_MIGRATIONS, MIGRATION_SET, migrations

log = logging.getLogger(__name__)

T = TypeVar("T")

BUSY_TIMEOUT_MS = 10_000
# SQLite's busy handler already waits BUSY_TIMEOUT_MS; this outer retry covers the cases it
# cannot (a WAL snapshot that went stale, a checkpoint in progress) with jittered backoff.
RETRY_DEADLINE_S = 60.0
# Connections kept open between uses; more are opened under load and closed after it.
MAX_IDLE_CONNECTIONS = 16


class Db(Protocol):
    """What a store's function gets: sqlite-utils' `Database`, or `memory.postgres.PgDatabase`.

    The stores write SQLite's spelling (`?`, `INSERT OR IGNORE`); the PostgreSQL side
    rewrites the few forms that differ.
    """

    conn: Any

    def execute(self, sql: str, params: Any = ..., /) -> Any: ...


class Conns(Protocol):
    """The memory database's connections, on either engine (`dialect`: sqlite or postgresql)."""

    dialect: str

    @property
    def label(self) -> str:
        """Where the database is, for messages (a file path, or a URL without its password)."""
        ...

    def connection(self) -> AbstractContextManager[Any]: ...

    def read(self, fn: Callable[[Any], T]) -> T: ...

    def write(self, fn: Callable[[Any], T]) -> T: ...

    def close(self) -> None: ...


def _is_busy(exc: sqlite3.OperationalError) -> bool:
    text = str(exc).lower()
    return "locked" in text or "busy" in text


_write_locks: dict[str, threading.RLock] = {}
_write_locks_guard = threading.Lock()


def _write_lock(path: Path) -> threading.RLock:
    """The process-wide write lock of one database file (shared by every Connections on it).

    Threads of one process queue here, in order and without polling, instead of in SQLite's
    busy handler, which sleeps in growing steps (up to 100 ms) and made a burst of 20 event
    claims wait 0.3-1 s. Other processes are still kept out by SQLite's own lock.
    """
    key = os.path.realpath(path)
    with _write_locks_guard:
        lock = _write_locks.get(key)
        if lock is None:
            lock = _write_locks[key] = threading.RLock()
        return lock


class Connections:
    """The database file, reached through a small pool of sqlite-utils `Database`s.

    A connection is checked out for one read or write (and for whatever that call nests, on
    the same thread), then returned. Pooled rather than one per thread: the HTTP server runs
    each Slack request on a new thread, and a connection per thread meant a new connection,
    with its schema parse, on every ack, and one more open file for every request served.
    """

    dialect = "sqlite"

    def __init__(self, path: Path) -> None:
        self.path = path
        self._local = threading.local()
        self._lock = threading.Lock()
        self._idle: list[Database] = []
        self._all: list[Database] = []
        self._closed = False
        self._write_lock = _write_lock(path)

    @property
    def label(self) -> str:
        return str(self.path)

    @contextlib.contextmanager
    def connection(self) -> Iterator[Database]:
        """A connection for this thread until the block ends (nested blocks share it)."""
        current: Database | None = getattr(self._local, "db", None)
        if current is not None:
            yield current
            return
        with self._lock:
            if self._closed:
                raise MemoryStoreError(f"The memory database {self.path} is closed.")
            db = self._idle.pop() if self._idle else None
        if db is None:
            db = self._connect()
            with self._lock:
                self._all.append(db)
        self._local.db = db
        try:
            yield db
        finally:
            self._local.db = None
            self._check_in(db)

    def _check_in(self, db: Database) -> None:
        with self._lock:
            if not self._closed and len(self._idle) < MAX_IDLE_CONNECTIONS:
                self._idle.append(db)
                return
            with contextlib.suppress(ValueError):
                self._all.remove(db)
        with contextlib.suppress(sqlite3.Error):
            db.close()

    def _connect(self) -> Database:
        # Each thread uses only its own connection; check_same_thread=False is what lets
        # close() shut all of them from whichever thread ends the Memory.
        conn = sqlite3.connect(
            str(self.path), timeout=BUSY_TIMEOUT_MS / 1000, check_same_thread=False
        )
        db = Database(conn, execute_plugins=False)
        db.execute(f"PRAGMA busy_timeout = {BUSY_TIMEOUT_MS}")
        db.execute("PRAGMA foreign_keys = ON")
        # NORMAL is durable in WAL mode except for the last transactions on power loss.
        db.execute("PRAGMA synchronous = NORMAL")
        return db

    def write(self, fn: Callable[[Database], T]) -> T:
        """Run `fn` in one IMMEDIATE transaction, retried as a whole while the file is busy.

        The transaction runs under the file's process-wide write lock; busy_timeout and the
        retry below handle other processes."""
        with self.connection() as db:
            return self._write(db, fn)

    def _write(self, db: Database, fn: Callable[[Database], T]) -> T:
        delay = 0.005
        deadline = time.monotonic() + RETRY_DEADLINE_S
        while True:
            try:
                with self._locked(deadline):
                    db.execute("BEGIN IMMEDIATE")
                    try:
                        result = fn(db)
                        db.execute("COMMIT")
                    except BaseException:
                        db.rollback()
                        raise
                    return result
            except sqlite3.OperationalError as exc:
                if not _is_busy(exc) or time.monotonic() > deadline:
                    raise
                log.debug("memory database busy, retrying in %.3fs", delay)
                time.sleep(delay * (0.5 + random.random()))
                delay = min(delay * 2, 0.5)

    @contextlib.contextmanager
    def _locked(self, deadline: float) -> Iterator[None]:
        if not self._write_lock.acquire(timeout=max(0.0, deadline - time.monotonic())):
            # Worded like SQLite's own error, so callers and the retry treat it the same way.
            raise sqlite3.OperationalError(f"database is locked (waited for {self.path})")
        try:
            yield
        finally:
            self._write_lock.release()

    def read(self, fn: Callable[[Database], T]) -> T:
        """Run `fn` for reading, retried while the file is busy (rare in WAL mode)."""
        with self.connection() as db:
            return self._read(db, fn)

    def _read(self, db: Database, fn: Callable[[Database], T]) -> T:
        delay = 0.005
        deadline = time.monotonic() + RETRY_DEADLINE_S
        while True:
            try:
                return fn(db)
            except sqlite3.OperationalError as exc:
                if not _is_busy(exc) or time.monotonic() > deadline:
                    raise
                time.sleep(delay * (0.5 + random.random()))
                delay = min(delay * 2, 0.5)

    def close(self) -> None:
        """Close every thread's connection."""
        with self._lock:
            self._closed = True
            self._idle.clear()
            for db in self._all:
                # A connection that is already closed, or busy in a thread that is still
                # running, is released by the OS at exit either way.
                with contextlib.suppress(sqlite3.Error):
                    db.close()
            self._all.clear()


def rows(db: Db, sql: str, params: Any = ()) -> list[dict[str, Any]]:
    """All rows of a SELECT as dicts."""
    cursor = db.execute(sql, params)
    keys = [d[0] for d in cursor.description]
    return [dict(zip(keys, row, strict=True)) for row in cursor.fetchall()]


def prepare(conns: Connections) -> None:
    """Check the file is ours and readable, switch to WAL, and apply pending migrations."""
    path = conns.path
    try:
        with conns.connection() as db:
            db.execute("PRAGMA journal_mode = WAL")
            names = {
                r["name"] for r in rows(db, "SELECT name FROM sqlite_master WHERE type='table'")
            }
            applied: list[str] = []
            if "_sqlite_migrations" in names:
                applied = [
                    r["name"]
                    for r in rows(
                        db,
                        "SELECT name FROM _sqlite_migrations WHERE migration_set = ? "
                        "ORDER BY rowid",
                        [MIGRATION_SET],
                    )
                ]
    except sqlite3.DatabaseError as exc:
        if isinstance(exc, sqlite3.OperationalError) and "unable to open" in str(exc):
            raise MemoryStoreError(
                f"Cannot open the memory database {path} ({exc}). Check that the data "
                "directory exists and that this user may read and write it (DATA_DIR)."
            ) from exc
        raise MemoryStoreError(
            f"The memory database {path} is not readable ({exc}). It may be corrupt or not "
            "a SQLite file. cypherbot will not overwrite it: restore it from a backup, or move "
            "it aside (e.g. rename it to .broken) and a new, empty one will be created."
        ) from exc
    unknown = [name for name in applied if name not in KNOWN_MIGRATIONS]
    if unknown:
        raise MemoryStoreError(
            f"The memory database {path} was written by a newer cypherbot (schema steps "
            f"{', '.join(unknown)} are unknown to this version). Upgrade cypherbot, or point "
            "DATA_DIR at another directory; this version will not modify that file."
        )
    ours = {"turns", "examples", "_sqlite_migrations"}
    if not applied and names - ours - {"sqlite_sequence"}:
        raise MemoryStoreError(
            f"{path} is a SQLite database, but not a cypherbot memory database (it has tables "
            f"{', '.join(sorted(names)[:5])}). Point DATA_DIR elsewhere or move the file aside."
        )
    if len(applied) < len(KNOWN_MIGRATIONS):
        # Under the write lock, so two processes opening a new file do not both migrate it.
        conns.write(lambda d: migrations.apply(d))
        log.info("memory database %s migrated to %s", path, KNOWN_MIGRATIONS[-1])
