"""`cypherbot eval QUESTIONS_FILE`: ask evaluation questions, score them against gold Cypher, report."""

from __future__ import annotations

import asyncio
import json
import logging
import sqlite3
import tempfile
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from dataclasses import replace
from enum import StrEnum
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer
from rich.console import Console
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    SpinnerColumn,
    TextColumn,
    TimeElapsedColumn,
    TimeRemainingColumn,
)
from rich.table import Table

from bot.cli.agent import Channel, channel_policy

if TYPE_CHECKING:  # the agent stack is imported when the command runs, not at CLI start
    from bot.settings import Settings
    from graph_agent.agent import Agent
    from graph_agent.evaluation import EvalItem, RunOptions
    from graph_agent.graphdb import GraphDB
    from graph_agent.llm import LLMs
    from memory import Memory

logger = logging.getLogger(__name__)
console = Console()
err_console = Console(stderr=True)


class ModeChoice(StrEnum):
    full = "full"
    single_shot = "single-shot"


class SplitChoice(StrEnum):
    all = "all"
    dev = "dev"
    test = "test"


class Switch(StrEnum):
    on = "on"
    off = "off"


def _pct(value: float | None) -> str:
    return "-" if value is None else f"{value:.0%}"


def _num(value: float | None, fmt: str = "{:.1f}") -> str:
    return "-" if value is None else fmt.format(value)


def _secs(ms: float | None) -> str:
    return "-" if ms is None else f"{ms / 1000:.2f} s"


def copy_database(source: Path, target: Path) -> None:
    """A consistent copy of a SQLite database (committed WAL content included), read-only on
    the source, through SQLite's online backup."""
    src = sqlite3.connect(f"file:{source}?mode=ro", uri=True)
    try:
        dst = sqlite3.connect(target)
        try:
            src.backup(dst)
        finally:
            dst.close()
    finally:
        src.close()


def memory_label(settings: Settings) -> str:
    """The memory database as it can be shown (a PostgreSQL URL without its password)."""
    from memory.postgres import masked

    return masked(settings.memory_url) if settings.memory_url else str(settings.memory_path)


@contextmanager
def eval_memory(settings: Settings, use: bool) -> Iterator[Memory]:
    """The production memory stack on a temporary copy of the memory database, so examples
    are retrieved exactly as the bot retrieves them (SqliteExampleStore: BM25 or embeddings,
    near-duplicate filter, normalisation) and the evaluation never writes to memory.

    With `use` off, or without a memory database yet, the copy starts empty.
    """
    from bot.wiring import build_embedder
    from memory import open_memory

    with tempfile.TemporaryDirectory(prefix="cypherbot-eval-") as tmp:
        copy = Path(tmp) / settings.memory_path.name
        if use and settings.memory_url:
            # PostgreSQL: the rows go into a temporary SQLite file, never written back.
            with open_memory(settings.memory_url) as shared, open_memory(copy) as local:
                shared.copy_to(local)
        elif use and settings.memory_path.exists():
            copy_database(settings.memory_path, copy)
        memory = open_memory(
            copy,
            embedder=build_embedder(settings) if use else None,
            embedder_name=settings.embeddings_model or "default",
            include_candidates=settings.use_candidates,
        )
        try:
            yield memory
        finally:
            memory.close()


def prepare_examples(
    settings: Settings, memory: Memory, db: GraphDB, fingerprint: str, use: bool
) -> str:
    """Say which examples the run uses; add the demo's seed examples to the copy when the
    memory has no active examples and the graph is the demo (as the playground does)."""
    if not use:
        return "none (--examples off)"
    active = len(memory.examples.list(status="active", limit=1_000_000))
    if active:
        return f"{active} active examples from a copy of {memory_label(settings)}"
    from graph_agent.demo import is_loaded

    if not is_loaded(db):
        return "none (the memory database has no active examples)"

    def validate(cypher: str) -> str | None:
        verdict = db.validate(cypher)
        if verdict.ok and verdict.read_only is not False:
            return None
        return verdict.error or "not a read-only query"

    from graph_agent.demo import seed_examples_path

    report = memory.examples.import_file(
        seed_examples_path(), validate, schema_fingerprint=fingerprint
    )
    for invalid in report.invalid:
        logger.warning("seed example %d not imported: %s", invalid.index, invalid.error)
    return f"{len(report.imported)} demo seed examples"


