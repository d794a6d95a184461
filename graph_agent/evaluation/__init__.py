"""Accuracy harness: ask evaluation items, score the rows against gold Cypher, summarise."""

from __future__ import annotations

from graph_agent.evaluation.items import Chain, EvalFileError, EvalItem, chains, load_items
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
    "Chain",
    "ChartUnavailableError",
    "EvalFileError",
    "EvalItem",
    "GoldCache",
    "Mode",
    "ResultsFile",
    "RunOptions",
    "Score",
    "chains",
    "evaluate",
    "load_items",
    "score_answer",
    "summarize",
    "write_chart",
]
