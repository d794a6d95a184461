"""The agent's limits and switches (built from Settings by bot/wiring.py; no environment here)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

GuardFirst = Literal["all", "foreign-words", "off-graph"]
"""Which first questions the LLM guard sees (AgentConfig.guard_first_questions)."""


@dataclass(frozen=True)
class AgentConfig:
    """Everything that bounds or shapes one agent run."""

    max_attempts: int = 3
    """Cypher statements tried per question (the first one plus corrections)."""
    candidates: int = 1
    """Statements the first generation samples (1: one call, as always; N > 1: N calls, the
    others at a temperature above 0, every one that passes the checks is run, and the rows
    most of them agree on go on: graph_agent/candidates.py). The first correction has its own
    number, retry_candidates."""
    retry_candidates: int = 1
    """Statements the first correction offers when the first statement failed (1: the one
    correction call; N > 1: that call and N - 1 fresh generations at a temperature above 0,
    asked at once, every one that passes the checks run, rows before no rows, then the rows
    most of them agree on). The happy path never pays for it."""
    query_timeout_s: float = 10.0
    """Engine timeout per statement."""
    question_deadline_s: float = 180.0
    """Wall-clock budget for the whole question, LLM calls included."""
    rows_to_llm: int = 100
    """Rows the evaluate+answer step sees."""
    rows_chars_to_llm: int = 8000
    """Characters of rendered rows the evaluate+answer step sees."""
    max_rows: int = 1000
    """Rows kept in the result (previews, CSV uploads); also the LIMIT added to open queries."""
    few_shot_k: int = 3
    """Examples shown to the generate step."""
    schema_prune_labels: int = 25
    """Above this many labels, the prompt shows only the labels relevant to the question."""
    history_turns: int = 5
    """Previous turns given to the rewrite step."""
    history_chars: int = 4000
    """Characters of history given to the rewrite step."""
    value_hints: int = 5
    """Stored values (entity names) matched to phrases of the question, at most."""
    schema_paths: int = 3
    """Schema paths from the question's values to the labels it asks about shown to generate
    and correct, at most (graph_agent/schema_paths.py; 0: none)."""
    guard_first_questions: GuardFirst = "all"
    """Which first questions (no history) the LLM guard sees once the cheap checks passed them:
    "all"; "foreign-words" (those with a content word the graph does not know); "off-graph"
    (only those none of whose content words the graph knows). Follow-ups always go to it, for
    their rewrite. The defaults here make every call; the product's Settings skip the calls
    that had nothing to decide on the eval sets' dev splits (docs/eval.md)."""
    evaluate_plain_rows: bool = True
    """Ask the evaluator about rows that plainly answer (one value, or a short list or table);
    False writes the answer from the rows without that call."""
    word_tool_answers: bool = False
    """Have the model word (and judge) a graph tool's rows; False answers with the tool's own
    rendering, exact and without that call."""
    use_candidates: bool = False
    """Self-healed candidates may serve as examples (the example store applies it)."""
    graph_description: str | None = None
    """What the graph holds, for the topic guard; derived from the schema when unset."""
    include_labels: tuple[str, ...] = ()
    """Only these labels are visible to the agent (empty: all)."""
    exclude_labels: tuple[str, ...] = ()
    """These labels are hidden from the agent."""
    schema_sample: int = 1000
    """Nodes sampled per label when reading the schema."""
    llm_max_tokens: int | None = None
    """Cap on every LLM reply, in tokens; None: each step's own cap (llm.STEP_MAX_TOKENS)."""
    disabled_rules: frozenset[str] = frozenset()
    """Repair rules never asked (graph_agent/repair; `cypherbot eval --without-rule NAME`)."""
    json_mode: Literal["prompt", "json_object"] = "prompt"
    """`prompt`: ask for JSON in words (works everywhere); `json_object`: also bind
    response_format={"type": "json_object"}."""
