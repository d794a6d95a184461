"""Input limits: question checks, per-user rate limits and the per-workspace daily token budget."""

from __future__ import annotations

import logging
import re
import threading
import time
import unicodedata
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass
from typing import Literal

logger = logging.getLogger(__name__)

QuestionProblem = Literal["empty", "too_long", "no_words"]

_SLACK_EMOJI = re.compile(r":[a-z0-9_+\-']+:")
_DAY_S = 86_400.0
_MINUTE_S = 60.0


@dataclass(frozen=True)
class QuestionCheck:
    """The verdict on one incoming question."""

    ok: bool
    text: str
    """The question without control characters (newline and tab kept) and outer whitespace."""
    problem: QuestionProblem | None = None
    message: str | None = None
    """A kind sentence for the person when not ok."""


def clean_text(text: str) -> str:
    """Drop control characters except newline and tab; CR/CRLF become newlines."""
    text = text.replace("\r\n", "\n").replace("\r", "\n")
    return "".join(
        ch for ch in text if ch in "\n\t" or unicodedata.category(ch) not in ("Cc", "Cs")
    ).strip()


def check_question(text: str, max_chars: int) -> QuestionCheck:
    """Whether a question can be answered at all: not empty, not too long, has some words."""
    cleaned = clean_text(text)
    if not cleaned or not any(not _is_invisible(ch) for ch in cleaned):
        return QuestionCheck(
            False,
            "",
            "empty",
            "Your message looks empty. What would you like to know about the graph?",
        )
    if max_chars and len(cleaned) > max_chars:
        return QuestionCheck(
            False,
            cleaned,
            "too_long",
            f"That message is {len(cleaned):,} characters long; I take questions of up to "
            f"{max_chars:,} characters. Could you ask it more briefly?",
        )
    without_emoji_codes = _SLACK_EMOJI.sub("", cleaned)
    if not any(unicodedata.category(ch)[0] in "LN" for ch in without_emoji_codes):
        return QuestionCheck(
            False,
            cleaned,
            "no_words",
            "I only see emoji or punctuation there 🙂 Ask me a question about the graph in "
            "words, and I'll look it up.",
        )
    return QuestionCheck(True, cleaned)


def _is_invisible(ch: str) -> bool:
    return ch.isspace() or unicodedata.category(ch) == "Cf"


@dataclass(frozen=True)
class RateDecision:
    """Whether a user may ask now; when not, how long to wait and a kind message."""

    allowed: bool
    retry_after_s: float = 0.0
    message: str | None = None


def _wait_text(seconds: float) -> str:
    if seconds < 90:
        whole = max(1, round(seconds))
        return f"{whole} second{'s' if whole != 1 else ''}"
    if seconds < 90 * 60:
        return f"{round(seconds / 60)} minutes"
    hours = round(seconds / 3600)
    return f"about {hours} hour{'s' if hours != 1 else ''}"


class RateLimiter:
    """Questions per user per minute and per (rolling) day; 0 switches a window off.

    Thread-safe. Only allowed questions count, so a user who keeps trying while limited
    is not locked out for longer.
    """

    def __init__(
        self,
        per_minute: int,
        per_day: int,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self._per_minute = per_minute
        self._per_day = per_day
        self._clock = clock
        self._lock = threading.Lock()
        self._asked: dict[str, deque[float]] = {}

    def allow(self, user: str) -> RateDecision:
        """Record a question from `user` when allowed; otherwise say when to come back."""
        now = self._clock()
        with self._lock:
            asked = self._asked.setdefault(user, deque())
            while asked and now - asked[0] >= _DAY_S:
                asked.popleft()
            if self._per_day and len(asked) >= self._per_day:
                wait = asked[0] + _DAY_S - now
                return RateDecision(
                    False,
                    wait,
                    f"You've reached the limit of {self._per_day:,} questions a day. "
                    f"I'll be glad to help again in {_wait_text(wait)}.",
                )
            if self._per_minute:
                recent = [t for t in asked if now - t < _MINUTE_S]
                if len(recent) >= self._per_minute:
                    wait = recent[-self._per_minute] + _MINUTE_S - now
                    return RateDecision(
                        False,
                        wait,
                        f"You've asked {len(recent)} questions in the last minute. Please give "
                        f"me {_wait_text(wait)} and ask again.",
                    )
            asked.append(now)
        return RateDecision(True)


@dataclass(frozen=True)
class BudgetState:
    """A workspace's LLM-token use today after a spend."""

    workspace: str
    used: int
    limit: int
    """0 means no budget."""
    over_budget: bool
    crossed_80_percent: bool
    """True only for the one spend that first reached 80% of the budget today."""

    @property
    def remaining(self) -> int:
        """Tokens left today (0 when over; a large number when there is no budget)."""
        return max(0, self.limit - self.used) if self.limit else 2**63 - 1


class TokenBudget:
    """LLM tokens per workspace per UTC day; logs one warning when 80% is reached.

    `clock` returns seconds since the epoch (time.time); the day rolls over at UTC midnight.
    Thread-safe.
    """

    def __init__(self, daily_tokens: int, clock: Callable[[], float] = time.time) -> None:
        self._limit = daily_tokens
        self._clock = clock
        self._lock = threading.Lock()
        self._day = -1
        self._used: dict[str, int] = {}
        self._warned: set[str] = set()

    def _roll(self) -> None:
        day = int(self._clock() // _DAY_S)
        if day != self._day:
            self._day = day
            self._used.clear()
            self._warned.clear()

    def state(self, workspace: str) -> BudgetState:
        """Today's use without spending (check before calling the LLM)."""
        with self._lock:
            self._roll()
            used = self._used.get(workspace, 0)
            return BudgetState(workspace, used, self._limit, self._over(used), False)

    def spend(self, workspace: str, tokens: int) -> BudgetState:
        """Add tokens to today's use of `workspace`."""
        with self._lock:
            self._roll()
            used = self._used.get(workspace, 0) + max(0, tokens)
            self._used[workspace] = used
            crossed = bool(self._limit) and used * 5 >= self._limit * 4
            crossed = crossed and workspace not in self._warned
            if crossed:
                self._warned.add(workspace)
        if crossed:
            logger.warning(
                "LLM token budget alert: workspace %s has used %d of its %d daily tokens (%.0f%%)",
                workspace,
                used,
                self._limit,
                100 * used / self._limit,
            )
        return BudgetState(workspace, used, self._limit, self._over(used), crossed)

    def _over(self, used: int) -> bool:
        return bool(self._limit) and used >= self._limit
