"""PostgreSQL as the memory database: a psycopg 3 connection pool behind the stores' interface.

The stores are written once, in SQL both engines run: `?` parameters, `INSERT OR IGNORE`,
`INSERT OR REPLACE` and `user` as a column name are SQLite's spelling, and `PgConnections`
hands the stores a small adapter (`PgDatabase`) that rewrites those few forms for PostgreSQL.
Everything else (upserts with `ON CONFLICT … DO UPDATE … WHERE`, `RETURNING`) is shared.

Writes take one transaction-scoped advisory lock, so writes from every instance are
serialised exactly as SQLite serialises them within one file: the stores' read-then-write
steps (a vote, a teach, an event claim) keep the meaning they have on SQLite, across
machines. Reads never wait for it.
"""

from __future__ import annotations

import contextlib
import functools
import logging
import re
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from typing import Any, TypeVar
from urllib.parse import urlsplit, urlunsplit

from memory.errors import MemoryStoreError

log = logging.getLogger(__name__)

T = TypeVar("T")

POOL_MIN = 1
POOL_MAX = 16
CONNECT_TIMEOUT_S = 10.0
# A fixed key for the writers' advisory lock ("cypherbot" in ASCII, folded to 63 bits).
WRITE_LOCK_KEY = 0x6379706865726274
RETRY_DEADLINE_S = 30.0

URL_SCHEMES = ("postgresql", "postgres")

# Conflict targets of the tables the stores replace rows in (`INSERT OR REPLACE`).
_REPLACE_KEYS: dict[str, tuple[str, ...]] = {
    "events": ("key",),
    "example_vectors": ("example_id",),
    "example_votes": ("example_id", "user"),
}
_INSERT_OR = re.compile(
    r"^\s*INSERT\s+OR\s+(IGNORE|REPLACE)\s+INTO\s+(\w+)\s*\(([^)]*)\)", re.IGNORECASE
)
_INSERT_OR_PREFIX = re.compile(r"INSERT\s+OR\s+(?:IGNORE|REPLACE)\s+INTO", re.IGNORECASE)
_USER = re.compile(r'(?<![\w."\'])user(?![\w"\'])')


def is_postgres_url(location: object) -> bool:
    """True for a `postgresql://…` (or `postgres://…`) memory location."""
    return isinstance(location, str) and urlsplit(location).scheme in URL_SCHEMES


def masked(url: str) -> str:
    """The URL with its password replaced by `***` (for messages and logs)."""
    parts = urlsplit(url)
    if not parts.password:
        return url
    host = parts.hostname or ""
    if parts.port:
        host = f"{host}:{parts.port}"
    user = parts.username or ""
    return urlunsplit(parts._replace(netloc=f"{user}:***@{host}"))


@functools.lru_cache(maxsize=512)
def translate(sql: str) -> str:
    """SQLite-spelled SQL of the stores as PostgreSQL runs it."""
    text = sql.replace("%", "%%").replace("?", "%s")
    text = _USER.sub('"user"', text)
    match = _INSERT_OR.match(text)
    if match is None:
        return text
    verb, table = match.group(1).upper(), match.group(2)
    text = _INSERT_OR_PREFIX.sub("INSERT INTO", text, count=1).rstrip()
    if verb == "IGNORE":
        return f"{text} ON CONFLICT DO NOTHING"
    keys = _REPLACE_KEYS[table]
    columns = [c.strip() for c in match.group(3).split(",")]
    updates = ", ".join(f"{c} = EXCLUDED.{c}" for c in columns if c.strip('"') not in keys)
    target = ", ".join(f'"{k}"' if k == "user" else k for k in keys)
    return f"{text} ON CONFLICT ({target}) DO UPDATE SET {updates}"


class PgCursor:
    """The part of a DB-API cursor the stores use, over a psycopg cursor."""

    def __init__(self, cursor: Any) -> None:
        self._cursor = cursor

    @property
    def rowcount(self) -> int:
        return int(self._cursor.rowcount)

    @property
    def description(self) -> Any:
        return self._cursor.description

    @property
    def lastrowid(self) -> None:
        raise NotImplementedError("PostgreSQL has no lastrowid; the stores use RETURNING id")

    def fetchone(self) -> Any:
        return self._cursor.fetchone()

    def fetchall(self) -> list[Any]:
        return list(self._cursor.fetchall())

    def __iter__(self) -> Iterator[Any]:
        return iter(self._cursor.fetchall())


class _RawConnection:
    """`db.conn` as the stores use it: `executemany` with SQLite-spelled SQL."""

    def __init__(self, conn: Any) -> None:
        self._conn = conn

    def executemany(self, sql: str, params: Sequence[Sequence[Any]]) -> None:
        with self._conn.cursor() as cursor:
            cursor.executemany(translate(sql), [list(p) for p in params])


