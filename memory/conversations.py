"""Conversation turns: what was asked and answered in each Slack thread (or CLI chat)."""

from __future__ import annotations

import dataclasses
import json
import logging
from collections.abc import Sequence
from datetime import datetime, timedelta
from typing import Any

from memory import clock
from memory.db import Conns, Db, rows
from memory.types import Outcome, Turn

log = logging.getLogger(__name__)

_TURN_COLUMNS = (
    "id, conversation, user, question, standalone_question, cypher, answer, outcome, channel, "
    "ts, example_ids, created_at, attempts, schema_fingerprint"
)


def _turn(row: dict[str, Any]) -> Turn:
    return Turn(
        id=row["id"],
        conversation=row["conversation"],
        user=row["user"],
        question=row["question"],
        standalone_question=row["standalone_question"],
        cypher=row["cypher"],
        answer=row["answer"],
        outcome=row["outcome"],
        channel=row["channel"],
        ts=row["ts"],
        example_ids=tuple(json.loads(row["example_ids"] or "[]")),
        created_at=clock.from_text(row["created_at"]),
        attempts=row["attempts"],
        schema_fingerprint=row["schema_fingerprint"],
    )


def _chars(turn: Turn) -> int:
    return (
        len(turn.question)
        + len(turn.standalone_question)
        + len(turn.cypher or "")
        + len(turn.answer)
    )


class ConversationStore:
    """Turns per conversation key (`team:channel:thread_ts`, or `cli:<name>`)."""

    def __init__(self, conns: Conns) -> None:
        self._conns = conns

    def record(
        self,
        conversation: str,
        *,
        user: str,
        question: str,
        standalone_question: str,
        cypher: str | None,
        answer: str,
        outcome: Outcome,
        timings_ms: dict[str, float] | None = None,
        llm_calls: int = 0,
        prompt_tokens: int = 0,
        completion_tokens: int = 0,
        example_ids: Sequence[int] = (),
        created_at: datetime | None = None,
        attempts: int = 0,
        schema_fingerprint: str | None = None,
    ) -> int:
        """Store one turn; return its id."""
        values = (
            conversation,
            user,
            question,
            standalone_question,
            cypher,
            answer,
            outcome,
            json.dumps(timings_ms) if timings_ms is not None else None,
            llm_calls,
            prompt_tokens,
            completion_tokens,
            json.dumps([int(i) for i in example_ids]),
            clock.to_text(created_at or clock.now()),
            attempts,
            schema_fingerprint,
        )

        def insert(db: Db) -> int:
            cursor = db.execute(
                "INSERT INTO turns (conversation, user, question, standalone_question, cypher, "
                "answer, outcome, timings_json, llm_calls, prompt_tokens, completion_tokens, "
                "example_ids, created_at, attempts, schema_fingerprint) "
                "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) RETURNING id",
                values,
            )
            return int(cursor.fetchall()[0][0])

        return self._conns.write(insert)

    def attach_message(self, turn_id: int, channel: str, ts: str) -> None:
        """Remember which Slack message carries the turn's answer (for reactions)."""
        self._conns.write(
            lambda db: db.execute(
                "UPDATE turns SET channel = ?, ts = ? WHERE id = ?", (channel, ts, turn_id)
            )
        )

    def turn(self, turn_id: int) -> Turn | None:
        """The turn with this id, if it still exists."""
        found = self._conns.read(
            lambda db: rows(db, f"SELECT {_TURN_COLUMNS} FROM turns WHERE id = ?", [turn_id])
        )
        return _turn(found[0]) if found else None

    def by_message(self, channel: str, ts: str) -> Turn | None:
        """The turn whose answer is the Slack message (channel, ts)."""
        found = self._conns.read(
            lambda db: rows(
                db,
                f"SELECT {_TURN_COLUMNS} FROM turns WHERE channel = ? AND ts = ? "
                "ORDER BY id DESC LIMIT 1",
                [channel, ts],
            )
        )
        return _turn(found[0]) if found else None

    def history(self, conversation: str, n: int = 5, max_chars: int | None = None) -> list[Turn]:
        """The last `n` turns, oldest first; the oldest are dropped to fit `max_chars`."""
        if n <= 0:
            return []
        found = self._conns.read(
            lambda db: rows(
                db,
                f"SELECT {_TURN_COLUMNS} FROM turns WHERE conversation = ? "
                "ORDER BY id DESC LIMIT ?",
                [conversation, n],
            )
        )
        turns = [_turn(r) for r in reversed(found)]
        if max_chars is None:
            return turns
        while len(turns) > 1 and sum(_chars(t) for t in turns) > max_chars:
            turns.pop(0)
        if turns and _chars(turns[0]) > max_chars:
            # A single huge turn still gives the rewrite step its question and query; the
            # answer is what gets cut.
            last = turns[0]
            room = max(0, max_chars - (_chars(last) - len(last.answer)))
            turns[0] = dataclasses.replace(last, answer=last.answer[: max(0, room - 1)] + "…")
        return turns

    def recent_questions(self, user: str, n: int = 5) -> list[str]:
        """The person's last `n` different questions, newest first (for the App Home)."""
        found = self._conns.read(
            lambda db: rows(
                db,
                "SELECT question, max(id) AS last FROM turns WHERE user = ? "
                "GROUP BY question ORDER BY last DESC LIMIT ?",
                [user, n],
            )
        )
        return [str(r["question"]) for r in found]

    def has_conversation(self, conversation: str) -> bool:
        """True when the bot has answered at least once in this conversation."""
        found = self._conns.read(
            lambda db: rows(
                db, "SELECT 1 AS x FROM turns WHERE conversation = ? LIMIT 1", [conversation]
            )
        )
        return bool(found)

    def purge(self, older_than_days: int) -> int:
        """Delete turns older than `older_than_days`; return how many."""
        cutoff = clock.to_text(clock.now() - timedelta(days=older_than_days))
        count = self._conns.write(
            lambda db: db.execute("DELETE FROM turns WHERE created_at < ?", [cutoff]).rowcount
        )
        log.info("purged %d turns older than %d days", count, older_than_days)
        return int(count)

    def forget(self, user: str | None = None, conversation: str | None = None) -> int:
        """Delete a user's turns and reactions, or a whole conversation; return turns deleted.

        Examples a forgotten user taught stay (they belong to the workspace), but lose the
        user's id: `taught_by` is cleared and their votes are re-keyed to an anonymous id.
        """
        if user is None and conversation is None:
            raise ValueError("forget() needs a user or a conversation")

        def delete(db: Db) -> int:
            count = 0
            if conversation is not None:
                count += db.execute(
                    "DELETE FROM turns WHERE conversation = ?", [conversation]
                ).rowcount
            if user is not None:
                count += db.execute("DELETE FROM turns WHERE user = ?", [user]).rowcount
                db.execute("DELETE FROM feedback WHERE user = ?", [user])
                db.execute("UPDATE examples SET taught_by = NULL WHERE taught_by = ?", [user])
                anonymous = "forgotten:" + clock.to_text(clock.now())
                db.execute("UPDATE example_votes SET user = ? WHERE user = ?", [anonymous, user])
                db.execute("DELETE FROM teachers WHERE user = ?", [user])
            return int(count)

        count = self._conns.write(delete)
        log.info("forgot %d turns", count)
        return count
