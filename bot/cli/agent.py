"""Agent commands: `ask` (one question) and `chat` (a terminal conversation with follow-ups)."""

from __future__ import annotations

import dataclasses
import getpass
import json
import logging
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer
from rich.console import Console
from rich.syntax import Syntax
from rich.table import Table

from memory.types import Turn

if TYPE_CHECKING:  # the agent stack is imported when a command runs, not at CLI start
    from graph_agent.agent import Agent
    from graph_agent.result import AgentResult, Choice, ProgressEvent
    from guardrails.cypher_policy import CypherPolicy
    from memory import Memory

logger = logging.getLogger(__name__)
console = Console()
err_console = Console(stderr=True)
ROWS_SHOWN = 15

NoMemory = Annotated[
    bool,
    typer.Option(
        "--no-memory", help="Do not open the memory database; no taught examples are used."
    ),
]


@dataclasses.dataclass
class Session:
    """An agent and, unless --no-memory, the memory it learns from and records into."""

    agent: Agent
    memory: Memory | None


Channel = Annotated[
    str | None,
    typer.Option(
        "--channel",
        help="Answer as the bot would in this Slack channel (its CHANNEL_RESTRICTIONS applied, "
        "e.g. C0123456789); without it: no channel's restrictions.",
    ),
]


def channel_policy(ctx: typer.Context, channel: str | None) -> CypherPolicy | None:
    """The policy the bot uses in `channel`: its hidden names (CHANNEL_RESTRICTIONS, `*`
    included). A channel the bot does not answer in is refused with the reason."""
    if channel is None:
        return None
    from bot.cli.runtime import settings
    from guardrails.channels import ChannelPolicy

    s = settings(ctx)
    channels = ChannelPolicy.from_settings(
        s.allowed_channels, s.denied_channels, s.allow_dms, s.channel_restrictions
    )
    decision = channels.decide(channel, is_dm=channel.startswith("D"))
    if not decision.answer:
        err_console.print(
            f"[red]The bot does not answer in {channel}[/red] ({decision.reason}): check "
            "ALLOWED_CHANNELS, DENIED_CHANNELS and ALLOW_DMS."
        )
        raise typer.Exit(2)
    policy = channels.cypher_policy_for(channel)
    if policy is not None:
        hidden = sorted(
            [*policy.hidden_labels, *(f"[{t}]" for t in policy.hidden_rel_types),
             *policy.hidden_properties]
        )  # fmt: skip
        err_console.print(f"[dim]As in {channel}: hidden {', '.join(hidden)}[/dim]")
    return policy


@contextmanager
def open_agent(ctx: typer.Context, no_memory: bool) -> Iterator[Session]:
    """An agent from Settings with the memory database's examples (or none), closed after."""
    from bot.cli.runtime import settings
    from bot.wiring import open_runtime, refresh_schema_examples

    s = settings(ctx)
    with open_runtime(s, memory=None if no_memory else "settings") as runtime:
        if runtime.memory is not None:
            # As the bot does at start-up: a graph seen for the first time gets its day-one
            # examples (once per schema; here in the foreground, the command needs them now).
            try:
                refresh_schema_examples(s, runtime.memory, runtime.agent)
            except Exception:  # examples are a bonus; the question is answered without them
                logger.warning("could not generate schema examples", exc_info=True)
        yield Session(runtime.agent, runtime.memory)


def _progress(event: ProgressEvent) -> None:
    err_console.print(f"[dim]{event.text}[/dim]")


def _cell(value: Any) -> str:
    if isinstance(value, dict | list):
        return json.dumps(value, ensure_ascii=False)
    return "" if value is None else str(value)


def print_choices(result: AgentResult) -> None:
    """A "did you mean…?": its question, then the choices numbered from 1."""
    console.print(result.answer.splitlines()[0], markup=False)
    for n, choice in enumerate(result.choices, start=1):
        console.print(f"  {n}. {choice.text}", markup=False, highlight=False)


