"""The Agent the bot and the CLI call: builds the LangGraph state machine and runs one question."""

from __future__ import annotations

import asyncio
import functools
import logging
import re
import threading
import time
from collections.abc import Coroutine, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import replace
from typing import Any, TypeVar

from langgraph.graph import START, StateGraph
from langgraph.graph.state import CompiledStateGraph

from graph_agent import nodes, routing
from graph_agent.config import AgentConfig
from graph_agent.context import Context
from graph_agent.errors import LLMNotConfiguredError
from graph_agent.graphdb.errors import GraphError
from graph_agent.graphdb.protocol import GraphDB, GraphSchema, PropertyInfo
from graph_agent.graphdb.schema import schema_fingerprint
from graph_agent.llm import LLMCall, LLMs
from graph_agent.result import AgentResult, ProgressCallback
from graph_agent.state import AgentState
from guardrails.cypher_policy import CypherPolicy
from memory.types import ExampleStore, Turn

logger = logging.getLogger(__name__)
T = TypeVar("T")

_CAMEL = re.compile(r"[A-Z]+(?=[A-Z][a-z])|[A-Z]?[a-z]+|[A-Z]+|\d+")
Graph = CompiledStateGraph[AgentState, Context, AgentState, AgentState]


def build_graph() -> Graph:
    """Compile the state machine (contextualize+guard → generate → validate → execute →
    evaluate+answer, with the bounded correction loop)."""
    graph = StateGraph(AgentState, context_schema=Context)
    graph.add_node("understand", nodes.understand)
    graph.add_node("refuse", nodes.refuse)
    graph.add_node("clarify", nodes.clarify)
    graph.add_node("generate", nodes.generate)
    graph.add_node("validate", nodes.validate)
    graph.add_node("execute", nodes.execute)
    graph.add_node("evaluate", nodes.evaluate)
    graph.add_node("correct", nodes.correct)
    graph.add_node("give_up", nodes.give_up)
    graph.add_edge(START, "understand")
    graph.add_conditional_edges("understand", routing.after_understand)
    graph.add_conditional_edges("generate", routing.after_draft)
    graph.add_conditional_edges("correct", routing.after_draft)
    graph.add_conditional_edges("validate", routing.after_validate)
    graph.add_conditional_edges("execute", routing.after_execute)
    graph.add_conditional_edges("evaluate", routing.after_evaluate)
    for terminal in ("refuse", "clarify", "give_up"):
        graph.add_edge(terminal, "__end__")
    return graph.compile()


def plural(name: str) -> str:
    """`Person` → `people`, `Repository` → `repositories`, `Service` → `services`."""
    word = " ".join(part.lower() for part in _split(name))
    if word.endswith("person"):
        return word[: -len("person")] + "people"
    if word.endswith("y") and word[-2:-1] not in "aeiou":
        return word[:-1] + "ies"
    if word.endswith(("s", "x", "ch", "sh")):
        return word + "es"
    return word + "s"


@functools.cache
def _shared_graph() -> Graph:
    # The graph holds no dependencies (they travel in the Context), so one compiled copy
    # serves every Agent; compiling costs ~10 ms.
    return build_graph()


def _split(name: str) -> list[str]:
    return _CAMEL.findall(name) or [name]


def _singular(name: str) -> str:
    return " ".join(part.lower() for part in _split(name))


def restricted_schema(schema: GraphSchema, policy: CypherPolicy | None) -> GraphSchema:
    """The schema a policy's hidden names leave: labels, relationship types and properties.

    Names compare case-insensitively, as the policy does. A hidden `Label.property` goes from
    every label and relationship, because the policy refuses that key everywhere (a variable's
    label is not always known); showing it elsewhere would only invite refused queries.
    """
    if policy is None or not policy.has_hidden_names:
        return schema
    labels = {name.casefold() for name in policy.hidden_labels}
    rel_types = {name.casefold() for name in policy.hidden_rel_types}
    props = {name.rsplit(".", 1)[-1].casefold() for name in policy.hidden_properties}

    def visible(properties: tuple[PropertyInfo, ...]) -> tuple[PropertyInfo, ...]:
        return tuple(p for p in properties if p.name.casefold() not in props)

    return replace(
        schema,
        labels=tuple(
            replace(label, properties=visible(label.properties))
            for label in schema.labels
            if label.name.casefold() not in labels
        ),
        relationships=tuple(
            replace(rel, properties=visible(rel.properties))
            for rel in schema.relationships
            if rel.type.casefold() not in rel_types
            and rel.start.casefold() not in labels
            and rel.end.casefold() not in labels
        ),
    )


