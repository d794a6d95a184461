"""Conversation turns: recording, history order and limits, message lookup, purge and forget."""

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


def _record(mem: Memory, conversation: str, n: int, **extra: object) -> int:
    return mem.conversations.record(
        conversation,
        user=str(extra.pop("user", "U1")),
        question=f"question {n}",
        standalone_question=f"standalone {n}",
        cypher=f"RETURN {n}",
        answer=f"answer {n}",
        outcome="answered",
        **extra,  # type: ignore[arg-type]
    )


def test_record_and_read_back_every_field(mem: Memory) -> None:
    turn_id = mem.conversations.record(
        "T1:C1:1700000000.000100",
        user="U1",
        question="and in 2000?",
        standalone_question="How many movies were released in 2000?",
        cypher="MATCH (m:Movie {released: 2000}) RETURN count(m)",
        answer="3 movies",
        outcome="answered",
        timings_ms={"generate": 812.5},
        llm_calls=3,
        prompt_tokens=1200,
        completion_tokens=80,
        example_ids=[4, 7],
        attempts=2,
        schema_fingerprint="fp1",
    )
    turn = mem.conversations.turn(turn_id)
    assert turn is not None
    assert turn.id == turn_id and turn.user == "U1"
    assert turn.standalone_question == "How many movies were released in 2000?"
    assert turn.example_ids == (4, 7) and turn.attempts == 2
    assert turn.schema_fingerprint == "fp1"
    assert turn.created_at is not None and turn.created_at.tzinfo is not None
    assert turn.channel is None
    assert mem.conversations.turn(9999) is None


def test_attach_message_and_lookup(mem: Memory) -> None:
    turn_id = _record(mem, "T:C:1", 1)
    assert mem.conversations.by_message("C", "1.2") is None
    mem.conversations.attach_message(turn_id, "C", "1.2")
    found = mem.conversations.by_message("C", "1.2")
    assert found is not None and found.id == turn_id
    assert (found.channel, found.ts) == ("C", "1.2")


def test_history_is_oldest_first_last_n_per_conversation(mem: Memory) -> None:
    for i in range(8):
        _record(mem, "T:C:1", i)
        _record(mem, "T:C:2", 100 + i)
    history = mem.conversations.history("T:C:1", n=5)
    assert [t.question for t in history] == [f"question {i}" for i in range(3, 8)]
    assert mem.conversations.history("T:C:1", n=0) == []
    assert mem.conversations.history("T:C:unknown") == []
    assert mem.conversations.has_conversation("T:C:2")
    assert not mem.conversations.has_conversation("T:C:3")


def test_history_trimmed_by_characters(mem: Memory) -> None:
    for i in range(5):
        _record(mem, "T:C:1", i)
    one = sum(len(s) for s in ("question 0", "standalone 0", "RETURN 0", "answer 0"))
    history = mem.conversations.history("T:C:1", n=5, max_chars=2 * one + 1)
    assert [t.question for t in history] == ["question 3", "question 4"]
    # A single turn bigger than the budget keeps its question and query; the answer is cut.
    mem.conversations.record(
        "T:C:big",
        user="U",
        question="q",
        standalone_question="q",
        cypher="RETURN 1",
        answer="x" * 1000,
        outcome="answered",
    )
    [big] = mem.conversations.history("T:C:big", max_chars=100)
    assert big.question == "q" and len(big.answer) < 100 and big.answer.endswith("…")


def test_purge_deletes_only_old_turns(mem: Memory) -> None:
    old = datetime.now(UTC) - timedelta(days=91)
    _record(mem, "T:C:1", 1, created_at=old)
    _record(mem, "T:C:1", 2, created_at=datetime.now(UTC) - timedelta(days=89))
    _record(mem, "T:C:1", 3)
    assert mem.conversations.purge(90) == 1
    assert [t.question for t in mem.conversations.history("T:C:1")] == [
        "question 2",
        "question 3",
    ]
    assert mem.conversations.purge(90) == 0


def test_forget_thread(mem: Memory) -> None:
    _record(mem, "T:C:1", 1)
    _record(mem, "T:C:1", 2)
    _record(mem, "T:C:2", 3)
    assert mem.conversations.forget(conversation="T:C:1") == 2
    assert not mem.conversations.has_conversation("T:C:1")
    assert mem.conversations.has_conversation("T:C:2")


def test_forget_user_removes_turns_feedback_and_identity(mem: Memory) -> None:
    turn_id = _record(mem, "T:C:1", 1, user="U1")
    _record(mem, "T:C:1", 2, user="U2")
    turn = mem.conversations.turn(turn_id)
    assert turn is not None
    taught = mem.examples.teach(turn, "U1")
    mem.feedback.record_reaction(
        "Ev1",
        user="U1",
        reaction="+1",
        kind="up",
        added=True,
        turn_id=turn_id,
        channel="C",
        ts="1",
    )
    assert mem.conversations.forget(user="U1") == 1
    assert [t.user for t in mem.conversations.history("T:C:1")] == ["U2"]
    example = mem.examples.get(taught.example_id or 0)
    # The example is the workspace's knowledge: it stays, without the user's id.
    assert example is not None and example.status == "active"
    assert example.taught_by is None and example.up_votes == 1
    assert mem.feedback.stats().reactions == {}
    with pytest.raises(ValueError):
        mem.conversations.forget()
