"""The Agent the bot and the CLI call: one graph database, its models and memory, and a
compiled state machine (graph_agent.flow) that answers one question at a time."""

from __future__ import annotations

import asyncio
import logging
import threading
import time
from collections.abc import Sequence
from typing import Any

from graph_agent import describe as describing
from graph_agent.config import AgentConfig
from graph_agent.context import Context
from graph_agent.errors import FAILURE_TEXT
from graph_agent.flow import Flow, compiled
from graph_agent.graphdb.errors import GraphError
from graph_agent.graphdb.protocol import GraphReader, GraphSchema
from graph_agent.graphdb.schema import schema_fingerprint
from graph_agent.llm import LLMs
from graph_agent.loop import on_agent_loop, run_on_agent_loop
from graph_agent.restrict import restricted_schema
from graph_agent.result import AgentResult, Choice, ProgressCallback, failure, result_from_state
from graph_agent.state import AgentState
from guardrails import CypherPolicy
from memory.types import ExampleStore, Turn

logger = logging.getLogger(__name__)


class Agent:
    """Answers questions about one graph database; safe to share between threads."""

    def __init__(
        self,
        db: GraphReader,
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

    def describe(self, schema: GraphSchema | None = None) -> str:
        """What the graph holds, in a sentence or two (the setting wins when given)."""
        return describing.describe(schema or self.schema, self.config.graph_description)

    def suggestions(self, n: int = 3, schema: GraphSchema | None = None) -> list[str]:
        """Example questions: taught examples first, then questions derived from the schema."""
        chosen = schema or self.schema
        return describing.suggestions(chosen, self.examples, n, self._fingerprint)

    # --- running --------------------------------------------------------------------------

    async def arun(
        self,
        question: str,
        *,
        history: Sequence[Turn] = (),
        on_progress: ProgressCallback | None = None,
        policy: CypherPolicy | None = None,
        flow: Flow = "full",
        choice: Choice | None = None,
    ) -> AgentResult:
        """Answer one question; expected failures come back as outcome "failed", never raised.

        `policy` replaces the agent's own for this question (a channel's restrictions).
        `flow="single-shot"` is the eval's baseline: one generation run as-is.
        `choice` is the person's answer to a "did you mean…?" (one of the previous result's
        `choices`): the question (`choice.question`) continues with that entity, without
        understanding it again and without asking back a second time.
        Safe to await from any event loop: the run itself happens on `agent_loop()`."""
        return await on_agent_loop(
            self._arun(
                question,
                history=history,
                on_progress=on_progress,
                policy=policy,
                flow=flow,
                choice=choice,
            )
        )

    def run(
        self,
        question: str,
        *,
        history: Sequence[Turn] = (),
        on_progress: ProgressCallback | None = None,
        policy: CypherPolicy | None = None,
        flow: Flow = "full",
        choice: Choice | None = None,
    ) -> AgentResult:
        """Synchronous `arun` for worker threads and scripts (not from inside an event loop)."""
        return run_on_agent_loop(
            self._arun(
                question,
                history=history,
                on_progress=on_progress,
                policy=policy,
                flow=flow,
                choice=choice,
            )
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
        history: Sequence[Turn],
        on_progress: ProgressCallback | None,
        policy: CypherPolicy | None,
        flow: Flow,
        choice: Choice | None = None,
    ) -> AgentResult:
        started = time.perf_counter()
        policy = policy or self.policy
        try:
            # Bounded like the rest of the run: an engine that is stopped rather than gone
            # (SIGSTOP, a frozen VM) answers no read and raises nothing, and the first read of
            # the schema happens here. The read goes on in its thread and caches the schema
            # once the engine is back.
            full = await asyncio.wait_for(
                asyncio.to_thread(lambda: self.schema), self.config.question_deadline_s
            )
        except GraphError as exc:
            logger.warning("graph unavailable: %s", exc)
            return failure(question, "graph_down", FAILURE_TEXT["graph_down"], started)
        except TimeoutError:
            logger.warning(
                "graph unavailable: no schema within %.0f s", self.config.question_deadline_s
            )
            return failure(question, "graph_down", FAILURE_TEXT["graph_down"], started)
        schema = restricted_schema(full, policy)
        setup_ms = (time.perf_counter() - started) * 1000
        single = flow == "single-shot"  # no guard, so no refusal to suggest questions for
        ctx = self.context_for(
            schema,
            policy,
            suggestions=[] if single else await asyncio.to_thread(self.suggestions, 3, schema),
            on_progress=on_progress,
        )
        turns = list(history)[-self.config.history_turns :] if self.config.history_turns else []
        initial: AgentState = {
            "question": question,
            "history": [] if single else turns,
            "max_attempts": self.config.max_attempts,
            "attempt_count": 0,
        }
        if self.config.candidates > 1 and not single:  # the baseline stays one generation
            initial["candidate_count"] = self.config.candidates
        if choice is not None and not single:
            initial["tool_request"] = choice.request
            initial["clarified"] = True
        try:
            final: dict[str, Any] = await asyncio.wait_for(
                compiled(flow).ainvoke(
                    initial,
                    context=ctx,
                    config={"recursion_limit": 12 + 5 * self.config.max_attempts},
                ),
                timeout=self.config.question_deadline_s + 5,
            )
        except TimeoutError:
            return failure(question, "deadline", FAILURE_TEXT["deadline"], started)
        except Exception:
            logger.exception("agent run failed unexpectedly")
            return failure(question, "internal", FAILURE_TEXT["internal"], started)
        result = result_from_state(question, final, setup_ms)
        result.schema_fingerprint = self._fingerprint
        used = result.example_ids
        if used:
            try:
                await asyncio.to_thread(self.examples.mark_used, list(used))
            except Exception:
                logger.warning("could not mark examples as used", exc_info=True)
        logger.info(
            "question answered: outcome=%s tool=%s attempts=%d llm_calls=%d %.0f ms",
            result.outcome,
            result.tool or "-",
            len(result.attempts),
            result.llm_calls,
            (time.perf_counter() - started) * 1000,
        )
        return result
