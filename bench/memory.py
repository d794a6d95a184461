"""Memory benchmark: example retrieval latency, teach/record throughput, database size."""

from __future__ import annotations

import hashlib
import random
import statistics
import sys
import tempfile
import time
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


def _retrieval(
    dirpath: Path, sizes: list[int], n_queries: int, semantic: bool
) -> list[dict[str, Any]]:
    rng = random.Random(7)
    results = []
    path = dirpath / f"retrieval-{'sem' if semantic else 'lex'}.sqlite3"
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


def _throughput(dirpath: Path, n: int) -> dict[str, float]:
    rng = random.Random(11)
    with open_memory(dirpath / "throughput.sqlite3") as mem:
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


def run(quick: bool = False) -> dict[str, Any]:
    """Run the memory benchmark; `quick` keeps it to a few seconds."""
    lexical_sizes = [1_000, 10_000] if quick else [1_000, 10_000, 100_000]
    semantic_sizes = [1_000] if quick else [1_000, 10_000, 100_000]
    n_queries = 50 if quick else 200
    with tempfile.TemporaryDirectory() as tmp:
        dirpath = Path(tmp)
        retrieval = _retrieval(dirpath, lexical_sizes, n_queries, semantic=False)
        retrieval += _retrieval(
            dirpath, semantic_sizes, n_queries // 2 if not quick else 20, semantic=True
        )
        throughput = _throughput(dirpath, 300 if quick else 2_000)
        size_mb = _size_per_10k_turns(dirpath)
    return {"retrieval": retrieval, **throughput, "mb_per_10k_turns": size_mb}


def _markdown(result: dict[str, Any]) -> str:
    lines = ["| similar() | examples | p50 ms | p95 ms |", "|---|---:|---:|---:|"]
    for row in result["retrieval"]:
        lines.append(
            f"| {row['mode']} | {row['examples']:,} | {row['p50_ms']:.2f} | {row['p95_ms']:.2f} |"
        )
    lines += [
        "",
        "| throughput / size | value |",
        "|---|---:|",
        f"| record() turns/s (one transaction each) | {result['record_per_s']:,.0f} |",
        f"| teach() per s | {result['teach_per_s']:,.0f} |",
        f"| DB size per 10k turns | {result['mb_per_10k_turns']:.1f} MB |",
    ]
    return "\n".join(lines)


def main(argv: list[str]) -> None:
    quick = "--quick" in argv
    print(_markdown(run(quick=quick)))


if __name__ == "__main__":
    main(sys.argv[1:])
