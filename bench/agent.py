"""Agent benchmark: LLM calls per question by route, prompt size with/without schema pruning,
non-LLM time per question, and what RETRY_CANDIDATES adds to a failed first statement
(scripted instant model, embedded demo graph)."""

from __future__ import annotations

import json
import random
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from graph_agent import prompts
from graph_agent.agent import Agent
from graph_agent.config import AgentConfig
from graph_agent.examples import InMemoryExampleStore
from graph_agent.graphdb import GraphDB, connect
from graph_agent.graphdb.protocol import GraphSchema, LabelInfo, PropertyInfo, RelPattern
from graph_agent.graphdb.schema import schema_text
from graph_agent.llm import LLMs
from graph_agent.pruning import relevant_labels
from memory.types import Turn
from rig.scripted_llm import (
    ScriptedChatModel,
    cypher_reply,
    evaluation_reply,
    guard_reply,
)

TEAM_SIZES = (
    "MATCH (p:Person)-[:MEMBER_OF]->(t:Team) "
    "RETURN t.name AS team, count(p) AS people ORDER BY people DESC LIMIT 3"
)
OK = evaluation_reply(answer="ok")
HISTORY = [
    Turn(
        question="Which teams own the most services?",
        standalone_question="Which teams own the most services?",
        cypher="MATCH (t:Team)-[:OWNS]->(s:Service) RETURN t.name AS team, count(s) AS n",
        answer="Checkout owns 6.",
    )
]


def _happy(cypher: str, standalone: str = "") -> list[str]:
    """Guard, generate, evaluate; a follow-up's guard reply carries its standalone rewrite (one
    that still leans on the history, "those", costs a repair call)."""
    return [guard_reply(standalone=standalone), cypher_reply(cypher), OK]


# (route, question, scripted replies, history, llm configured, example to seed)
Case = tuple[str, str, list[str], list[Turn], bool, tuple[str, str] | None]
CASES: list[Case] = [
    ("happy", "Which teams have the most people?", _happy(TEAM_SIZES), [], True, None),
    (
        "happy",
        "How many services are in production?",
        _happy("MATCH (s:Service {lifecycle: 'production'}) RETURN count(s) AS services"),
        [],
        True,
        None,
    ),
    (
        "happy",
        "Which services depend on the most others?",
        _happy(
            "MATCH (s:Service)-[:DEPENDS_ON]->(d:Service) RETURN s.name AS service, "
            "count(d) AS deps ORDER BY deps DESC LIMIT 5"
        ),
        [],
        True,
        None,
    ),
    (
        "happy",
        "Which teams use Postgres?",
        _happy(
            "MATCH (t:Team)-[:OWNS]->(:Service)-[:USES]->(:Technology {name: 'PostgreSQL'}) "
            "RETURN DISTINCT t.name AS team"
        ),
        [],
        True,
        None,
    ),
    (
        "happy",
        "How many SEV1 incidents are still open?",
        _happy(
            "MATCH (i:Incident {severity: 'SEV1', status: 'open'}) RETURN count(i) AS incidents"
        ),
        [],
        True,
        None,
    ),
    (
        "happy",
        "Who works in Berlin?",
        _happy("MATCH (p:Person {location: 'Berlin'}) RETURN p.name AS person ORDER BY person"),
        [],
        True,
        None,
    ),
    (
        "happy",
        "List the public repositories with the most stars",
        _happy(
            "MATCH (r:Repository {visibility: 'public'}) WHERE r.stars IS NOT NULL "
            "RETURN r.name AS repo, r.stars AS stars ORDER BY stars DESC LIMIT 5"
        ),
        [],
        True,
        None,
    ),
    (
        "happy",
        "Which projects are P0?",
        _happy("MATCH (p:Project {priority: 'P0'}) RETURN p.name AS project"),
        [],
        True,
        None,
    ),
    (
        "follow_up",
        "and which of those are in Platform?",
        _happy(
            "MATCH (t:Team {department: 'Platform'})-[:OWNS]->(s:Service) "
            "RETURN t.name AS team, count(s) AS n ORDER BY n DESC",
            standalone="Which teams in the Platform department own the most services?",
        ),
        HISTORY,
        True,
        None,
    ),
    (
        "follow_up",
        "who is on that team?",
        _happy(
            "MATCH (p:Person)-[:MEMBER_OF]->(:Team {name: 'Checkout'}) RETURN p.name AS p",
            standalone="Who is on the Checkout team?",
        ),
        HISTORY,
        True,
        None,
    ),
    ("out_of_scope", "What's the weather in Paris?", [guard_reply("out_of_scope")], [], True, None),
    ("out_of_scope", "Write me a poem", [guard_reply("out_of_scope")], [], True, None),
    (
        "clarify",
        "tell me about it",
        [guard_reply("needs_clarification", clarification="About what?")],
        [],
        True,
        None,
    ),
    (
        "syntax_fix",
        "How many people per team?",
        [guard_reply(), cypher_reply("MATCH (p:Person RETURN p"), cypher_reply(TEAM_SIZES), OK],
        [],
        True,
        None,
    ),
    (
        "direction_fix",
        "How many people in each team?",
        [
            guard_reply(),
            cypher_reply("MATCH (t:Team)-[:MEMBER_OF]->(p:Person) RETURN t.name, count(p)"),
            OK,
        ],
        [],
        True,
        None,
    ),
    (
        "empty_rows_fix",
        "Which teams use postgres databases?",
        [
            guard_reply(),
            cypher_reply("MATCH (x:Technology {name: 'postgres'}) RETURN x.name AS tech"),
            evaluation_reply(False, feedback="The technology is named 'PostgreSQL'."),
            cypher_reply("MATCH (x:Technology {name: 'PostgreSQL'}) RETURN x.name AS tech"),
            OK,
        ],
        [],
        True,
        None,
    ),
    (
        "policy_fix",
        "Remove the old people",
        [
            guard_reply(),
            cypher_reply("MATCH (p:Person) DETACH DELETE p"),
            cypher_reply("MATCH (p:Person) RETURN count(p) AS people"),
            OK,
        ],
        [],
        True,
        None,
    ),
    (
        "exhausted",
        "Who is everyone?",
        # generate, correct, its re-ask (the correction repeated the failed statement), correct
        [guard_reply()] + [cypher_reply("MATCH (p:Person RETURN p")] * 4,
        [],
        True,
        None,
    ),
    ("no_data", "Which engineer won the most awards?", [guard_reply(), "NO_DATA: awards"], [], True, None),
    (
        "reuse",
        "How many teams are there?",
        [OK],
        [],
        True,
        ("How many teams are there?", "MATCH (t:Team) RETURN count(t) AS teams"),
    ),
    (
        "reuse_offline",
        "How many teams are there?",
        [],
        [],
        False,
        ("How many teams are there?", "MATCH (t:Team) RETURN count(t) AS teams"),
    ),
]  # fmt: skip


