"""Slack bot benchmark: ack latency under concurrent events (over HTTP and in Socket Mode),
the slash command's ack with a slow example store, end-to-end overhead per question, answers
per second with many threads vs one (real Bolt app, emulator, agent, demo graph)."""

from __future__ import annotations

import functools
import http.client
import json
import subprocess
import sys
import tempfile
import threading
import time
import urllib.parse
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any, cast

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bot.settings import Settings
from bot.wiring import build_agent
from graph_agent.graphdb import GraphDB, connect
from graph_agent.llm import LLMs
from memory import open_memory
from rig.scripted_llm import ScriptedChatModel
from rig.slack import ALICE, CHANNEL, SlackRig, graph_responder, rig_settings, slack_rig

TEAM_SIZES = (
    "MATCH (p:Person)-[:MEMBER_OF]->(t:Team) "
    "RETURN t.name AS team, count(p) AS people ORDER BY people DESC LIMIT 3"
)


def percentile(values: list[float], p: float) -> float:
    ordered = sorted(values)
    index = min(len(ordered) - 1, max(0, round(p / 100 * (len(ordered) - 1))))
    return ordered[index]


@contextmanager
def rig(
    db: GraphDB, data_dir: Path, llm_delay_s: float, workers: int | None = None
) -> Iterator[SlackRig]:
    """The app against the emulator; `workers` defaults to the product's WORKERS default."""
    model = ScriptedChatModel(
        responder=graph_responder(lambda q: TEAM_SIZES, delay_s=lambda kind: llm_delay_s)
    )
    overrides: dict[str, Any] = {
        "workers": workers if workers is not None else Settings.model_fields["workers"].default
    }
    settings = rig_settings(data_dir, **overrides)
    with open_memory(settings.memory_location) as memory:
        agent = build_agent(settings, memory.examples, db=db, llms=LLMs(cypher=model, fast=model))
        # Slack's own rate limits lifted: 50 answers in one channel would otherwise measure
        # Slack's per-channel budget (1 post a second), not the bot.
        with slack_rig(
            agent, data_dir, memory=memory, slack_rate_limits=False, **overrides
        ) as started:
            yield started


def ask_and_wait(r: SlackRig, question: str, timeout: float = 120) -> float:
    """Seconds from the emulator posting the mention to the final answer being posted."""
    started = time.perf_counter()
    mention = r.mention(question)
    r.emulator.wait_for(lambda: r.answers(CHANNEL, mention["ts"]), timeout)
    return time.perf_counter() - started


def bench_ack(tmp: Path, rounds: int) -> dict[str, float]:
    """20 mentions delivered at once over HTTP; the time until each HTTP response.

    Three processes, as in production: the app (bench.process's child), the Slack Web API
    emulator (this process, serving the app's chat.postMessage/update calls), and a sender
    that only fires the signed event requests and times them. With the sender inside the
    emulator's interpreter, its threads queued for the GIL behind the emulator serving the
    answers, and the figure timed the harness (a 150 ms tail) rather than the app.
    """
    from bench.process import ALICE, app_in_subprocess

    acks: list[float] = []
    with app_in_subprocess(tmp / "ack") as (emulator, _proc):
        channel = "C0GENERAL"
        for n in range(rounds):
            payloads, requests = [], []
            for i in range(20):
                message, _ = emulator.post_message(
                    ALICE,
                    channel,
                    f"<@{emulator.bot_user_id}> round {n} question {i}",
                    deliver=False,
                )
                payload = emulator.events_for_message(channel, message)[0]
                body = json.dumps(payload)
                ts = int(time.time())
                payloads.append(payload)
                requests.append(
                    {"body": body, "ts": ts, "sig": emulator.sign(body.encode(), ts, None)}
                )
            sender = subprocess.run(
                [sys.executable, __file__, "--send", emulator.app_url],
                input=json.dumps(requests),
                capture_output=True,
                text=True,
                check=True,
                timeout=120,
            )
            acks += json.loads(sender.stdout)
            posted = [p["event"]["ts"] for p in payloads]
            emulator.wait_for(
                lambda posted=posted: all(
                    any(m.get("blocks") for m in emulator.bot_replies(channel, ts)) for ts in posted
                ),
                120,
            )
    return {
        "events": len(acks),
        "p50_ms": percentile(acks, 50),
        "p99_ms": percentile(acks, 99),
        "max_ms": max(acks),
    }