class PgDatabase:
    """What a store's function receives on PostgreSQL (sqlite-utils' `Database` on SQLite)."""

    dialect = "postgresql"

    def __init__(self, conn: Any) -> None:
        self._conn = conn
        self.conn = _RawConnection(conn)

    def execute(self, sql: str, params: Sequence[Any] = ()) -> PgCursor:
        cursor = self._conn.cursor()
        cursor.execute(translate(sql), list(params))
        return PgCursor(cursor)

    def execute_native(self, sql: str, params: Sequence[Any] = ()) -> PgCursor:
        """Run PostgreSQL SQL as written (`%s` parameters), for the few dialect-specific queries."""
        cursor = self._conn.cursor()
        cursor.execute(sql, list(params))
        return PgCursor(cursor)


def _retryable(exc: BaseException) -> bool:
    import psycopg

    return isinstance(
        exc, (psycopg.errors.SerializationFailure, psycopg.errors.DeadlockDetected)
    ) or (
        isinstance(exc, psycopg.OperationalError)
        and not isinstance(exc, psycopg.errors.QueryCanceled)
    )


class PgConnections:
    """A psycopg pool on one PostgreSQL database, with the interface of `memory.db.Connections`."""

    dialect = "postgresql"

    def __init__(self, url: str, *, max_size: int = POOL_MAX) -> None:
        try:
            import psycopg
            from psycopg_pool import ConnectionPool
        except ImportError as exc:  # pragma: no cover - both are dependencies
            raise MemoryStoreError(
                "MEMORY_URL points at PostgreSQL, but psycopg is not installed. "
                "Install it with: pip install 'psycopg[binary]' psycopg-pool"
            ) from exc
        self.url = url
        self.label = masked(url)
        self._local = threading.local()
        self._pool = ConnectionPool(
            url,
            min_size=POOL_MIN,
            max_size=max_size,
            kwargs={"autocommit": True, "connect_timeout": int(CONNECT_TIMEOUT_S)},
            open=False,
            name="cypherbot-memory",
            # A connection the server ended (restart, failover, idle timeout) is replaced
            # on checkout instead of failing the next store call.
            check=ConnectionPool.check_connection,
        )
        try:
            # One direct connection first: a refused or misspelt URL fails at once with
            # the server's own reason, instead of the pool retrying until its timeout.
            psycopg.connect(url, connect_timeout=int(CONNECT_TIMEOUT_S)).close()
            self._pool.open(wait=True, timeout=CONNECT_TIMEOUT_S)
        except Exception as exc:
            self._pool.close()
            raise MemoryStoreError(
                f"Cannot reach the memory database {self.label} ({_first_line(exc)}). Check "
                "MEMORY_URL (host, port, database name, user and password) and that PostgreSQL "
                "is running; unset MEMORY_URL to use the local SQLite file instead."
            ) from exc

    def prepare(self) -> None:
        """Apply pending schema steps (once, whichever instance gets there first)."""
        from memory.pg_migrations import migrate

        with self._pool.connection(timeout=CONNECT_TIMEOUT_S) as conn:
            migrate(conn, self.label)

    @contextlib.contextmanager
    def connection(self) -> Iterator[PgDatabase]:
        """A connection for this thread until the block ends (nested blocks share it)."""
        current: PgDatabase | None = getattr(self._local, "db", None)
        if current is not None:
            yield current
            return
        with self._pool.connection(timeout=CONNECT_TIMEOUT_S) as conn:
            db = PgDatabase(conn)
            self._local.db = db
            try:
                yield db
            finally:
                self._local.db = None

    def write(self, fn: Callable[[PgDatabase], T]) -> T:
        """Run `fn` in one transaction holding the writers' lock, retried on transient errors."""
        delay = 0.01
        deadline = time.monotonic() + RETRY_DEADLINE_S
        while True:
            try:
                with self.connection() as db, db._conn.transaction():
                    db.execute_native("SELECT pg_advisory_xact_lock(%s)", [WRITE_LOCK_KEY])
                    return fn(db)
            except Exception as exc:
                if not _retryable(exc) or time.monotonic() > deadline:
                    raise self._wrapped(exc) from exc
                log.debug("memory write failed (%s), retrying in %.3fs", exc, delay)
                time.sleep(delay)
                delay = min(delay * 2, 1.0)

    def read(self, fn: Callable[[PgDatabase], T]) -> T:
        """Run `fn` for reading (one snapshot), retried on transient errors."""
        delay = 0.01
        deadline = time.monotonic() + RETRY_DEADLINE_S
        while True:
            try:
                with self.connection() as db, db._conn.transaction():
                    return fn(db)
            except Exception as exc:
                if not _retryable(exc) or time.monotonic() > deadline:
                    raise self._wrapped(exc) from exc
                time.sleep(delay)
                delay = min(delay * 2, 1.0)

    def _wrapped(self, exc: Exception) -> Exception:
        import psycopg

        if isinstance(exc, psycopg.OperationalError):
            return MemoryStoreError(
                f"The memory database {self.label} does not answer ({_first_line(exc)}). "
                "Check that PostgreSQL is running and reachable (MEMORY_URL)."
            )
        return exc

    def close(self) -> None:
        """Close the pool and its connections."""
        self._pool.close()


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip()
    return text.splitlines()[0] if text else type(exc).__name__
