"""The limits the embedded engine runs under: FalkorDB's per-query settings and its process's
address-space cap."""

from __future__ import annotations

import logging
import os
import resource
import sys

from graph_agent.graphdb.errors import EmbeddedUnavailableError

logger = logging.getLogger(__name__)

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

_MALLOC_ARENA_MAX = "2"
"""glibc reserves 64 MB of address space per malloc arena, up to 8 per core: without a cap on
arenas the engine's idle address space grows with the machine's cores, not with its data."""


def engine_environment() -> dict[str, str]:
    """The environment the engine process starts with: ours, with malloc arenas capped."""
    return {
        **os.environ,
        "MALLOC_ARENA_MAX": os.environ.get("MALLOC_ARENA_MAX", _MALLOC_ARENA_MAX),
    }


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


def limit_address_space(pid: int, limit: int | None) -> int | None:
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


def megabytes(limit: int | None) -> str:
    """A limit for a log line: "512 MB", or "none"."""
    return "none" if limit is None else f"{limit // (1024 * 1024)} MB"
