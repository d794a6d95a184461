"""The records memory keeps and the interfaces the agent and the bot use to reach them."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Literal, Protocol

Outcome = Literal["answered", "no_data", "out_of_scope", "needs_clarification", "failed"]
ExampleSource = Literal["seed", "thumbs_up", "self_healed", "admin", "schema"]
"""`schema`: generated from the graph's own schema (few-shot only, never reused verbatim)."""
ExampleStatus = Literal["active", "candidate", "retired"]


@dataclass(frozen=True)
class Turn:
    """One question and its answer in a conversation."""

    question: str
    standalone_question: str
    cypher: str | None
    answer: str
    outcome: Outcome = "answered"
    id: int | None = None
    conversation: str = ""
    """Conversation key: `team:channel:thread_ts` for Slack, `cli:<name>` for the CLI."""
    user: str = ""
    example_ids: tuple[int, ...] = ()
    """Examples the agent used (shown in the prompt or reused) to answer this turn."""
    created_at: datetime | None = None
    """When the turn was recorded (UTC)."""
    channel: str | None = None
    """Slack channel of the answer message, once the Slack layer attached it."""
    ts: str | None = None
    """Slack ts of the answer message, once the Slack layer attached it."""
    attempts: int = 0
    """Cypher attempts the agent made (generate + corrections)."""
    schema_fingerprint: str | None = None
    """Fingerprint of the graph schema the turn's Cypher ran on."""


@dataclass(frozen=True)
class Example:
    """A verified (question, Cypher) pair used as a few-shot example."""

    id: int
    question: str
    cypher: str
    source: ExampleSource = "seed"
    status: ExampleStatus = "active"
    up_votes: int = 0
    down_votes: int = 0
    schema_fingerprint: str | None = None
    taught_by: str | None = None
    times_used: int = 0
    verified_on_current: bool = True
    """False when the example was verified on another schema fingerprint (or none is known):
    the agent must re-validate it before use."""
    score: float = 0.0
    """Retrieval score of the last `similar()` call (higher is closer); 0 elsewhere."""
    created_at: datetime | None = None
    retired_reason: str | None = None
    """`admin`, `votes`, `untaught` or `schema` (the schema changed) when retired."""
    shape: str | None = None
    """The question shape a `schema` example teaches (one_hop, top_count…); None for others."""


class ExampleStore(Protocol):
    """Few-shot examples, as the agent sees them."""

    def similar(
        self, question: str, k: int = 3, *, schema_fingerprint: str | None = None
    ) -> list[Example]:
        """The k active examples most like `question`, diverse, best first. Those verified on
        another schema than `schema_fingerprint` (the graph's now) come back with
        `verified_on_current=False`: the agent re-validates them before use."""
        ...

    def exact(self, question: str, *, schema_fingerprint: str | None = None) -> Example | None:
        """An active, trusted example (>= 2 up-votes or admin/seed) whose normalised question
        equals this one; `verified_on_current` as in `similar`."""
        ...

    def add_candidate(self, question: str, cypher: str, schema_fingerprint: str | None) -> int:
        """Record a self-healed (question, Cypher) pair as a candidate; return its id."""
        ...

    def mark_used(self, ids: list[int]) -> None: ...
