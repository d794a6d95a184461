"""Summaries of evaluation records (accuracy by run and by tag, cost, latency) and the chart."""

from __future__ import annotations

import logging
import re
import statistics
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

logger = logging.getLogger(__name__)

CHART_EXTRA = "pip install 'cypherbot[eval]'"


class ChartUnavailableError(RuntimeError):
    """matplotlib is not installed (it is the optional `eval` extra)."""


def percentile(values: Sequence[float], q: float) -> float | None:
    """Nearest-rank percentile; None for no values."""
    if not values:
        return None
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, max(0, round(q * (len(ordered) - 1))))]


def _share(records: Sequence[dict[str, Any]], key: str) -> float | None:
    return sum(bool(r.get(key)) for r in records) / len(records) if records else None


def _mean(values: Iterable[float | int | None]) -> float | None:
    kept = [float(v) for v in values if v is not None]
    return statistics.fmean(kept) if kept else None


def cached_share(records: Sequence[dict[str, Any]]) -> float | None:
    """Share of prompt tokens the server read from its prompt cache, over the second and later
    questions of a run (the first one fills the cache); None when the server reported none."""
    later = records[1:]
    prompt = sum(int(r.get("prompt_tokens") or 0) for r in later)
    cached = sum(int(r.get("cached_prompt_tokens") or 0) for r in later)
    if not prompt or not any("cached_prompt_tokens" in r for r in later):
        return None
    return cached / prompt


def run_stats(records: Sequence[dict[str, Any]]) -> dict[str, Any]:
    """Accuracy, cost and latency of one run's records; graph tool items (the tool that should
    answer, how often it did) and "did you mean" items on their own too.

    Accuracy counts every item (a timeout or an error scores as wrong); answerable items
    whose gold query failed are left out, since nothing can be scored against them.
    """
    scored = [r for r in records if not r.get("gold_error")]
    answerable = [r for r in scored if r.get("expected") == "answer"]
    refusals = [r for r in scored if r.get("expected") == "refusal"]
    tool_items = [r for r in answerable if r.get("expected_tool")]
    asking = [r for r in scored if r.get("expected") == "clarification"]
    latencies = [float(r["latency_ms"]) for r in records if r.get("latency_ms") is not None]
    outcomes: dict[str, int] = {}
    for r in records:
        outcomes[str(r.get("outcome"))] = outcomes.get(str(r.get("outcome")), 0) + 1
    return {
        "items": len(records),
        "answerable": len(answerable),
        "refusal_items": len(refusals),
        "strict": _share(scored, "strict"),
        "relaxed": _share(scored, "relaxed"),
        "answerable_strict": _share(answerable, "strict"),
        "answerable_relaxed": _share(answerable, "relaxed"),
        "refusal_strict": _share(refusals, "strict"),
        "refusal_relaxed": _share(refusals, "relaxed"),
        "tool_items": len(tool_items),
        "tool_strict": _share(tool_items, "strict"),
        "tool_relaxed": _share(tool_items, "relaxed"),
        "tool_path": (
            sum(r.get("tool") == r.get("expected_tool") for r in tool_items) / len(tool_items)
            if tool_items
            else None
        ),
        "clarification_items": len(asking),
        "clarification_strict": _share(asking, "strict"),
        "tool_answers": sum(bool(r.get("tool")) for r in records),
        "answer_mentions": _mean(r.get("answer_mentions") for r in answerable),
        "mean_llm_calls": _mean(r.get("llm_calls") for r in records),
        "mean_attempts": _mean(r.get("attempts") for r in records),
        "mean_prompt_tokens": _mean(r.get("prompt_tokens") for r in records),
        "mean_completion_tokens": _mean(r.get("completion_tokens") for r in records),
        "cached_prompt_share": cached_share(records),
        "total_tokens": sum(
            int(r.get("prompt_tokens") or 0) + int(r.get("completion_tokens") or 0) for r in records
        ),
        "latency_p50_ms": percentile(latencies, 0.5),
        "latency_p95_ms": percentile(latencies, 0.95),
        "ungrounded": sum(bool(r.get("ungrounded")) for r in records),
        "unconfirmed": sum(bool(r.get("unconfirmed")) for r in records),
        "timeouts": sum(bool(r.get("timed_out")) for r in records),
        "errors": sum(r.get("outcome") == "error" for r in records),
        "gold_errors": sum(bool(r.get("gold_error")) for r in records),
        "outcomes": dict(sorted(outcomes.items())),
    }


def summarize(records: Iterable[dict[str, Any]]) -> dict[str, Any]:
    """Per run (mode × examples): overall figures and strict/relaxed accuracy per tag."""
    by_run: dict[str, list[dict[str, Any]]] = {}
    for record in records:
        by_run.setdefault(str(record.get("run", "?")), []).append(record)
    runs: dict[str, Any] = {}
    tags: dict[str, dict[str, Any]] = {}
    rules: dict[str, dict[str, dict[str, int]]] = {}
    for run, recs in sorted(by_run.items()):
        runs[run] = run_stats(recs)
        per_tag: dict[str, list[dict[str, Any]]] = {}
        for r in recs:
            if r.get("gold_error"):
                continue
            for tag in r.get("tags") or ["untagged"]:
                per_tag.setdefault(tag, []).append(r)
        tags[run] = {
            tag: {
                "items": len(rs),
                "strict": _share(rs, "strict"),
                "relaxed": _share(rs, "relaxed"),
            }
            for tag, rs in sorted(per_tag.items())
        }
        rules[run] = rule_stats(recs)
    return {"runs": runs, "tags": tags, "rules": rules, "spread": spread(by_run)}


