"""The limits real Slack enforces, played by the emulator: scopes, rate limits, block text.

Without them the emulator accepted what Slack refuses (a 24,000-character answer, 100 status
updates a minute, a method the app has no scope for), so tests passed that real Slack fails.
Figures are Slack's documented ones where documented (api.slack.com/apis/rate-limits,
block-kit reference) and the reported ones where not (the total block text limit).
"""

from __future__ import annotations

import threading
import time
from collections import deque
from collections.abc import Callable, Iterable
from typing import Any

# Which bot scope each Web API method needs (any one of a tuple); () means none.
METHOD_SCOPES: dict[str, tuple[str, ...]] = {
    "auth.test": (),
    "views.publish": (),
    "chat.postMessage": ("chat:write",),
    "chat.update": ("chat:write",),
    "chat.delete": ("chat:write",),
    "chat.postEphemeral": ("chat:write",),
    "chat.startStream": ("chat:write",),
    "chat.appendStream": ("chat:write",),
    "chat.stopStream": ("chat:write",),
    "assistant.threads.setStatus": ("assistant:write",),
    "assistant.threads.setSuggestedPrompts": ("assistant:write",),
    "assistant.threads.setTitle": ("assistant:write",),
    "files.getUploadURLExternal": ("files:write",),
    "files.completeUploadExternal": ("files:write",),
    "files.info": ("files:read",),
    "users.info": ("users:read",),
    "reactions.add": ("reactions:write",),
    "conversations.info": ("channels:read", "groups:read", "im:read", "mpim:read"),
    "conversations.replies": (
        "channels:history",
        "groups:history",
        "im:history",
        "mpim:history",
    ),
}

# Tier 3 methods: about 50 calls a minute per workspace (Slack allows short bursts).
TIER3_METHODS = frozenset(
    {
        "chat.update",
        "chat.delete",
        "assistant.threads.setStatus",
        "assistant.threads.setSuggestedPrompts",
        "assistant.threads.setTitle",
        "reactions.add",
        "conversations.replies",
        "chat.appendStream",
    }
)
TIER3_PER_MINUTE = 50
POSTS_PER_CHANNEL = 5
POSTS_WINDOW_S = 5.0
"""chat.postMessage: one a second per channel, short bursts allowed: 5 in any 5 seconds."""

MAX_BLOCK_TEXT = 12_000
"""Slack refuses a message whose blocks carry more text than this with msg_blocks_too_long
(undocumented: reported between 11,000 and 13,000 characters in bolt-js issues 2509, 2867)."""
MAX_CONTEXT_ELEMENTS = 10
MAX_HEADER_CHARS = 150
MAX_BUTTON_TEXT = 75

STATUS_EXPIRY_S = 120.0
"""An assistant status clears itself after two minutes without a reply."""


def missing_scope(method: str, granted: Iterable[str] | None) -> str | None:
    """The scope `method` needs that `granted` lacks (None: allowed, or no scopes checked)."""
    if granted is None:
        return None
    needed = METHOD_SCOPES.get(method, ())
    have = set(granted)
    if not needed or have.intersection(needed):
        return None
    return needed[0]


class RateLimits:
    """Slack's rate limits as sliding windows of recent calls; `check` answers the seconds to
    wait (a real Retry-After) or None when the call may go."""

    def __init__(
        self,
        *,
        tier3_per_minute: int = TIER3_PER_MINUTE,
        posts_per_channel: int = POSTS_PER_CHANNEL,
        posts_window_s: float = POSTS_WINDOW_S,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self._limits = {
            "tier3": (tier3_per_minute, 60.0),
            "post": (posts_per_channel, posts_window_s),
        }
        self._clock = clock
        self._recent: dict[tuple[str, str], deque[float]] = {}
        self._lock = threading.Lock()

    def check(self, method: str, params: dict[str, Any]) -> int | None:
        if method == "chat.postMessage":
            key = ("post", str(params.get("channel", "")))
        elif method in TIER3_METHODS:
            key = ("tier3", method)
        else:
            return None
        limit, window = self._limits[key[0]]
        now = self._clock()
        with self._lock:
            recent = self._recent.setdefault(key, deque())
            while recent and recent[0] <= now - window:
                recent.popleft()
            if len(recent) >= limit:
                return max(1, round(recent[0] + window - now + 0.5))
            recent.append(now)
            return None


def block_text_length(node: Any) -> int:
    """All the text a message's blocks carry, as Slack counts it for msg_blocks_too_long."""
    if isinstance(node, list):
        return sum(block_text_length(item) for item in node)
    if not isinstance(node, dict):
        return 0
    total = 0
    for key, value in node.items():
        if key == "text" and isinstance(value, str):
            total += len(value)
        elif isinstance(value, dict | list):
            total += block_text_length(value)
    return total


def block_problem(blocks: list[dict[str, Any]]) -> str | None:
    """The error Slack answers for these blocks (None: accepted)."""
    if block_text_length(blocks) > MAX_BLOCK_TEXT:
        return "msg_blocks_too_long"
    for block in blocks:
        kind = block.get("type")
        if kind == "context" and len(block.get("elements") or []) > MAX_CONTEXT_ELEMENTS:
            return "invalid_blocks"
        if kind == "header" and len((block.get("text") or {}).get("text", "")) > MAX_HEADER_CHARS:
            return "invalid_blocks"
        if kind == "actions":
            for element in block.get("elements") or []:
                label = (element.get("text") or {}).get("text", "")
                if element.get("type") == "button" and len(label) > MAX_BUTTON_TEXT:
                    return "invalid_blocks"
    return None
