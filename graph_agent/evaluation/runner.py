"""Runs the agent on evaluation items: gold rows once, conversations in order, timeouts, resume."""

from __future__ import annotations

import asyncio
import json
import logging
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, Literal

from graph_agent.agent import Agent
from graph_agent.candidates import RETRY_CANDIDATES
from graph_agent.evaluation.items import EvalItem, chains
from graph_agent.evaluation.report import REPEAT_MARK
from graph_agent.evaluation.scoring import (
    asked_back,
    found_nothing,
    refused,
    score_answer,
    score_tool,
)
from graph_agent.graphdb.errors import GraphError
from graph_agent.result import AgentResult, Attempt, Firing, Stage
from graph_agent.superlatives import TIE_ROWS, tie_read, tied_rows
from guardrails import CypherPolicy
from memory.types import Turn

logger = logging.getLogger(__name__)

Mode = Literal["full", "single-shot"]
MODES: tuple[Mode, ...] = ("full", "single-shot")
GOLD_TIMEOUT_S = 60.0
ANSWER_CHARS = 1000
"""Answer text kept in a record (enough to read, short enough for a JSONL line)."""
TIMEOUT_KINDS = ("deadline", "llm_timeout")
"""Error kinds that mean the model (or the whole question) ran out of time."""


@dataclass(frozen=True)
class RunOptions:
    """How one evaluation run asks its questions."""

    mode: Mode = "full"
    examples: bool = True
    """Whether taught examples are available to the agent (the caller builds the store)."""
    timeout_s: float = 120.0
    """Per question, LLM calls included."""
    concurrency: int = 1
    """Conversations asked at the same time (1 for a small local model)."""
    disabled_rules: frozenset[str] = frozenset()
    """Repair rules turned off for the run (an ablation: `--without-rule NAME`)."""
    channel: str | None = None
    """Asked as in this Slack channel (`--channel`): `policy` holds its restrictions."""
    policy: CypherPolicy | None = None
    candidates: int | None = None
    """Statements the first generation samples in this run (CANDIDATES); None: the agent's
    own setting. Runs with more than one are keyed apart, so 1 and 3 can be compared."""
    retry_candidates: int | None = None
    """Statements the first correction offers in this run (RETRY_CANDIDATES); None: the
    agent's own setting. Keyed apart when it is not the product's default (3)."""
    repeat: int = 1
    """Which run of the same items this is (`--repeat N`): the first keeps the plain key, the
    others are keyed `…/repeat-K`, so the spread between runs can be reported."""

    @property
    def key(self) -> str:
        """Names the run in records, summaries and file names: `full/examples-on`."""
        key = f"{self.mode}/examples-{'on' if self.examples else 'off'}"
        if self.candidates is not None and self.candidates > 1 and self.mode == "full":
            key += f"/candidates-{self.candidates}"
        retry = self.retry_candidates
        if retry is not None and retry != RETRY_CANDIDATES and self.mode == "full":
            key += f"/retry-{retry}"
        key += "".join(f"/without-{name}" for name in sorted(self.disabled_rules))
        key += f"/channel-{self.channel}" if self.channel else ""
        return key + (f"{REPEAT_MARK}{self.repeat}" if self.repeat > 1 else "")

    @property
    def slug(self) -> str:
        return self.key.replace("/", "-")


@dataclass(frozen=True)
class GoldResult:
    """The rows the gold Cypher returned, or why it could not run."""

    columns: list[str]
    rows: list[list[Any]]
    truncated: bool = False
    error: str | None = None


class GoldCache:
    """Gold rows per statement, computed once per process however many runs ask."""

    def __init__(self, agent: Agent) -> None:
        self._agent = agent
        self._results: dict[str, GoldResult] = {}
        self._locks: dict[str, asyncio.Lock] = {}

    async def get(self, cypher: str) -> GoldResult:
        lock = self._locks.setdefault(cypher, asyncio.Lock())
        async with lock:
            if cypher not in self._results:
                self._results[cypher] = await asyncio.to_thread(self._run, cypher)
            return self._results[cypher]

    def _run(self, cypher: str) -> GoldResult:
        limit = self._agent.config.max_rows
        try:
            result = self._agent.db.run_read(cypher, timeout_s=GOLD_TIMEOUT_S, max_rows=limit)
        except GraphError as exc:
            logger.warning("gold query failed: %s", exc)
            return GoldResult([], [], error=str(exc))
        if result.truncated:
            logger.warning("gold result cut at %d rows; scores compare the first rows", limit)
        rows = [list(r) for r in result.rows]
        if len(rows) == 1 and (ties := tie_read(cypher)) is not None:
            # "Which X has the most …" answers with every X tied for the most, as the agent's
            # ties-shown rule does; one of them, picked by the engine's order, is not the gold.
            statement, column = ties
            try:
                read = self._agent.db.run_read(
                    statement, timeout_s=GOLD_TIMEOUT_S, max_rows=TIE_ROWS + 1
                )
                rows = tied_rows([list(r) for r in read.rows], column)
            except GraphError as exc:
                logger.warning("gold tie read failed: %s", exc)
        return GoldResult(list(result.columns), rows, result.truncated)


