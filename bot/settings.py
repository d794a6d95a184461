"""cypherbot's settings: the one place that reads the environment (and an optional .env)."""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Literal
from urllib.parse import urlsplit

from pydantic import Field, SecretStr, field_validator
from pydantic_settings import BaseSettings, SettingsConfigDict

from graph_agent.candidates import RETRY_CANDIDATES
from graph_agent.config import GuardFirst
from guardrails.channels import parse_channel_restrictions
from guardrails.redact import SecretFilter


class Settings(BaseSettings):
    """Every setting, with its environment variable (upper-case field name) and a safe default."""

    model_config = SettingsConfigDict(env_file=".env", env_file_encoding="utf-8", extra="ignore")

    # --- storage -----------------------------------------------------------------------
    data_dir: Path = Field(Path("data"), description="Embedded graph data, memory database, logs.")
    memory_url: str | None = Field(
        None,
        description="Unset: the memory is a SQLite file under DATA_DIR. "
        "`postgresql://user:password@host:5432/db`: one memory shared by several bot instances.",
    )

    # --- graph database ----------------------------------------------------------------
    graph_url: str = Field(
        "embedded",
        description="`embedded` (default), `falkordb://host:port/graph`, or `neo4j://`, "
        "`neo4j+s://`, `bolt://`, `bolt+s://` URLs.",
    )
    graph_name: str = Field("cypherbot", description="FalkorDB graph key (embedded/falkordb).")
    neo4j_user: str = Field("neo4j", description="Neo4j user (a read-only `reader` is advised).")
    neo4j_password: SecretStr = Field(SecretStr(""), description="Neo4j password.")
    neo4j_database: str | None = Field(None, description="Neo4j database; server default if unset.")
    schema_include: list[str] = Field(default_factory=list, description="Only these labels.")
    schema_exclude: list[str] = Field(default_factory=list, description="Hide these labels.")
    schema_sample: int = Field(1000, description="Nodes sampled per label for the schema.")
    graph_description: str | None = Field(
        None, description="What the graph holds, for the topic guard; derived from the schema."
    )

    # --- LLM ---------------------------------------------------------------------------
    openai_api_key: SecretStr | None = Field(None, description="API key (any value for local).")
    openai_base_url: str | None = Field(
        None, description="OpenAI-compatible endpoint, e.g. http://localhost:11434/v1 (Ollama)."
    )
    llm_model: str = Field("gpt-4o-mini", description="Model for Cypher generation/correction.")
    llm_fast_model: str | None = Field(
        None, description="Model for rewrite/guard/answer; defaults to LLM_MODEL."
    )
    llm_timeout_s: float = Field(60.0, description="Per-request LLM timeout in seconds.")
    llm_max_retries: int = Field(2, description="Retries on 429/5xx.")
    llm_max_tokens: int | None = Field(
        None,
        description="Cap on every LLM reply, in tokens; unset: per step (guard 200, "
        "generate/correct 400, evaluate 500).",
    )
    llm_json_mode: Literal["prompt", "json_object"] = Field(
        "prompt",
        description="How structured replies are asked for: `prompt` works everywhere; "
        "`json_object` adds response_format (OpenAI, llama.cpp, vLLM).",
    )

    # --- agent -------------------------------------------------------------------------
    max_attempts: int = Field(
        2,
        description="Cypher attempts per question (generate+corrections). 2: on the test splits "
        "a third attempt turned 0 of 30 failing questions right (docs/eval.md).",
    )
    candidates: int | None = Field(
        None,
        ge=1,
        le=5,
        description="Statements the first generation samples (N calls, all but one at "
        "temperature 0.7); every one that passes the checks is run and the rows most of them "
        "agree on are answered (1: one call; the first correction's: RETRY_CANDIDATES). "
        "Unset: 3 on OpenAI's own API (no OPENAI_BASE_URL: the calls run at once), 1 on an "
        "OPENAI_BASE_URL server (a local one queues them). Test splits, local 1.5B model, 3 vs 1: strict 50% -> 54%, "
        "2x the calls and tokens, 2.5x the median latency (docs/eval.md).",
    )
    retry_candidates: int = Field(
        RETRY_CANDIDATES,
        ge=1,
        le=5,
        description="Statements the first correction offers when the first statement failed: "
        "the correction and N-1 fresh generations at temperature 0.7, asked at once; every one "
        "that passes the checks is run, rows before none, then the rows most agree on (1: one "
        "correction call). The happy path never pays for it. Test splits, local 1.5B model, 3 "
        "vs 1: strict 86 -> 90 of 160, LLM calls 1.21 -> 1.55, p50 3.6 -> 3.4 s, p95 8.9 -> "
        "16.0 s (docs/eval.md).",
    )
    query_timeout_s: float = Field(10.0, description="Engine timeout per query.")
    question_deadline_s: float = Field(180.0, description="Deadline across all attempts.")
    rows_to_llm: int = Field(100, description="Rows the answer step sees.")
    rows_chars_to_llm: int = Field(8000, description="Characters of rows sent to the LLM.")
    rows_shown: int = Field(15, description="Rows shown in the Slack preview.")
    few_shot_k: int = Field(3, description="Few-shot examples in the generate prompt.")
    schema_prune_labels: int = Field(
        25, description="Prune the schema to the relevant part above this many labels."
    )
    schema_paths: int = Field(
        3,
        description="Schema paths from the question's named values to what it asks about, "
        "shown to the model as ready MATCH patterns (0: off).",
    )
    guard_first_questions: GuardFirst = Field(
        "off-graph",
        description="Which first questions the LLM guard sees after the cheap checks passed "
        "them: `all`, `foreign-words` (a word the graph lacks), `off-graph` (no word the graph "
        "knows; one LLM call fewer on most questions). Follow-ups always go to it.",
    )
    evaluate_plain_rows: bool = Field(
        False,
        description="Ask the LLM to judge and word rows that plainly answer (one value, a "
        "short list or table; false: the answer is written from the rows, one call fewer).",
    )
    word_tool_answers: bool = Field(
        False,
        description="Have the LLM word a graph tool's answer (false: the tool's own text, "
        "exact, one call fewer).",
    )
    history_turns: int = Field(5, description="Previous turns given to the rewrite step.")
    history_chars: int = Field(4000, description="Characters of history kept for the rewrite.")
    use_candidates: bool = Field(False, description="Use self-healed candidates as examples.")
    embeddings_model: str | None = Field(
        None, description="OpenAI-compatible embeddings model for semantic example retrieval."
    )
    schema_examples: Literal["auto", "off"] = Field(
        "auto",
        description="`auto`: generate few-shot examples from the graph's schema when its "
        "fingerprint has none yet (at start-up); `off`: only `cypherbot examples bootstrap`.",
    )
    schema_examples_cap: int = Field(8, description="Schema-generated examples kept per shape.")
    schema_examples_wording: Literal["plain", "llm"] = Field(
        "plain",
        description="`plain`: the generated questions as worded from the schema; `llm`: one "
        "pass through the fast LLM rewords them the way a person asks (the verified Cypher "
        "is kept; a rewording that drops a value is refused). With a 1.5B model: dev +1, "
        "test -2 items (docs/eval.md).",
    )

    # --- memory ------------------------------------------------------------------------
    retention_days: int = Field(90, description="Conversation turns older than this are purged.")

    # --- Slack -------------------------------------------------------------------------
    slack_bot_token: SecretStr | None = Field(None, description="xoxb-… bot token.")
    slack_app_token: SecretStr | None = Field(None, description="xapp-… token: Socket Mode.")
    slack_signing_secret: SecretStr | None = Field(None, description="HTTP mode request signing.")
    slack_api_url: str | None = Field(None, description="Web API base URL (tests, playground).")
    host: str = Field("127.0.0.1", description="HTTP mode / playground bind address.")
    port: int = Field(3000, description="HTTP mode port.")
    playground_port: int = Field(8765, description="Playground web page port.")
    workers: int = Field(
        64,
        description="Questions answered at once (threads; most of their time is spent waiting on "
        "the LLM). 50 conversations at once take 1.4× one conversation's time at 64, 2.6× at 32 "
        "(bench/slack.py).",
    )
    claim_lease_s: float = Field(
        120.0,
        gt=0,
        description="Seconds a claimed Slack delivery is protected while it is answered; a "
        "retry after that (to this or another instance) re-runs an attempt that died.",
    )
    teach_reactions: list[str] = Field(
        default_factory=lambda: ["+1", "thumbsup"], description="Reactions that teach."
    )
    negative_reactions: list[str] = Field(
        default_factory=lambda: ["-1", "thumbsdown"], description="Reactions that count against."
    )
    csv_upload: bool = Field(True, description="Upload large results as CSV in the thread.")
    stream_answers: Literal["auto", "off"] = Field(
        "auto",
        description="`auto`: where the assistant status works, stream the answer's text "
        "(chat.startStream) and end it with the table, query and feedback buttons, falling "
        "back to a plain message where streaming is refused; `off`: never stream.",
    )
    charts: Literal["auto", "off"] = Field(
        "auto",
        description="`auto`: a chart follows answers whose rows read better as a picture "
        "(counts per category, numbers over time), and a picture of the routes follows a "
        "connection longer than two hops; `off`: never.",
    )

    # --- guardrails --------------------------------------------------------------------
    max_question_chars: int = Field(2000, description="Longer questions are declined kindly.")
    rate_per_minute: int = Field(6, description="Questions per user per minute.")
    rate_per_day: int = Field(200, description="Questions per user per day.")
    daily_token_budget: int = Field(2_000_000, description="LLM tokens per workspace per day.")
    allowed_channels: list[str] = Field(default_factory=list, description="Answer only here.")
    denied_channels: list[str] = Field(default_factory=list, description="Never answer here.")
    allow_dms: bool = Field(True, description="Answer direct messages.")
    admin_users: list[str] = Field(
        default_factory=list,
        description="Slack user ids whose Home tab also shows usage and the examples waiting "
        "for review.",
    )
    channel_restrictions: str = Field(
        "",
        description="Names a channel may not see: `C123:Person.salary,Incident,[PAID];*:.ssn` "
        "(`Label`, `Label.property`, `.property`, `[REL_TYPE]`; `*` = every channel).",
    )
    log_user_text: Literal["truncate", "redact", "full"] = Field(
        "truncate", description="User text in INFO logs."
    )
    log_level: str = Field("INFO", description="Logging level.")

    @field_validator("channel_restrictions")
    @classmethod
    def _restrictions_parse(cls, value: str) -> str:
        # Parsed here so that a typo stops the bot at startup, naming the setting.
        parse_channel_restrictions(value)
        return value

    @field_validator("memory_url")
    @classmethod
    def _memory_url_is_postgres(cls, value: str | None) -> str | None:
        if not value:
            return None
        if urlsplit(value).scheme not in ("postgresql", "postgres"):
            raise ValueError(
                "MEMORY_URL must be a postgresql:// URL (e.g. postgresql://bot:pw@db:5432/"
                "cypherbot); leave it unset for the SQLite file under DATA_DIR"
            )
        return value

    @property
    def memory_path(self) -> Path:
        """The SQLite memory file under DATA_DIR (used when MEMORY_URL is unset)."""
        return self.data_dir / "cypherbot.sqlite3"

    @property
    def memory_location(self) -> str:
        """Where the memory is: MEMORY_URL, else the SQLite file under DATA_DIR."""
        return self.memory_url or str(self.memory_path)

    @property
    def llm_configured(self) -> bool:
        return self.openai_api_key is not None or self.openai_base_url is not None

    @property
    def candidates_in_use(self) -> int:
        """CANDIDATES, or when unset 3 on OpenAI's own API and 1 on an OPENAI_BASE_URL server."""
        if self.candidates is not None:
            return self.candidates
        return 1 if self.openai_base_url else 3

    def secret_values(self) -> list[str]:
        """Every configured secret: Slack tokens, signing secret, passwords, the API key."""
        secrets = [
            self.slack_bot_token,
            self.slack_app_token,
            self.slack_signing_secret,
            self.neo4j_password,
            self.openai_api_key,
        ]
        values = [s.get_secret_value() for s in secrets if s is not None]
        for url in (self.graph_url, self.openai_base_url, self.memory_url):
            password = urlsplit(url).password if url else None
            if password:
                values.append(password)
        return [v for v in values if v]


