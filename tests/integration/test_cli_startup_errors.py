"""Startup mistakes get one clear line naming the setting to fix, and nothing starts."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

import bot.cli
from graph_agent.graphdb import GraphDB
from tests.conftest import DEMO_GRAPH


@pytest.fixture
def env(monkeypatch: pytest.MonkeyPatch, graph_data_dir: Path) -> pytest.MonkeyPatch:
    monkeypatch.setenv("DATA_DIR", str(graph_data_dir))
    monkeypatch.setenv("GRAPH_NAME", DEMO_GRAPH)
    for name in (
        "SLACK_BOT_TOKEN",
        "SLACK_APP_TOKEN",
        "SLACK_SIGNING_SECRET",
        "OPENAI_API_KEY",
        "OPENAI_BASE_URL",
    ):
        monkeypatch.delenv(name, raising=False)
    return monkeypatch


@pytest.mark.parametrize(
    ("settings", "names"),
    [
        ({}, "SLACK_BOT_TOKEN is not set"),
        ({"SLACK_BOT_TOKEN": "xoxp-user-token"}, "must be a bot token starting with xoxb-"),
        (
            {"SLACK_BOT_TOKEN": "xoxb-1", "SLACK_APP_TOKEN": "xoxb-wrong-kind"},
            "SLACK_APP_TOKEN must be an app-level token",
        ),
        ({"SLACK_BOT_TOKEN": "xoxb-1"}, "SLACK_SIGNING_SECRET is not set"),
    ],
)
def test_run_names_the_missing_or_malformed_setting(
    env: pytest.MonkeyPatch, settings: dict[str, str], names: str
) -> None:
    for name, value in settings.items():
        env.setenv(name, value)
    outcome = CliRunner().invoke(bot.cli.app, ["run"])
    assert outcome.exit_code == 2
    assert names in " ".join(outcome.output.split())


def test_ask_without_an_llm_names_the_settings_to_set(
    env: pytest.MonkeyPatch, demo_db: GraphDB
) -> None:
    outcome = CliRunner().invoke(
        bot.cli.app, ["ask", "Which team has the most open incidents right now?", "--no-memory"]
    )
    assert outcome.exit_code == 1
    text = " ".join(outcome.output.split())
    assert "OPENAI_API_KEY" in text and "OPENAI_BASE_URL" in text


def test_invalid_setting_value_is_one_clear_line(env: pytest.MonkeyPatch) -> None:
    env.setenv("QUERY_TIMEOUT_S", "soon")
    outcome = CliRunner().invoke(bot.cli.app, ["schema"])
    assert outcome.exit_code == 2
    assert "QUERY_TIMEOUT_S" in outcome.output