class ResultsFile:
    """Records appended as JSON lines as they come, so a stopped run can resume."""

    def __init__(self, path: Path) -> None:
        self.path = path

    def load(self) -> dict[str, dict[str, Any]]:
        """Records already written, by item id (a torn last line is ignored)."""
        done: dict[str, dict[str, Any]] = {}
        if not self.path.exists():
            return done
        for line in self.path.read_text(encoding="utf-8").splitlines():
            try:
                record = json.loads(line)
            except json.JSONDecodeError:
                logger.warning("ignoring an unreadable line in %s", self.path)
                continue
            if isinstance(record, dict) and "id" in record:
                done[str(record["id"])] = record
        return done

    def reset(self) -> None:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self.path.write_text("", encoding="utf-8")

    def append(self, record: dict[str, Any]) -> None:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        with self.path.open("a", encoding="utf-8") as out:
            out.write(json.dumps(record, ensure_ascii=False, default=str) + "\n")


def _turn(record: dict[str, Any]) -> Turn:
    """The conversation turn a record stands for (follow-ups after a resume need it)."""
    outcome = record.get("outcome")
    kept = ("answered", "no_data", "out_of_scope", "needs_clarification")
    return Turn(
        question=record["question"],
        standalone_question=record.get("standalone_question") or record["question"],
        cypher=record.get("cypher"),
        answer=record.get("answer") or "",
        outcome=outcome if outcome in kept else "failed",
        conversation="eval",
    )


def _try(attempt: Attempt) -> dict[str, Any]:
    """One attempt as the record keeps it: the statement, where it ended and why, so that a
    failure on the dev split can be read without running the question again."""
    return {
        "cypher": attempt.cypher,
        "stage": str(attempt.stage),
        "error": (attempt.error or "")[:ANSWER_CHARS] or None,
        "rows": attempt.rows,
    }


def score_record(
    item: EvalItem,
    options: RunOptions,
    result: AgentResult | None,
    gold: GoldResult | None,
    *,
    latency_ms: float,
    error: str | None = None,
    timed_out: bool = False,
) -> dict[str, Any]:
    """One JSON-able record: what the agent did and how it compares with the gold."""
    record: dict[str, Any] = {
        "id": item.id,
        "run": options.key,
        "mode": options.mode,
        "examples": options.examples,
        "question": item.question,
        "follow_up_of": item.follow_up_of,
        "tags": list(item.tags),
        "split": item.split,
        "expected": item.expected,
        "expected_tool": item.expected_tool,
        "latency_ms": round(latency_ms, 1),
        "timed_out": timed_out,
        "error": error,
        "strict": False,
        "relaxed": False,
        "answer_mentions": None,
    }
    if result is not None:
        record.update(
            outcome=result.outcome,
            error_kind=result.error_kind,
            standalone_question=result.standalone_question,
            cypher=result.cypher,
            answer=result.answer[:ANSWER_CHARS],
            rows=len(result.rows),
            attempts=len(result.attempts),
            tries=[_try(attempt) for attempt in result.attempts],
            llm_calls=result.llm_calls,
            llm_steps=result.llm_steps,
            prompt_tokens=result.prompt_tokens,
            completion_tokens=result.completion_tokens,
            cached_prompt_tokens=result.cached_prompt_tokens,
            reused_example=result.reused_example_id is not None,
            example_ids=result.example_ids,
            ungrounded=result.ungrounded,
            unconfirmed=result.unconfirmed,
            tool=result.tool,
            choices=[c.text for c in result.choices if c.name is not None],
            rules=[_firing(f, result) for f in result.rules_fired],
            candidates=[candidate.to_json() for candidate in result.candidates],
        )
        record["timed_out"] = timed_out or result.error_kind in TIMEOUT_KINDS
    else:
        record.update(outcome="timeout" if timed_out else "error", llm_calls=0, attempts=0)
    if gold is not None:
        record["gold_rows"] = len(gold.rows)
        if gold.error:
            record["gold_error"] = gold.error
    if result is None:
        return record
    if item.expected == "refusal":
        record["strict"], record["relaxed"] = refused(result.outcome, result.cypher)
    elif item.expected == "clarification":
        record["strict"], record["relaxed"] = asked_back(
            result.outcome, item.expected_names, record["choices"]
        )
    elif item.expected == "no_data":
        record["strict"], record["relaxed"] = found_nothing(result.outcome, len(result.rows))
    elif item.expected_tool is not None and not item.gold_cypher:
        score = score_tool(
            item.expected_tool,
            item.expected_names,
            result.outcome,
            result.tool,
            result.rows,
            result.answer,
        )
        record.update(
            strict=score.strict, relaxed=score.relaxed, answer_mentions=score.answer_mentions
        )
    elif gold is not None and gold.error is None and item.gold_cypher:
        score = score_answer(
            item.gold_cypher, gold.rows, result.outcome, result.rows, result.answer
        )
        record.update(
            strict=score.strict,
            relaxed=score.relaxed,
            answer_mentions=score.answer_mentions,
            ordered=score.ordered,
        )
    return record


