"""The memory database's schema, as sqlite-utils Migrations applied in order (safe to re-run)."""

from __future__ import annotations

from sqlite_utils import Database, Migrations

MIGRATION_SET = "cypherbot-memory"
migrations = Migrations(MIGRATION_SET)


@migrations(name="m001_core")
def m001_core(db: Database) -> None:
    """Turns, examples with votes, reaction feedback and processed Slack events."""
    db.executescript(
        """
        CREATE TABLE turns (
            id INTEGER PRIMARY KEY,
            conversation TEXT NOT NULL,
            user TEXT NOT NULL DEFAULT '',
            question TEXT NOT NULL,
            standalone_question TEXT NOT NULL,
            cypher TEXT,
            answer TEXT NOT NULL,
            outcome TEXT NOT NULL,
            channel TEXT,
            ts TEXT,
            timings_json TEXT,
            llm_calls INTEGER NOT NULL DEFAULT 0,
            prompt_tokens INTEGER NOT NULL DEFAULT 0,
            completion_tokens INTEGER NOT NULL DEFAULT 0,
            example_ids TEXT NOT NULL DEFAULT '[]',
            created_at TEXT NOT NULL
        );
        CREATE INDEX turns_conversation ON turns (conversation, id);
        CREATE INDEX turns_message ON turns (channel, ts);
        CREATE INDEX turns_created ON turns (created_at);
        CREATE INDEX turns_user ON turns (user);

        CREATE TABLE examples (
            id INTEGER PRIMARY KEY,
            question TEXT NOT NULL,
            normalised TEXT NOT NULL,
            cypher TEXT NOT NULL,
            source TEXT NOT NULL,
            status TEXT NOT NULL,
            retired_reason TEXT,
            up_votes INTEGER NOT NULL DEFAULT 0,
            down_votes INTEGER NOT NULL DEFAULT 0,
            schema_fingerprint TEXT,
            taught_by TEXT,
            origin_turn_id INTEGER REFERENCES turns (id) ON DELETE SET NULL,
            times_used INTEGER NOT NULL DEFAULT 0,
            last_used_at TEXT,
            created_at TEXT NOT NULL,
            updated_at TEXT NOT NULL
        );
        CREATE INDEX examples_normalised ON examples (normalised, status);
        CREATE INDEX examples_status ON examples (status, source);

        CREATE TABLE example_votes (
            example_id INTEGER NOT NULL REFERENCES examples (id) ON DELETE CASCADE,
            user TEXT NOT NULL,
            vote INTEGER NOT NULL,
            turn_id INTEGER REFERENCES turns (id) ON DELETE SET NULL,
            created_at TEXT NOT NULL,
            PRIMARY KEY (example_id, user)
        );
        CREATE INDEX example_votes_user ON example_votes (user);

        CREATE TABLE feedback (
            id INTEGER PRIMARY KEY,
            event_id TEXT NOT NULL UNIQUE,
            user TEXT NOT NULL,
            reaction TEXT NOT NULL,
            kind TEXT NOT NULL,
            added INTEGER NOT NULL,
            turn_id INTEGER REFERENCES turns (id) ON DELETE SET NULL,
            channel TEXT NOT NULL,
            ts TEXT NOT NULL,
            created_at TEXT NOT NULL
        );
        CREATE INDEX feedback_created ON feedback (created_at);
        CREATE INDEX feedback_user ON feedback (user);

        CREATE TABLE events (
            key TEXT PRIMARY KEY,
            state TEXT NOT NULL,
            lease_until REAL NOT NULL,
            expires_at REAL NOT NULL
        );
        CREATE INDEX events_expires ON events (expires_at);
        """
    )


@migrations(name="m002_examples_fts")
def m002_examples_fts(db: Database) -> None:
    """Lexical retrieval: an FTS5 index over example questions, kept in sync by triggers."""
    examples = db.table("examples")
    examples.enable_fts(["question"], create_triggers=True, tokenize="porter unicode61")
    examples.rebuild_fts()


@migrations(name="m003_turn_details_teachers_vectors")
def m003_turn_details_teachers_vectors(db: Database) -> None:
    """Attempts and schema fingerprint per turn, first-teach tracking, embedding vectors."""
    db.executescript(
        """
        ALTER TABLE turns ADD COLUMN attempts INTEGER NOT NULL DEFAULT 0;
        ALTER TABLE turns ADD COLUMN schema_fingerprint TEXT;

        CREATE TABLE teachers (
            user TEXT PRIMARY KEY,
            first_taught_at TEXT NOT NULL
        );
        INSERT OR IGNORE INTO teachers (user, first_taught_at)
            SELECT user, MIN(created_at) FROM example_votes WHERE vote > 0 GROUP BY user;

        CREATE TABLE example_vectors (
            example_id INTEGER PRIMARY KEY REFERENCES examples (id) ON DELETE CASCADE,
            model TEXT NOT NULL,
            dim INTEGER NOT NULL,
            vector BLOB NOT NULL
        );
        """
    )


@migrations(name="m004_schema_examples")
def m004_schema_examples(db: Database) -> None:
    """Examples generated from the graph's schema: the shape each teaches, found by fingerprint."""
    db.executescript(
        """
        ALTER TABLE examples ADD COLUMN shape TEXT;
        CREATE INDEX examples_source_fingerprint ON examples (source, schema_fingerprint);
        """
    )


KNOWN_MIGRATIONS = (
    "m001_core",
    "m002_examples_fts",
    "m003_turn_details_teachers_vectors",
    "m004_schema_examples",
)
