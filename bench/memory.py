"""Memory benchmark: example retrieval latency, teach/record throughput and database size on
both backends (a SQLite file; PostgreSQL in a throwaway cluster), and answers per second with
one and with two bot processes sharing one PostgreSQL memory.

    python bench/memory.py [--quick] [--backends sqlite,postgresql] [--no-instances]
"""

from __future__ import annotations

import contextlib
import hashlib
import random
import statistics
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from memory import Memory, open_memory

PEOPLE = [
    f"{first} {last}"
    for first in (
        "Tom",
        "Keanu",
        "Meg",
        "Carrie",
        "Hugo",
        "Lana",
        "Lilly",
        "Jack",
        "Kevin",
        "Robin",
        "Helen",
        "Emil",
        "Laurence",
        "Charlize",
        "Al",
        "Diane",
        "Julia",
        "Bill",
        "Cuba",
        "Ethan",
    )
    for last in (
        "Hanks",
        "Reeves",
        "Ryan",
        "Moss",
        "Weaving",
        "Wachowski",
        "Nicholson",
        "Bacon",
        "Wright",
        "Hunt",
        "Eifrem",
        "Fishburne",
        "Theron",
        "Pacino",
        "Keaton",
        "Roberts",
        "Paxton",
        "Gooding",
        "Hawke",
        "Zeta",
    )
]
TITLES = [
    f"{a} {b}"
    for a in (
        "The Matrix",
        "Top Gun",
        "Cloud Atlas",
        "Apollo",
        "Speed",
        "Unforgiven",
        "Twister",
        "Hoffa",
        "Jerry",
        "Sleepless",
        "Cast Away",
        "Ninja",
        "Snow",
        "Frost",
        "Johnny",
        "Joe",
    )
    for b in ("", "II", "Returns", "Reloaded", "Revolutions", "Origins", "Forever", "Rising")
]
TEMPLATES = [
    (
        "Which movies did {p} act in?",
        "MATCH (:Person {{name: '{p}'}})-[:ACTED_IN]->(m) RETURN m.title",
    ),
    ("Who directed {t}?", "MATCH (p)-[:DIRECTED]->(:Movie {{title: '{t}'}}) RETURN p.name"),
    ("How many movies were released in {y}?", "MATCH (m:Movie {{released: {y}}}) RETURN count(m)"),
    (
        "What is the average rating of movies released after {y}?",
        "MATCH (m:Movie) WHERE m.released > {y} RETURN avg(m.rating)",
    ),
    ("Who reviewed {t}?", "MATCH (p)-[:REVIEWED]->(:Movie {{title: '{t}'}}) RETURN p.name"),
    (
        "Which actors worked with {p} more than {n} times?",
        "MATCH (:Person {{name: '{p}'}})-[:ACTED_IN]->()<-[:ACTED_IN]-(c) WITH c, count(*) AS n WHERE n > {n} RETURN c.name",
    ),
    ("List the people born before {y}", "MATCH (p:Person) WHERE p.born < {y} RETURN p.name"),
    ("What genre is {t}?", "MATCH (:Movie {{title: '{t}'}})-[:IN_GENRE]->(g) RETURN g.name"),
    (
        "How old was {p} when {t} came out?",
        "MATCH (p:Person {{name: '{p}'}}), (m:Movie {{title: '{t}'}}) RETURN m.released - p.born",
    ),
    (
        "Top {n} movies by box office in {y}",
        "MATCH (m:Movie {{released: {y}}}) RETURN m.title ORDER BY m.gross DESC LIMIT {n}",
    ),
]
QUERIES = [
    "films with {p}",
    "director of {t}",
    "number of movies from {y}",
    "average rating since {y}",
    "reviews of {t}",
    "co-stars of {p}",
    "people born earlier than {y}",
    "genre of {t}",
    "age of {p} at the release of {t}",
    "best grossing movies of {y}",
]


def _fill(template: str, rng: random.Random) -> str:
    return template.format(
        p=rng.choice(PEOPLE),
        t=rng.choice(TITLES).strip(),
        y=rng.randint(1950, 2024),
        n=rng.randint(2, 10),
    )


