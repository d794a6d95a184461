"""Builds the agent and its dependencies from Settings (shared by the CLI and the Slack app)."""

from __future__ import annotations

import asyncio
import logging
import threading
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass
from typing import Final, Literal

from pydantic import SecretStr

from bot.settings import Settings
from graph_agent.agent import Agent
from graph_agent.config import AgentConfig
from graph_agent.graphdb import GraphDB, connect
from graph_agent.llm import LLMs, make_llms
from graph_agent.result import AgentResult
from graph_agent.schema_examples import (
    GenerationReport,
    SchemaExample,
    generate_schema_examples,
    natural_questions,
)
from memory import Embedder, Memory, open_memory
from memory.conversations import ConversationStore
from memory.types import ExampleStore

logger = logging.getLogger(__name__)


def agent_config(settings: Settings) -> AgentConfig:
    """The agent's limits and switches from Settings."""
    return AgentConfig(
        max_attempts=settings.max_attempts,
        candidates=settings.candidates_in_use,
        retry_candidates=settings.retry_candidates,
        query_timeout_s=settings.query_timeout_s,
        question_deadline_s=settings.question_deadline_s,
        rows_to_llm=settings.rows_to_llm,
        rows_chars_to_llm=settings.rows_chars_to_llm,
        few_shot_k=settings.few_shot_k,
        schema_prune_labels=settings.schema_prune_labels,
        schema_paths=settings.schema_paths,
        guard_first_questions=settings.guard_first_questions,
        evaluate_plain_rows=settings.evaluate_plain_rows,
        word_tool_answers=settings.word_tool_answers,
        history_turns=settings.history_turns,
        history_chars=settings.history_chars,
        use_candidates=settings.use_candidates,
        graph_description=settings.graph_description,
        include_labels=tuple(settings.schema_include),
        exclude_labels=tuple(settings.schema_exclude),
        schema_sample=settings.schema_sample,
        json_mode=settings.llm_json_mode,
        llm_max_tokens=settings.llm_max_tokens,
    )


def build_llms(settings: Settings) -> LLMs | None:
    """Chat models from the LLM settings, or None when none are configured."""
    key = settings.openai_api_key.get_secret_value() if settings.openai_api_key else None
    return make_llms(
        api_key=key,
        base_url=settings.openai_base_url,
        model=settings.llm_model,
        fast_model=settings.llm_fast_model,
        timeout_s=settings.llm_timeout_s,
        max_retries=settings.llm_max_retries,
    )


def build_db(settings: Settings) -> GraphDB:
    """The graph database GRAPH_URL names (embedded FalkorDB by default)."""
    return connect(
        settings.graph_url,
        data_dir=settings.data_dir,
        graph_name=settings.graph_name,
        user=settings.neo4j_user,
        password=settings.neo4j_password.get_secret_value(),
        database=settings.neo4j_database,
    )


def build_agent(
    settings: Settings,
    examples: ExampleStore,
    *,
    db: GraphDB | None = None,
    llms: LLMs | None = None,
) -> Agent:
    """An Agent on the configured graph and LLMs (pass `db`/`llms` to reuse or replace them)."""
    return Agent(
        db if db is not None else build_db(settings),
        llms if llms is not None else build_llms(settings),
        examples,
        agent_config(settings),
    )


class _FromSettings:
    """Marker: build this part from Settings (callers pass their own, or None for none)."""


FROM_SETTINGS: Final = _FromSettings()


@dataclass(frozen=True)
class Runtime:
    """What every command, the bot, the playground and the eval run on."""

    db: GraphDB
    memory: Memory | None
    """None: no memory (`ask --no-memory`); the agent then has no examples."""
    agent: Agent


@contextmanager
def open_runtime(
    settings: Settings,
    *,
    db: GraphDB | None = None,
    llms: LLMs | _FromSettings | None = FROM_SETTINGS,
    memory: Memory | Literal["settings"] | None = "settings",
) -> Iterator[Runtime]:
    """The graph, the memory and the agent, built once and closed after (what was passed in is
    the caller's to close). The memory's examples learn the agent's schema fingerprint here,
    so examples verified on another schema are re-checked before use."""
    from graph_agent.examples import InMemoryExampleStore

    with ExitStack() as stack:
        if db is None:
            db = build_db(settings)
            stack.callback(db.close)
        if memory == "settings":
            memory = open_memory_for(settings)
            stack.callback(memory.close)
        examples: ExampleStore = memory.examples if memory is not None else InMemoryExampleStore()
        models = build_llms(settings) if isinstance(llms, _FromSettings) else llms
        # The agent passes its schema fingerprint with every similar()/exact() call.
        yield Runtime(db, memory, Agent(db, models, examples, agent_config(settings)))


