"""The emulator's AI-app surface: assistant threads (suggested prompts, titles), the Home tab,
and button clicks (`block_actions`), as Slack's Web API and Events API carry them.

Kept apart from `bot/playground/emulator.py`, which owns messages, reactions, files and delivery; the
emulator holds one `AISurface` and routes these methods to it.
"""

from __future__ import annotations

import json
import threading
import time
import uuid
from typing import Any


class SurfaceError(Exception):
    """A Web API error answer (`{"ok": false, "error": …}`)."""

    def __init__(self, error: str) -> None:
        super().__init__(error)
        self.error = error


MAX_PROMPTS = 4
"""`assistant.threads.setSuggestedPrompts` takes at most four prompts."""
MAX_PROMPT_TITLE = 75
MAX_HOME_BLOCKS = 100


class AISurface:
    """What the app set on the AI-app surface, per thread and per user."""

    def __init__(self) -> None:
        self.suggested_prompts: dict[tuple[str, str], list[dict[str, str]]] = {}
        """(channel, thread_ts) → the prompts last set there."""
        self.prompt_titles: dict[tuple[str, str], str] = {}
        self.titles: dict[tuple[str, str], str] = {}
        """(channel, thread_ts) → the thread's title in the history list."""
        self.home_views: dict[str, dict[str, Any]] = {}
        """user → the Home tab view last published for them."""
        self._lock = threading.Lock()

    # ---- Web API ----------------------------------------------------------------------

    def set_suggested_prompts(self, params: dict[str, Any]) -> dict[str, Any]:
        channel, thread_ts = str(params.get("channel_id", "")), str(params.get("thread_ts", ""))
        prompts = _json_param(params.get("prompts"))
        if not channel or not thread_ts:
            raise SurfaceError("invalid_arguments")
        if not isinstance(prompts, list) or not 1 <= len(prompts) <= MAX_PROMPTS:
            raise SurfaceError("invalid_arguments")
        cleaned: list[dict[str, str]] = []
        for prompt in prompts:
            if not isinstance(prompt, dict):
                raise SurfaceError("invalid_arguments")
            title, message = prompt.get("title"), prompt.get("message")
            if not isinstance(title, str) or not isinstance(message, str) or not message:
                raise SurfaceError("invalid_arguments")
            if len(title) > MAX_PROMPT_TITLE:
                raise SurfaceError("invalid_arguments")
            cleaned.append({"title": title, "message": message})
        with self._lock:
            self.suggested_prompts[(channel, thread_ts)] = cleaned
            if params.get("title"):
                self.prompt_titles[(channel, thread_ts)] = str(params["title"])
        return {"ok": True}

    def set_title(self, params: dict[str, Any]) -> dict[str, Any]:
        channel, thread_ts = str(params.get("channel_id", "")), str(params.get("thread_ts", ""))
        title = str(params.get("title", ""))
        if not channel or not thread_ts or not title:
            raise SurfaceError("invalid_arguments")
        with self._lock:
            self.titles[(channel, thread_ts)] = title
        return {"ok": True}

    def views_publish(self, params: dict[str, Any]) -> dict[str, Any]:
        user = str(params.get("user_id", ""))
        view = _json_param(params.get("view"))
        if not user:
            raise SurfaceError("invalid_arguments")
        if not isinstance(view, dict) or view.get("type") != "home":
            raise SurfaceError("invalid_arguments")
        blocks = view.get("blocks")
        if not isinstance(blocks, list) or len(blocks) > MAX_HOME_BLOCKS:
            raise SurfaceError("invalid_blocks")
        with self._lock:
            self.home_views[user] = view
        return {"ok": True, "view": {"id": f"V{uuid.uuid4().hex[:10].upper()}", **view}}

    # ---- events and interactions the app receives -------------------------------------

    @staticmethod
    def thread_started(user: str, dm_channel: str, thread_ts: str, team_id: str) -> dict[str, Any]:
        """The `assistant_thread_started` event: the person opened the app's split view."""
        return {
            "type": "assistant_thread_started",
            "assistant_thread": {
                "user_id": user,
                "context": {"channel_id": "", "team_id": team_id, "enterprise_id": None},
                "channel_id": dm_channel,
                "thread_ts": thread_ts,
            },
            "event_ts": f"{time.time():.6f}",
        }

    @staticmethod
    def home_opened(user: str, dm_channel: str) -> dict[str, Any]:
        """The `app_home_opened` event for the Home tab."""
        return {
            "type": "app_home_opened",
            "user": user,
            "channel": dm_channel,
            "tab": "home",
            "event_ts": f"{time.time():.6f}",
        }

    @staticmethod
    def block_action(
        *,
        user: str,
        team_id: str,
        api_app_id: str,
        channel: str,
        message: dict[str, Any],
        action_id: str,
        value: str,
    ) -> dict[str, Any]:
        """The `block_actions` payload Slack posts (form field `payload`) for a click on a
        button in `message` (feedback buttons carry the clicked button's `value`)."""
        block_id = ""
        kind = "button"
        for block in message.get("blocks") or []:
            for element in block.get("elements") or []:
                if isinstance(element, dict) and element.get("action_id") == action_id:
                    block_id, kind = str(block.get("block_id", "")), str(element.get("type"))
        return {
            "type": "block_actions",
            "team": {"id": team_id},
            "user": {"id": user},
            "api_app_id": api_app_id,
            "token": "emulator-verification-token",
            "container": {
                "type": "message",
                "message_ts": message["ts"],
                "channel_id": channel,
                "is_ephemeral": False,
            },
            "trigger_id": uuid.uuid4().hex,
            "channel": {"id": channel},
            "message": message,
            "response_url": f"https://hooks.slack.invalid/actions/{uuid.uuid4().hex}",
            "actions": [
                {
                    "type": kind,
                    "action_id": action_id,
                    "block_id": block_id,
                    "value": value,
                    "action_ts": f"{time.time():.6f}",
                }
            ],
        }


def _json_param(value: Any) -> Any:
    """Form-encoded calls carry JSON arrays and objects as strings."""
    if isinstance(value, str):
        try:
            return json.loads(value)
        except json.JSONDecodeError:
            return None
    return value
