"""manifest.yml asks Slack for what the bot uses, as SLACK.md lists it."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml

MANIFEST = Path(__file__).resolve().parents[2] / "manifest.yml"


def load() -> dict[str, Any]:
    data = yaml.safe_load(MANIFEST.read_text())
    assert isinstance(data, dict)
    return data


def test_scopes_cover_every_event_and_call_the_bot_makes() -> None:
    scopes = set(load()["oauth_config"]["scopes"]["bot"])
    needed = {
        "app_mentions:read",
        "chat:write",
        "im:history",
        "im:read",
        "reactions:read",
        "channels:history",
        "groups:history",
        "files:write",
        "commands",
    }
    assert needed <= scopes, needed - scopes


def test_events_socket_mode_and_app_home_messages() -> None:
    manifest = load()
    settings = manifest["settings"]
    events = set(settings["event_subscriptions"]["bot_events"])
    assert {
        "app_mention",
        "message.im",
        "message.channels",
        "message.groups",
        "reaction_added",
        "reaction_removed",
    } <= events
    assert settings["socket_mode_enabled"] is True
    home = manifest["features"]["app_home"]
    assert home["messages_tab_enabled"] is True
    assert home["messages_tab_read_only_enabled"] is False
    assert manifest["features"]["slash_commands"][0]["command"] == "/cypherbot"


def test_the_ai_app_surface_is_declared_as_slack_documents_it() -> None:
    manifest = load()
    view = manifest["features"]["assistant_view"]
    assert set(view) <= {"assistant_description", "suggested_prompts"}
    assert 0 < len(view["assistant_description"]) <= 500
    prompts = view["suggested_prompts"]
    assert 1 <= len(prompts) <= 4
    assert all(set(p) == {"title", "message"} and len(p["title"]) <= 75 for p in prompts)
    assert manifest["features"]["app_home"]["home_tab_enabled"] is True
    assert "assistant:write" in manifest["oauth_config"]["scopes"]["bot"]
    events = set(manifest["settings"]["event_subscriptions"]["bot_events"])
    assert {"assistant_thread_started", "assistant_thread_context_changed"} <= events
    assert "app_home_opened" in events
    assert manifest["settings"]["interactivity"]["is_enabled"] is True