def bench_ack_socket(tmp: Path, rounds: int) -> dict[str, float]:
    """20 mentions sent at once as Socket Mode envelopes; the time until each ack.

    The app runs in its own process (Bolt's built-in Socket Mode client). The envelopes
    leave, and their acks are read, in the emulator's process — the websocket is the
    emulator's — which also serves the Web API calls of the answers that follow: its threads
    share one interpreter, so the tail includes some of the harness (the HTTP figure avoids
    that with a separate sender process, which a websocket server cannot have). Each ack is
    timed from just before its envelope is written to the moment its bytes are read."""
    from bench.process import ALICE, app_in_subprocess

    acks: list[float] = []
    with app_in_subprocess(tmp / "ack-socket", transport="socket") as (emulator, _proc):
        channel = "C0GENERAL"
        for n in range(rounds):
            payloads = []
            for i in range(20):
                message, _ = emulator.post_message(
                    ALICE,
                    channel,
                    f"<@{emulator.bot_user_id}> round {n} question {i}",
                    deliver=False,
                )
                payloads.append(emulator.events_for_message(channel, message)[0])
            deliveries = emulator.deliver_all(payloads, concurrent=True)
            if not all(d.acked for d in deliveries):
                raise RuntimeError("an envelope was not acknowledged in time")
            acks += [d.elapsed_s * 1000 for d in deliveries]
            posted = [p["event"]["ts"] for p in payloads]
            emulator.wait_for(
                lambda posted=posted: all(
                    any(m.get("blocks") for m in emulator.bot_replies(channel, ts)) for ts in posted
                ),
                120,
            )
            emulator.wait_idle(60)
    return {
        "events": len(acks),
        "p50_ms": percentile(acks, 50),
        "p99_ms": percentile(acks, 99),
        "max_ms": max(acks),
    }


