"""Moving a memory between engines: `cypherbot memory migrate --to postgresql://…` copies a
real SQLite memory (examples with votes and provenance, conversations, feedback, claims)."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from bot.cli import app
from bot.cli.runtime import CliRuntime
from bot.settings import Settings
from memory import Memory, MemoryStoreError, open_memory
from rig.postgres import with_password


def _fill(mem: Memory) -> dict[str, int]:
    """A memory as a running bot leaves it: turns, a taught example with two votes, a down
    vote, feedback, a self-healed candidate, claims, a first-teach record and vectors."""
    ids: dict[str, int] = {}
    for n in range(3):
        ids[f"turn{n}"] = mem.conversations.record(
            "T1:C1:1.0", user=f"U{n}", question=f"Which services does team {n} own?",
            standalone_question=f"Which services does team {n} own?",
            cypher=f"MATCH (t:Team {{n: {n}}})-[:OWNS]->(s) RETURN s.name",
            answer="Payments.", outcome="answered",
        )  # fmt: skip
    turn = mem.conversations.turn(ids["turn0"])
    assert turn is not None
    taught = mem.examples.teach(turn, "U1")
    assert taught.example_id is not None
    ids["example"] = taught.example_id
    mem.examples.teach(turn, "U2")
    ids["candidate"] = mem.examples.add_candidate("Who owns Redis?", "MATCH (t) RETURN t", "fp1")
    mem.feedback.record_reaction(
        "Ev1", user="U1", reaction="+1", kind="up", added=True,
        turn_id=ids["turn0"], channel="C1", ts="1.0",
    )  # fmt: skip
    assert mem.events.claim("event:Ev1")
    mem.events.done("event:Ev1")
    return ids


def _embed(texts: list[str]) -> list[list[float]]:
    return [[float(len(t)), 1.0, float(t.count(" "))] for t in texts]


def _snapshot(mem: Memory) -> dict[str, object]:
    examples = mem.examples.list(limit=100) + mem.examples.list(status="candidate", limit=100)
    return {
        "history": [(t.id, t.user, t.question, t.cypher) for t in mem.conversations.history("T1:C1:1.0", n=10)],
        "examples": sorted(
            (e.id, e.question, e.source, e.status, e.up_votes, e.taught_by, e.schema_fingerprint)
            for e in examples
        ),
        "stats": mem.feedback.stats(),
    }  # fmt: skip


def test_sqlite_to_postgresql_and_back_keeps_everything(tmp_path: Path, pg_url: str) -> None:
    with open_memory(tmp_path / "old.sqlite3", embedder=_embed, embedder_name="e3") as old:
        ids = _fill(old)
        old.examples.similar("who owns redis", include_candidates=True)  # stores vectors
        before = _snapshot(old)
        with open_memory(pg_url, embedder=_embed, embedder_name="e3") as new:
            copied = old.copy_to(new)
            assert copied["turns"] == 3 and copied["example_votes"] == 2
            assert copied["feedback"] == 1 and copied["events"] == 1
            assert copied["teachers"] == 2 and copied["example_vectors"] == 2
            found = new.examples.similar("who owns redis", include_candidates=True)
            assert {e.id for e in found} == {ids["example"], ids["candidate"]}
            assert _snapshot(new) == before
            # Ids continue after the copied ones; a claimed event is still claimed.
            assert not new.events.claim("event:Ev1")
            next_turn = new.conversations.record(
                "T1:C1:1.0", user="U9", question="q", standalone_question="q", cypher=None,
                answer="a", outcome="answered",
            )  # fmt: skip
            assert next_turn == ids["turn2"] + 1
            # Provenance: U1 taking back the 👍 on the copied turn finds the copied vote.
            turn = new.conversations.turn(ids["turn0"])
            assert turn is not None
            assert new.examples.untaught(turn, "U1").status == "kept"
            with open_memory(tmp_path / "back.sqlite3") as back:
                new.copy_to(back)
                assert back.examples.get(ids["example"]) == new.examples.get(ids["example"])


def test_a_target_that_holds_a_memory_is_refused(tmp_path: Path, pg_url: str) -> None:
    with open_memory(tmp_path / "old.sqlite3") as old, open_memory(pg_url) as new:
        _fill(old)
        old.copy_to(new)
        with pytest.raises(MemoryStoreError, match="not empty"):
            old.copy_to(new)


def test_the_migrate_command(tmp_path: Path, pg_url: str, monkeypatch: pytest.MonkeyPatch) -> None:
    settings = Settings(_env_file=None, data_dir=tmp_path)  # type: ignore[call-arg]
    runner = CliRunner()
    missing = runner.invoke(app, ["memory", "migrate", "--to", pg_url], obj=CliRuntime(settings))
    assert missing.exit_code == 2 and "No memory database" in " ".join(missing.output.split())
    with open_memory(settings.memory_path) as old:
        _fill(old)
    url, password = with_password(pg_url)
    done = runner.invoke(app, ["memory", "migrate", "--to", url], obj=CliRuntime(settings))
    assert done.exit_code == 0, done.output
    assert password not in done.output
    assert "MEMORY_URL=" in " ".join(done.output.split())
    with open_memory(pg_url) as new:
        assert len(new.conversations.history("T1:C1:1.0")) == 3
    again = runner.invoke(app, ["memory", "migrate", "--to", pg_url], obj=CliRuntime(settings))
    assert again.exit_code == 1 and "not empty" in " ".join(again.output.split())
