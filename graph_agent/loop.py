"""The process's one event loop for agent runs."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Coroutine
from concurrent.futures import ThreadPoolExecutor
from typing import Any, TypeVar

T = TypeVar("T")

_loop: asyncio.AbstractEventLoop | None = None
_loop_guard = threading.Lock()


def agent_loop() -> asyncio.AbstractEventLoop:
    """The process's one event loop for agent runs, started on first use.

    LangChain's OpenAI clients share pooled HTTP connections (per base URL, process-wide), and
    an async connection belongs to the loop that opened it: runs on a fresh loop each time
    (asyncio.run per question) failed every other call on keep-alive servers with "Event loop
    is closed". So every run, from any thread or loop, executes here.
    """
    global _loop
    with _loop_guard:
        if _loop is None:
            loop = asyncio.new_event_loop()
            # Graph, memory and sync-only model calls run in this pool; the stdlib default
            # (cores + 4 threads) would queue concurrent questions behind each other.
            loop.set_default_executor(
                ThreadPoolExecutor(max_workers=64, thread_name_prefix="agent-io")
            )
            threading.Thread(target=loop.run_forever, name="agent-loop", daemon=True).start()
            _loop = loop
        return _loop


async def on_agent_loop(coro: Coroutine[Any, Any, T]) -> T:
    """Await `coro` on the agent loop, from whatever loop the caller runs on."""
    loop = agent_loop()
    if asyncio.get_running_loop() is loop:
        return await coro
    return await asyncio.wrap_future(asyncio.run_coroutine_threadsafe(coro, loop))


def run_on_agent_loop(coro: Coroutine[Any, Any, T]) -> T:
    """Run `coro` on the agent loop and wait (from a thread that runs no event loop)."""
    return asyncio.run_coroutine_threadsafe(coro, agent_loop()).result()
