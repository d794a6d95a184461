"""PostgreSQL as the memory backend: migrations, upgrade path, refusals, clear errors."""

from __future__ import annotations

import socket
import threading

import psycopg
import pytest

from memory import MemoryStoreError, open_memory
from memory.pg_migrations import KNOWN_STEPS, applied_steps, migrate


def test_a_new_database_is_migrated_to_the_last_step(pg_url: str) -> None:
    with open_memory(pg_url) as mem:
        assert mem.dialect == "postgresql"
        mem.ping()
    with psycopg.connect(pg_url, autocommit=True) as conn:
        assert applied_steps(conn) == list(KNOWN_STEPS)


def test_upgrade_from_the_first_step_keeps_the_rows_and_indexes_them(pg_url: str) -> None:
    with psycopg.connect(pg_url, autocommit=True) as conn:
        assert migrate(conn, "test", upto="p001_core") == ["p001_core"]
        conn.execute(
            "INSERT INTO examples (question, normalised, cypher, source, status, created_at, "
            "updated_at) VALUES ('Which teams own payments?', 'which teams own payments', "
            "'MATCH (t:Team) RETURN t', 'admin', 'active', '2026-01-01T00:00:00.000000Z', "
            "'2026-01-01T00:00:00.000000Z')"
        )
    with open_memory(pg_url) as mem:
        found = mem.examples.similar("who owns payments")
        assert [e.question for e in found] == ["Which teams own payments?"]
        assert found[0].shape is None
        new_id = mem.examples.add(
            "Which teams exist?", "MATCH (t:Team) RETURN t.name", source="admin"
        )
        assert new_id == 2  # the identity continues after the row written before the upgrade
    with psycopg.connect(pg_url, autocommit=True) as conn:
        assert applied_steps(conn) == list(KNOWN_STEPS)


def test_instances_starting_together_migrate_once(pg_url: str) -> None:
    errors: list[BaseException] = []

    def start() -> None:
        try:
            open_memory(pg_url).close()
        except BaseException as exc:
            errors.append(exc)

    threads = [threading.Thread(target=start) for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert not errors
    with psycopg.connect(pg_url, autocommit=True) as conn:
        assert applied_steps(conn) == list(KNOWN_STEPS)


def test_a_database_from_a_newer_version_is_left_alone(pg_url: str) -> None:
    open_memory(pg_url).close()
    with psycopg.connect(pg_url, autocommit=True) as conn:
        conn.execute("INSERT INTO cypherbot_migrations (name) VALUES ('p999_future')")
    with pytest.raises(MemoryStoreError, match="newer cypherbot"):
        open_memory(pg_url)


def test_a_database_holding_someone_elses_turns_table_is_refused(pg_url: str) -> None:
    with psycopg.connect(pg_url, autocommit=True) as conn:
        conn.execute("CREATE TABLE turns (id int)")
    with pytest.raises(MemoryStoreError, match="its own database"):
        open_memory(pg_url)


def test_an_unreachable_server_says_what_to_check_and_hides_the_password() -> None:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    url = f"postgresql://bot:s3cret-pw@127.0.0.1:{port}/cypherbot"
    with pytest.raises(MemoryStoreError) as info:
        open_memory(url)
    message = str(info.value)
    assert "s3cret-pw" not in message
    assert "bot:***@127.0.0.1" in message
    assert "MEMORY_URL" in message


def test_connections_the_server_ended_are_replaced(pg_url: str) -> None:
    mem = open_memory(pg_url)
    with psycopg.connect(pg_url, autocommit=True) as conn:
        conn.execute(
            "SELECT pg_terminate_backend(pid) FROM pg_stat_activity "
            "WHERE datname = current_database() AND pid <> pg_backend_pid()"
        )
    # The pool notices the dead connections and reconnects: nothing is lost.
    mem.conversations.record(
        "c", user="U", question="q", standalone_question="q", cypher=None, answer="a",
        outcome="answered",
    )  # fmt: skip
    assert len(mem.conversations.history("c")) == 1
    mem.close()