def _schema_examples(settings: Settings, memory: Memory, agent: Agent) -> str:
    """As the bot does at start-up (SCHEMA_EXAMPLES=auto): generate the day-one examples of
    this schema into the copy when it has none; say how many the run may use."""
    from bot.wiring import refresh_schema_examples

    refresh_schema_examples(settings, memory, agent)
    kept = [
        e for e in memory.examples.list(status="active", limit=1_000_000) if e.source == "schema"
    ]
    return f" + {len(kept)} generated from the schema" if kept else ""


def _summary_tables(summary: dict[str, Any]) -> list[Table]:
    runs = Table(title="Accuracy by run", title_justify="left")
    names = (
        "run",
        "items",
        "strict",
        "relaxed",
        "answerable",
        "refusals",
        "ungrounded",
        "unconfirmed",
    )
    for name in (*names, "answer names"):
        runs.add_column(name, justify="left" if name == "run" else "right")
    for name in ("LLM calls", "tokens in/out", "cached in", "p50", "p95", "timeouts", "errors"):
        runs.add_column(name, justify="right")
    for run, s in summary["runs"].items():
        runs.add_row(
            run,
            str(s["items"]),
            _pct(s["strict"]),
            _pct(s["relaxed"]),
            f"{_pct(s['answerable_strict'])} / {_pct(s['answerable_relaxed'])}",
            _pct(s["refusal_strict"]),
            str(s.get("ungrounded", 0)),
            str(s.get("unconfirmed", 0)),
            _pct(s["answer_mentions"]),
            _num(s["mean_llm_calls"], "{:.2f}"),
            f"{_num(s['mean_prompt_tokens'], '{:.0f}')} / "
            f"{_num(s['mean_completion_tokens'], '{:.0f}')}",
            _pct(s.get("cached_prompt_share")),
            _secs(s["latency_p50_ms"]),
            _secs(s["latency_p95_ms"]),
            str(s["timeouts"]),
            str(s["errors"] + s["gold_errors"]),
        )
    runs.caption = (
        "strict: same rows as the gold query; relaxed: every gold value present; "
        "answerable: strict / relaxed on questions with gold rows; refusals: out-of-scope "
        "questions declined; ungrounded: answers that named a number or name the rows do not "
        "hold (replaced by the rows); unconfirmed: answers giving rows (or none) the evaluate "
        "step doubted on every attempt (with a caveat); answer names: share of gold values named in the answer text; "
        "LLM calls and tokens are means per question; cached in: share of prompt tokens the "
        "server read from its prompt cache, from the second question on."
    )
    tags = Table(title="Strict / relaxed accuracy by tag", title_justify="left")
    tags.add_column("tag")
    run_names = list(summary["tags"])
    for run in run_names:
        tags.add_column(run, justify="right")
    all_tags = sorted({tag for per in summary["tags"].values() for tag in per})
    for tag in all_tags:
        cells = []
        for run in run_names:
            t = summary["tags"][run].get(tag)
            cells.append(
                "-" if t is None else f"{_pct(t['strict'])} / {_pct(t['relaxed'])} ({t['items']})"
            )
        tags.add_row(tag, *cells)
    return [runs, tags, *_spread_tables(summary), *_rule_tables(summary)]


def _spread_tables(summary: dict[str, Any]) -> list[Table]:
    spread = summary.get("spread") or {}
    if not spread:
        return []
    table = Table(title="Run-to-run spread (--repeat)", title_justify="left")
    for name in ("run", "repeats", "items", "strict per repeat", "lowest–highest"):
        table.add_column(name, justify="left" if name == "run" else "right")
    for name in ("right every time", "flipped", "never right"):
        table.add_column(name, justify="right")
    for run, s in spread.items():
        table.add_row(
            run,
            str(s["repeats"]),
            str(s["items"]),
            " / ".join(str(v) for v in s["strict"].values()),
            f"{s['min']}–{s['max']}",
            str(s["always"]),
            str(s["sometimes"]),
            str(s["never"]),
        )
    table.caption = (
        "The same items asked again with the same code and settings; flipped: items right in "
        "some repeats only. A change that moves fewer items than flip here is within the noise."
    )
    return [table]