def _percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


def bench_routes(db: GraphDB, repeats: int) -> dict[str, Any]:
    """Each case `repeats` times: LLM calls and the time not spent in the (instant) LLM."""
    rows: list[dict[str, Any]] = []
    non_llm_ms: list[float] = []
    for route, question, replies, history, configured, example in CASES:
        calls = outcome = None
        for _ in range(repeats):
            store = InMemoryExampleStore()
            if example:
                store.add(example[0], example[1], source="admin")
            model = ScriptedChatModel(replies=list(replies))
            llms = LLMs(cypher=model, fast=model) if configured else None
            agent = Agent(db, llms, store, AgentConfig())
            _ = agent.schema  # the schema is read once per process, not per question
            started = time.perf_counter()
            result = agent.run(question, history=history)
            wall = (time.perf_counter() - started) * 1000
            non_llm_ms.append(wall - result.timings_ms.get("llm", 0.0))
            calls, outcome = result.llm_calls, result.outcome
            if result.error_kind == "llm_error":  # the scripted replies ran out
                raise RuntimeError(f"the script of route {route!r} no longer matches the flow")
        rows.append({"route": route, "question": question, "llm_calls": calls, "outcome": outcome})
    unanswered = [
        r["question"]
        for r in rows
        if r["route"] in ("happy", "follow_up") and r["outcome"] != "answered"
    ]
    if unanswered:  # the script no longer matches the flow: its call counts would mislead
        raise RuntimeError(f"happy-path questions not answered: {unanswered}")
    return {
        "questions": rows,
        "non_llm_ms_p50": statistics.median(non_llm_ms),
        "non_llm_ms_p95": _percentile(non_llm_ms, 0.95),
        "happy_path_max_calls": max(
            r["llm_calls"] for r in rows if r["route"] in ("happy", "follow_up")
        ),
    }


