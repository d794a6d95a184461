"""The memory database as one object: `open_memory(path)` and its four stores."""

from __future__ import annotations

import logging
from pathlib import Path

from memory.conversations import ConversationStore
from memory.db import Connections, prepare
from memory.errors import MemoryStoreError
from memory.events import EventStore
from memory.examples import Embedder, SqliteExampleStore
from memory.feedback import FeedbackStore

log = logging.getLogger(__name__)


class Memory:
    """Conversations, examples, feedback and processed events in one SQLite file."""

    def __init__(
        self,
        conns: Connections,
        *,
        embedder: Embedder | None = None,
        embedder_name: str = "default",
        schema_fingerprint: str | None = None,
        include_candidates: bool = False,
    ) -> None:
        self._conns = conns
        self.db_path: Path = conns.path
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
                f"The memory database {self.db_path} does not answer: {exc}"
            ) from exc

    def close(self) -> None:
        """Close every connection this object opened."""
        self._conns.close()

    def __enter__(self) -> Memory:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def open_memory(
    path: Path,
    *,
    embedder: Embedder | None = None,
    embedder_name: str = "default",
    schema_fingerprint: str | None = None,
    include_candidates: bool = False,
) -> Memory:
    """Open (creating and migrating when needed) the memory database at `path`.

    Raises `MemoryStoreError`, saying what to do, for an unreadable, corrupt, foreign or newer
    file; an existing file is never recreated.
    """
    path = Path(path)
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
    return Memory(
        conns,
        embedder=embedder,
        embedder_name=embedder_name,
        schema_fingerprint=schema_fingerprint,
        include_candidates=include_candidates,
    )
