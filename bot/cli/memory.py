"""Memory commands: `memory purge|forget`, `examples list|show|add|retire|promote|import|export|bootstrap`, `stats`."""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.console import Console
from rich.table import Table

from memory import Example, ExampleSource, ExampleStatus, Memory, open_memory

log = logging.getLogger(__name__)


class _Output:
    """stdout as a rich Console, looked up per call so test runners that swap stdout see it."""

    def print(self, *objects: object, **kwargs: Any) -> None:
        Console().print(*objects, **kwargs)


console = _Output()
memory_app = typer.Typer(help="The bot's memory of conversations: retention and privacy.")
examples_app = typer.Typer(
    help="Few-shot examples: list, inspect, add, retire, import, export, bootstrap."
)
_SOURCES = ("seed", "thumbs_up", "self_healed", "admin", "schema")


@contextmanager
def _memory(ctx: typer.Context) -> Iterator[Memory]:
    from bot.cli.runtime import settings

    mem = open_memory(settings(ctx).memory_location)
    try:
        yield mem
    finally:
        mem.close()


@contextmanager
def _validator(ctx: typer.Context) -> Iterator[Callable[[str], str | None]]:
    """The current graph engine's validation, as `cypher -> error or None`."""
    from bot.cli.runtime import settings
    from bot.wiring import build_db

    db = build_db(settings(ctx))

    def validate(cypher: str) -> str | None:
        verdict = db.validate(cypher)
        if verdict.ok and verdict.read_only is not False:
            return None
        return verdict.error or "not a read-only query"

    try:
        yield validate
    finally:
        db.close()


# --- memory --------------------------------------------------------------------------------


@memory_app.command("purge")
def purge(
    ctx: typer.Context,
    days: Annotated[
        int | None, typer.Option(help="Delete turns older than this (default: RETENTION_DAYS).")
    ] = None,
) -> None:
    """Delete conversation turns older than the retention period, and expired event claims."""
    from bot.cli.runtime import settings

    keep = days if days is not None else settings(ctx).retention_days
    with _memory(ctx) as mem:
        turns = mem.conversations.purge(keep)
        events = mem.events.purge_expired()
    console.print(f"Deleted {turns} turns older than {keep} days and {events} expired events.")


@memory_app.command("forget")
def forget(
    ctx: typer.Context,
    user: Annotated[str | None, typer.Option(help="Slack user id (U…) to forget.")] = None,
    thread: Annotated[
        str | None, typer.Option(help="Conversation key (team:channel:thread_ts) to forget.")
    ] = None,
) -> None:
    """Delete a user's turns and reactions, or one conversation (privacy requests)."""
    if (user is None) == (thread is None):
        console.print("[red]Give exactly one of --user or --thread.[/red]")
        raise typer.Exit(2)
    with _memory(ctx) as mem:
        count = mem.conversations.forget(user=user, conversation=thread)
    target = f"user {user}" if user else f"thread {thread}"
    console.print(f"Forgot {target}: {count} turns deleted.")


@memory_app.command("migrate")
def migrate(
    ctx: typer.Context,
    to: Annotated[
        str, typer.Option("--to", help="Target: a postgresql:// URL (or a new SQLite file).")
    ],
    source: Annotated[
        Path | None,
        typer.Option("--from", help="SQLite memory file to copy (default: DATA_DIR's)."),
    ] = None,
) -> None:
    """Copy a SQLite memory (examples with votes and provenance, conversations, feedback,
    event claims) into a new, empty PostgreSQL database, for several bot instances."""
    from bot.cli.runtime import settings
    from memory import MemoryStoreError
    from memory.postgres import is_postgres_url, masked

    path = source or settings(ctx).memory_path
    if not path.exists():
        console.print(
            f"[red]No memory database at {path}.[/red] Pass --from with the SQLite file to "
            "copy, or set DATA_DIR to the directory that holds cypherbot.sqlite3."
        )
        raise typer.Exit(2)
    shown = masked(to) if is_postgres_url(to) else to
    try:
        with open_memory(path) as old, open_memory(to) as new:
            copied = old.copy_to(new)
    except MemoryStoreError as exc:
        console.print(f"[red]{exc}[/red]")
        raise typer.Exit(1) from exc
    table = Table(title=f"Copied {path} → {shown}")
    table.add_column("table")
    table.add_column("rows", justify="right")
    for name, count in copied.items():
        table.add_row(name, f"{count:,}")
    console.print(table)
    if is_postgres_url(to):
        console.print(
            f"Next: set MEMORY_URL={shown} for every bot instance and restart them. "
            f"{path} is left as it was."
        )


# --- examples ------------------------------------------------------------------------------


