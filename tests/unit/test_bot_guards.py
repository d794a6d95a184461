"""The bot's guards on the guardrails package: questions, rates, channels, restrictions, budget,
secrets in logs, the restricted schema view and the start-up purge."""

from __future__ import annotations

import io
import logging
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from pydantic import SecretStr, ValidationError

from bot.cli.slack import purge_on_start
from bot.settings import Settings, mask_secrets_in_logs
from bot.slack.answering import BUDGET_MESSAGE, SettingsGuards
from graph_agent.graphdb.protocol import GraphSchema, LabelInfo, PropertyInfo, RelPattern
from graph_agent.restrict import restricted_schema
from guardrails.cypher_policy import CypherPolicy
from rig.slack import rig_settings


def guards(tmp_path: Path, **overrides: Any) -> SettingsGuards:
    return SettingsGuards(rig_settings(tmp_path, **overrides))


def test_question_check_cleans_control_characters_and_caps_length(tmp_path: Path) -> None:
    g = guards(tmp_path, max_question_chars=20)
    checked = g.question_check("  how many\x00 teams?\x1b ")
    assert checked.ok and checked.text == "how many teams?"
    too_long = g.question_check("x" * 21)
    assert not too_long.ok and "20 characters" in (too_long.message or "")
    assert g.question_check(" \u200b ").problem == "empty"
    assert g.question_check(":wave: :smile:").problem == "no_words"


def test_rate_limit_is_per_user(tmp_path: Path) -> None:
    g = guards(tmp_path, rate_per_minute=2)
    assert g.rate_problem("U1") is None and g.rate_problem("U1") is None
    assert "in the last minute" in (g.rate_problem("U1") or "")
    assert g.rate_problem("U2") is None


def test_a_channel_that_is_not_enabled_is_told_once(tmp_path: Path) -> None:
    g = guards(tmp_path, allowed_channels=["COK"], denied_channels=["CBAD"], allow_dms=False)
    assert g.channel_problem("COK", False) is None
    first = g.channel_problem("COTHER", False)
    assert first is not None and "not enabled" in (first.message or "")
    again = g.channel_problem("COTHER", False)
    assert again is not None and again.message is None, "declined, but silently"
    denied = g.channel_problem("CBAD", False)
    assert denied is not None and denied.reason == "denied" and denied.message
    dm = g.channel_problem("D1", True)
    assert dm is not None and "direct messages" in (dm.message or "")


def test_channel_restrictions_become_a_policy_per_channel(tmp_path: Path) -> None:
    g = guards(tmp_path, channel_restrictions="C1:Incident,Person.email,[ON_CALL];*:.ssn")
    policy = g.policy_for("C1")
    assert policy == CypherPolicy(
        hidden_labels=frozenset({"Incident"}),
        hidden_rel_types=frozenset({"ON_CALL"}),
        hidden_properties=frozenset({"Person.email", "ssn"}),
    )
    assert g.policy_for("C2") == CypherPolicy(hidden_properties=frozenset({"ssn"}))
    assert guards(tmp_path).policy_for("C1") is None


@pytest.mark.parametrize("bad", ["C1", "C1:Person.", "C1:a:b", ":Incident"])
def test_a_bad_channel_restrictions_setting_names_the_setting(bad: str) -> None:
    with pytest.raises(ValidationError) as caught:
        Settings(_env_file=None, channel_restrictions=bad)  # type: ignore[call-arg]
    assert caught.value.errors()[0]["loc"] == ("channel_restrictions",)