def _pairs(count: int, rng: random.Random) -> list[tuple[str, str]]:
    pairs: list[tuple[str, str]] = []
    for _ in range(count):
        q, c = rng.choice(TEMPLATES)
        values = {
            "p": rng.choice(PEOPLE),
            "t": rng.choice(TITLES).strip(),
            "y": rng.randint(1950, 2024),
            "n": rng.randint(2, 10),
        }
        pairs.append((q.format(**values), c.format(**values)))
    return pairs


def fake_embedder(texts: list[str]) -> list[list[float]]:
    """Deterministic 64-dimension hashed bag of words (stands in for an embeddings API)."""
    out = []
    for text in texts:
        vector = [0.0] * 64
        for word in text.lower().split():
            vector[int(hashlib.md5(word.encode()).hexdigest()[:8], 16) % 64] += 1.0
        out.append(vector)
    return out


def _percentiles(samples: list[float]) -> tuple[float, float]:
    ordered = sorted(samples)
    p95 = ordered[min(len(ordered) - 1, round(0.95 * (len(ordered) - 1)))]
    return statistics.median(ordered), p95


def _time_similar(mem: Memory, queries: list[str]) -> tuple[float, float]:
    mem.examples.similar(queries[0])  # warm caches (and back-fill vectors)
    samples = []
    for q in queries:
        start = time.perf_counter()
        mem.examples.similar(q, k=3)
        samples.append((time.perf_counter() - start) * 1000)
    return _percentiles(samples)


Locate = Callable[[str], str]
"""A new, empty memory location named after what it holds (a file, or a database)."""


def _retrieval(
    locate: Locate, sizes: list[int], n_queries: int, semantic: bool
) -> list[dict[str, Any]]:
    rng = random.Random(7)
    results = []
    path = locate(f"retrieval_{'sem' if semantic else 'lex'}")
    store = open_memory(path)
    have = 0
    for size in sizes:
        store.examples.add_many(_pairs(size - have, rng), source="seed")
        have = size
        mem = (
            open_memory(path, embedder=fake_embedder, embedder_name="fake-64")
            if semantic
            else store
        )
        queries = [_fill(rng.choice(QUERIES), rng) for _ in range(n_queries)]
        p50, p95 = _time_similar(mem, queries)
        results.append(
            {
                "mode": "semantic" if semantic else "lexical",
                "examples": size,
                "p50_ms": p50,
                "p95_ms": p95,
            }
        )
        if semantic:
            mem.close()
    store.close()
    return results


def _throughput(locate: Locate, n: int) -> dict[str, float]:
    rng = random.Random(11)
    with open_memory(locate("throughput")) as mem:
        pairs = _pairs(n, rng)
        start = time.perf_counter()
        ids = [
            mem.conversations.record(
                f"T:C:{i % 50}",
                user=f"U{i % 20}",
                question=q,
                standalone_question=q,
                cypher=c,
                answer="Some answer with a few words in it.",
                outcome="answered",
                timings_ms={"generate": 900.0, "execute": 12.0},
                llm_calls=3,
                prompt_tokens=1500,
                completion_tokens=120,
                example_ids=[1, 2, 3],
            )
            for i, (q, c) in enumerate(pairs)
        ]
        record_s = time.perf_counter() - start
        turns = [mem.conversations.turn(i) for i in ids]
        start = time.perf_counter()
        for i, turn in enumerate(turns):
            assert turn is not None
            mem.examples.teach(turn, f"U{i % 7}")
        teach_s = time.perf_counter() - start
    return {"record_per_s": n / record_s, "teach_per_s": n / teach_s}


def _size_per_10k_turns(dirpath: Path) -> float:
    rng = random.Random(13)
    path = dirpath / "size.sqlite3"
    with open_memory(path) as mem:
        for i, (q, c) in enumerate(_pairs(10_000, rng)):
            mem.conversations.record(
                f"T:C:{i % 500}",
                user=f"U{i % 20}",
                question=q,
                standalone_question=q,
                cypher=c,
                answer="Some answer with a few words in it. " * 3,
                outcome="answered",
                timings_ms={"generate": 900.0, "execute": 12.0},
                llm_calls=3,
                prompt_tokens=1500,
                completion_tokens=120,
                example_ids=[1, 2, 3],
            )
    # Closing the last connection checkpoints the WAL into the main file.
    return path.stat().st_size / 1e6