class Agent:
    """Answers questions about one graph database; safe to share between threads."""

    def __init__(
        self,
        db: GraphDB,
        llms: LLMs | None,
        examples: ExampleStore,
        config: AgentConfig | None = None,
        policy: CypherPolicy | None = None,
    ) -> None:
        self.db = db
        self.llms = llms
        self.examples = examples
        self.config = config or AgentConfig()
        self.policy = policy
        self._lock = threading.Lock()
        self._schema: GraphSchema | None = None
        self._fingerprint: str | None = None

    # --- schema ---------------------------------------------------------------------------

    @property
    def schema(self) -> GraphSchema:
        """The graph's schema as the agent sees it (include/exclude applied), read once."""
        with self._lock:
            if self._schema is None:
                self._schema = self.db.schema(
                    include=list(self.config.include_labels) or None,
                    exclude=list(self.config.exclude_labels) or None,
                    sample=self.config.schema_sample,
                )
                self._fingerprint = schema_fingerprint(self._schema)
            return self._schema

    @property
    def schema_fingerprint(self) -> str:
        """Fingerprint of the cached schema (stored with learned examples)."""
        _ = self.schema
        assert self._fingerprint is not None
        return self._fingerprint

    def refresh_schema(self) -> GraphSchema:
        """Forget the cached schema and read it again."""
        with self._lock:
            self._schema = None
        return self.schema

    def _compiled(self) -> Graph:
        return _shared_graph()

    # --- descriptions ---------------------------------------------------------------------

    def describe(self, schema: GraphSchema | None = None) -> str:
        """What the graph holds, in a sentence or two (the setting wins when given)."""
        if self.config.graph_description:
            return self.config.graph_description
        schema = schema or self.schema
        if not schema.labels:
            return "an empty graph."
        labels = sorted(schema.labels, key=lambda label: -label.count)[:12]
        things = ", ".join(plural(label.name) for label in labels)
        if len(schema.labels) > len(labels):
            things += f" and {len(schema.labels) - len(labels)} more kinds of things"
        rel_types: list[str] = []
        for rel in sorted(schema.relationships, key=lambda r: -r.count):
            phrase = rel.type.lower().replace("_", " ")
            if phrase not in rel_types:
                rel_types.append(phrase)
        how = ", ".join(rel_types[:10])
        return f"{things}" + (f", and how they relate ({how})." if how else ".")

    def suggestions(self, n: int = 3, schema: GraphSchema | None = None) -> list[str]:
        """Example questions: taught examples first, then questions derived from the schema."""
        schema = schema or self.schema
        picked: list[str] = []
        try:
            topic = " ".join(label.name for label in schema.labels)
            picked = [e.question for e in self.examples.similar(topic, n)]
        except Exception:  # suggestions are decoration; never fail a refusal over them
            logger.warning("example store unavailable for suggestions", exc_info=True)
        for question in self._schema_questions(schema):
            if len(picked) >= n:
                break
            if question not in picked:
                picked.append(question)
        return picked[:n]

    @staticmethod
    def _schema_questions(schema: GraphSchema) -> list[str]:
        questions: list[str] = []
        for rel in sorted(schema.relationships, key=lambda r: -r.count)[:2]:
            if rel.start != rel.end:
                questions.append(f"Which {_singular(rel.end)} has the most {plural(rel.start)}?")
        for label in sorted(schema.labels, key=lambda item: -item.count):
            prop = next((p for p in label.properties if p.sample_values and p.name != "name"), None)
            if prop is not None:
                questions.append(f"How many {plural(label.name)} are there per {prop.name}?")
                break
        if schema.labels:
            biggest = max(schema.labels, key=lambda item: item.count)
            questions.append(f"How many {plural(biggest.name)} are there?")
        return questions

    # --- running --------------------------------------------------------------------------

    async def arun(
        self,
        question: str,
        *,
        history: Sequence[Turn] = (),
        on_progress: ProgressCallback | None = None,
        policy: CypherPolicy | None = None,
    ) -> AgentResult:
        """Answer one question; expected failures come back as outcome "failed", never raised.

        Safe to await from any event loop: the run itself happens on `agent_loop()`."""
        return await on_agent_loop(
            self._arun(question, history=history, on_progress=on_progress, policy=policy)
        )

    def context_for(
        self,
        schema: GraphSchema,
        policy: CypherPolicy | None,
        *,
        suggestions: list[str],
        on_progress: ProgressCallback | None = None,
    ) -> Context:
        """One run's dependencies as the nodes see them; its deadline starts now."""
        return Context(
            db=self.db,
            llms=self.llms,
            examples=self.examples,
            config=self.config,
            schema=schema,
            schema_fingerprint=self._fingerprint,
            description=self.describe(schema),
            suggestions=suggestions,
            policy=policy,
            on_progress=on_progress,
            deadline=time.monotonic() + self.config.question_deadline_s,
        )

    async def _arun(
        self,
        question: str,
        *,
        history: Sequence[Turn] = (),
        on_progress: ProgressCallback | None = None,
        policy: CypherPolicy | None = None,
    ) -> AgentResult:
        started = time.perf_counter()
        policy = policy or self.policy
        try:
            full = await asyncio.to_thread(lambda: self.schema)
        except GraphError as exc:
            logger.warning("graph unavailable: %s", exc)
            return _failure(question, "graph_down", nodes.FAILURE_TEXT["graph_down"], started)
        schema = restricted_schema(full, policy)
        setup_ms = (time.perf_counter() - started) * 1000
        ctx = self.context_for(
            schema,
            policy,
            suggestions=await asyncio.to_thread(self.suggestions, 3, schema),
            on_progress=on_progress,
        )
        turns = list(history)[-self.config.history_turns :] if self.config.history_turns else []
        initial: AgentState = {
            "question": question,
            "history": turns,
            "max_attempts": self.config.max_attempts,
            "attempt_count": 0,
        }
        try:
            final: dict[str, Any] = await asyncio.wait_for(
                self._compiled().ainvoke(
                    initial,
                    context=ctx,
                    config={"recursion_limit": 12 + 5 * self.config.max_attempts},
                ),
                timeout=self.config.question_deadline_s + 5,
            )
        except TimeoutError:
            return _failure(question, "deadline", nodes.FAILURE_TEXT["deadline"], started)
        except Exception:
            logger.exception("agent run failed unexpectedly")
            return _failure(
                question,
                "internal",
                "Something went wrong on my side while answering. Please try again; if it "
                "keeps happening, tell an admin (the bot's log has the details).",
                started,
            )
        result = result_from_state(question, final, setup_ms)
        result.schema_fingerprint = self._fingerprint
        used = result.example_ids
        if used:
            try:
                await asyncio.to_thread(self.examples.mark_used, list(used))
            except Exception:
                logger.warning("could not mark examples as used", exc_info=True)
        logger.info(
            "question answered: outcome=%s attempts=%d llm_calls=%d %.0f ms",
            result.outcome,
            len(result.attempts),
            result.llm_calls,
            (time.perf_counter() - started) * 1000,
        )
        return result

    def run(self, question: str, **kw: Any) -> AgentResult:
        """Synchronous `arun` for worker threads and scripts (not from inside an event loop)."""
        return asyncio.run_coroutine_threadsafe(self._arun(question, **kw), agent_loop()).result()


