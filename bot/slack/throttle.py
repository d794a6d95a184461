"""One process-wide budget for the Slack calls every question shares.

Slack limits `chat.update` and `assistant.threads.setStatus` per workspace (Tier 3: about 50
calls a minute) and `chat.postMessage` per channel (about one a second, short bursts allowed).
Each question's `Progress` already waits between its own updates, but 32 questions at once
would together exceed the workspace's budget: Slack then answers 429 and the SDK sleeps. This
throttle is shared by every question of the process, so progress steps are *skipped* when the
budget is spent; a final answer is never skipped, only counted.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from dataclasses import dataclass

TIER3_PER_MINUTE = 40
TIER3_BURST = 10
"""Slack's Tier 3 (chat.update, assistant.threads.setStatus) allows about 50 calls a minute per
workspace. Progress steps get at most 10 at once and 40 a minute (10 + 40 ≤ 50 in any minute),
which leaves room for the final answers, which always go."""
POSTS_PER_SECOND = 1.0
"""chat.postMessage, per channel."""
POST_BURST = 3
"""Short bursts Slack allows on one channel (an answer, its CSV note and a chart)."""


@dataclass
class _Bucket:
    capacity: float
    per_second: float
    tokens: float
    at: float

    def refill(self, now: float) -> None:
        self.tokens = min(self.capacity, self.tokens + (now - self.at) * self.per_second)
        self.at = now


class SlackThrottle:
    """Token buckets per (workspace, method) for Tier 3 calls and per channel for posts.

    `may_send` is for optional calls (progress steps): it takes a token or says no.
    `spend` is for calls that always go (the answer): it takes a token, going into debt when
    none is left, so the progress steps that follow wait for the budget to recover.
    Never blocks and never sleeps: safe to call from the agent's shared event loop.
    """

    def __init__(
        self,
        *,
        tier3_per_minute: float = TIER3_PER_MINUTE,
        tier3_burst: float = TIER3_BURST,
        posts_per_second: float = POSTS_PER_SECOND,
        post_burst: float = POST_BURST,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self._tier3 = tier3_per_minute
        self._tier3_burst = tier3_burst
        self._posts = posts_per_second
        self._burst = post_burst
        self._clock = clock
        self._lock = threading.Lock()
        self._buckets: dict[tuple[str, str], _Bucket] = {}

    def may_send(self, method: str, *, team: str, channel: str) -> bool:
        """Take a token for an optional call; False when over budget (skip the call)."""
        with self._lock:
            bucket = self._bucket(method, team, channel)
            if bucket.tokens < 1:
                return False
            bucket.tokens -= 1
            return True

    def spend(self, method: str, *, team: str, channel: str) -> None:
        """Count a call that goes regardless (a final answer)."""
        with self._lock:
            self._bucket(method, team, channel).tokens -= 1

    def _bucket(self, method: str, team: str, channel: str) -> _Bucket:
        now = self._clock()
        if method == "chat.postMessage":
            key, capacity, rate = (f"channel:{channel}", method), self._burst, self._posts
        else:
            key, capacity, rate = (f"team:{team}", method), self._tier3_burst, self._tier3 / 60
        bucket = self._buckets.get(key)
        if bucket is None:
            bucket = self._buckets[key] = _Bucket(capacity, rate, capacity, now)
        bucket.refill(now)
        return bucket
