"""Process benchmark: the Slack app's resident memory (VmRSS) idle and while answering a burst.

The app runs in its own process (real Bolt app over HTTP, embedded demo graph, instant
scripted LLM) so that its RSS is its own; the Slack API emulator runs in this process.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

TEAM_SIZES = (
    "MATCH (p:Person)-[:MEMBER_OF]->(t:Team) "
    "RETURN t.name AS team, count(p) AS people ORDER BY people DESC LIMIT 3"
)
CHANNEL = "C0GENERAL"
ALICE = "U0ALICE"


def rss_mb(pid: int) -> float:
    """Resident set size of `pid` in MB, from /proc (Linux)."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    raise RuntimeError(f"no VmRSS for pid {pid}")


def child(args: argparse.Namespace) -> None:
    """The app process: serve Slack events until stdin closes (in Socket Mode with
    --app-token, else over HTTP)."""
    from pydantic import SecretStr

    from bot.settings import Settings
    from bot.slack.app import create_bot
    from bot.slack.http_server import SlackHTTPServer
    from bot.wiring import build_agent
    from graph_agent.graphdb import connect
    from graph_agent.llm import LLMs
    from memory import open_memory
    from rig.scripted_llm import ScriptedChatModel
    from rig.slack import graph_responder

    data_dir = Path(args.data_dir)
    settings = Settings(
        _env_file=None,  # type: ignore[call-arg]
        data_dir=data_dir / "app",
        rate_per_minute=100_000,
        rate_per_day=1_000_000,
        candidates=1,  # the scripted model stands in for a local server
        slack_bot_token=SecretStr(args.bot_token),
        slack_signing_secret=SecretStr(args.signing_secret),
        slack_app_token=SecretStr(args.app_token) if args.app_token else None,
        slack_api_url=args.api_url,
    )
    db = connect("embedded", data_dir=data_dir / "graph", graph_name="bench")
    model = ScriptedChatModel(responder=graph_responder(lambda q: TEAM_SIZES))
    with open_memory(settings.memory_location) as memory:
        agent = build_agent(settings, memory.examples, db=db, llms=LLMs(cypher=model, fast=model))
        bot = create_bot(settings, agent, memory, socket_mode=bool(args.app_token))
        if args.app_token:
            from bot.slack.socket_mode import socket_mode_handler

            handler = socket_mode_handler(bot, settings)
            handler.connect()  # type: ignore[no-untyped-call]
            print("socket", flush=True)
            sys.stdin.read()  # the parent closes stdin to stop us
            handler.close()  # type: ignore[no-untyped-call]
        else:
            server = SlackHTTPServer(bot.app, host="127.0.0.1", port=0, health={}).start()
            print(server.events_url, flush=True)
            sys.stdin.read()
            server.stop()
        bot.close()
    db.close()


def _sample(pid: int, stop: threading.Event, into: list[float]) -> None:
    while not stop.is_set():
        try:
            into.append(rss_mb(pid))
        except (OSError, RuntimeError):
            return
        stop.wait(0.05)


@contextmanager
def app_in_subprocess(
    tmp: Path, transport: str = "http"
) -> Iterator[tuple[Any, subprocess.Popen[str]]]:
    """The emulator here and the Slack app (demo graph, instant scripted LLM) in a child
    process, warmed up by one answered question: the app shares no interpreter with the
    load generator, as with the real Slack. `transport="socket"`: the app in Socket Mode."""
    from bot.playground.emulator import SlackEmulator
    from graph_agent.demo import load_demo
    from graph_agent.graphdb import connect
    from graph_agent.graphdb.embedded import embedded_server

    db = connect("embedded", data_dir=tmp / "graph", graph_name="bench")
    load_demo(db)
    emulator = SlackEmulator(transport="socket" if transport == "socket" else "http").start()
    emulator.add_user(ALICE, "alice")
    emulator.add_channel(CHANNEL, "general", members=[ALICE])
    socket_args = ["--app-token", emulator.app_token] if transport == "socket" else []
    proc = subprocess.Popen(
        [sys.executable, __file__, "--child", "--data-dir", str(tmp),
         "--api-url", emulator.api_url, "--bot-token", emulator.bot_token,
         "--signing-secret", emulator.signing_secret, *socket_args],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, cwd=ROOT,
        env={**os.environ, "PYTHONHASHSEED": "0"},
    )  # fmt: skip
    try:
        assert proc.stdout is not None and proc.stdin is not None
        started = proc.stdout.readline().strip()
        if not started:
            raise RuntimeError("the app process did not start")
        if transport == "socket":
            emulator.wait_for(lambda: any(c.live for c in emulator.socket_connections), 60)
        else:
            emulator.app_url = started
        # One question first, so imports and connections made on first use are done.
        first, _ = emulator.post_message(ALICE, CHANNEL, f"<@{emulator.bot_user_id}> warm-up")
        emulator.wait_for(lambda: _answered(emulator, first["ts"]), 60)
        yield emulator, proc
    finally:
        if proc.stdin is not None:
            proc.stdin.close()
        try:
            proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
        emulator.stop()
        db.close()
        embedded_server(tmp / "graph").stop()


def run(quick: bool = False) -> dict[str, Any]:
    """RSS of the app process idle, at the peak of a burst of questions, and after it."""
    burst = 20 if quick else 100
    with tempfile.TemporaryDirectory() as name, app_in_subprocess(Path(name)) as (emulator, proc):
        time.sleep(2.0 if quick else 5.0)
        idle = rss_mb(proc.pid)
        samples: list[float] = []
        stop = threading.Event()
        sampler = threading.Thread(target=_sample, args=(proc.pid, stop, samples))
        sampler.start()
        started = time.perf_counter()
        posted = []
        for i in range(burst):
            message, _ = emulator.post_message(
                ALICE, CHANNEL, f"<@{emulator.bot_user_id}> Which teams are biggest? #{i}",
                concurrent=True,
            )  # fmt: skip
            posted.append(message["ts"])
        emulator.wait_for(lambda: all(_answered(emulator, ts) for ts in posted), 300)
        seconds = time.perf_counter() - started
        stop.set()
        sampler.join()
        time.sleep(1.0)
        after = rss_mb(proc.pid)
    return {
        "idle_mb": idle,
        "peak_mb": max(samples, default=idle),
        "after_mb": after,
        "burst_questions": burst,
        "burst_s": seconds,
    }


def _answered(emulator: Any, ts: str) -> bool:
    return any(m.get("blocks") for m in emulator.bot_replies(CHANNEL, ts))


def _markdown(r: dict[str, Any]) -> str:
    return "\n".join(
        [
            "| app process (VmRSS) | MB |",
            "|---|---:|",
            f"| idle, after one question | {r['idle_mb']:.0f} |",
            f"| peak while answering {r['burst_questions']} questions "
            f"({r['burst_s']:.1f} s) | {r['peak_mb']:.0f} |",
            f"| after the burst | {r['after_mb']:.0f} |",
        ]
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--json", action="store_true")
    parser.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    for option in ("--data-dir", "--api-url", "--bot-token", "--signing-secret", "--app-token"):
        parser.add_argument(option, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        child(args)
        return
    result = run(quick=args.quick)
    print(json.dumps(result, indent=2) if args.json else _markdown(result))


if __name__ == "__main__":
    main()