def _firing(firing: Firing, result: AgentResult) -> dict[str, Any]:
    """A rule that fired, for the record; a rewrite says whether its attempt answered."""
    record: dict[str, Any] = {"rule": firing.rule, "kind": firing.kind, "attempt": firing.attempt}
    if firing.kind == "rewrite":
        final = (
            len(result.attempts) if result.attempts and result.attempts[-1].stage == Stage.OK else 0
        )
        record["answered"] = result.outcome in ("answered", "no_data") and firing.attempt == final
    return record


async def _ask(
    agent: Agent, item: EvalItem, history: Sequence[Turn], options: RunOptions
) -> AgentResult:
    if options.mode == "single-shot":
        # The baseline has no rewrite step, so a follow-up goes in exactly as asked.
        return await agent.arun(item.question, flow="single-shot", policy=options.policy)
    return await agent.arun(item.question, history=list(history), policy=options.policy)


async def run_item(
    agent: Agent,
    item: EvalItem,
    history: Sequence[Turn],
    options: RunOptions,
    gold_cache: GoldCache,
) -> dict[str, Any]:
    """Ask one item (within the timeout) and score it; never raises for the agent's failures."""
    gold = await gold_cache.get(item.gold_cypher) if item.gold_cypher else None
    started = time.perf_counter()
    result: AgentResult | None = None
    error: str | None = None
    timed_out = False
    try:
        # A little grace past the agent's own deadline, which ends the run more gracefully.
        result = await asyncio.wait_for(
            _ask(agent, item, history, options), timeout=options.timeout_s + 2.0
        )
    except TimeoutError:
        timed_out = True
        logger.warning("item %s stopped at its %.0f s deadline", item.id, options.timeout_s)
    except Exception as exc:  # one broken item must not end a long run
        logger.exception("evaluation item %s failed", item.id)
        error = f"{type(exc).__name__}: {exc}"
    latency_ms = (time.perf_counter() - started) * 1000
    return score_record(
        item, options, result, gold, latency_ms=latency_ms, error=error, timed_out=timed_out
    )


def with_deadline(
    agent: Agent,
    timeout_s: float,
    disabled_rules: frozenset[str] = frozenset(),
    candidates: int | None = None,
    retry_candidates: int | None = None,
) -> Agent:
    """The same agent (database, models, examples) whose question deadline is the timeout,
    longer or shorter than QUESTION_DEADLINE_S: `--timeout` is the limit the run measures."""
    config = replace(agent.config, question_deadline_s=timeout_s)
    if disabled_rules:
        config = replace(config, disabled_rules=config.disabled_rules | disabled_rules)
    if candidates is not None:
        config = replace(config, candidates=candidates)
    if retry_candidates is not None:
        config = replace(config, retry_candidates=retry_candidates)
    return Agent(agent.db, agent.llms, agent.examples, config, agent.policy)


async def evaluate(
    agent: Agent,
    items: Iterable[EvalItem],
    options: RunOptions,
    *,
    done: dict[str, dict[str, Any]] | None = None,
    on_record: Callable[[dict[str, Any]], None] | None = None,
    gold_cache: GoldCache | None = None,
) -> list[dict[str, Any]]:
    """Ask every item not in `done`, conversations in parallel up to `options.concurrency`.

    Items of one conversation (an item and its follow-ups) are asked in order, each with
    the earlier turns as history; turns of items already in `done` are rebuilt from their
    records. `on_record` receives each new record as soon as it is scored.
    """
    done = done or {}
    agent = with_deadline(
        agent,
        options.timeout_s,
        options.disabled_rules,
        options.candidates,
        options.retry_candidates,
    )
    gold_cache = gold_cache or GoldCache(agent)
    semaphore = asyncio.Semaphore(max(1, options.concurrency))
    records: list[dict[str, Any]] = []

    async def converse(items_in_order: Sequence[EvalItem]) -> None:
        history: list[Turn] = []
        async with semaphore:
            for item in items_in_order:
                record = done.get(item.id)
                if record is None:
                    record = await run_item(agent, item, history, options, gold_cache)
                    records.append(record)
                    if on_record is not None:
                        on_record(record)
                if "outcome" in record and record.get("question"):
                    history.append(_turn(record))

    await asyncio.gather(*(converse(chain.items) for chain in chains(list(items))))
    return records