def _rule_tables(summary: dict[str, Any]) -> list[Table]:
    tables = []
    for run, stats in (summary.get("rules") or {}).items():
        if not stats:
            continue
        table = Table(title=f"Repair rules that fired ({run})", title_justify="left")
        for name in ("rule", "fired on", "ended strict-correct", "rewrite answered"):
            table.add_column(name, justify="left" if name == "rule" else "right")
        for name, row in stats.items():
            table.add_row(name, str(row["fired"]), str(row["strict"]), str(row["rewrite_answered"]))
        table.caption = (
            "fired on: items where the rule fired at least once; rewrite answered: items where "
            "a statement the rule rewrote was the attempt that answered. Rules that never fired "
            "are not listed (graph_agent/repair/registry.py has them all)."
        )
        tables.append(table)
    return tables


def _all_records(out: Path) -> list[dict[str, Any]]:
    from graph_agent.evaluation import ResultsFile

    records: list[dict[str, Any]] = []
    for path in sorted(out.glob("results-*.jsonl")):
        records.extend(ResultsFile(path).load().values())
    return records


def _run(
    s: Settings,
    llms: LLMs,
    items: list[EvalItem],
    options: RunOptions,
    out_dir: Path,
    *,
    resume: bool,
) -> None:
    """Ask `items` once as the run `options` names, appending records to its results file."""
    from bot.wiring import open_runtime
    from graph_agent.evaluation import ResultsFile, evaluate

    results = ResultsFile(out_dir / f"results-{options.slug}.jsonl")
    done = results.load() if resume else {}
    if not resume:
        results.reset()
    wanted = {item.id for item in items}
    todo = [item for item in items if item.id not in done]

    with ExitStack() as stack:
        memory = stack.enter_context(eval_memory(s, options.examples))
        runtime = stack.enter_context(open_runtime(s, llms=llms, memory=memory))
        db, agent = runtime.db, runtime.agent
        source = prepare_examples(s, memory, db, agent.schema_fingerprint, options.examples)
        if options.examples:
            source += _schema_examples(s, memory, agent)
        err_console.print(
            f"Evaluating {len(todo)} of {len(items)} items on {db.url} · run "
            f"[bold]{options.key}[/bold] · examples: {source} · model {s.llm_model} · "
            f"deadline {options.timeout_s:.0f} s per question (LLM requests time out "
            f"after {s.llm_timeout_s:.0f} s each)"
            + (f" · {len(items) - len(todo)} already done" if done else "")
        )
        scored = {"strict": 0, "n": 0}
        with Progress(
            SpinnerColumn(),
            TextColumn("[progress.description]{task.description}"),
            BarColumn(),
            MofNCompleteColumn(),
            TextColumn("strict {task.fields[strict]}"),
            TimeElapsedColumn(),
            TextColumn("ETA"),
            TimeRemainingColumn(),
            console=err_console,
        ) as progress:
            task = progress.add_task(options.key, total=len(todo), strict="-")

            def record(rec: dict[str, Any]) -> None:
                results.append(rec)
                scored["n"] += 1
                scored["strict"] += bool(rec.get("strict"))
                progress.update(task, advance=1, strict=f"{scored['strict'] / scored['n']:.0%}")

            asyncio.run(
                evaluate(
                    agent,
                    items,
                    options,
                    done={k: v for k, v in done.items() if k in wanted},
                    on_record=record,
                )
            )