def send(url: str) -> None:
    """Sender process: POST the signed requests on stdin all at once; print each ack in ms."""
    requests = json.loads(sys.stdin.read())
    parts = urllib.parse.urlsplit(url)
    start = threading.Barrier(len(requests))
    elapsed = [0.0] * len(requests)

    def post(n: int, request: dict[str, Any]) -> None:
        conn = http.client.HTTPConnection(parts.hostname or "127.0.0.1", parts.port, timeout=60)
        conn.connect()
        start.wait()
        began = time.perf_counter()
        conn.request(
            "POST",
            parts.path,
            body=request["body"].encode(),
            headers={
                "Content-Type": "application/json",
                "X-Slack-Request-Timestamp": str(request["ts"]),
                "X-Slack-Signature": request["sig"],
            },
        )
        response = conn.getresponse()
        response.read()
        elapsed[n] = (time.perf_counter() - began) * 1000
        if response.status != 200:
            raise RuntimeError(f"ack status {response.status}")
        conn.close()

    threads = [threading.Thread(target=post, args=(n, r)) for n, r in enumerate(requests)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    print(json.dumps(elapsed))


def bench_overhead(db: GraphDB, tmp: Path, questions: int) -> dict[str, float]:
    """Sequential questions with an instant LLM: event → final answer posted."""
    with rig(db, tmp / "overhead", llm_delay_s=0.0) as r:
        ask_and_wait(r, "warm-up")
        times = [
            ask_and_wait(r, f"Which teams have the most people? #{i}") * 1000
            for i in range(questions)
        ]
    return {
        "questions": questions,
        "p50_ms": percentile(times, 50),
        "p95_ms": percentile(times, 95),
    }


def bench_throughput(db: GraphDB, tmp: Path, single: int, threads: int = 50) -> dict[str, float]:
    """Answers per second with a 0.5 s LLM (3 calls a question): one thread vs 50 at once."""
    with rig(db, tmp / "single", llm_delay_s=0.5) as r:
        started = time.perf_counter()
        for i in range(single):
            ask_and_wait(r, f"Which teams have the most people? one-by-one #{i}")
        one = single / (time.perf_counter() - started)
    with rig(db, tmp / "many", llm_delay_s=0.5) as r:
        started = time.perf_counter()
        workers = [
            threading.Thread(
                target=ask_and_wait, args=(r, f"Which teams have the most people? #{i}", 300)
            )
            for i in range(threads)
        ]
        for w in workers:
            w.start()
        for w in workers:
            w.join()
        many = threads / (time.perf_counter() - started)
        worker_count = r.settings.workers
    return {
        "one_thread_per_s": one,
        "many_threads_per_s": many,
        "threads": threads,
        "workers": worker_count,
        "ratio": many / one,
    }


GENERATE_S = 2.0
"""The scripted model's generate (and evaluate) time in the rows-first measurement."""


def _shows_rows(r: SlackRig, ts: str) -> bool:
    """A row value of TEAM_SIZES is in the thread: its status line or one of its messages."""
    texts = [r.emulator.statuses.get((CHANNEL, ts), "")]
    texts += [str(m.get("text", "")) for m in r.emulator.messages(CHANNEL, ts)]
    return any("Notifications" in text for text in texts)


def bench_first_content(db: GraphDB, tmp: Path, questions: int) -> dict[str, float]:
    """Event → first useful content in the thread (a row value in the status line or a
    message), with a 2 s generate and a 2 s evaluate step; and → the final answer."""
    delays = {"generate": GENERATE_S, "evaluate": GENERATE_S}
    model = ScriptedChatModel(
        responder=graph_responder(lambda q: TEAM_SIZES, delay_s=lambda kind: delays.get(kind, 0))
    )
    data_dir = tmp / "first-content"
    settings = rig_settings(data_dir)
    first: list[float] = []
    final: list[float] = []
    with open_memory(settings.memory_location) as memory:
        agent = build_agent(settings, memory.examples, db=db, llms=LLMs(cypher=model, fast=model))
        with slack_rig(agent, data_dir, memory=memory, slack_rate_limits=False) as r:
            for i in range(questions):
                started = time.perf_counter()
                mention = r.mention(f"Which teams have the most people? #{i}")
                ts = str(mention["ts"])

                r.emulator.wait_for(functools.partial(_shows_rows, r, ts), 60)
                first.append((time.perf_counter() - started) * 1000)
                r.emulator.wait_for(functools.partial(r.answers, CHANNEL, ts), 60)
                final.append((time.perf_counter() - started) * 1000)
    return {
        "questions": questions,
        "generate_ms": GENERATE_S * 1000,
        "first_p50_ms": percentile(first, 50),
        "first_max_ms": max(first),
        "final_p50_ms": percentile(final, 50),
    }


STORE_DELAY_S = 2.0
"""How long each example-store read takes in the slash-command measurement."""


class _SlowExamples:
    """The example store with every read taking STORE_DELAY_S (a far database, a busy disk,
    or EMBEDDINGS_MODEL behind a slow endpoint)."""

    READS = frozenset({"similar", "exact", "list", "get", "has_schema_examples"})

    def __init__(self, store: object) -> None:
        self._store = store

    def __getattr__(self, name: str) -> Any:
        found = getattr(self._store, name)
        if name not in self.READS:
            return found

        def slow(*args: Any, **kwargs: Any) -> Any:
            time.sleep(STORE_DELAY_S)
            return found(*args, **kwargs)

        return slow


def bench_command_slow_store(db: GraphDB, tmp: Path, commands: int) -> dict[str, Any]:
    """`/cypherbot examples` with every example-store read taking 2 s, one command after
    another: the time from the emulator sending each command to its ack, over HTTP and in
    Socket Mode. The replies come through response_url once the store answers (all of them
    are waited for). App and emulator share this process, so the figure includes some of
    the harness, as the Socket Mode ack figure does."""
    model = ScriptedChatModel(responder=graph_responder(lambda q: TEAM_SIZES))
    workers = Settings.model_fields["workers"].default
    sent = commands + 1  # the first warms up (imports, connections)
    results: dict[str, Any] = {}
    for transport in ("http", "socket"):
        data_dir = tmp / f"command-{transport}"
        settings = rig_settings(data_dir, workers=workers)
        acks: list[float] = []
        with open_memory(settings.memory_location) as memory:
            cast(Any, memory).examples = _SlowExamples(memory.examples)
            agent = build_agent(
                settings, memory.examples, db=db, llms=LLMs(cypher=model, fast=model)
            )
            with slack_rig(
                agent,
                data_dir,
                memory=memory,
                slack_rate_limits=False,
                transport=transport,
                workers=workers,
            ) as r:
                for n in range(sent):
                    delivery = r.emulator.slash_command(ALICE, CHANNEL, "examples")
                    if not delivery.acked:
                        raise RuntimeError(f"/cypherbot was not acknowledged ({transport})")
                    if n:
                        acks.append(delivery.elapsed_s * 1000)
                r.emulator.wait_for(
                    lambda: len(r.emulator.calls_to("response_url")) >= sent,
                    120,
                    "a /cypherbot reply never came",
                )
                r.settle(120)
        results[transport] = {
            "commands": len(acks),
            "store_delay_s": STORE_DELAY_S,
            "p50_ms": percentile(acks, 50),
            "p99_ms": percentile(acks, 99),
            "max_ms": max(acks),
        }
    return results


def run(quick: bool = False) -> dict[str, Any]:
    """Run the Slack benchmark; `quick` uses fewer rounds and questions."""
    from graph_agent.demo import load_demo
    from graph_agent.graphdb.embedded import embedded_server

    with tempfile.TemporaryDirectory() as name:
        tmp = Path(name)
        db = connect("embedded", data_dir=tmp / "graph", graph_name="bench")
        try:
            load_demo(db)
            return {
                "ack": bench_ack(tmp, rounds=2 if quick else 5),
                "ack_socket": bench_ack_socket(tmp, rounds=2 if quick else 5),
                "command_slow_store": bench_command_slow_store(
                    db, tmp, commands=5 if quick else 20
                ),
                "overhead": bench_overhead(db, tmp, questions=10 if quick else 40),
                "throughput": bench_throughput(db, tmp, single=3 if quick else 6),
                "first_content": bench_first_content(db, tmp, questions=3 if quick else 8),
            }
        finally:
            db.close()
            embedded_server(tmp / "graph").stop()


def markdown(results: dict[str, Any]) -> str:
    ack, overhead, tp = results["ack"], results["overhead"], results["throughput"]
    socket, first = results["ack_socket"], results["first_content"]
    command_rows: list[str] = []
    for transport, over in (("http", "over HTTP"), ("socket", "in Socket Mode")):
        c = (results.get("command_slow_store") or {}).get(transport)
        if c:
            delay = f"{c['store_delay_s']:.0f} s"
            command_rows += [
                f"| `/cypherbot` ack, example store {delay} slow, {over} ({c['commands']} commands): p50 | {c['p50_ms']:.1f} ms |",
                f"| `/cypherbot` ack, {delay} store, {over}: p99 | {c['p99_ms']:.1f} ms |",
            ]
    return "\n".join(
        [
            "## Slack bot (real Bolt app over HTTP or in Socket Mode, local Slack API emulator, demo graph)",
            "",
            "| measure | value |",
            "|---|---:|",
            f"| ack latency, 20 concurrent events ({ack['events']} events): p50 | {ack['p50_ms']:.1f} ms |",
            f"| ack latency: p99 | {ack['p99_ms']:.1f} ms |",
            f"| ack latency in Socket Mode, 20 concurrent envelopes ({socket['events']} events): p50 | {socket['p50_ms']:.1f} ms |",
            f"| ack latency in Socket Mode: p99 | {socket['p99_ms']:.1f} ms |",
            *command_rows,
            f"| event → final answer posted, instant LLM ({overhead['questions']} questions): p50 | {overhead['p50_ms']:.0f} ms |",
            f"| event → final answer posted: p95 | {overhead['p95_ms']:.0f} ms |",
            f"| answers/s, 0.5 s LLM, one thread | {tp['one_thread_per_s']:.2f} |",
            f"| answers/s, 0.5 s LLM, {tp['threads']} threads at once ({tp['workers']} workers) | {tp['many_threads_per_s']:.2f} |",
            f"| ratio | {tp['ratio']:.1f}× |",
            f"| 50 conversations' time / one conversation's | {tp['threads'] / tp['ratio']:.2f}× |",
            f"| event → first rows in the thread, {first['generate_ms'] / 1000:.0f} s generate + {first['generate_ms'] / 1000:.0f} s evaluate ({first['questions']} questions): p50 | {first['first_p50_ms']:.0f} ms |",
            f"| event → first rows: worst | {first['first_max_ms']:.0f} ms |",
            f"| event → final answer, same questions: p50 | {first['final_p50_ms']:.0f} ms |",
        ]
    )


def main(argv: list[str]) -> None:
    if argv[:1] == ["--send"]:
        send(argv[1])
        return
    results = run(quick="--quick" in argv)
    if "--json" in argv:
        print(json.dumps(results, indent=2))
    else:
        print(markdown(results))


if __name__ == "__main__":
    main(sys.argv[1:])
