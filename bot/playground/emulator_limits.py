"""The limits real Slack enforces, played by the emulator: scopes, rate limits, block text.

Without them the emulator accepted what Slack refuses (a 24,000-character answer, 100 status
updates a minute, a method the app has no scope for), so tests passed that real Slack fails.
Figures are Slack's documented ones where documented (api.slack.com/apis/rate-limits,
block-kit reference) and the reported ones where not (the total block text limit).
"""

from __future__ import annotations

import json
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
    # Either scope since March 2026 (docs.slack.dev changelog 2026-03-05); chat:write alone later.
    "assistant.threads.setStatus": ("chat:write", "assistant:write"),
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
    }
)
TIER3_PER_MINUTE = 50
TIER4_METHODS = frozenset({"chat.appendStream"})
"""Tier 4 methods: 100+ calls a minute (chat.appendStream's documented tier)."""
TIER4_PER_MINUTE = 100
POSTS_PER_CHANNEL = 5
POSTS_WINDOW_S = 5.0
"""chat.postMessage: one a second per channel, short bursts allowed: 5 in any 5 seconds."""

MAX_BLOCK_TEXT = 12_000
"""Slack refuses a message whose blocks carry more text than this with msg_blocks_too_long
(undocumented: reported between 11,000 and 13,000 characters in bolt-js issues 2509, 2867)."""
MAX_CONTEXT_ELEMENTS = 10
MAX_HEADER_CHARS = 150
MAX_BUTTON_TEXT = 75
MAX_BUTTON_VALUE = 2000
MAX_ACTION_ID = 255
MAX_BLOCK_ID = 255
MAX_CONTEXT_ACTIONS = 5
"""A `context_actions` block holds 1-5 `feedback_buttons` or `icon_button` elements."""
MAX_ACCESSIBILITY_LABEL = 75

MAX_STREAM_CALL_CHARS = 12_000
"""`markdown_text` of one chat.startStream / appendStream / stopStream call (documented)."""
MAX_STREAM_CHARS = 12_000
"""What one streamed message may hold in all: past it chat.appendStream answers msg_too_long
(undocumented; observed live at about 12,000 in CopilotKit issue 6063)."""

MESSAGE_REFUSALS = ("no_text", "msg_too_long", "invalid_blocks", "msg_blocks_too_long")
"""Every error the emulator answers for a message's own text and blocks (chat.postMessage,
chat.update, chat.postEphemeral): tests drive the bot through each."""

MAX_LOADING_MESSAGES = 10
"""`assistant.threads.setStatus` rotates through at most ten `loading_messages`."""

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
            "tier4": (max(tier3_per_minute, TIER4_PER_MINUTE), 60.0),
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
        elif method in TIER4_METHODS:
            key = ("tier4", method)
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
    """The error Slack answers for these blocks (None: accepted): msg_blocks_too_long past the
    total text, invalid_blocks for a repeated block_id or a block a `BLOCK_RULES` rule refuses."""
    if block_text_length(blocks) > MAX_BLOCK_TEXT:
        return "msg_blocks_too_long"
    ids = [block["block_id"] for block in blocks if "block_id" in block]
    if len(ids) != len(set(map(str, ids))):
        return "invalid_blocks"
    if any(rule(block) for block in blocks for rule in BLOCK_RULES):
        return "invalid_blocks"
    return None


BlockRule = Callable[[dict[str, Any]], bool]


def _long_block_id(block: dict[str, Any]) -> bool:
    """block_id is a string of at most 255 characters."""
    block_id = block.get("block_id")
    return block_id is not None and (not isinstance(block_id, str) or len(block_id) > MAX_BLOCK_ID)


def _crowded_context(block: dict[str, Any]) -> bool:
    """A context block holds at most ten elements."""
    return block.get("type") == "context" and len(block.get("elements") or []) > (
        MAX_CONTEXT_ELEMENTS
    )


def _long_header(block: dict[str, Any]) -> bool:
    """A header's plain text is at most 150 characters."""
    text = (block.get("text") or {}).get("text", "") if block.get("type") == "header" else ""
    return len(text) > MAX_HEADER_CHARS


def _bad_element_ids(block: dict[str, Any]) -> bool:
    """Every element's action_id is at most 255 characters; a button's label at most 75 and
    its value at most 2,000."""
    for element in _elements(block):
        if len(str(element.get("action_id") or "")) > MAX_ACTION_ID:
            return True
        if element.get("type") == "button" and (
            len((element.get("text") or {}).get("text", "")) > MAX_BUTTON_TEXT
            or len(str(element.get("value") or "")) > MAX_BUTTON_VALUE
        ):
            return True
    return False


def _feedback_outside_context_actions(block: dict[str, Any]) -> bool:
    """feedback_buttons go in a context_actions block and nowhere else."""
    return block.get("type") != "context_actions" and any(
        e.get("type") == "feedback_buttons" for e in _elements(block)
    )


def _bad_context_actions(block: dict[str, Any]) -> bool:
    """context_actions: 1-5 elements, each feedback_buttons or icon_button; feedback_buttons
    has a positive_button and a negative_button, each with plain_text text (at most 75), a
    value (at most 2,000) and an optional accessibility_label (at most 75)."""
    if block.get("type") != "context_actions":
        return False
    elements = block.get("elements")
    if not isinstance(elements, list) or not 1 <= len(elements) <= MAX_CONTEXT_ACTIONS:
        return True
    for element in elements:
        kind = element.get("type") if isinstance(element, dict) else None
        if kind == "feedback_buttons":
            buttons = [element.get("positive_button"), element.get("negative_button")]
            if not all(_feedback_button_ok(b) for b in buttons):
                return True
        elif kind != "icon_button":
            return True
    return False


def _feedback_button_ok(button: Any) -> bool:
    if not isinstance(button, dict):
        return False
    text = button.get("text")
    value = button.get("value")
    label = button.get("accessibility_label")
    return (
        isinstance(text, dict)
        and text.get("type") == "plain_text"
        and 0 < len(str(text.get("text") or "")) <= MAX_BUTTON_TEXT
        and isinstance(value, str)
        and 0 < len(value) <= MAX_BUTTON_VALUE
        and (label is None or (isinstance(label, str) and len(label) <= MAX_ACCESSIBILITY_LABEL))
    )


def _elements(block: dict[str, Any]) -> list[dict[str, Any]]:
    return [e for e in block.get("elements") or [] if isinstance(e, dict)]


BLOCK_RULES: tuple[BlockRule, ...] = (
    _long_block_id,
    _crowded_context,
    _long_header,
    _bad_element_ids,
    _feedback_outside_context_actions,
    _bad_context_actions,
)
"""Block Kit's documented limits the emulator enforces, one per rule (each refused as
invalid_blocks); the section text limit and the block count are checked with the message."""


def loading_messages_problem(value: Any) -> str | None:
    """The error setStatus answers for `loading_messages` (None: accepted): at most ten
    strings, as Slack documents it ("Maximum of 10 messages") and its SDKs type it
    (`string[]`). Form-encoded calls carry the list as JSON text."""
    if isinstance(value, str):
        try:
            value = json.loads(value)
        except ValueError:
            return "invalid_arguments"
    if value is None:
        return None
    if (
        not isinstance(value, list)
        or len(value) > MAX_LOADING_MESSAGES
        or not all(isinstance(m, str) for m in value)
    ):
        return "invalid_arguments"
    return None
