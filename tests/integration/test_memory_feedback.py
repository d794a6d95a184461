"""Reaction feedback is stored once per Slack event; stats summarise usage."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime, timedelta

import pytest

from memory import Memory, open_memory


@pytest.fixture
def mem(memory_location: str) -> Iterator[Memory]:
    memory = open_memory(memory_location)
    yield memory
    memory.close()


def test_record_reaction_is_idempotent_per_event(mem: Memory) -> None:
    args = {"user": "U1", "reaction": "+1", "kind": "up", "added": True, "channel": "C", "ts": "1"}
    assert mem.feedback.record_reaction("Ev1", turn_id=None, **args)  # type: ignore[arg-type]
    assert not mem.feedback.record_reaction("Ev1", turn_id=None, **args)  # type: ignore[arg-type]
    # A turn id that no longer exists (purged) is stored as unknown, not refused.
    assert mem.feedback.record_reaction("Ev2", turn_id=42, **args)  # type: ignore[arg-type]
    assert mem.feedback.stats().reactions == {"up": 2}


def test_stats(mem: Memory) -> None:
    today = datetime.now(UTC)
    for i, (outcome, attempts) in enumerate(
        [("answered", 1), ("answered", 2), ("failed", 3), ("failed", 3), ("no_data", 1)]
    ):
        mem.conversations.record(
            "T:C:1",
            user="U1",
            question="q",
            standalone_question="Which actor has the most awards?"
            if outcome == "failed"
            else f"q{i}",
            cypher=None,
            answer="a",
            outcome=outcome,  # type: ignore[arg-type]
            llm_calls=3,
            prompt_tokens=100,
            completion_tokens=10,
            attempts=attempts,
            created_at=today - timedelta(days=i % 2),
        )
    mem.conversations.record(
        "T:C:1",
        user="U1",
        question="old",
        standalone_question="old",
        cypher=None,
        answer="a",
        outcome="answered",
        created_at=today - timedelta(days=40),
    )
    mem.examples.add("q", "RETURN 1", source="seed")
    mem.examples.add_candidate("q2", "RETURN 2", "fp")
    stats = mem.feedback.stats(30)
    assert sum(n for _, n in stats.questions_per_day) == 5
    assert len(stats.questions_per_day) == 2
    assert stats.outcomes == {"answered": 2, "failed": 2, "no_data": 1}
    assert stats.attempts == {1: 2, 2: 1, 3: 2}
    assert (stats.llm_calls, stats.prompt_tokens, stats.completion_tokens) == (15, 500, 50)
    assert stats.examples == {("seed", "active"): 1, ("self_healed", "candidate"): 1}
    assert [(f.question, f.failures) for f in stats.top_failing] == [
        ("Which actor has the most awards?", 2)
    ]
