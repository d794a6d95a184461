"""Bringing the embedded engine back, with fakes: what is re-sent, the restart-loop guard, the
crash report's headline, and the memory limit's setting."""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import redis.exceptions

from graph_agent.graphdb import embedded, engine_limits
from graph_agent.graphdb.embedded import (
    ENGINE_MEMORY_LIMIT_BYTES,
    MEMORY_LIMIT_ENV,
    EmbeddedServer,
    memory_limit_bytes,
)
from graph_agent.graphdb.errors import (
    EmbeddedUnavailableError,
    EngineCrashLoopError,
    EngineRestartedError,
    GraphConnectionError,
)
from graph_agent.graphdb.falkor import FalkorGraph, _never_sent

# --- which broken connections the statement can be sent again after -----------------------


def _raised_from(cause: BaseException | None, message: str) -> redis.exceptions.ConnectionError:
    # As redis-py raises them: inside the handler of the OS error, when there is one.
    try:
        if cause is None:
            raise redis.exceptions.ConnectionError(message)
        try:
            raise cause
        except OSError:
            raise redis.exceptions.ConnectionError(message) from None
    except redis.exceptions.ConnectionError as exc:
        exc.__context__ = cause
        return exc


BROKEN = [
    # (what happened, the error, whether the engine can have run the statement)
    ("engine gone, socket left", _raised_from(ConnectionRefusedError(111, "x"), "Error 111"), False),
    ("engine gone, socket removed", _raised_from(FileNotFoundError(2, "x"), "Error 2"), False),
    ("written to a closed socket", _raised_from(BrokenPipeError(32, "x"), "Error 32"), False),
    ("engine still loading", redis.exceptions.BusyLoadingError("LOADING"), False),
    ("died while it ran", _raised_from(None, "Connection closed by server."), True),
    ("died with it unread", _raised_from(ConnectionResetError(104, "x"), "Error while reading"), True),
]  # fmt: skip


@pytest.mark.parametrize(("case", "error", "may_have_run"), BROKEN, ids=[b[0] for b in BROKEN])
def test_a_statement_is_sent_again_only_if_no_engine_can_have_run_it(
    case: str, error: redis.exceptions.ConnectionError, may_have_run: bool
) -> None:
    assert _never_sent(error) is not may_have_run, case


class FakeServer:
    """Stands in for EmbeddedServer in FalkorGraph: counts recoveries, saved nothing."""

    def __init__(self, recover: Callable[[], bool] = lambda: True) -> None:
        self.recoveries = 0
        self._recover = recover

    def recover(self) -> bool:
        self.recoveries += 1
        return self._recover()

    def saved_counts(self) -> dict[str, int]:
        return {}


class FakeClient:
    def select_graph(self, name: str) -> object:
        return object()


def _graph(server: FakeServer | None) -> FalkorGraph:
    return FalkorGraph(FakeClient(), "g", "embedded (test)", server)  # type: ignore[arg-type]


def _calls(*outcomes: BaseException | str) -> Callable[[], str]:
    """A client call that raises or returns each outcome in turn."""
    pending = list(outcomes)

    def call() -> str:
        outcome = pending.pop(0)
        if isinstance(outcome, BaseException):
            raise outcome
        return outcome

    return call


REFUSED = BROKEN[0][1]
CLOSED = BROKEN[4][1]


def test_a_statement_the_dead_engine_never_got_is_sent_to_the_new_one() -> None:
    server = FakeServer()
    assert _graph(server)._call(_calls(REFUSED, "rows")) == "rows"
    assert server.recoveries == 1


def test_a_statement_in_flight_when_the_engine_died_is_not_sent_again() -> None:
    server = FakeServer()
    call = _calls(CLOSED, "would run the bomb again")
    with pytest.raises(EngineRestartedError) as stopped:
        _graph(server)._call(call)
    assert server.recoveries == 1
    assert "restarted" in str(stopped.value) and "ask again" in str(stopped.value)
    assert isinstance(stopped.value, GraphConnectionError)  # the agent stops: no correction


def test_an_engine_that_dies_again_under_the_resent_statement_is_restarted_once_more() -> None:
    server = FakeServer()
    with pytest.raises(EngineRestartedError):
        _graph(server)._call(_calls(REFUSED, CLOSED))
    assert server.recoveries == 2


def test_a_server_that_is_not_embedded_is_only_reported_unreachable() -> None:
    with pytest.raises(GraphConnectionError) as caught:
        _graph(None)._call(_calls(REFUSED))
    assert not isinstance(caught.value, EngineRestartedError)
    assert "Cannot reach FalkorDB" in str(caught.value)


def test_the_crash_loop_error_reaches_the_caller() -> None:
    def exhausted() -> bool:
        raise EngineCrashLoopError("died 5 times")

    with pytest.raises(EngineCrashLoopError):
        _graph(FakeServer(exhausted))._call(_calls(REFUSED, "rows"))


# --- the restart-loop guard, with repeated deaths simulated -----------------------------------


