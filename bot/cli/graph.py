"""Graph commands: demo-data, schema, query, doctor."""

from __future__ import annotations

import json
import logging
import platform
import sqlite3
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Annotated, Any

import typer
from rich.console import Console
from rich.progress import BarColumn, Progress, TextColumn, TimeElapsedColumn
from rich.table import Table

from graph_agent.graphdb import GraphDB, GraphError, parse_graph_url, schema_text
from graph_agent.graphdb.protocol import persist

log = logging.getLogger(__name__)


class _Output:
    """stdout as a rich Console, looked up per call so test runners that swap stdout see it."""

    def print(self, *objects: object, **kwargs: Any) -> None:
        Console().print(*objects, **kwargs)


console = _Output()


@contextmanager
def _graph(ctx: typer.Context) -> Iterator[GraphDB]:
    from bot.cli.runtime import settings
    from bot.wiring import build_db

    db = build_db(settings(ctx))
    try:
        yield db
    finally:
        db.close()


def _cell(value: Any) -> str:
    if isinstance(value, dict | list):
        return json.dumps(value, ensure_ascii=False, default=str)
    return "" if value is None else str(value)


def _load_public_dataset(ctx: typer.Context, name: str, reset: bool) -> None:
    """`demo-data --dataset NAME` for the vendored public graphs (Northwind, air routes)."""
    from graph_agent.datasets import get_dataset, is_loaded, load_dataset

    try:
        dataset = get_dataset(name)
    except ValueError as exc:
        raise typer.BadParameter(f"{exc} (or demo)", param_hint="--dataset") from None
    with _graph(ctx) as db:
        if reset:
            db.run_write("MATCH (n) DETACH DELETE n")
        elif is_loaded(db, name):
            nodes, rels = db.counts()
            console.print(
                f"The {name} graph is already loaded ({nodes:,} nodes, {rels:,} relationships) "
                f"in {db.url}. Use --reset to load it again."
            )
            return
        elif db.counts()[0]:
            # Never mix two graphs in one: the schema the LLM sees would describe both.
            console.print(
                f"The graph in {db.url} already holds other data. Load {name} into a graph of "
                f"its own (GRAPH_NAME={name} cypherbot demo-data --dataset {name}), or use "
                "--reset to replace what is there."
            )
            raise typer.Exit(1)
        columns = (
            TextColumn(f"Loading the {dataset.title}"),
            BarColumn(),
            TextColumn("{task.percentage:>3.0f}%"),
            TimeElapsedColumn(),
        )
        with Progress(*columns, console=Console(stderr=True), transient=True) as bar:
            task = bar.add_task("load", total=None)
            stats = load_dataset(
                db,
                name,
                progress=lambda done, total: bar.update(task, completed=done, total=total),
            )
        persist(db)
        console.print(
            f"Loaded {stats.nodes:,} nodes and {stats.relationships:,} relationships "
            f"in {stats.seconds:.1f}s into {db.url} ({dataset.title}, from {dataset.source})."
        )


def demo_data(
    ctx: typer.Context,
    scale: Annotated[int, typer.Option(help="About this many nodes (300 to 1,000,000+).")] = 300,
    seed: Annotated[int, typer.Option(help="Same seed, same graph.")] = 7,
    reset: Annotated[bool, typer.Option(help="Delete everything in the graph first.")] = False,
    dataset: Annotated[
        str,
        typer.Option(
            help="demo (generated; --scale/--seed apply), or a public graph: northwind, "
            "airports, healthcare, network."
        ),
    ] = "demo",
) -> None:
    """Load the demo graph, or a public example graph with --dataset (skipped when already there)."""
    if dataset != "demo":
        _load_public_dataset(ctx, dataset, reset)
        return
    from graph_agent.demo import is_loaded, load_demo

    with _graph(ctx) as db:
        if reset:
            db.run_write("MATCH (n) DETACH DELETE n")
        elif is_loaded(db):
            nodes, rels = db.counts()
            console.print(
                f"The demo graph is already loaded ({nodes:,} nodes, {rels:,} relationships) "
                f"in {db.url}. Use --reset to load it again."
            )
            _seed_examples(ctx, db)
            return
        columns = (
            TextColumn("Loading the demo graph"),
            BarColumn(),
            TextColumn("{task.percentage:>3.0f}%"),
            TimeElapsedColumn(),
        )
        with Progress(*columns, console=Console(stderr=True), transient=True) as bar:
            task = bar.add_task("load", total=None)
            stats = load_demo(
                db,
                scale=scale,
                seed=seed,
                progress=lambda done, total: bar.update(task, completed=done, total=total),
            )
        persist(db)
        console.print(
            f"Loaded {stats.nodes:,} nodes and {stats.relationships:,} relationships "
            f"in {stats.seconds:.1f}s into {db.url}."
        )
        _seed_examples(ctx, db)


def _seed_examples(ctx: typer.Context, db: GraphDB) -> None:
    """The demo's verified questions, taught to the memory (once): they are answered without
    an LLM, like in the playground."""
    from bot.cli.runtime import settings
    from graph_agent.demo import seed_examples_path
    from memory import open_memory

    def validate(cypher: str) -> str | None:
        verdict = db.validate(cypher)
        return None if verdict.ok and verdict.read_only is not False else verdict.error or "write"

    with open_memory(settings(ctx).memory_location) as mem:
        report = mem.examples.import_file(seed_examples_path(), validate)
    if report.imported:
        console.print(
            f"Taught {len(report.imported)} verified example questions "
            "(`cypherbot examples list`); they are answered without an LLM."
        )