@contextlib.contextmanager
def _backend(name: str, tmp: Path) -> Iterator[Locate | None]:
    """Where this backend's memories go; None (with the reason printed) when unavailable."""
    if name == "sqlite":
        yield lambda label: str(tmp / f"{label}.sqlite3")
        return
    from rig.postgres import running_cluster, unavailable_reason

    reason = unavailable_reason()
    if reason:
        print(f"postgresql skipped: {reason}", file=sys.stderr)
        yield None
        return
    with running_cluster() as cluster:
        yield lambda label: cluster.new_database(label)


def run(
    quick: bool = False,
    backends: tuple[str, ...] = ("sqlite", "postgresql"),
    instances: bool = True,
) -> dict[str, Any]:
    """Run the memory benchmark on each backend; `quick` keeps it to a few seconds."""
    lexical_sizes = [1_000, 10_000] if quick else [1_000, 10_000, 100_000]
    semantic_sizes = [1_000] if quick else [1_000, 10_000]
    n_queries = 50 if quick else 200
    result: dict[str, Any] = {"retrieval": [], "writes": {}}
    with tempfile.TemporaryDirectory() as tmp:
        dirpath = Path(tmp)
        for name in backends:
            with _backend(name, dirpath) as locate:
                if locate is None:
                    continue
                rows = _retrieval(locate, lexical_sizes, n_queries, semantic=False)
                rows += _retrieval(
                    locate, semantic_sizes, n_queries // 2 if not quick else 20, semantic=True
                )
                result["retrieval"] += [{"backend": name, **row} for row in rows]
                result["writes"][name] = _throughput(locate, 300 if quick else 2_000)
                if name == "sqlite":
                    result.update(result["writes"]["sqlite"])  # the figures' old keys
                    result["mb_per_10k_turns"] = _size_per_10k_turns(dirpath)
                if name == "postgresql" and instances:
                    result["instances"] = _instances(dirpath, quick)
    return result


def _instances(tmp: Path, quick: bool) -> dict[str, Any]:
    """Answers per second through one bot process, then through two sharing one PostgreSQL.

    Each process is the real Slack app (HTTP mode, real Bolt, embedded demo graph) with
    WORKERS questions answered at once and a scripted LLM whose generate step takes 0.5 s,
    so one process is bound by its workers and the LLM, as in production; the emulator
    spreads the questions over the processes like a load balancer.
    """
    from rig.postgres import running_cluster

    questions = 48 if quick else 160
    workers = 4
    with running_cluster() as cluster:
        rates = {}
        for count in (1, 2):
            rates[count] = _answers_per_s(cluster.new_database(f"inst{count}"), tmp / f"i{count}",
                                          count, questions, workers)  # fmt: skip
    return {
        "questions": questions,
        "workers_per_process": workers,
        "llm_s": 0.5,
        "one_per_s": rates[1],
        "two_per_s": rates[2],
        "ratio": rates[2] / rates[1],
    }


