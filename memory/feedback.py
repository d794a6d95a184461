"""Reaction feedback (idempotent on Slack's event id) and the usage statistics of `cypherbot stats`."""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from datetime import timedelta
from typing import Literal

from memory import clock
from memory.db import Conns, Db, rows

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class FailingQuestion:
    """A standalone question that keeps failing."""

    question: str
    failures: int


@dataclass(frozen=True)
class Stats:
    """Usage over the last `days` days."""

    days: int
    questions_per_day: list[tuple[str, int]] = field(default_factory=list)
    outcomes: dict[str, int] = field(default_factory=dict)
    attempts: dict[int, int] = field(default_factory=dict)
    """Number of Cypher attempts → turns that took that many."""
    llm_calls: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    reactions: dict[str, int] = field(default_factory=dict)
    """`up` / `down` reactions added in the period."""
    examples: dict[tuple[str, str], int] = field(default_factory=dict)
    """(source, status) → examples (all time)."""
    top_failing: list[FailingQuestion] = field(default_factory=list)


class FeedbackStore:
    """Every reaction event on the bot's answers, stored once per Slack event id."""

    def __init__(self, conns: Conns) -> None:
        self._conns = conns

    def record_reaction(
        self,
        event_id: str,
        *,
        user: str,
        reaction: str,
        kind: Literal["up", "down"],
        added: bool,
        turn_id: int | None,
        channel: str,
        ts: str,
    ) -> bool:
        """Store a reaction event; False when this event id was already recorded (a retry)."""
        stamp = clock.to_text(clock.now())

        def insert(db: Db) -> bool:
            if turn_id is not None and not rows(
                db, "SELECT 1 AS x FROM turns WHERE id = ?", [turn_id]
            ):
                known_turn = None
            else:
                known_turn = turn_id
            cursor = db.execute(
                "INSERT OR IGNORE INTO feedback (event_id, user, reaction, kind, added, turn_id, "
                "channel, ts, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
                [event_id, user, reaction, kind, int(added), known_turn, channel, ts, stamp],
            )
            return bool(cursor.rowcount)

        return self._conns.write(insert)

    def stats(self, days: int = 30) -> Stats:
        """Questions, outcomes, attempts, LLM usage, reactions and examples for the period."""
        since = clock.to_text(clock.now() - timedelta(days=days))

        def gather(db: Db) -> Stats:
            per_day = rows(
                db,
                "SELECT substr(created_at, 1, 10) AS day, count(*) AS n FROM turns "
                "WHERE created_at >= ? GROUP BY day ORDER BY day",
                [since],
            )
            outcomes = rows(
                db,
                "SELECT outcome, count(*) AS n FROM turns WHERE created_at >= ? "
                "GROUP BY outcome ORDER BY n DESC",
                [since],
            )
            attempts = rows(
                db,
                "SELECT attempts, count(*) AS n FROM turns WHERE created_at >= ? "
                "GROUP BY attempts ORDER BY attempts",
                [since],
            )
            usage = rows(
                db,
                "SELECT coalesce(sum(llm_calls), 0) AS calls, "
                "coalesce(sum(prompt_tokens), 0) AS prompt, "
                "coalesce(sum(completion_tokens), 0) AS completion "
                "FROM turns WHERE created_at >= ?",
                [since],
            )[0]
            reactions = rows(
                db,
                "SELECT kind, count(*) AS n FROM feedback WHERE created_at >= ? AND added = 1 "
                "GROUP BY kind",
                [since],
            )
            examples = rows(
                db, "SELECT source, status, count(*) AS n FROM examples GROUP BY source, status"
            )
            failing = rows(
                db,
                "SELECT min(standalone_question) AS q, count(*) AS n FROM turns "
                "WHERE created_at >= ? AND outcome = 'failed' "
                "GROUP BY lower(standalone_question) ORDER BY n DESC, q LIMIT 10",
                [since],
            )
            return Stats(
                days=days,
                questions_per_day=[(r["day"], r["n"]) for r in per_day],
                outcomes={r["outcome"]: r["n"] for r in outcomes},
                attempts={r["attempts"]: r["n"] for r in attempts},
                # int(): PostgreSQL sums integers as NUMERIC.
                llm_calls=int(usage["calls"]),
                prompt_tokens=int(usage["prompt"]),
                completion_tokens=int(usage["completion"]),
                reactions={r["kind"]: r["n"] for r in reactions},
                examples={(r["source"], r["status"]): r["n"] for r in examples},
                top_failing=[FailingQuestion(r["q"], r["n"]) for r in failing],
            )

        return self._conns.read(gather)