REPEAT_MARK = "/repeat-"
"""What a repeated run's key ends with, before its number (`full/examples-on/repeat-2`)."""
_REPEATED = re.compile(re.escape(REPEAT_MARK) + r"(\d+)$")


def spread(by_run: dict[str, list[dict[str, Any]]]) -> dict[str, dict[str, Any]]:
    """How far repeated runs of the same items (`--repeat N`: a run and its `…/repeat-K`
    runs) differ, per run that was repeated: the strict count of each repeat, the lowest and
    highest, and of the items every repeat asked, how many were right every time, right in
    some repeats only (the ones that flip between runs) and right in none. A change that moves
    fewer items than flip between repeats of the same code is within the noise.

    Strict counts are over the items every repeat asked, so a repeat stopped early does not
    look worse than it was."""
    groups: dict[str, dict[int, list[dict[str, Any]]]] = {}
    for run, recs in by_run.items():
        found = _REPEATED.search(run)
        base = run[: found.start()] if found else run
        groups.setdefault(base, {})[int(found.group(1)) if found else 1] = recs
    out: dict[str, dict[str, Any]] = {}
    for base, repeats in sorted(groups.items()):
        if len(repeats) < 2:
            continue
        right = {
            n: {str(r["id"]): bool(r.get("strict")) for r in recs if not r.get("gold_error")}
            for n, recs in sorted(repeats.items())
        }
        common = set.intersection(*(set(ids) for ids in right.values()))
        strict = {n: sum(ids[i] for i in common) for n, ids in right.items()}
        times = [sum(ids[i] for ids in right.values()) for i in common]
        out[base] = {
            "repeats": len(repeats),
            "items": len(common),
            "strict": strict,
            "min": min(strict.values()),
            "max": max(strict.values()),
            "always": sum(t == len(right) for t in times),
            "sometimes": sum(0 < t < len(right) for t in times),
            "never": sum(t == 0 for t in times),
        }
    return out


def rule_stats(records: Sequence[dict[str, Any]]) -> dict[str, dict[str, int]]:
    """Per repair rule: on how many items it fired, how many of those ended strict-correct,
    and (rewrites) on how many the rewritten statement's attempt was the one that answered."""
    stats: dict[str, dict[str, int]] = {}
    for record in records:
        fired: dict[str, bool] = {}
        for firing in record.get("rules") or []:
            name = str(firing.get("rule"))
            fired[name] = fired.get(name, False) or bool(firing.get("answered"))
        for name, answered in fired.items():
            row = stats.setdefault(name, {"fired": 0, "strict": 0, "rewrite_answered": 0})
            row["fired"] += 1
            row["strict"] += bool(record.get("strict"))
            row["rewrite_answered"] += answered
    return dict(sorted(stats.items()))


def write_chart(summary: dict[str, Any], path: Path) -> Path:
    """A PNG: accuracy (strict, relaxed) by run, and strict accuracy by tag for each run."""
    try:
        import matplotlib

        matplotlib.use("Agg")  # no display needed (CI, servers)
        import matplotlib.pyplot as plt
    except ImportError as exc:
        raise ChartUnavailableError(
            f"The chart needs matplotlib, which is not installed: {CHART_EXTRA}"
        ) from exc
    runs = list(summary["runs"])
    all_tags = sorted({tag for per in summary["tags"].values() for tag in per})
    fig, (top, bottom) = plt.subplots(
        2, 1, figsize=(max(8.0, 0.6 * len(all_tags) * max(1, len(runs)) + 3), 9)
    )
    width = 0.8 / max(1, len(runs))
    metrics = ("strict", "relaxed", "answerable_strict", "refusal_strict")
    for n, run in enumerate(runs):
        values = [summary["runs"][run].get(m) or 0.0 for m in metrics]
        xs = [i + n * width for i in range(len(metrics))]
        bars = top.bar(xs, values, width, label=run)
        top.bar_label(bars, labels=[f"{v:.0%}" for v in values], fontsize=8)
    top.set_xticks([i + width * (len(runs) - 1) / 2 for i in range(len(metrics))])
    top.set_xticklabels(["strict (all)", "relaxed (all)", "strict (answerable)", "refusals"])
    top.set_ylim(0, 1.1)
    top.set_ylabel("accuracy")
    top.set_title("Execution accuracy by mode")
    top.legend(fontsize=8)
    for n, run in enumerate(runs):
        per = summary["tags"].get(run, {})
        values = [(per.get(tag) or {}).get("strict") or 0.0 for tag in all_tags]
        xs = [i + n * width for i in range(len(all_tags))]
        bottom.bar(xs, values, width, label=run)
    bottom.set_xticks([i + width * (len(runs) - 1) / 2 for i in range(len(all_tags))])
    bottom.set_xticklabels(all_tags, rotation=35, ha="right", fontsize=8)
    bottom.set_ylim(0, 1.05)
    bottom.set_ylabel("strict accuracy")
    bottom.set_title("Strict accuracy by tag")
    bottom.legend(fontsize=8)
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path
