"""What the graph's nodes depend on, passed per run through LangGraph's Runtime[Context]."""

from __future__ import annotations

import logging
import time
from dataclasses import dataclass, field

from graph_agent.config import AgentConfig
from graph_agent.graphdb.protocol import GraphReader, GraphSchema
from graph_agent.llm import LLMs
from graph_agent.result import ProgressCallback, ProgressEvent
from guardrails import CypherPolicy
from memory.types import ExampleStore

logger = logging.getLogger(__name__)


@dataclass
class Context:
    """Run-scoped dependencies: the database, the models, the stores, the limits."""

    db: GraphReader
    """The graph to read."""
    llms: LLMs | None
    """Chat models, or None when no LLM is configured (only verified reuse can answer)."""
    examples: ExampleStore
    """Few-shot examples, exact reuse and self-healed hand-off."""
    config: AgentConfig
    """Limits and switches."""
    schema: GraphSchema
    """The schema as this run may see it (hidden labels already removed)."""
    schema_fingerprint: str | None
    """Fingerprint of the full schema, stored with self-healed candidates."""
    description: str
    """What the graph holds, in one or two sentences, for the guard and refusals."""
    suggestions: list[str]
    """Example questions for refusals."""
    policy: CypherPolicy | None = None
    """Read-only policy (and channel restrictions) applied to every statement."""
    on_progress: ProgressCallback | None = None
    """Receives a ProgressEvent when a step starts."""
    deadline: float = field(default_factory=lambda: time.monotonic() + 180.0)
    """time.monotonic() value after which the run gives up."""

    def remaining_s(self) -> float:
        """Seconds left before the question's deadline."""
        return self.deadline - time.monotonic()

    def progress(self, step: str, text: str, attempt: int = 1, *, preview: str = "") -> None:
        """Tell the caller a step is starting; a failing callback never breaks the run."""
        if self.on_progress is None:
            return
        try:
            self.on_progress(ProgressEvent(step=step, text=text, attempt=attempt, preview=preview))
        except Exception:  # the Slack status update is best effort
            logger.warning("progress callback failed", exc_info=True)
