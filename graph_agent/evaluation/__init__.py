"""Accuracy harness: ask evaluation items, score the rows against gold Cypher, summarise."""

from __future__ import annotations

from graph_agent.evaluation.items import (
    SPLITS,
    Chain,
    EvalFileError,
    EvalItem,
    Split,
    assign_splits,
    chains,
    load_items,
    select_split,
)
from graph_agent.evaluation.report import ChartUnavailableError, summarize, write_chart
from graph_agent.evaluation.runner import (
    MODES,
    GoldCache,
    Mode,
    ResultsFile,
    RunOptions,
    evaluate,
)
from graph_agent.evaluation.scoring import Score, score_answer

__all__ = [
    "MODES",
    "SPLITS",
    "Chain",
    "ChartUnavailableError",
    "EvalFileError",
    "EvalItem",
    "GoldCache",
    "Mode",
    "ResultsFile",
    "RunOptions",
    "Score",
    "Split",
    "assign_splits",
    "chains",
    "evaluate",
    "load_items",
    "score_answer",
    "select_split",
    "summarize",
    "write_chart",
]