def record_result(
    conversations: ConversationStore,
    conversation: str,
    *,
    user: str,
    question: str,
    result: AgentResult,
) -> int:
    """Store one answered question as a turn of `conversation`; return the turn id."""
    return conversations.record(
        conversation,
        user=user,
        question=question,
        standalone_question=result.standalone_question or question,
        cypher=result.cypher,
        answer=result.answer,
        outcome=result.outcome,
        timings_ms=result.timings_ms,
        llm_calls=result.llm_calls,
        prompt_tokens=result.prompt_tokens,
        completion_tokens=result.completion_tokens,
        example_ids=result.example_ids,
        attempts=len(result.attempts),
        schema_fingerprint=result.schema_fingerprint,
    )


def build_embedder(settings: Settings) -> Embedder | None:
    """OpenAI-compatible embeddings for semantic example retrieval, when EMBEDDINGS_MODEL is set
    (same endpoint and key as the chat models); None keeps retrieval lexical (FTS5/BM25)."""
    if not settings.embeddings_model:
        return None
    from langchain_openai import OpenAIEmbeddings

    key = settings.openai_api_key.get_secret_value() if settings.openai_api_key else "none"
    embeddings = OpenAIEmbeddings(
        model=settings.embeddings_model,
        openai_api_base=settings.openai_base_url,
        openai_api_key=SecretStr(key),
        request_timeout=settings.llm_timeout_s,
        max_retries=settings.llm_max_retries,
        # Send plain strings: local servers do not all accept OpenAI's pre-tokenised input.
        check_embedding_ctx_length=False,
    )
    return embeddings.embed_documents


def open_memory_for(settings: Settings) -> Memory:
    """The memory database (MEMORY_URL, else the SQLite file under DATA_DIR), with semantic
    retrieval when it is configured."""
    return open_memory(
        settings.memory_location,
        embedder=build_embedder(settings),
        embedder_name=settings.embeddings_model or "default",
        include_candidates=settings.use_candidates,
    )


def refresh_schema_examples(
    settings: Settings, memory: Memory, agent: Agent, *, force: bool = False
) -> GenerationReport | None:
    """Generate few-shot examples from the agent's schema and store them as source `schema`
    (retiring those of older fingerprints); None when nothing was to do.

    Runs when `force` is set, or when SCHEMA_EXAMPLES=auto and this schema fingerprint has
    no schema examples yet.
    """
    fingerprint = agent.schema_fingerprint
    if not force and (
        settings.schema_examples == "off" or memory.examples.has_schema_examples(fingerprint)
    ):
        return None
    report = generate_schema_examples(
        agent.db,
        agent.schema,
        cap_per_shape=settings.schema_examples_cap,
        timeout_s=min(settings.query_timeout_s, 5.0),
    )
    report.kept = reworded_examples(settings, agent, report.kept)
    memory.examples.replace_schema_examples(
        ((e.question, e.cypher, e.shape) for e in report.kept),
        fingerprint,
        cap_per_shape=settings.schema_examples_cap,
    )
    return report


def reworded_examples(
    settings: Settings, agent: Agent, examples: list[SchemaExample]
) -> list[SchemaExample]:
    """`examples` with natural questions when SCHEMA_EXAMPLES_WORDING=llm and the agent has
    LLMs (one pass through the fast model; the Cypher is kept); else, or on any LLM failure,
    the plain questions. Never raises for the LLM's sake: the examples are verified either way."""
    if settings.schema_examples_wording != "llm" or not examples:
        return examples
    if agent.llms is None:
        logger.info("SCHEMA_EXAMPLES_WORDING=llm but no LLM is configured: plain questions kept")
        return examples
    rewording = natural_questions(
        examples,
        agent.llms.fast,
        timeout_s=settings.llm_timeout_s,
        json_mode=settings.llm_json_mode,
    )
    result: list[list[SchemaExample]] = []

    def run() -> None:
        try:
            result.append(asyncio.run(rewording))
        except Exception:
            logger.warning("could not reword schema examples; plain questions kept", exc_info=True)

    # A thread of its own, so its event loop never meets one the caller may be running.
    worker = threading.Thread(target=run, name="schema-example-wording")
    worker.start()
    worker.join()
    return result[0] if result else examples


def start_schema_examples(
    settings: Settings, memory: Memory, agent: Agent
) -> threading.Thread | None:
    """`refresh_schema_examples` on a thread, so a big graph never holds up the start;
    None when SCHEMA_EXAMPLES=off. Join the thread before closing `memory`."""
    if settings.schema_examples == "off":
        return None

    def run() -> None:
        try:
            refresh_schema_examples(settings, memory, agent)
        except Exception:  # examples are a bonus; the bot answers without them
            logger.warning("could not generate schema examples", exc_info=True)

    thread = threading.Thread(target=run, name="schema-examples", daemon=True)
    thread.start()
    return thread
