"""Slack delivery dedupe: claim once, done, lease expiry after a dead attempt, TTL, purge."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from memory import Memory, open_memory


class FakeClock:
    def __init__(self) -> None:
        self.now = 1_000_000.0

    def __call__(self) -> float:
        return self.now


@pytest.fixture
def clock(monkeypatch: pytest.MonkeyPatch) -> FakeClock:
    fake = FakeClock()
    monkeypatch.setattr("memory.events.time.time", fake)
    return fake


@pytest.fixture
def mem(memory_location: str) -> Iterator[Memory]:
    memory = open_memory(memory_location)
    yield memory
    memory.close()


def test_claim_once_then_done(mem: Memory, clock: FakeClock) -> None:
    assert mem.events.claim("event:Ev1")
    assert not mem.events.claim("event:Ev1")  # being handled now (a retry while running)
    mem.events.done("event:Ev1")
    clock.now += 600  # past the lease, within the TTL
    assert not mem.events.claim("event:Ev1")
    assert mem.events.claim("msg:C1:1.2")  # keys are independent


def test_expired_lease_lets_a_retry_take_over(mem: Memory, clock: FakeClock) -> None:
    assert mem.events.claim("event:Ev2", lease_s=120)
    clock.now += 119
    assert not mem.events.claim("event:Ev2", lease_s=120)
    clock.now += 2  # the first attempt died without done()
    assert mem.events.claim("event:Ev2", lease_s=120)
    assert not mem.events.claim("event:Ev2", lease_s=120)


def test_ttl_and_purge(mem: Memory, clock: FakeClock) -> None:
    assert mem.events.claim("event:Ev3", ttl_s=3600)
    mem.events.done("event:Ev3")
    assert mem.events.claim("event:Ev4", ttl_s=7200)
    mem.events.done("event:Ev4")
    clock.now += 3601
    assert mem.events.purge_expired() == 1
    assert mem.events.claim("event:Ev3")  # forgotten after its TTL
    assert not mem.events.claim("event:Ev4")


def test_claims_survive_a_restart(memory_location: str, clock: FakeClock) -> None:
    path = memory_location
    with open_memory(path) as first:
        assert first.events.claim("event:Ev5")
        first.events.done("event:Ev5")
    with open_memory(path) as second:
        assert not second.events.claim("event:Ev5")


def test_release_gives_the_claim_back(mem: Memory, clock: FakeClock) -> None:
    assert mem.events.claim("event:Ev6")
    mem.events.release("event:Ev6")
    assert mem.events.claim("event:Ev6")