@pytest.fixture
def dying(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> list[EmbeddedServer]:
    """Servers whose engine dies as soon as it is started (nothing ever answers); the list
    gets each server that spawned one."""
    spawned: list[EmbeddedServer] = []
    monkeypatch.setattr(embedded, "binaries", lambda: ("redis-server", "falkordb.so"))

    def spawn(self: EmbeddedServer, server_bin: str, module: str) -> None:
        spawned.append(self)

    monkeypatch.setattr(EmbeddedServer, "_spawn", spawn)
    return spawned


def test_restarts_stop_past_the_budget_and_the_error_names_the_log(
    tmp_path: Path, dying: list[EmbeddedServer]
) -> None:
    server = EmbeddedServer(tmp_path)
    server.restarts_per_minute = 3
    assert [server.recover() for _ in range(3)] == [True, True, True]
    with pytest.raises(EngineCrashLoopError) as looping:
        server.recover()
    assert len(dying) == 3
    message = str(looping.value)
    assert "3 times within a minute" in message and str(server.log_file) in message
    # Another process on the same data dir shares the count.
    other = EmbeddedServer(tmp_path)
    other.restarts_per_minute = 3
    with pytest.raises(EngineCrashLoopError):
        other.recover()


def test_restarts_older_than_a_minute_no_longer_count(
    tmp_path: Path, dying: list[EmbeddedServer]
) -> None:
    server = EmbeddedServer(tmp_path)
    server.state_dir.mkdir(parents=True)
    now = time.time()
    old = [now - 120, now - 90, now - 61]
    server.restarts_file.write_text(json.dumps(old + [now - 1] * (server.restarts_per_minute - 1)))
    assert server.recover()
    with pytest.raises(EngineCrashLoopError):
        server.recover()
    kept = json.loads(server.restarts_file.read_text())
    assert len(kept) == server.restarts_per_minute and min(kept) > now - 60


def test_a_running_engine_is_not_restarted(
    tmp_path: Path, dying: list[EmbeddedServer], monkeypatch: pytest.MonkeyPatch
) -> None:
    # Another process (or thread) brought it back first.
    monkeypatch.setattr(EmbeddedServer, "is_running", lambda self: True)
    assert EmbeddedServer(tmp_path).recover() is False
    assert dying == []


def _log(server: EmbeddedServer, *runs: list[str]) -> None:
    server.state_dir.mkdir(parents=True, exist_ok=True)
    lines = []
    for run in runs:
        lines.append("1:C 25 Nov 2026 19:39:38.536 * oO0OoO0OoO0Oo Redis is starting oO0OoO0OoO0Oo")
        lines.extend(run)
    server.log_file.write_text("\n".join(lines) + "\n")


OOM_RUN = [
    "1:M 25 Nov 2026 19:39:38.580 * Ready to accept connections unix",
    "1:M 25 Nov 2026 19:39:38.580 # Out Of Memory allocating 32000000012 bytes!",
    "=== REDIS BUG REPORT START: Cut & paste starting from here ===",
    "1:M 25 Nov 2026 19:39:38.581 # Guru Meditation: Redis aborting for OUT OF MEMORY. "
    "Allocating 32000000012 bytes! #server.c:7119",
    "------ STACK TRACE ------",
]
CLEAN_RUN = [
    "2:M 25 Nov 2026 19:40:00.000 * Ready to accept connections unix",
    "2:M 25 Nov 2026 19:40:09.000 # Redis is now ready to exit, bye bye...",
]


def test_the_last_crash_is_the_headline_of_the_last_run_only(tmp_path: Path) -> None:
    server = EmbeddedServer(tmp_path)
    assert server.last_crash() is None  # no log yet
    _log(server, OOM_RUN)
    assert server.last_crash() == (
        "Guru Meditation: Redis aborting for OUT OF MEMORY. Allocating 32000000012 bytes! "
        "#server.c:7119"
    )
    _log(server, OOM_RUN, CLEAN_RUN)
    assert server.last_crash() is None  # the run after the crash left no report (kill -9)


def test_a_crash_loop_out_of_memory_names_the_limit(
    tmp_path: Path, dying: list[EmbeddedServer]
) -> None:
    server = EmbeddedServer(tmp_path)
    server.restarts_per_minute = 1
    server.memory_limit = 2048 * 1024 * 1024
    _log(server, OOM_RUN)
    server.recover()
    with pytest.raises(EngineCrashLoopError) as looping:
        server.recover()
    assert "OUT OF MEMORY" in str(looping.value)
    assert f"{MEMORY_LIMIT_ENV}=2048" in str(looping.value)


# --- the memory limit's setting -----------------------------------------------------------

LIMITS: list[tuple[str | None, Any]] = [
    (None, "default"),
    ("3072", 3072 * 1024 * 1024),
    ("0", None),
    (" 512 ", 512 * 1024 * 1024),
    ("lots", EmbeddedUnavailableError),
]


@pytest.mark.parametrize(("value", "expected"), LIMITS)
def test_the_memory_limit_setting(
    value: str | None, expected: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    if value is None:
        monkeypatch.delenv(MEMORY_LIMIT_ENV, raising=False)
    else:
        monkeypatch.setenv(MEMORY_LIMIT_ENV, value)
    if expected is EmbeddedUnavailableError:
        with pytest.raises(EmbeddedUnavailableError, match=MEMORY_LIMIT_ENV):
            memory_limit_bytes()
    elif expected == "default":
        monkeypatch.setattr(engine_limits, "_physical_memory", lambda: 64 * 1024**3)
        assert memory_limit_bytes() == ENGINE_MEMORY_LIMIT_BYTES
        monkeypatch.setattr(engine_limits, "_physical_memory", lambda: 2 * 1024**3)
        assert memory_limit_bytes() == 1024**3  # half a small machine
    else:
        assert memory_limit_bytes() == expected