class _ConfiguredSecrets(SecretFilter):
    """The filter `mask_secrets_in_logs` installs (so it replaces only its own)."""


_masked: set[str] = set()


def mask_secrets_in_logs(settings: Settings) -> None:
    """Mask every configured secret in what the root logger's handlers write.

    Handlers, not loggers, because a logger's filter does not see its children's records.
    Secrets accumulate (one process may serve several configurations, as tests do); call
    again after adding handlers.
    """
    _masked.update(settings.secret_values())
    secret_filter = _ConfiguredSecrets(sorted(_masked))
    for handler in logging.getLogger().handlers:
        for old in [f for f in handler.filters if isinstance(f, _ConfiguredSecrets)]:
            handler.removeFilter(old)
        handler.addFilter(secret_filter)


def settings_table() -> str:
    """The README's configuration table (a test keeps the README in step with this)."""
    lines = ["| variable | default | meaning |", "|---|---|---|"]
    for name, field in Settings.model_fields.items():
        default = field.default_factory() if field.default_factory else field.default  # type: ignore[call-arg]
        if isinstance(default, SecretStr):
            default = ""
        shown = "" if default is None or default == "" else f"`{default}`"
        lines.append(f"| `{name.upper()}` | {shown} | {field.description} |")
    return "\n".join(lines)