def print_result(result: AgentResult, *, details: bool = True) -> None:
    """The answer, then (with details) the Cypher, rows, attempts, LLM calls and timings."""
    colour = {"answered": "green", "no_data": "yellow", "failed": "red"}.get(result.outcome, "cyan")
    if result.choices:
        print_choices(result)
    else:
        console.print(result.answer)
    if not details:
        if result.cypher:
            console.print(Syntax(result.cypher, "cypher", theme="ansi_dark", word_wrap=True))
        return
    console.print(f"\n[{colour}]{result.outcome}[/{colour}]", end="")
    if result.error_kind:
        console.print(f" ({result.error_kind})", end="")
    if result.reused_example_id is not None:
        console.print(f" · reused example #{result.reused_example_id}", end="")
    if result.self_healed:
        console.print(" · self-healed", end="")
    if result.tool:
        console.print(f" · graph tool: {result.tool}", end="")
    console.print()
    if result.cypher:
        console.print(Syntax(result.cypher, "cypher", theme="ansi_dark", word_wrap=True))
    if result.columns:
        table = Table(*result.columns, title=f"{len(result.rows)} row(s)", title_justify="left")
        for row in result.rows[:ROWS_SHOWN]:
            table.add_row(*(_cell(v) for v in row))
        if len(result.rows) > ROWS_SHOWN:
            table.caption = f"… {len(result.rows) - ROWS_SHOWN} more"
        console.print(table)
    if len(result.attempts) > 1 or any(a.error for a in result.attempts):
        attempts = Table("#", "stage", "problem", title="Attempts", title_justify="left")
        for n, attempt in enumerate(result.attempts, start=1):
            attempts.add_row(str(n), attempt.stage, attempt.error or "")
        console.print(attempts)
    if result.rules_fired:
        fired = Table("attempt", "rule", "kind", "what", title="Repair rules", title_justify="left")
        for firing in result.rules_fired:
            fired.add_row(str(firing.attempt), firing.rule, firing.kind, firing.detail)
        console.print(fired)
    if result.candidates:
        columns = ("#", "attempt", "chosen", "agreeing", "rows or error", "statement")
        sampled = Table(*columns, title="Candidates", title_justify="left")
        for n, candidate in enumerate(result.candidates, start=1):
            outcome = str(candidate.rows) if candidate.rows is not None else candidate.error
            sampled.add_row(
                str(n),
                str(candidate.attempt),
                "✓" if candidate.chosen else "",
                str(candidate.agreeing),
                outcome or "",
                candidate.cypher,
            )
        console.print(sampled)
    console.print(
        f"LLM calls: {result.llm_calls} ({', '.join(result.llm_steps) or 'none'}) · tokens "
        f"{result.prompt_tokens} in ({result.cached_prompt_tokens} cached) / "
        f"{result.completion_tokens} out"
    )
    timings = " · ".join(f"{step} {ms:.0f} ms" for step, ms in result.timings_ms.items())
    console.print(f"Time: {result.total_ms:.0f} ms ({timings})")


def _write_chart(path: Path, question: str, result: AgentResult) -> None:
    """`ask --chart FILE`: the chart the Slack answer would carry, or why there is none."""
    from bot import charts

    drawn = charts.chart_for(question, result.columns, result.rows)
    if not isinstance(drawn, charts.Chart):
        err_console.print(f"No chart for this result: {drawn.reason}.")
        return
    try:
        path.write_bytes(drawn.png)
    except OSError as exc:
        raise typer.BadParameter(
            f"cannot write {path}: {exc.strerror}", param_hint="--chart"
        ) from exc
    err_console.print(f"Chart ({drawn.kind}) written to {path}.")


def ask_choice(result: AgentResult) -> Choice | str | None:
    """`chat`: the person's pick among a "did you mean…?"'s choices, or the next question
    they typed instead (None: nothing)."""
    last = len(result.choices)
    try:
        picked = console.input(
            f"[bold cyan]choose 1-{last} (or ask something else)>[/bold cyan] "
        ).strip()
    except (EOFError, KeyboardInterrupt):
        return None
    if picked.isdigit() and 1 <= int(picked) <= last:
        return result.choices[int(picked) - 1]
    return picked or None


