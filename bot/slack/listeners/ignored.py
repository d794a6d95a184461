"""Events we receive but do not act on: acknowledged with a no-op so Slack never sees a 404 and retries."""

from __future__ import annotations

import logging
from typing import Any

logger = logging.getLogger(__name__)

IGNORED_EVENTS = (
    "assistant_thread_context_changed",
    "member_joined_channel",
    "member_left_channel",
    "channel_archive",
    "channel_unarchive",
    "app_uninstalled",
    "tokens_revoked",
    "file_shared",
    "file_created",
    "pin_added",
    "pin_removed",
)


def ignore(body: dict[str, Any]) -> None:
    event = body.get("event") or {}
    logger.debug("ignored %s event %s", event.get("type"), body.get("event_id"))
