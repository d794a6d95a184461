"""Several threads and a second process writing to one memory database (a SQLite file or one
PostgreSQL database): nothing lost, nothing locked, each claim taken once."""

from __future__ import annotations

import subprocess
import sys
import threading
from pathlib import Path

from memory import open_memory

THREADS = 8
WRITES = 200

_WRITER = """
import sys
from memory import open_memory

mem = open_memory(sys.argv[1])
for i in range(int(sys.argv[2])):
    mem.conversations.record(
        "proc:other", user="P", question=f"p{i}", standalone_question=f"p{i}",
        cypher=None, answer="a", outcome="answered",
    )
    if i % 10 == 0:
        mem.examples.add(f"process question {i}", f"RETURN {i}", source="admin")
    mem.events.claim(f"event:proc-{i}")
mem.close()
"""


def test_threads_and_a_second_process_lose_no_writes(memory_location: str) -> None:
    path = memory_location
    mem = open_memory(path)
    other = subprocess.Popen(
        [sys.executable, "-c", _WRITER, str(path), str(THREADS * WRITES)],
        cwd=Path(__file__).resolve().parents[2],
        stderr=subprocess.PIPE,
        text=True,
    )
    errors: list[BaseException] = []
    start = threading.Barrier(THREADS)

    def write(n: int) -> None:
        try:
            start.wait()
            for i in range(WRITES):
                turn_id = mem.conversations.record(
                    f"thread:{n}",
                    user=f"U{n}",
                    question=f"q{i}",
                    standalone_question=f"q{i}",
                    cypher="RETURN 1",
                    answer="a",
                    outcome="answered",
                )
                if i % 20 == 0:
                    turn = mem.conversations.turn(turn_id)
                    assert turn is not None
                    mem.examples.teach(turn, f"U{n}")
                assert mem.events.claim(f"event:{n}-{i}")
        except BaseException as exc:
            errors.append(exc)

    workers = [threading.Thread(target=write, args=(n,)) for n in range(THREADS)]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join()
    _, stderr = other.communicate(timeout=120)
    assert other.returncode == 0, stderr
    assert not errors, errors

    for n in range(THREADS):
        history = mem.conversations.history(f"thread:{n}", n=WRITES)
        assert [t.question for t in history] == [f"q{i}" for i in range(WRITES)]
    assert len(mem.conversations.history("proc:other", n=10_000)) == THREADS * WRITES
    mem.close()

    with open_memory(path) as again:
        stats = again.feedback.stats()
        assert sum(stats.outcomes.values()) == 2 * THREADS * WRITES
        # Threads taught the same (question, Cypher) pairs: one example each, one vote per user.
        assert stats.examples[("thumbs_up", "active")] == WRITES // 20
        taught = again.examples.list(source="thumbs_up", limit=100)
        assert {ex.up_votes for ex in taught} == {THREADS}
        assert stats.examples[("admin", "active")] == THREADS * WRITES // 10


_CLAIMER = """
import sys
from memory import open_memory

mem = open_memory(sys.argv[1])
won = [key for key in sys.argv[2:] if mem.events.claim(key)]
print(" ".join(won))
mem.close()
"""


def test_two_processes_claiming_the_same_keys_take_each_once(memory_location: str) -> None:
    """Two bot instances receive the same deliveries (Slack retries to either): each key is
    handled by exactly one of them."""
    open_memory(memory_location).close()  # migrated before both start
    keys = [f"event:Ev{i}" for i in range(300)]
    procs = [
        subprocess.Popen(
            [sys.executable, "-c", _CLAIMER, memory_location, *keys],
            cwd=Path(__file__).resolve().parents[2],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for _ in range(2)
    ]
    won: list[str] = []
    for proc in procs:
        out, err = proc.communicate(timeout=120)
        assert proc.returncode == 0, err
        won += out.split()
    assert sorted(won) == sorted(keys)