POSTGRES_TEAMS = (
    "MATCH (t:Team)-[:OWNS]->(:Service)-[:USES]->(:Technology {{name: '{}'}}) "
    "RETURN DISTINCT t.name AS team ORDER BY team"
)
RETRY_CASES: list[tuple[str, str, list[str], tuple[str, str]]] = [
    # (what failed, question, replies up to the correction, what the two fresh ones write:
    # other statements with the same rows, so that the choose step runs each)
    (
        "the engine",
        "How many people per team?",
        [guard_reply(), cypher_reply("MATCH (p:Person RETURN p"), cypher_reply(TEAM_SIZES)],
        (
            TEAM_SIZES.replace("(t:Team)", "(x:Team)").replace("t.name", "x.name"),
            TEAM_SIZES.replace("count(p)", "count(*)"),
        ),
    ),
    (
        "the evaluator",
        "Which teams use postgres databases?",
        [
            guard_reply(),
            cypher_reply(POSTGRES_TEAMS.format("postgres")),
            evaluation_reply(False, feedback="The technology is named 'PostgreSQL'."),
            cypher_reply(POSTGRES_TEAMS.format("PostgreSQL")),
        ],
        (
            POSTGRES_TEAMS.format("PostgreSQL")
            .replace("(t:Team)", "(x:Team)")
            .replace("t.name", "x.name"),
            POSTGRES_TEAMS.format("PostgreSQL").replace("ORDER BY team", "ORDER BY t.name"),
        ),
    ),
]


def bench_retry(db: GraphDB, repeats: int) -> list[dict[str, Any]]:
    """A failed first statement with RETRY_CANDIDATES 1 and 3: LLM calls, and the time not
    spent in the (instant) LLM, which with 3 includes checking and running the two fresh
    statements. Compare the two columns of one run, not runs on different days."""
    rows: list[dict[str, Any]] = []
    for failed, question, replies, fresh in RETRY_CASES:
        row: dict[str, Any] = {"failed": failed, "question": question}
        for retry in (1, 3):
            times: list[float] = []
            for _ in range(repeats):
                model = ScriptedChatModel(
                    replies=[*replies, OK], sampled=[cypher_reply(s) for s in fresh[: retry - 1]]
                )
                config = AgentConfig(retry_candidates=retry)
                agent = Agent(db, LLMs(cypher=model, fast=model), InMemoryExampleStore(), config)
                _ = agent.schema
                started = time.perf_counter()
                result = agent.run(question)
                wall = (time.perf_counter() - started) * 1000
                times.append(wall - result.timings_ms.get("llm", 0.0))
                if result.outcome != "answered":
                    raise RuntimeError(f"the retry script of {question!r} no longer matches")
            row[f"calls_{retry}"] = result.llm_calls
            row[f"non_llm_ms_{retry}"] = statistics.median(times)
        rows.append(row)
    return rows


def synthetic_schema(n_labels: int = 60, seed: int = 3) -> GraphSchema:
    """A generated schema of `n_labels` labels: a business-ish vocabulary, 3-8 properties each."""
    rng = random.Random(seed)
    vocabulary = (
        "Customer Order Invoice Product Supplier Warehouse Shipment Employee Department Office "
        "Contract Payment Refund Ticket Campaign Lead Account Subscription Plan Feature Release "
        "Bug Sprint Document Meeting Vendor License Device Sensor Reading Alert Region Country "
        "City Store Category Brand Review Coupon Cart Session Visit Page Article Author Tag "
        "Comment Course Lesson Student Teacher Exam Grade Room Building Asset Budget Forecast "
        "Risk Audit Policy Control"
    )
    nouns = vocabulary.split()[:n_labels]
    props = "name title status created_at amount code priority score region owner email kind"
    labels = []
    for noun in nouns:
        chosen = rng.sample(props.split(), rng.randint(3, 8))
        labels.append(
            LabelInfo(
                noun,
                rng.randint(10, 5000),
                tuple(
                    PropertyInfo(
                        p,
                        ("STRING",),
                        ("open", "closed", "pending") if p == "status" else (),
                    )
                    for p in ["id", *chosen]
                ),
            )
        )
    verb_text = "HAS BELONGS_TO REFERS_TO CREATED_BY ASSIGNED_TO LOCATED_IN PART_OF LINKED_TO"
    verbs = verb_text.split()
    rels = []
    for i, noun in enumerate(nouns):
        for _ in range(2):
            other = nouns[(i + rng.randint(1, n_labels - 1)) % n_labels]
            rels.append(RelPattern(noun, rng.choice(verbs), other, rng.randint(1, 9999)))
    return GraphSchema(tuple(labels), tuple(rels))


PRUNING_QUESTIONS = [
    "Which customers placed the most orders last month?",
    "How many open tickets are assigned to each employee?",
    "Which suppliers ship products to the Berlin warehouse?",
    "What is the average grade of students per course?",
    "List invoices with refunds over 100",
]