def test_token_budget_declines_when_used_up_and_alerts_at_80_percent(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    g = guards(tmp_path, daily_token_budget=1000)
    assert g.budget_problem("T1") is None
    with caplog.at_level(logging.WARNING, logger="guardrails.limits"):
        g.spend("T1", 700)
        assert not caplog.records
        g.spend("T1", 150)
        g.spend("T1", 10)
    [alert] = caplog.records
    assert "T1" in alert.getMessage() and "85%" in alert.getMessage()
    assert g.budget_problem("T1") is None
    g.spend("T1", 200)
    assert g.budget_problem("T1") == BUDGET_MESSAGE
    assert g.budget_problem("T2") is None, "per workspace"
    unlimited = guards(tmp_path, daily_token_budget=0)
    unlimited.spend("T1", 10**9)
    assert unlimited.budget_problem("T1") is None


def test_secret_values_cover_every_secret_setting() -> None:
    settings = Settings(  # type: ignore[call-arg]
        _env_file=None,
        slack_bot_token=SecretStr("xoxb-bot"),
        slack_app_token=SecretStr("xapp-app"),
        slack_signing_secret=SecretStr("signing"),
        neo4j_password=SecretStr("neo-pass"),
        openai_api_key=SecretStr("sk-key"),
        graph_url="neo4j://reader:url-pass@db:7687",
    )
    assert sorted(settings.secret_values()) == sorted(
        ["xoxb-bot", "xapp-app", "signing", "neo-pass", "sk-key", "url-pass"]
    )


@pytest.fixture
def root_stream() -> Iterator[io.StringIO]:
    stream = io.StringIO()
    handler = logging.StreamHandler(stream)
    root = logging.getLogger()
    root.addHandler(handler)
    try:
        yield stream
    finally:
        root.removeHandler(handler)


def test_mask_secrets_in_logs_covers_children_and_accumulates(root_stream: io.StringIO) -> None:
    first = Settings(_env_file=None, neo4j_password=SecretStr("first-secret"))  # type: ignore[call-arg]
    second = Settings(_env_file=None, openai_api_key=SecretStr("second-secret"))  # type: ignore[call-arg]
    mask_secrets_in_logs(first)
    mask_secrets_in_logs(second)
    log = logging.getLogger("some.child.logger")
    log.warning("connecting with %s and %s", "first-secret", "second-secret")
    assert "first-secret" not in root_stream.getvalue()
    assert "second-secret" not in root_stream.getvalue()
    assert "connecting with *** and ***" in root_stream.getvalue()


SCHEMA = GraphSchema(
    labels=(
        LabelInfo("Person", 10, (PropertyInfo("name", ("STRING",)), PropertyInfo("email", ()))),
        LabelInfo("Team", 3, (PropertyInfo("name", ("STRING",)),)),
        LabelInfo("Incident", 5, (PropertyInfo("title", ("STRING",)),)),
    ),
    relationships=(
        RelPattern("Person", "MEMBER_OF", "Team", properties=(PropertyInfo("email", ()),)),
        RelPattern("Person", "MANAGES", "Person"),
        RelPattern("Team", "HAD", "Incident"),
    ),
)


def test_restricted_schema_hides_labels_rel_types_and_properties() -> None:
    view = restricted_schema(
        SCHEMA,
        CypherPolicy(
            hidden_labels=frozenset({"incident"}),
            hidden_rel_types=frozenset({"MANAGES"}),
            hidden_properties=frozenset({"Person.email"}),
        ),
    )
    assert [label.name for label in view.labels] == ["Person", "Team"]
    assert [p.name for p in view.labels[0].properties] == ["name"]
    assert [r.type for r in view.relationships] == ["MEMBER_OF"]
    assert view.relationships[0].properties == ()
    assert restricted_schema(SCHEMA, None) is SCHEMA
    assert restricted_schema(SCHEMA, CypherPolicy()) is SCHEMA
    assert [
        label.name
        for label in restricted_schema(
            SCHEMA, CypherPolicy(hidden_labels=frozenset({"Team"}))
        ).labels
    ] == [
        "Person",
        "Incident",
    ]


def test_purge_on_start_purges_turns_and_expired_events(caplog: pytest.LogCaptureFixture) -> None:
    calls: list[Any] = []

    class Conversations:
        def purge(self, older_than_days: int) -> int:
            calls.append(("turns", older_than_days))
            return 4

    class Events:
        def purge_expired(self) -> int:
            calls.append("events")
            return 7

    class FakeMemory:
        conversations = Conversations()
        events = Events()

    with caplog.at_level(logging.INFO, logger="bot.cli.slack"):
        assert purge_on_start(FakeMemory(), 30) == (4, 7)  # type: ignore[arg-type]
    assert calls == [("turns", 30), "events"]
    assert "4 turns older than 30 days and 7 expired event keys" in caplog.text
