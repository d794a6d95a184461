"""The memory database as one object: `open_memory(location)` and its four stores.

`location` is a SQLite file path (the default, nothing to install) or a `postgresql://` URL
(several bot instances sharing one memory); the stores are the same on both.
"""

from __future__ import annotations

import logging
from pathlib import Path

from memory.conversations import ConversationStore
from memory.db import Connections, Conns, prepare
from memory.errors import MemoryStoreError
from memory.events import EventStore
from memory.examples import Embedder, SqliteExampleStore
from memory.feedback import FeedbackStore
from memory.postgres import PgConnections, is_postgres_url

log = logging.getLogger(__name__)


class Memory:
    """Conversations, examples, feedback and processed events in one database."""

    def __init__(
        self,
        conns: Conns,
        *,
        embedder: Embedder | None = None,
        embedder_name: str = "default",
        schema_fingerprint: str | None = None,
        include_candidates: bool = False,
    ) -> None:
        self._conns = conns
        self.location = conns.label
        """Where the database is: the SQLite file, or the PostgreSQL URL without its password."""
        self.dialect = conns.dialect
        self.db_path: Path | None = conns.path if isinstance(conns, Connections) else None
        """The SQLite file (None on PostgreSQL)."""
        self.conversations = ConversationStore(conns)
        self.examples = SqliteExampleStore(
            conns,
            embedder=embedder,
            embedder_name=embedder_name,
            schema_fingerprint=schema_fingerprint,
            include_candidates=include_candidates,
        )
        self.feedback = FeedbackStore(conns)
        self.events = EventStore(conns)

    def ping(self) -> None:
        """Raise `MemoryStoreError` unless the database answers (for health checks)."""
        try:
            self._conns.read(lambda db: db.execute("SELECT count(*) FROM examples").fetchone())
        except Exception as exc:
            raise MemoryStoreError(
                f"The memory database {self.location} does not answer: {exc}"
            ) from exc

    def schema_version(self) -> str:
        """The last schema step applied to this database (for `cypherbot doctor`)."""
        if self.dialect == "postgresql":
            sql = "SELECT name FROM cypherbot_migrations ORDER BY applied DESC LIMIT 1"
        else:
            sql = "SELECT name FROM _sqlite_migrations ORDER BY rowid DESC LIMIT 1"
        found = self._conns.read(lambda db: db.execute(sql).fetchone())
        return str(found[0]) if found else "none"

    def copy_to(self, target: Memory) -> dict[str, int]:
        """Copy every row into the empty `target` (either engine); return rows per table."""
        from memory.copy import copy_rows

        return copy_rows(self._conns, target._conns)

    def close(self) -> None:
        """Close every connection this object opened."""
        self._conns.close()

    def __enter__(self) -> Memory:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def open_memory(
    location: Path | str,
    *,
    embedder: Embedder | None = None,
    embedder_name: str = "default",
    schema_fingerprint: str | None = None,
    include_candidates: bool = False,
) -> Memory:
    """Open (creating and migrating when needed) the memory database at `location`.

    `location` is a SQLite file path or a `postgresql://` URL. Raises `MemoryStoreError`,
    saying what to do, for an unreadable, corrupt, foreign or newer database, or an
    unreachable server; an existing database is never recreated.
    """
    conns = _connect(location)
    return Memory(
        conns,
        embedder=embedder,
        embedder_name=embedder_name,
        schema_fingerprint=schema_fingerprint,
        include_candidates=include_candidates,
    )


def _connect(location: Path | str) -> Conns:
    if is_postgres_url(location):
        pg = PgConnections(str(location))
        try:
            pg.prepare()
        except BaseException:
            pg.close()
            raise
        return pg
    path = Path(location)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise MemoryStoreError(
            f"Cannot create the directory {path.parent} for the memory database ({exc}). "
            "Set DATA_DIR to a writable directory."
        ) from exc
    conns = Connections(path)
    try:
        prepare(conns)
    except BaseException:
        conns.close()
        raise
    return conns