def result_json(result: AgentResult) -> str:
    """The whole result as JSON (for scripts)."""
    data = dataclasses.asdict(result)
    data["rules_fired"] = [firing.to_json() for firing in result.rules_fired]
    data["total_ms"] = result.total_ms
    return json.dumps(data, ensure_ascii=False, default=str, indent=2)


def register(app: typer.Typer) -> None:
    """Attach `ask` and `chat` to `app`."""

    @app.command()
    def ask(
        ctx: typer.Context,
        question: Annotated[str, typer.Argument(help="The question, in plain language.")],
        as_json: Annotated[bool, typer.Option("--json", help="Print the result as JSON.")] = False,
        no_memory: NoMemory = False,
        chart: Annotated[
            Path | None,
            typer.Option(
                "--chart",
                help="Write the answer's chart to this PNG file, when its rows make one.",
                dir_okay=False,
            ),
        ] = None,
        channel: Channel = None,
    ) -> None:
        """Answer one question: the answer, its Cypher, the rows, attempts, LLM calls, timings."""
        policy = channel_policy(ctx, channel)
        with open_agent(ctx, no_memory) as session:
            result = session.agent.run(
                question, on_progress=None if as_json else _progress, policy=policy
            )
        if as_json:
            typer.echo(result_json(result))
        else:
            print_result(result)
        if chart is not None and result.outcome != "failed":
            _write_chart(chart, question, result)
        if result.outcome == "failed":
            raise typer.Exit(1)

    @app.command()
    def chat(ctx: typer.Context, no_memory: NoMemory = False, channel: Channel = None) -> None:
        """A conversation in the terminal; follow-up questions see the previous turns, and a
        "did you mean…?" is a numbered prompt that continues the question with the choice."""
        from bot.wiring import record_result

        policy = channel_policy(ctx, channel)
        turns: list[Turn] = []
        conversation = f"cli:chat:{uuid.uuid4().hex[:12]}"
        with open_agent(ctx, no_memory) as session:
            agent, mem = session.agent, session.memory

            def answer(question: str, choice: Choice | None = None) -> AgentResult:
                history = mem.conversations.history(conversation, 5) if mem else turns
                result = agent.run(
                    question, history=history, on_progress=_progress, policy=policy, choice=choice
                )
                print_result(result, details=False)
                if mem is not None:
                    # The CLI's conversation lives in memory like a Slack thread, under its
                    # own key, so `cypherbot stats` and `memory forget --thread` see it.
                    record_result(
                        mem.conversations,
                        conversation,
                        user=getpass.getuser(),
                        question=question,
                        result=result,
                    )
                    return result
                turns.append(
                    Turn(
                        question=question,
                        standalone_question=result.standalone_question,
                        cypher=result.cypher,
                        answer=result.answer,
                        outcome=result.outcome,
                        conversation=conversation,
                        example_ids=tuple(result.example_ids),
                    )
                )
                return result

            console.print(
                f"[bold]cypherbot[/bold] on {agent.db.url}. Ask about {agent.describe()}\n"
                f"For example: {' · '.join(agent.suggestions(3))}\n"
                "Empty line or Ctrl-D to quit."
            )
            typed: str | None = None
            while True:
                try:
                    question = typed or console.input("[bold cyan]you>[/bold cyan] ").strip()
                except (EOFError, KeyboardInterrupt):
                    break
                typed = None
                if not question or question.lower() in {"exit", "quit"}:
                    break
                result = answer(question)
                if not result.choices:
                    continue
                picked = ask_choice(result)
                if isinstance(picked, str):
                    typed = picked
                elif picked is not None:
                    # One clarifying round per question: the continuation never asks again.
                    answer(picked.question, picked)
