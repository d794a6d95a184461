"""The stores' SQLite-spelled SQL as PostgreSQL runs it, and URLs shown without passwords."""

from __future__ import annotations

import pytest

from memory.postgres import is_postgres_url, masked, translate


@pytest.mark.parametrize(
    ("sqlite", "postgres"),
    [
        (
            "SELECT a FROM t WHERE b = ? AND c IN (?, ?)",
            "SELECT a FROM t WHERE b = %s AND c IN (%s, %s)",
        ),
        ("SELECT x FROM t WHERE q LIKE '%a'", "SELECT x FROM t WHERE q LIKE '%%a'"),
        ("DELETE FROM turns WHERE user = ?", 'DELETE FROM turns WHERE "user" = %s'),
        (
            "UPDATE examples SET taught_by = NULL WHERE taught_by = ?",
            "UPDATE examples SET taught_by = NULL WHERE taught_by = %s",
        ),
        ("SELECT e.user_id, 'user' FROM e", "SELECT e.user_id, 'user' FROM e"),
        (
            "INSERT OR IGNORE INTO teachers (user, first_taught_at) VALUES (?, ?)",
            'INSERT INTO teachers ("user", first_taught_at) VALUES (%s, %s) ON CONFLICT DO NOTHING',
        ),
        (
            "INSERT OR REPLACE INTO example_votes (example_id, user, vote) VALUES (?, ?, ?)",
            'INSERT INTO example_votes (example_id, "user", vote) VALUES (%s, %s, %s) '
            'ON CONFLICT (example_id, "user") DO UPDATE SET vote = EXCLUDED.vote',
        ),
        (
            "INSERT OR REPLACE INTO example_vectors (example_id, model, dim, vector) VALUES (?, ?, ?, ?)",
            "INSERT INTO example_vectors (example_id, model, dim, vector) VALUES (%s, %s, %s, %s) "
            "ON CONFLICT (example_id) DO UPDATE SET model = EXCLUDED.model, dim = EXCLUDED.dim, "
            "vector = EXCLUDED.vector",
        ),
    ],
)
def test_translate(sqlite: str, postgres: str) -> None:
    assert translate(sqlite) == postgres


def test_masked_hides_only_the_password() -> None:
    assert masked("postgresql://bot:pw@db.internal:5433/mem?sslmode=require") == (
        "postgresql://bot:***@db.internal:5433/mem?sslmode=require"
    )
    assert masked("postgresql://bot@db/mem") == "postgresql://bot@db/mem"


def test_only_postgres_urls_select_postgres() -> None:
    assert is_postgres_url("postgresql://h/db")
    assert is_postgres_url("postgres://h/db")
    assert not is_postgres_url("/data/cypherbot.sqlite3")
    assert not is_postgres_url("sqlite:///x")