def _examples_table(examples: list[Example]) -> Table:
    table = Table(show_lines=False)
    for column in ("id", "status", "source", "shape", "👍", "👎", "used", "question"):
        table.add_column(column, overflow="fold")
    for ex in examples:
        table.add_row(
            str(ex.id),
            ex.status,
            ex.source,
            ex.shape or "",
            str(ex.up_votes),
            str(ex.down_votes),
            str(ex.times_used),
            ex.question,
        )
    return table


@examples_app.command("list")
def list_examples(
    ctx: typer.Context,
    status: Annotated[
        str | None, typer.Option(help="active, candidate or retired (default: all).")
    ] = None,
    source: Annotated[
        str | None, typer.Option(help="seed, thumbs_up, self_healed, admin or schema.")
    ] = None,
    limit: Annotated[int, typer.Option(help="Newest first, at most this many.")] = 50,
) -> None:
    """List examples, newest first."""
    if status not in (None, "active", "candidate", "retired"):
        console.print(f"[red]Unknown status {status!r}[/red]: use active, candidate or retired.")
        raise typer.Exit(2)
    if source is not None and source not in _SOURCES:
        console.print(f"[red]Unknown source {source!r}[/red].")
        raise typer.Exit(2)
    status_filter: ExampleStatus | None = status  # type: ignore[assignment]
    source_filter: ExampleSource | None = source  # type: ignore[assignment]
    with _memory(ctx) as mem:
        found = mem.examples.list(status=status_filter, source=source_filter, limit=limit)
    if not found:
        console.print("No examples.")
        return
    console.print(_examples_table(found))


@examples_app.command("show")
def show(
    ctx: typer.Context, example_id: Annotated[int, typer.Argument(help="Example id.")]
) -> None:
    """Show one example with its Cypher."""
    with _memory(ctx) as mem:
        ex = mem.examples.get(example_id)
    if ex is None:
        console.print(f"[red]No example {example_id}.[/red]")
        raise typer.Exit(1)
    table = Table(show_header=False)
    table.add_column("field", style="bold")
    table.add_column("value", overflow="fold")
    fields: dict[str, Any] = {
        "id": ex.id,
        "question": ex.question,
        "status": ex.status + (f" ({ex.retired_reason})" if ex.retired_reason else ""),
        "source": ex.source + (f" ({ex.shape})" if ex.shape else ""),
        "votes": f"👍 {ex.up_votes}  👎 {ex.down_votes}",
        "taught by": ex.taught_by or "",
        "schema fingerprint": ex.schema_fingerprint or "(unknown)",
        "times used": ex.times_used,
        "created": ex.created_at.isoformat(timespec="seconds") if ex.created_at else "",
    }
    for name, value in fields.items():
        table.add_row(name, str(value))
    console.print(table)
    console.print(ex.cypher, markup=False, highlight=False)


@examples_app.command("add")
def add(
    ctx: typer.Context,
    question: Annotated[str, typer.Option(help="The (standalone) question.")],
    cypher: Annotated[str, typer.Option(help="The verified Cypher that answers it.")],
    skip_validation: Annotated[
        bool, typer.Option(help="Store without validating on the graph engine.")
    ] = False,
) -> None:
    """Add an admin example, validated on the current graph engine."""
    if not skip_validation:
        with _validator(ctx) as validate:
            error = validate(cypher)
        if error is not None:
            console.print(f"[red]Not added[/red]: the engine refused the query: {error}")
            raise typer.Exit(1)
    with _memory(ctx) as mem:
        example_id = mem.examples.add(question, cypher, source="admin")
    console.print(f"Example {example_id} is active.")


@examples_app.command("retire")
def retire(
    ctx: typer.Context, example_id: Annotated[int, typer.Argument(help="Example id.")]
) -> None:
    """Take an example out of use."""
    with _memory(ctx) as mem:
        changed = mem.examples.retire(example_id)
    if not changed:
        console.print(f"[red]No example {example_id}.[/red]")
        raise typer.Exit(1)
    console.print(f"Example {example_id} retired.")


@examples_app.command("promote")
def promote(
    ctx: typer.Context, example_id: Annotated[int, typer.Argument(help="Example id.")]
) -> None:
    """Make a candidate (or retired) example active."""
    with _memory(ctx) as mem:
        changed = mem.examples.promote(example_id)
    if not changed:
        console.print(f"[red]No example {example_id}.[/red]")
        raise typer.Exit(1)
    console.print(f"Example {example_id} is active.")


