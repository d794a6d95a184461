"""The memory CLI commands against a real SQLite file (graph validation replaced by a fake)."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from typer.testing import CliRunner

from bot.cli import app
from bot.cli.runtime import CliRuntime
from bot.settings import Settings
from memory import open_memory


@pytest.fixture
def settings(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Settings:
    s = Settings(_env_file=None, data_dir=tmp_path)  # type: ignore[call-arg]

    @contextmanager
    def fake_validator(ctx: object) -> Iterator[Callable[[str], str | None]]:
        yield lambda cypher: "Invalid input 'RETRN'" if "RETRN" in cypher else None

    monkeypatch.setattr("bot.cli.memory._validator", fake_validator)
    return s


def _run(settings: Settings, *args: str) -> tuple[int, str]:
    result = CliRunner().invoke(app, list(args), obj=CliRuntime(settings))
    if result.exception and not isinstance(result.exception, SystemExit):
        raise result.exception
    return result.exit_code, result.output


def test_examples_commands(settings: Settings, tmp_path: Path) -> None:
    seeds = tmp_path / "seeds.yaml"
    seeds.write_text(
        "- question: How many movies?\n  cypher: MATCH (m:Movie) RETURN count(m)\n"
        "- question: Who acted?\n  cypher: MATCH (p) RETRN p\n",
        encoding="utf-8",
    )
    code, out = _run(settings, "examples", "import", str(seeds))
    assert code == 1 and "Imported 1" in out and "RETRN" in out
    broken = tmp_path / "broken.yaml"
    broken.write_text("- {question: a?, b\n", encoding="utf-8")
    code, out = _run(settings, "examples", "import", str(broken))
    assert code == 1 and "valid YAML" in " ".join(out.split())
    code, out = _run(
        settings, "examples", "add", "--question", "Who directed X?", "--cypher", "RETURN 1"
    )
    assert code == 0 and "Example 2 is active" in out
    code, out = _run(settings, "examples", "add", "--question", "Bad?", "--cypher", "RETRN 1")
    assert code == 1 and "refused" in out
    code, out = _run(settings, "examples", "list")
    assert code == 0 and "How many movies?" in out and "admin" in out
    code, out = _run(settings, "examples", "show", "1")
    assert code == 0 and "MATCH (m:Movie) RETURN count(m)" in out
    assert _run(settings, "examples", "retire", "1")[0] == 0
    code, out = _run(settings, "examples", "list", "--status", "retired")
    assert "How many movies?" in out and "Who directed" not in out
    assert _run(settings, "examples", "promote", "1")[0] == 0
    assert _run(settings, "examples", "show", "99")[0] == 1
    assert _run(settings, "examples", "list", "--status", "bogus")[0] == 2
    out_file = tmp_path / "out.jsonl"
    code, out = _run(settings, "examples", "export", str(out_file))
    assert code == 0 and "Exported 2" in out and len(out_file.read_text().splitlines()) == 2


def test_memory_purge_forget_and_stats(settings: Settings) -> None:
    with open_memory(settings.memory_path) as mem:
        for days, user in ((100, "U1"), (1, "U1"), (1, "U2")):
            mem.conversations.record(
                f"T:C:{user}",
                user=user,
                question="q",
                standalone_question="Which movie failed?",
                cypher=None,
                answer="a",
                outcome="failed",
                created_at=datetime.now(UTC) - timedelta(days=days),
            )
    code, out = _run(settings, "stats")
    assert code == 0 and "Which movie failed?" in out and "failed" in out
    code, out = _run(settings, "memory", "purge")
    assert code == 0 and "Deleted 1 turns older than 90 days" in out
    code, out = _run(settings, "memory", "forget", "--user", "U1")
    assert code == 0 and "1 turns deleted" in out
    assert _run(settings, "memory", "forget")[0] == 2
    code, out = _run(settings, "memory", "forget", "--thread", "T:C:U2")
    assert code == 0 and "1 turns deleted" in out
