"""A throwaway PostgreSQL cluster for tests and benches: initdb + pg_ctl into a temp dir.

Uses Debian's `postgresql` package (or any PostgreSQL whose `initdb` and `pg_ctl` can be
found). PostgreSQL refuses to run as root, so as root the cluster runs as the `postgres`
user the package creates. Listens on a free loopback port; every database is new.

With `CYPHERBOT_TEST_POSTGRES_URL` set (a superuser URL, e.g. a CI service container's
`postgresql://postgres:postgres@localhost:5432/postgres`), that server is used instead.
"""

from __future__ import annotations

import contextlib
import itertools
import os
import pwd
import shutil
import socket
import subprocess
import tempfile
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import urlsplit, urlunsplit

_counter = itertools.count(1)


def find_bin_dir() -> Path | None:
    """The directory holding `initdb` and `pg_ctl`, newest version first; None when absent."""
    on_path = shutil.which("pg_ctl")
    candidates = [Path(on_path).resolve().parent] if on_path else []
    candidates += sorted(
        Path("/usr/lib/postgresql").glob("*/bin"),
        key=lambda p: int(p.parent.name) if p.parent.name.isdigit() else 0,
        reverse=True,
    )
    for directory in candidates:
        if (directory / "initdb").exists() and (directory / "pg_ctl").exists():
            return directory
    return None


EXTERNAL_URL_VARIABLE = "CYPHERBOT_TEST_POSTGRES_URL"


def unavailable_reason() -> str | None:
    """Why a throwaway cluster cannot start here, or None when it can."""
    if os.environ.get(EXTERNAL_URL_VARIABLE):
        return None
    if find_bin_dir() is None:
        return (
            "PostgreSQL is not installed (no initdb/pg_ctl); install Debian's 'postgresql' "
            "package (.ci/run does) to run the PostgreSQL memory tests"
        )
    if os.geteuid() == 0:
        try:
            pwd.getpwnam("postgres")
        except KeyError:
            return "running as root and there is no 'postgres' user to run PostgreSQL as"
    return None


def with_password(url: str, password: str = "pw-secret") -> tuple[str, str]:  # noqa: S107
    """`url` carrying a password, and that password: its own when it has one (a server that
    checks it), else `password` (the throwaway cluster trusts loopback and ignores it)."""
    parts = urlsplit(url)
    if parts.password:
        return url, parts.password
    netloc = f"{parts.username or 'postgres'}:{password}@{parts.hostname}:{parts.port}"
    return urlunsplit(parts._replace(netloc=netloc)), password


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class Server:
    """A PostgreSQL server reached through a superuser URL; `new_database()` returns the URL
    of a fresh database on it."""

    def __init__(self, admin_url: str) -> None:
        self.admin_url = admin_url

    def url(self, database: str) -> str:
        return self.admin_url.rsplit("/", 1)[0] + "/" + database

    def new_database(self, prefix: str = "t") -> str:
        """Create an empty database and return its URL."""
        import psycopg

        name = f"{prefix}_{os.getpid()}_{next(_counter)}"
        with psycopg.connect(self.admin_url, autocommit=True) as conn:
            conn.execute(f'CREATE DATABASE "{name}"')
        return self.url(name)

    def drop_database(self, url: str) -> None:
        """Drop a database made by `new_database` (its connections are ended first)."""
        import psycopg

        name = url.rsplit("/", 1)[1]
        with psycopg.connect(self.admin_url, autocommit=True) as conn:
            conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


class Cluster(Server):
    """A server this process started (initdb + pg_ctl) in a temp dir."""

    def __init__(self, bin_dir: Path, root: Path, port: int, run_as: list[str]) -> None:
        super().__init__(f"postgresql://postgres@127.0.0.1:{port}/postgres")
        self.bin_dir = bin_dir
        self.root = root
        self.port = port
        self._run_as = run_as

    def _pg(self, *args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [*self._run_as, str(self.bin_dir / args[0]), *args[1:]],
            check=True,
            capture_output=True,
            text=True,
            timeout=120,
        )

    def stop(self) -> None:
        with contextlib.suppress(subprocess.SubprocessError, OSError):
            self._pg("pg_ctl", "-D", str(self.root / "data"), "-m", "immediate", "stop")
        shutil.rmtree(self.root, ignore_errors=True)


@contextlib.contextmanager
def running_cluster() -> Iterator[Server]:
    """Start a cluster in a new temp dir, yield it, stop and delete it (or yield the server
    named by CYPHERBOT_TEST_POSTGRES_URL)."""
    external = os.environ.get(EXTERNAL_URL_VARIABLE)
    if external:
        yield Server(external)
        return
    bin_dir = find_bin_dir()
    if bin_dir is None:
        raise RuntimeError(unavailable_reason() or "no PostgreSQL")
    root = Path(tempfile.mkdtemp(prefix="cypherbot-pg-"))
    run_as: list[str] = []
    if os.geteuid() == 0:
        entry = pwd.getpwnam("postgres")
        os.chown(root, entry.pw_uid, entry.pw_gid)
        run_as = ["runuser", "-u", "postgres", "--"]
    port = _free_port()
    cluster = Cluster(bin_dir, root, port, run_as)
    try:
        cluster._pg(
            "initdb", "-D", str(root / "data"), "-U", "postgres", "-A", "trust",
            "-E", "UTF8", "--no-sync",
        )  # fmt: skip
        options = (
            f"-p {port} -k {root} -c listen_addresses=127.0.0.1 -c fsync=off "
            "-c synchronous_commit=off -c full_page_writes=off -c max_connections=300"
        )
        cluster._pg(
            "pg_ctl", "-D", str(root / "data"), "-o", options, "-l", str(root / "log"),
            "-w", "-t", "60", "start",
        )  # fmt: skip
    except subprocess.CalledProcessError as exc:
        log = (root / "log").read_text() if (root / "log").exists() else ""
        shutil.rmtree(root, ignore_errors=True)
        raise RuntimeError(f"PostgreSQL did not start: {exc.stderr}\n{log}") from exc
    try:
        yield cluster
    finally:
        cluster.stop()
