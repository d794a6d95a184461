"""Settings: environment names, secrets, defaults."""

from __future__ import annotations

from pathlib import Path

import pytest
from pydantic import SecretStr

from bot.settings import Settings
from bot.wiring import agent_config


def test_defaults_use_embedded_graph_and_no_llm(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    monkeypatch.delenv("GRAPH_URL", raising=False)
    settings = Settings(_env_file=None)
    assert settings.graph_url == "embedded"
    assert not settings.llm_configured
    assert settings.memory_path == Path("data") / "cypherbot.sqlite3"


def test_secrets_are_hidden_in_repr(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("NEO4J_PASSWORD", "hunter2-secret")
    monkeypatch.setenv("SLACK_BOT_TOKEN", "xoxb-very-secret")
    settings = Settings(_env_file=None)
    assert "hunter2-secret" not in repr(settings)
    assert "xoxb-very-secret" not in repr(settings)
    assert settings.neo4j_password.get_secret_value() == "hunter2-secret"


def test_list_settings_parse_json_from_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ALLOWED_CHANNELS", '["C1", "C2"]')
    assert Settings(_env_file=None).allowed_channels == ["C1", "C2"]


def test_memory_url_selects_postgresql_and_its_password_is_a_secret(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("MEMORY_URL", "postgresql://bot:pg-secret@db:5432/cypherbot")
    settings = Settings(_env_file=None)
    assert settings.memory_location == "postgresql://bot:pg-secret@db:5432/cypherbot"
    assert "pg-secret" in settings.secret_values()
    monkeypatch.delenv("MEMORY_URL")
    assert Settings(_env_file=None).memory_location == str(Path("data") / "cypherbot.sqlite3")


def test_a_memory_url_that_is_not_postgresql_is_refused_at_startup(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from pydantic import ValidationError

    monkeypatch.setenv("MEMORY_URL", "mysql://db/cypherbot")
    with pytest.raises(ValidationError, match="MEMORY_URL must be a postgresql://"):
        Settings(_env_file=None)


def test_candidates_unset_are_three_on_openai_and_one_on_a_server_of_ones_own(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    for name in ("CANDIDATES", "OPENAI_BASE_URL", "OPENAI_API_KEY"):
        monkeypatch.delenv(name, raising=False)
    assert Settings(_env_file=None, openai_api_key=SecretStr("sk-x")).candidates_in_use == 3
    local = Settings(_env_file=None, openai_base_url="http://127.0.0.1:8089/v1")
    assert local.candidates_in_use == 1
    monkeypatch.setenv("CANDIDATES", "2")
    assert Settings(_env_file=None, openai_api_key=SecretStr("sk-x")).candidates_in_use == 2
    assert agent_config(local).candidates == 1


def test_retry_candidates_reach_the_agent_and_are_bounded(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("RETRY_CANDIDATES", "3")
    assert agent_config(Settings(_env_file=None)).retry_candidates == 3
    from pydantic import ValidationError

    monkeypatch.setenv("RETRY_CANDIDATES", "9")
    with pytest.raises(ValidationError, match="retry_candidates"):
        Settings(_env_file=None)