def schema(
    ctx: typer.Context,
    sample: Annotated[int | None, typer.Option(help="Nodes sampled per label.")] = None,
) -> None:
    """Print the schema text the LLM sees."""
    from bot.cli.runtime import settings

    s = settings(ctx)
    with _graph(ctx) as db:
        graph_schema = db.schema(
            include=s.schema_include or None,
            exclude=s.schema_exclude or None,
            sample=s.schema_sample if sample is None else sample,
        )
        if not graph_schema.labels:
            console.print("The graph is empty. Load the demo with `cypherbot demo-data`.")
            return
        console.print(schema_text(graph_schema), markup=False, highlight=False)


def query(
    ctx: typer.Context,
    cypher: Annotated[
        str, typer.Argument(help='A read-only statement, e.g. "MATCH (n) RETURN n LIMIT 5".')
    ],
    max_rows: Annotated[int, typer.Option(help="Rows to show.")] = 50,
    timeout: Annotated[
        float | None, typer.Option(help="Seconds (default QUERY_TIMEOUT_S).")
    ] = None,
) -> None:
    """Run a read-only query and print the rows as a table."""
    from bot.cli.runtime import settings

    s = settings(ctx)
    with _graph(ctx) as db:
        result = db.run_read(
            cypher, timeout_s=s.query_timeout_s if timeout is None else timeout, max_rows=max_rows
        )
    table = Table(*result.columns, show_lines=False)
    for row in result.rows:
        table.add_row(*(_cell(v) for v in row))
    console.print(table)
    more = f" (first {max_rows}; more were returned)" if result.truncated else ""
    console.print(f"{len(result.rows)} rows{more} in {result.elapsed_ms:.1f} ms")


def doctor(ctx: typer.Context) -> None:
    """Check settings, the data dir, the graph engine and the LLM settings; say what to fix."""
    from bot.cli.runtime import settings

    s = settings(ctx)
    table = Table("check", "status", "detail")
    failed = False

    def report(check: str, ok: bool | None, detail: str) -> None:
        nonlocal failed
        failed = failed or ok is False
        mark = (
            "[green]ok[/green]"
            if ok
            else "[yellow]warn[/yellow]"
            if ok is None
            else "[red]fail[/red]"
        )
        table.add_row(check, mark, detail)

    report("settings", True, f"GRAPH_URL={parse_safe(s.graph_url)}, DATA_DIR={s.data_dir}")
    try:
        s.data_dir.mkdir(parents=True, exist_ok=True)
        with tempfile.NamedTemporaryFile(dir=s.data_dir):
            pass
        report("data dir", True, f"{s.data_dir.resolve()} is writable")
    except OSError as exc:
        report("data dir", False, f"{s.data_dir} is not writable ({exc}); set DATA_DIR")
    try:
        with _graph(ctx) as db:
            report("graph engine", True, f"{db.ping()} at {db.url}")
            check_write_access = getattr(db, "write_access", None)
            if check_write_access is not None:
                can_write, detail = check_write_access()
                report(
                    "read-only user",
                    None if can_write is not False else True,
                    detail
                    if can_write is False
                    else f"{detail}; use a user with the `reader` role (see the README, Neo4j)",
                )
            nodes, rels = db.counts()
            if nodes:
                report("graph data", True, f"{nodes:,} nodes, {rels:,} relationships")
            else:
                report("graph data", None, "the graph is empty: run `cypherbot demo-data`")
    except GraphError as exc:
        report("graph engine", False, str(exc))
    if s.llm_configured:
        report("LLM", True, f"model {s.llm_model} at {s.openai_base_url or 'OpenAI'}")
    else:
        report("LLM", None, "not configured: set OPENAI_API_KEY, or OPENAI_BASE_URL and LLM_MODEL")
    from memory import MemoryStoreError, open_memory

    try:
        with open_memory(s.memory_location) as mem:
            mem.ping()
            backend = "PostgreSQL" if mem.dialect == "postgresql" else "SQLite"
            report("memory", True, f"{backend} {mem.location}, schema {mem.schema_version()}")
    except (MemoryStoreError, OSError, sqlite3.Error) as exc:
        report("memory", False, str(exc))
    report("versions", True, _versions())
    console.print(table)
    if failed:
        raise typer.Exit(1)


def _versions() -> str:
    from importlib.metadata import PackageNotFoundError, version

    found = []
    for package in (
        "cypherbot",
        "langgraph",
        "langchain-openai",
        "slack-bolt",
        "neo4j",
        "falkordb",
    ):
        try:
            found.append(f"{package} {version(package)}")
        except PackageNotFoundError:
            found.append(f"{package} missing")
    return f"Python {platform.python_version()}; " + ", ".join(found)


def parse_safe(url: str) -> str:
    """GRAPH_URL as it can be shown (no password), or a note that it does not parse."""
    try:
        return parse_graph_url(url).url
    except GraphError:
        return "(invalid, see below)"


def register(app: typer.Typer) -> None:
    """Attach the graph commands to `app`."""
    app.command("demo-data")(demo_data)
    app.command("schema")(schema)
    app.command("query")(query)
    app.command("doctor")(doctor)
