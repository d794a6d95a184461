"""The graph commands end to end on the embedded engine: schema, query, demo-data, doctor."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

import bot.cli
from graph_agent.graphdb import GraphDB
from rig.postgres import with_password
from tests.conftest import DEMO_GRAPH


@pytest.fixture
def cli_env(monkeypatch: pytest.MonkeyPatch, demo_db: GraphDB, graph_data_dir: Path) -> None:
    monkeypatch.setenv("DATA_DIR", str(graph_data_dir))
    monkeypatch.setenv("GRAPH_URL", "embedded")
    monkeypatch.setenv("GRAPH_NAME", DEMO_GRAPH)
    for name in ("OPENAI_API_KEY", "OPENAI_BASE_URL"):
        monkeypatch.delenv(name, raising=False)


def invoke(*args: str) -> tuple[int, str]:
    outcome = CliRunner().invoke(bot.cli.app, list(args))
    return outcome.exit_code, outcome.output


def test_schema_prints_labels_and_patterns(cli_env: None) -> None:
    code, out = invoke("schema")
    assert code == 0, out
    assert "Service" in out and "MEMBER_OF" in out and "->" in out


def test_query_prints_a_table(cli_env: None) -> None:
    code, out = invoke("query", "MATCH (t:Team) RETURN t.name AS team ORDER BY team LIMIT 2")
    assert code == 0, out
    assert "team" in out and "2 rows" in out


def test_query_refuses_a_write_with_a_clear_error(cli_env: None, demo_db: GraphDB) -> None:
    before = demo_db.counts()
    outcome = CliRunner().invoke(bot.cli.app, ["query", "CREATE (:Intruder {name: 'x'})"])
    assert outcome.exit_code != 0
    assert outcome.exception is not None and "write" in str(outcome.exception).lower()
    assert demo_db.counts() == before


def test_demo_data_is_skipped_when_loaded(cli_env: None) -> None:
    code, out = invoke("demo-data")
    assert code == 0, out
    assert "already loaded" in out


def test_doctor_reports_engine_memory_versions_and_missing_llm(cli_env: None) -> None:
    code, out = invoke("doctor")
    assert code == 0, out
    for check in ("graph engine", "graph data", "memory", "versions", "LLM"):
        assert check in out
    assert "not configured" in out and "OPENAI_API_KEY" in out


def test_doctor_checks_the_postgresql_memory(
    cli_env: None, monkeypatch: pytest.MonkeyPatch, pg_url: str
) -> None:
    url, password = with_password(pg_url)
    monkeypatch.setenv("MEMORY_URL", url)
    code, out = invoke("doctor")
    assert code == 0, out
    flat = " ".join(out.split())
    assert "PostgreSQL" in flat and "p003_schema_examples" in flat
    assert password not in out
    monkeypatch.setenv("MEMORY_URL", "postgresql://postgres@127.0.0.1:1/nowhere")
    code, out = invoke("doctor")
    assert code == 1 and "MEMORY_URL" in " ".join(out.split())


def test_doctor_names_the_problem_with_a_wrong_url(
    cli_env: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("GRAPH_URL", "mysql://localhost/graph")
    code, out = invoke("doctor")
    assert code == 1
    assert "fail" in out and "neo4j://" in out  # the accepted forms are listed


def test_unreachable_falkordb_server_says_which_url(
    cli_env: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("GRAPH_URL", "falkordb://127.0.0.1:1/g")
    outcome = CliRunner().invoke(bot.cli.app, ["query", "RETURN 1"])
    assert outcome.exit_code != 0
    assert "127.0.0.1:1" in str(outcome.exception)


def test_ask_writes_the_chart_of_a_taught_question_offline(cli_env: None, tmp_path: Path) -> None:
    code, out = invoke("demo-data")  # also teaches the demo's verified questions
    assert code == 0, out
    chart = tmp_path / "severity.png"
    code, out = invoke(
        "ask", "--chart", str(chart), "How many incidents of each severity were there?"
    )
    assert code == 0, out
    assert "LLM calls: 0" in out and f"Chart (bar) written to {chart}" in " ".join(out.split())
    assert chart.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    names = tmp_path / "names.png"
    code, out = invoke("ask", "--chart", str(names), "Who is on the Payments team?")
    assert code == 0, out
    assert "No chart for this result: no numbers to draw." in " ".join(out.split())
    assert not names.exists()
