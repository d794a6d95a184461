"""Opening the memory database: fresh, upgraded, re-opened, and refused when it is not safe."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest
from sqlite_utils import Database

from memory import MemoryStoreError, open_memory
from memory.migrations import KNOWN_MIGRATIONS, MIGRATION_SET, migrations


def _applied(path: Path) -> list[str]:
    conn = sqlite3.connect(path)
    try:
        return [
            r[0]
            for r in conn.execute(
                "SELECT name FROM _sqlite_migrations WHERE migration_set = ? ORDER BY rowid",
                [MIGRATION_SET],
            )
        ]
    finally:
        conn.close()


def test_fresh_database_is_migrated_in_wal_mode(tmp_path: Path) -> None:
    path = tmp_path / "sub" / "memory.sqlite3"
    mem = open_memory(path)
    try:
        assert mem.db_path == path
        assert _applied(path) == list(KNOWN_MIGRATIONS)
        conn = sqlite3.connect(path)
        assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
        tables = {r[0] for r in conn.execute("SELECT name FROM sqlite_master")}
        assert {"turns", "examples", "examples_fts", "feedback", "events", "teachers"} <= tables
        conn.close()
    finally:
        mem.close()


def test_reopen_is_a_no_op(tmp_path: Path) -> None:
    path = tmp_path / "memory.sqlite3"
    open_memory(path).close()
    mem = open_memory(path)
    mem.conversations.record(
        "cli:x",
        user="U",
        question="q",
        standalone_question="q",
        cypher=None,
        answer="a",
        outcome="answered",
    )
    mem.close()
    assert _applied(path) == list(KNOWN_MIGRATIONS)
    with open_memory(path) as again:
        assert again.conversations.has_conversation("cli:x")


def test_upgrade_from_first_schema_keeps_data(tmp_path: Path) -> None:
    path = tmp_path / "old.sqlite3"
    old = Database(path)
    migrations.apply(old, stop_before="m002_examples_fts")
    old.execute(
        "INSERT INTO turns (conversation, user, question, standalone_question, cypher, answer, "
        "outcome, created_at) VALUES ('t:c:1', 'U1', 'How many movies?', 'How many movies?', "
        "'MATCH (m:Movie) RETURN count(m)', '38', 'answered', '2026-01-01T00:00:00.000000Z')"
    )
    old.execute(
        "INSERT INTO examples (question, normalised, cypher, source, status, created_at, "
        "updated_at) VALUES ('Who directed The Matrix?', 'who directed the matrix', "
        "'MATCH (p)-[:DIRECTED]->(m {title: \"The Matrix\"}) RETURN p.name', 'seed', 'active', "
        "'2026-01-01T00:00:00.000000Z', '2026-01-01T00:00:00.000000Z')"
    )
    old.execute(
        "INSERT INTO example_votes (example_id, user, vote, created_at) "
        "VALUES (1, 'U7', 1, '2026-01-02T00:00:00.000000Z')"
    )
    old.close()
    assert _applied(path) == ["m001_core"]

    with open_memory(path) as mem:
        assert _applied(path) == list(KNOWN_MIGRATIONS)
        [turn] = mem.conversations.history("t:c:1")
        assert turn.answer == "38" and turn.attempts == 0
        # The FTS index was built over rows that existed before it.
        [found] = mem.examples.similar("who was the director of the matrix")
        assert found.id == 1
        # Teachers were back-filled from existing votes: U7 is not thanked a second time.
        taught = mem.conversations.turn(1)
        assert taught is not None
        assert mem.examples.teach(taught, "U7").first_time_for_user is False


def test_corrupt_file_is_refused_and_left_alone(tmp_path: Path) -> None:
    path = tmp_path / "memory.sqlite3"
    garbage = b"this is not a database at all\n" * 200
    path.write_bytes(garbage)
    with pytest.raises(MemoryStoreError) as info:
        open_memory(path)
    message = str(info.value)
    assert str(path) in message
    assert "backup" in message and "move it aside" in message
    assert path.read_bytes() == garbage


def test_truncated_database_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "memory.sqlite3"
    with open_memory(path) as mem:
        for i in range(200):
            mem.examples.add(f"question {i} " + "x" * 200, f"RETURN {i}", source="admin")
    data = path.read_bytes()
    path.write_bytes(data[:100] + b"\x00" * 4000 + data[4100:8192])
    for suffix in ("-wal", "-shm"):
        Path(str(path) + suffix).unlink(missing_ok=True)
    with pytest.raises(MemoryStoreError, match="not readable"):
        mem2 = open_memory(path)
        mem2.examples.list()


def test_newer_schema_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "memory.sqlite3"
    open_memory(path).close()
    conn = sqlite3.connect(path)
    conn.execute(
        "INSERT INTO _sqlite_migrations (migration_set, name, applied_at) "
        "VALUES (?, 'm099_from_the_future', '2030-01-01')",
        [MIGRATION_SET],
    )
    conn.commit()
    conn.close()
    with pytest.raises(MemoryStoreError, match="newer cypherbot") as info:
        open_memory(path)
    assert "Upgrade cypherbot" in str(info.value)


def test_foreign_sqlite_file_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "memory.sqlite3"
    conn = sqlite3.connect(path)
    conn.execute("CREATE TABLE invoices (id INTEGER PRIMARY KEY)")
    conn.commit()
    conn.close()
    with pytest.raises(MemoryStoreError, match="not a cypherbot memory database"):
        open_memory(path)


def test_unwritable_directory_is_explained(tmp_path: Path) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("x")
    with pytest.raises(MemoryStoreError, match="DATA_DIR"):
        open_memory(blocker / "memory.sqlite3")