@examples_app.command("import")
def import_examples(
    ctx: typer.Context,
    file: Annotated[Path, typer.Argument(help="YAML or JSONL of {question, cypher}.", exists=True)],
) -> None:
    """Import seed examples, each validated on the current graph engine first."""
    with _validator(ctx) as validate, _memory(ctx) as mem:
        try:
            report = mem.examples.import_file(file, validate)
        except (ValueError, UnicodeDecodeError) as exc:
            console.print(f"[red]Cannot import[/red] {file}: {exc}")
            raise typer.Exit(1) from None
    console.print(
        f"Imported {len(report.imported)}, already present {len(report.already_present)}, "
        f"invalid {len(report.invalid)}."
    )
    if report.invalid:
        table = Table(title="Not imported")
        table.add_column("#")
        table.add_column("question", overflow="fold")
        table.add_column("engine error", overflow="fold")
        for bad in report.invalid:
            table.add_row(str(bad.index), bad.question, bad.error)
        console.print(table)
        raise typer.Exit(1)


@examples_app.command("export")
def export(
    ctx: typer.Context,
    file: Annotated[
        Path, typer.Argument(help="Output .yaml/.yml (YAML) or anything else (JSONL).")
    ],
) -> None:
    """Export the active examples."""
    with _memory(ctx) as mem:
        count = mem.examples.export(file)
    console.print(f"Exported {count} examples to {file}.")


@examples_app.command("bootstrap")
def bootstrap(ctx: typer.Context) -> None:
    """Generate examples from the graph's schema (source `schema`), replacing older ones."""
    from bot.cli.runtime import settings
    from bot.wiring import agent_config, build_db, build_llms, refresh_schema_examples
    from graph_agent.agent import Agent

    s = settings(ctx)
    db = build_db(s)
    llms = build_llms(s) if s.schema_examples_wording == "llm" else None
    try:
        with _memory(ctx) as mem:
            agent = Agent(db, llms, mem.examples, agent_config(s))
            report = refresh_schema_examples(s, mem, agent, force=True)
    finally:
        db.close()
    assert report is not None  # forced
    tried = sum(report.tried.values())
    console.print(
        f"Generated {tried} candidate questions from the schema in {report.seconds:.1f} s; "
        f"kept {len(report.kept)} that return rows (at most {s.schema_examples_cap} per shape)."
    )
    summary = Table(title="Per shape")
    summary.add_column("shape")
    summary.add_column("tried", justify="right")
    summary.add_column("kept", justify="right")
    for shape, kept in report.per_shape().items():
        summary.add_row(shape, str(report.tried.get(shape, 0)), str(kept))
    console.print(summary)
    kept_table = Table(title="Kept")
    kept_table.add_column("shape")
    kept_table.add_column("question", overflow="fold")
    for example in report.kept:
        kept_table.add_row(example.shape, example.question)
    console.print(kept_table)


# --- stats ---------------------------------------------------------------------------------


def stats(
    ctx: typer.Context,
    days: Annotated[int, typer.Option(help="Period, in days.")] = 30,
) -> None:
    """Questions per day, outcomes, attempts, LLM usage, reactions, examples, failing questions."""
    with _memory(ctx) as mem:
        s = mem.feedback.stats(days)
    per_day = Table(title=f"Questions per day (last {days} days)")
    per_day.add_column("day")
    per_day.add_column("questions", justify="right")
    for day, count in s.questions_per_day:
        per_day.add_row(day, str(count))
    console.print(per_day)

    summary = Table(title="Outcomes and usage", show_header=False)
    summary.add_column("what", style="bold")
    summary.add_column("value", justify="right")
    for outcome, count in s.outcomes.items():
        summary.add_row(f"outcome: {outcome}", str(count))
    for attempts, count in s.attempts.items():
        summary.add_row(f"turns with {attempts} attempt(s)", str(count))
    summary.add_row("LLM calls", str(s.llm_calls))
    summary.add_row("prompt tokens", str(s.prompt_tokens))
    summary.add_row("completion tokens", str(s.completion_tokens))
    summary.add_row("👍 reactions", str(s.reactions.get("up", 0)))
    summary.add_row("👎 reactions", str(s.reactions.get("down", 0)))
    console.print(summary)

    examples = Table(title="Examples")
    examples.add_column("source")
    examples.add_column("status")
    examples.add_column("count", justify="right")
    for (source, status), count in sorted(s.examples.items()):
        examples.add_row(source, status, str(count))
    console.print(examples)

    if s.top_failing:
        failing = Table(title="Top failing questions")
        failing.add_column("failures", justify="right")
        failing.add_column("question", overflow="fold")
        for item in s.top_failing:
            failing.add_row(str(item.failures), item.question)
        console.print(failing)


def register(app: typer.Typer) -> None:
    """Attach the memory, examples and stats commands to `app`."""
    app.add_typer(memory_app, name="memory")
    app.add_typer(examples_app, name="examples")
    app.command("stats")(stats)
