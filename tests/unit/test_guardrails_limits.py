"""Question checks, per-user rate limits and the daily token budget."""

from __future__ import annotations

import logging
import threading

import pytest

from guardrails.limits import RateLimiter, TokenBudget, check_question, clean_text


class FakeClock:
    def __init__(self, now: float = 1_000_000.0) -> None:
        self.now = now

    def __call__(self) -> float:
        return self.now


@pytest.mark.parametrize(
    ("text", "ok", "problem", "cleaned"),
    [
        ("Which teams own Postgres?", True, None, "Which teams own Postgres?"),
        ("  padded  \n", True, None, "padded"),
        ("line one\nline\ttwo", True, None, "line one\nline\ttwo"),
        ("who\x00 owns\x1b[31m it\x07?", True, None, "who owns[31m it?"),
        ("crlf\r\nline", True, None, "crlf\nline"),
        ("42", True, None, "42"),
        ("数据库里有什么？", True, None, "数据库里有什么？"),
        ("", False, "empty", ""),
        ("   \n\t  ", False, "empty", ""),
        ("\x00\x01\x02", False, "empty", ""),
        ("\u200b\u200b", False, "empty", ""),
        ("🙂", False, "no_words", "🙂"),
        ("🙂🎉👍🏽", False, "no_words", "🙂🎉👍🏽"),
        ("?!...", False, "no_words", "?!..."),
        (":wave: :+1:", False, "no_words", ":wave: :+1:"),
        ("🙂 hi", True, None, "🙂 hi"),
        ("x" * 2000, True, None, "x" * 2000),
        ("x" * 2001, False, "too_long", "x" * 2001),
    ],
)
def test_check_question(text: str, ok: bool, problem: str | None, cleaned: str) -> None:
    result = check_question(text, max_chars=2000)
    assert (result.ok, result.problem, result.text) == (ok, problem, cleaned)
    assert (result.message is None) == ok


def test_too_long_message_is_kind_and_specific() -> None:
    result = check_question("y" * 100_000, max_chars=2000)
    assert result.problem == "too_long"
    assert "100,000" in (result.message or "") and "2,000" in (result.message or "")


def test_clean_text_keeps_newlines_and_tabs() -> None:
    assert clean_text("\x7fa\tb\nc\x0b") == "a\tb\nc"


def test_rate_limit_per_minute() -> None:
    clock = FakeClock()
    limiter = RateLimiter(per_minute=3, per_day=100, clock=clock)
    assert all(limiter.allow("U1").allowed for _ in range(3))
    refused = limiter.allow("U1")
    assert not refused.allowed
    assert refused.retry_after_s == pytest.approx(60.0)
    assert "3 questions in the last minute" in (refused.message or "")
    assert limiter.allow("U2").allowed  # per user
    clock.now += 30
    assert not limiter.allow("U1").allowed
    clock.now += 30
    assert limiter.allow("U1").allowed


def test_refused_attempts_do_not_count() -> None:
    clock = FakeClock()
    limiter = RateLimiter(per_minute=1, per_day=0, clock=clock)
    assert limiter.allow("U").allowed
    for _ in range(10):
        clock.now += 5
        assert not limiter.allow("U").allowed
    clock.now += 11
    assert limiter.allow("U").allowed


def test_rate_limit_per_day() -> None:
    clock = FakeClock()
    limiter = RateLimiter(per_minute=0, per_day=5, clock=clock)
    for _ in range(5):
        assert limiter.allow("U").allowed
        clock.now += 3600
    refused = limiter.allow("U")
    assert not refused.allowed
    assert refused.retry_after_s == pytest.approx(86_400 - 5 * 3600)
    assert "5 questions a day" in (refused.message or "")
    assert "hours" in (refused.message or "")
    clock.now += refused.retry_after_s
    assert limiter.allow("U").allowed


def test_zero_means_unlimited() -> None:
    limiter = RateLimiter(per_minute=0, per_day=0, clock=FakeClock())
    assert all(limiter.allow("U").allowed for _ in range(1000))


def test_rate_limiter_is_thread_safe() -> None:
    limiter = RateLimiter(per_minute=50, per_day=1000, clock=FakeClock())
    allowed: list[bool] = []
    lock = threading.Lock()

    def ask() -> None:
        for _ in range(20):
            ok = limiter.allow("U").allowed
            with lock:
                allowed.append(ok)

    threads = [threading.Thread(target=ask) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert sum(allowed) == 50


def test_token_budget_alerts_once_at_80_percent(caplog: pytest.LogCaptureFixture) -> None:
    clock = FakeClock(now=86_400 * 20_000 + 10)
    budget = TokenBudget(daily_tokens=1000, clock=clock)
    with caplog.at_level(logging.WARNING, logger="guardrails.limits"):
        first = budget.spend("T1", 700)
        assert (first.used, first.over_budget, first.crossed_80_percent) == (700, False, False)
        second = budget.spend("T1", 150)
        assert (second.used, second.over_budget, second.crossed_80_percent) == (850, False, True)
        third = budget.spend("T1", 200)
        assert (third.over_budget, third.crossed_80_percent, third.remaining) == (True, False, 0)
    alerts = [r for r in caplog.records if "budget" in r.getMessage()]
    assert len(alerts) == 1 and "T1" in alerts[0].getMessage()
    assert budget.state("T2").used == 0  # per workspace
    assert budget.state("T1").over_budget


def test_token_budget_resets_at_utc_midnight() -> None:
    clock = FakeClock(now=86_400 * 20_000 + 86_000)
    budget = TokenBudget(daily_tokens=100, clock=clock)
    assert budget.spend("T", 90).crossed_80_percent
    clock.now += 500  # past midnight
    assert budget.state("T").used == 0
    assert budget.spend("T", 85).crossed_80_percent  # alerts again on the new day


def test_token_budget_zero_is_unlimited() -> None:
    budget = TokenBudget(daily_tokens=0, clock=FakeClock())
    state = budget.spend("T", 10**9)
    assert not state.over_budget and not state.crossed_80_percent