_loop: asyncio.AbstractEventLoop | None = None
_loop_guard = threading.Lock()


def agent_loop() -> asyncio.AbstractEventLoop:
    """The process's one event loop for agent runs, started on first use.

    LangChain's OpenAI clients share pooled HTTP connections (per base URL, process-wide), and
    an async connection belongs to the loop that opened it: runs on a fresh loop each time
    (asyncio.run per question) failed every other call on keep-alive servers with "Event loop
    is closed". So every run, from any thread or loop, executes here.
    """
    global _loop
    with _loop_guard:
        if _loop is None:
            loop = asyncio.new_event_loop()
            # Graph, memory and sync-only model calls run in this pool; the stdlib default
            # (cores + 4 threads) would queue concurrent questions behind each other.
            loop.set_default_executor(
                ThreadPoolExecutor(max_workers=64, thread_name_prefix="agent-io")
            )
            threading.Thread(target=loop.run_forever, name="agent-loop", daemon=True).start()
            _loop = loop
        return _loop


async def on_agent_loop(coro: Coroutine[Any, Any, T]) -> T:
    """Await `coro` on the agent loop, from whatever loop the caller runs on."""
    loop = agent_loop()
    if asyncio.get_running_loop() is loop:
        return await coro
    return await asyncio.wrap_future(asyncio.run_coroutine_threadsafe(coro, loop))


def _failure(question: str, kind: str, answer: str, started: float) -> AgentResult:
    return AgentResult(
        question=question,
        standalone_question=question,
        answer=answer,
        outcome="failed",
        error_kind=kind,
        timings_ms={"total": (time.perf_counter() - started) * 1000},
    )


def result_from_state(question: str, state: dict[str, Any], setup_ms: float) -> AgentResult:
    """The typed result of a finished run from the graph's final state."""
    calls: list[LLMCall] = state.get("llm_calls", [])
    reused = state.get("reused_example_id")
    example_ids = list(state.get("example_ids", []))
    if reused is not None:
        example_ids = [reused]
    outcome = state.get("outcome", "failed")
    answered = outcome in ("answered", "no_data")
    answer = state.get("answer", "")
    if outcome == "failed" and state.get("error_kind") == "llm_not_configured":
        answer = str(LLMNotConfiguredError())
    return AgentResult(
        question=question,
        standalone_question=state.get("standalone_question", question),
        answer=answer,
        outcome=outcome,
        cypher=state.get("cypher") or None,
        columns=list(state.get("columns", [])) if answered else [],
        rows=list(state.get("rows", [])) if answered else [],
        truncated=bool(state.get("truncated", False)) and answered,
        attempts=list(state.get("attempts", [])),
        llm_calls=len(calls),
        llm_steps=[call.step for call in calls],
        prompt_tokens=sum(call.prompt_tokens for call in calls),
        completion_tokens=sum(call.completion_tokens for call in calls),
        timings_ms={"setup": setup_ms, **state.get("timings_ms", {})},
        example_ids=example_ids,
        reused_example_id=reused,
        self_healed=bool(state.get("self_healed", False)),
        suggestions=list(state.get("suggestions", [])),
        error_kind=state.get("error_kind") if outcome == "failed" else None,
        ungrounded=bool(state.get("ungrounded", False)),
    )
