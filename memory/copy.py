"""Copy one memory database into another, on either engine (SQLite → PostgreSQL and back).

Every row keeps its id, so examples keep their votes and provenance (the turn that taught
them), feedback keeps its turn, and conversations keep their order. The target must be
empty; the copy is one transaction on the target, so a failure leaves it empty.
"""

from __future__ import annotations

import functools
from typing import Any

from memory.db import Conns, Db, rows
from memory.errors import MemoryStoreError

# The logical schema both engines share, in foreign-key order (parents first).
TABLES: tuple[tuple[str, tuple[str, ...], str], ...] = (
    (
        "turns",
        (
            "id", "conversation", "user", "question", "standalone_question", "cypher",
            "answer", "outcome", "channel", "ts", "timings_json", "llm_calls",
            "prompt_tokens", "completion_tokens", "example_ids", "created_at", "attempts",
            "schema_fingerprint",
        ),
        "id",
    ),
    (
        "examples",
        (
            "id", "question", "normalised", "cypher", "source", "status", "retired_reason",
            "up_votes", "down_votes", "schema_fingerprint", "taught_by", "origin_turn_id",
            "times_used", "last_used_at", "created_at", "updated_at", "shape",
        ),
        "id",
    ),
    ("example_votes", ("example_id", "user", "vote", "turn_id", "created_at"), "example_id, user"),
    (
        "feedback",
        (
            "id", "event_id", "user", "reaction", "kind", "added", "turn_id", "channel", "ts",
            "created_at",
        ),
        "id",
    ),
    ("events", ("key", "state", "lease_until", "expires_at"), "key"),
    ("teachers", ("user", "first_taught_at"), "user"),
    ("example_vectors", ("example_id", "model", "dim", "vector"), "example_id"),
)  # fmt: skip
_IDENTITY_TABLES = ("turns", "examples", "feedback")
_BATCH = 2_000


def copy_rows(source: Conns, target: Conns) -> dict[str, int]:
    """Copy every row of `source` into the empty `target`; return rows copied per table."""
    holding = target.read(lambda db: {t: _count(db, t) for t in ("turns", "examples", "feedback")})
    if any(holding.values()):
        counts = ", ".join(f"{n:,} {t}" for t, n in holding.items() if n)
        raise MemoryStoreError(
            f"The target memory database {target.label} is not empty ({counts}). Copy into "
            "a new, empty database; cypherbot never merges two memories."
        )
    tables: dict[str, list[dict[str, Any]]] = {}
    for name, columns, order in TABLES:
        sql = f"SELECT {', '.join(columns)} FROM {name} ORDER BY {order}"
        tables[name] = source.read(functools.partial(_select, sql=sql))

    def write(db: Db) -> dict[str, int]:
        copied: dict[str, int] = {}
        for name, columns, _ in TABLES:
            found = tables[name]
            sql = (
                f"INSERT INTO {name} ({', '.join(columns)}) "
                f"VALUES ({', '.join('?' for _ in columns)})"
            )
            for start in range(0, len(found), _BATCH):
                batch = [[_value(r[c]) for c in columns] for r in found[start : start + _BATCH]]
                db.conn.executemany(sql, batch)
            copied[name] = len(found)
        if target.dialect == "postgresql":
            for name in _IDENTITY_TABLES:
                db.execute(
                    f"SELECT setval(pg_get_serial_sequence('{name}', 'id'), "
                    f"coalesce(max(id), 1), max(id) IS NOT NULL) FROM {name}"
                )
        return copied

    return target.write(write)


def _select(db: Db, *, sql: str) -> list[dict[str, Any]]:
    return rows(db, sql)


def _count(db: Db, table: str) -> int:
    return int(db.execute(f"SELECT count(*) FROM {table}").fetchone()[0])


def _value(value: Any) -> Any:
    # PostgreSQL hands BYTEA back as memoryview; SQLite wants bytes.
    return bytes(value) if isinstance(value, memoryview) else value