def _token_counter() -> tuple[str, Callable[[str], int] | None]:
    try:
        import tiktoken

        encoding = tiktoken.get_encoding("cl100k_base")
        return "cl100k_base", lambda text: len(encoding.encode(text))
    except Exception:  # the encoding file needs a download; offline we count characters
        return "none offline", None


def bench_pruning(threshold: int = 25) -> dict[str, Any]:
    """GENERATE prompt size for a 60-label schema, whole vs pruned to the question."""
    schema = synthetic_schema()
    tokenizer, count = _token_counter()
    rows = []
    for question in PRUNING_QUESTIONS:
        sizes: dict[str, Any] = {"question": question}
        labels = relevant_labels(schema, question, limit=threshold)
        for kind, shown in (("full", None), ("pruned", labels)):
            text = "\n".join(
                str(m.content)
                for m in prompts.GENERATE.render(
                    dialect="Neo4j 5 Cypher",
                    row_limit="100",
                    schema=schema_text(schema, labels=shown),
                    examples="",
                    hints="",
                    paths="",
                    question=question,
                    previous="",
                )
            )
            sizes[f"{kind}_chars"] = len(text)
            sizes[f"{kind}_tokens"] = count(text) if count else None
        sizes["labels_kept"] = len(labels) if labels else len(schema.labels)
        rows.append(sizes)
    ratio = statistics.mean(r["pruned_chars"] / r["full_chars"] for r in rows)
    return {"tokenizer": tokenizer, "rows": rows, "mean_ratio_chars": ratio}


def run(quick: bool = False) -> dict[str, Any]:
    """Run the agent benchmark; `quick` repeats each question once instead of five times."""
    from graph_agent.demo import load_demo

    with tempfile.TemporaryDirectory() as tmp:
        db = connect("embedded", data_dir=Path(tmp), graph_name="bench")
        try:
            load_demo(db)
            routes = bench_routes(db, repeats=1 if quick else 5)
            retry = bench_retry(db, repeats=1 if quick else 5)
        finally:
            db.close()
            from graph_agent.graphdb.embedded import embedded_server

            embedded_server(Path(tmp)).stop()
    return {"routes": routes, "retry": retry, "pruning": bench_pruning()}


def _markdown(results: dict[str, Any]) -> str:
    routes, pruning = results["routes"], results["pruning"]
    out = ["## Agent: LLM calls per question (scripted instant model, demo graph)", ""]
    out += ["| route | question | LLM calls | outcome |", "|---|---|---:|---|"]
    for row in routes["questions"]:
        out.append(
            f"| {row['route']} | {row['question']} | {row['llm_calls']} | {row['outcome']} |"
        )
    out += [
        "",
        f"Non-LLM time per question: p50 {routes['non_llm_ms_p50']:.1f} ms, "
        f"p95 {routes['non_llm_ms_p95']:.1f} ms. "
        f"Happy path (with or without history): {routes['happy_path_max_calls']} LLM calls.",
        "",
        "## Agent: a failed first statement, RETRY_CANDIDATES 1 and 3",
        "",
        "| what failed | question | LLM calls, 1 | LLM calls, 3 | non-LLM ms, 1 | non-LLM ms, 3 "
        "| ratio |",
        "|---|---|---:|---:|---:|---:|---:|",
        *(
            f"| {r['failed']} | {r['question']} | {r['calls_1']} | {r['calls_3']} | "
            f"{r['non_llm_ms_1']:.1f} | {r['non_llm_ms_3']:.1f} | "
            f"{r['non_llm_ms_3'] / r['non_llm_ms_1']:.2f} |"
            for r in results["retry"]
        ),
        "",
        "## Agent: generate-prompt size, 60-label schema, pruning threshold 25",
        "",
        f"Tokenizer: {pruning['tokenizer']}.",
        "",
        "| question | labels kept | full chars | pruned chars | full tokens | pruned tokens |",
        "|---|---:|---:|---:|---:|---:|",
    ]
    for row in pruning["rows"]:
        out.append(
            f"| {row['question']} | {row['labels_kept']} | {row['full_chars']} | "
            f"{row['pruned_chars']} | {row['full_tokens'] or '-'} | {row['pruned_tokens'] or '-'} |"
        )
    out += ["", f"Mean pruned/full ratio (characters): {pruning['mean_ratio_chars']:.2f}"]
    return "\n".join(out)


def main(argv: list[str]) -> None:
    results = run(quick="--quick" in argv)
    if "--json" in argv:
        print(json.dumps(results, indent=2))
    else:
        print(_markdown(results))


if __name__ == "__main__":
    main(sys.argv[1:])