def _answers_per_s(url: str, tmp: Path, count: int, questions: int, workers: int) -> float:
    from bot.playground.emulator import SlackEmulator
    from bot.playground.emulator_limits import RateLimits
    from graph_agent.demo import load_demo
    from graph_agent.graphdb import connect
    from graph_agent.graphdb.embedded import embedded_server
    from rig.instance import instance_process

    user = "U0ALICE"
    query = (
        "MATCH (p:Person)-[:MEMBER_OF]->(t:Team) "
        "RETURN t.name AS team, count(p) AS people ORDER BY people DESC LIMIT 3"
    )
    db = connect("embedded", data_dir=tmp / "graph", graph_name="bench")
    load_demo(db)
    # Slack's own limits lifted, and the questions spread over channels: the bench measures
    # the bot processes, not one channel's posting budget.
    emulator = SlackEmulator(
        rate_limits=RateLimits(tier3_per_minute=10**9, posts_per_channel=10**9)
    ).start()
    emulator.add_user(user, "alice")
    channels = [f"C0BENCH{n:02d}" for n in range(16)]
    for name in channels:
        emulator.add_channel(name, name.lower(), members=[user])
    args = [
        "--memory-url", url, "--graph-dir", str(tmp / "graph"), "--graph-name", "bench",
        "--api-url", emulator.api_url, "--bot-token", emulator.bot_token,
        "--signing-secret", emulator.signing_secret, "--cypher", query,
        "--llm-delay-s", "0.5", "--workers", str(workers),
    ]  # fmt: skip
    try:
        with contextlib.ExitStack() as stack:
            urls = [
                stack.enter_context(instance_process(*args, "--data-dir", str(tmp / f"p{n}")))[0]
                for n in range(count)
            ]
            emulator.app_url = urls[0]
            for n, url_n in enumerate(urls):  # warm up each process
                message, payloads = _mention(emulator, user, channels[0], f"warm-up {n}")
                for payload in payloads:
                    emulator.deliver(payload, url=url_n)
                emulator.wait_for(lambda m=message: _answered(emulator, channels[0], m), 120)
            started = time.perf_counter()
            posted = []
            with ThreadPoolExecutor(max_workers=16) as pool:
                for i in range(questions):
                    channel = channels[i % len(channels)]
                    message, payloads = _mention(
                        emulator, user, channel, f"Which teams are biggest? #{i}"
                    )
                    posted.append((channel, message))
                    target = urls[i % count]
                    for payload in payloads:
                        pool.submit(emulator.deliver, payload, url=target)
            emulator.wait_for(_all_answered(emulator, posted), 600)
            seconds = time.perf_counter() - started
    finally:
        emulator.stop()
        db.close()
        embedded_server(tmp / "graph").stop()
    return questions / seconds


def _mention(emulator: Any, user: str, channel: str, text: str) -> tuple[Any, Any]:
    message, _ = emulator.post_message(
        user, channel, f"<@{emulator.bot_user_id}> {text}", deliver=False
    )
    return message, emulator.events_for_message(channel, message)


def _answered(emulator: Any, channel: str, message: dict[str, Any]) -> bool:
    return any(m.get("blocks") for m in emulator.bot_replies(channel, message["ts"]))


def _all_answered(emulator: Any, posted: list[tuple[str, dict[str, Any]]]) -> Callable[[], bool]:
    """A wait_for predicate: every posted question answered, each found answered once.

    The emulator checks it on every state change while holding the lock its Web API needs;
    re-checking every answered question each time grew with the square of the questions
    (1.4 s of an 11 s two-process run), time the bots' Slack calls spent waiting on the bench.
    """
    waiting = list(reversed(posted))

    def check() -> bool:
        while waiting and _answered(emulator, *waiting[-1]):
            waiting.pop()
        return not waiting

    return check


def _markdown(result: dict[str, Any]) -> str:
    lines = ["| backend | similar() | examples | p50 ms | p95 ms |", "|---|---|---:|---:|---:|"]
    for row in result["retrieval"]:
        lines.append(
            f"| {row['backend']} | {row['mode']} | {row['examples']:,} | {row['p50_ms']:.2f} "
            f"| {row['p95_ms']:.2f} |"
        )
    lines += ["", "| backend | record() turns/s (one transaction each) | teach() per s |",
              "|---|---:|---:|"]  # fmt: skip
    for name, writes in result["writes"].items():
        lines.append(f"| {name} | {writes['record_per_s']:,.0f} | {writes['teach_per_s']:,.0f} |")
    if "mb_per_10k_turns" in result:
        lines += ["", f"SQLite file size per 10k turns: {result['mb_per_10k_turns']:.1f} MB"]
    if "instances" in result:
        i = result["instances"]
        lines += [
            "",
            f"| bot processes on one PostgreSQL ({i['questions']} questions, "
            f"{i['workers_per_process']} workers each, {i['llm_s']} s LLM) | answers/s |",
            "|---|---:|",
            f"| one | {i['one_per_s']:.2f} |",
            f"| two | {i['two_per_s']:.2f} |",
            f"| two / one | {i['ratio']:.2f}× |",
        ]
    return "\n".join(lines)


def main(argv: list[str]) -> None:
    quick = "--quick" in argv
    backends: tuple[str, ...] = ("sqlite", "postgresql")
    if "--backends" in argv:
        backends = tuple(argv[argv.index("--backends") + 1].split(","))
    print(_markdown(run(quick=quick, backends=backends, instances="--no-instances" not in argv)))


if __name__ == "__main__":
    main(sys.argv[1:])
