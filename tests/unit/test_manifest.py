"""manifest.yml asks Slack for what the bot uses, as SLACK.md lists it, and subscribes to the
messages of every kind of conversation the listeners answer in (group DMs included)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml

from bot.slack.listeners.messages import ANSWERED_CHANNEL_TYPES

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
        "mpim:history",
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
        "message.mpim",
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


EVENT_SCOPES = {
    "app_mention": "app_mentions:read",
    "app_home_opened": None,
    "assistant_thread_started": "assistant:write",
    "assistant_thread_context_changed": "assistant:write",
    "message.channels": "channels:history",
    "message.groups": "groups:history",
    "message.im": "im:history",
    "message.mpim": "mpim:history",
    "reaction_added": "reactions:read",
    "reaction_removed": "reactions:read",
}
"""The scope Slack requires before it delivers each bot event (docs.slack.dev/reference/events)."""
MESSAGE_EVENTS = {
    "channel": "message.channels",
    "group": "message.groups",
    "im": "message.im",
    "mpim": "message.mpim",
}
"""The bot event that carries messages of each `channel_type`."""


def test_every_subscribed_event_has_the_scope_slack_requires() -> None:
    manifest = load()
    scopes = set(manifest["oauth_config"]["scopes"]["bot"])
    events = manifest["settings"]["event_subscriptions"]["bot_events"]
    unknown = [e for e in events if e not in EVENT_SCOPES]
    assert unknown == [], f"which scope does Slack require for {unknown}?"
    missing = {e: EVENT_SCOPES[e] for e in events if EVENT_SCOPES[e] not in (None, *scopes)}
    assert missing == {}


def test_every_kind_of_conversation_the_bot_answers_in_is_subscribed() -> None:
    manifest = load()
    scopes = set(manifest["oauth_config"]["scopes"]["bot"])
    events = set(manifest["settings"]["event_subscriptions"]["bot_events"])
    answered = {MESSAGE_EVENTS[kind] for kind in ANSWERED_CHANNEL_TYPES}
    assert answered == {e for e in events if e.startswith("message.")}, (
        "the manifest subscribes to messages of exactly the kinds the listener answers"
    )
    assert {"message.mpim", "mpim:history"} <= events | scopes, "group DM follow-ups"