def register(app: typer.Typer) -> None:
    """Attach `eval` to `app`."""

    @app.command("eval")
    def eval_command(
        ctx: typer.Context,
        questions_file: Annotated[
            Path, typer.Argument(help="YAML or JSONL items: id, question, gold_cypher, …")
        ],
        mode: Annotated[
            ModeChoice,
            typer.Option(help="full: the product's loop; single-shot: one generation, as is."),
        ] = ModeChoice.full,
        examples: Annotated[
            Switch, typer.Option(help="Give the agent taught examples (memory, or demo seeds).")
        ] = Switch.on,
        timeout: Annotated[
            float,
            typer.Option(
                help="Seconds per question, LLM calls included: the question's deadline "
                "(replaces QUESTION_DEADLINE_S for the run)."
            ),
        ] = 120.0,
        concurrency: Annotated[
            int, typer.Option(min=1, help="Conversations asked at once (1 for local models).")
        ] = 1,
        out: Annotated[
            Path | None,
            typer.Option(help="Results directory [default: DATA_DIR/eval/<file name>]."),
        ] = None,
        resume: Annotated[
            bool, typer.Option("--resume", help="Skip items already in this run's results.")
        ] = False,
        limit: Annotated[
            int | None, typer.Option(min=1, help="Only the first N items (a smoke run).")
        ] = None,
        split: Annotated[
            SplitChoice,
            typer.Option(
                help="dev: items rules and prompts may be tuned on; test: items only run to "
                "report (accuracy claims); all: both (docs/eval.md)."
            ),
        ] = SplitChoice.all,
        channel: Channel = None,
        repeat: Annotated[
            int,
            typer.Option(
                min=1,
                help="Ask the items this many times, each a run of its own (`…/repeat-K`), and "
                "report how far the runs differ: a change smaller than that is noise.",
            ),
        ] = 1,
        without_rule: Annotated[
            list[str] | None,
            typer.Option(
                "--without-rule",
                help="Turn a repair rule off for this run (repeatable): an ablation. Names: "
                "graph_agent/repair/registry.py.",
            ),
        ] = None,
    ) -> None:
        """Score the bot on questions with gold Cypher: execution accuracy, cost, latency."""
        from bot.cli.runtime import settings
        from bot.wiring import build_llms
        from graph_agent.evaluation import (
            ChartUnavailableError,
            EvalFileError,
            RunOptions,
            load_items,
            select_split,
            summarize,
            write_chart,
        )
        from graph_agent.repair import RULES, unknown_rules

        s = settings(ctx)
        try:
            items = select_split(load_items(questions_file), split.value)
        except EvalFileError as exc:
            err_console.print(f"[red]Error:[/red] {exc}")
            raise typer.Exit(2) from None
        if limit is not None:
            items = items[:limit]
        disabled = frozenset(without_rule or ())
        if unknown := unknown_rules(disabled):
            err_console.print(
                f"[red]Error:[/red] no repair rule called {', '.join(unknown)}; the rules are: "
                + ", ".join(r.name for r in RULES)
            )
            raise typer.Exit(2)
        llms = build_llms(s)
        if llms is None:
            err_console.print(
                "[red]No LLM configured.[/red] Set OPENAI_API_KEY (OpenAI) or OPENAI_BASE_URL "
                "(a local OpenAI-compatible server) and LLM_MODEL."
            )
            raise typer.Exit(2)
        options = RunOptions(
            mode=mode.value,  # type: ignore[arg-type]  # the enum's values are the Modes
            examples=examples is Switch.on,
            timeout_s=timeout,
            concurrency=concurrency,
            disabled_rules=disabled,
            candidates=s.candidates_in_use,
            retry_candidates=s.retry_candidates,
            channel=channel,
            policy=channel_policy(ctx, channel),
        )
        out_dir = out or s.data_dir / "eval" / questions_file.stem
        if out is None and split is not SplitChoice.all:
            out_dir = out_dir / split.value  # a split's summary holds only that split's records
        for n in range(1, repeat + 1):
            # Each repeat on a fresh copy of memory and a fresh runtime: nothing one repeat
            # leaves behind can help the next.
            _run(s, llms, items, replace(options, repeat=n), out_dir, resume=resume)

        summary = summarize(_all_records(out_dir))
        summary["questions_file"] = str(questions_file)
        (out_dir / "summary.json").write_text(json.dumps(summary, indent=2, ensure_ascii=False))
        for table in _summary_tables(summary):
            console.print(table)
        try:
            chart = write_chart(summary, out_dir / "accuracy.png")
            console.print(f"Chart: {chart}")
        except ChartUnavailableError as exc:
            err_console.print(f"[yellow]No chart:[/yellow] {exc}")
        console.print(f"Results: {out_dir} · summary: {out_dir / 'summary.json'}")
