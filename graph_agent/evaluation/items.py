"""Evaluation items: loading and checking a YAML or JSONL file of questions with gold Cypher
(or, for graph tool items, the tool and the names its answer must hold)."""

from __future__ import annotations

import json
import logging
import random
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

import yaml

from graph_agent.tool_routing import TOOL_NAMES, ToolName

logger = logging.getLogger(__name__)

Expected = Literal["answer", "refusal", "clarification", "no_data"]
EXPECTED: tuple[Expected, ...] = ("answer", "refusal", "clarification", "no_data")
"""answer: rows (gold Cypher) or names (a graph tool item); refusal: declined;
clarification: asked back which thing a name means; no_data: a name nothing in the graph has,
answered "nothing found" rather than guessed."""
Split = Literal["dev", "test"]
SPLITS: tuple[Split, ...] = ("dev", "test")
"""dev: items rules, prompts and examples may be changed for; test: items only run to report."""


class EvalFileError(ValueError):
    """The questions file cannot be read or an item in it is malformed."""


@dataclass(frozen=True)
class EvalItem:
    """One question to ask, with the Cypher whose rows are the right answer (or, for a graph
    tool item, the tool that should answer and the names its answer must hold)."""

    id: str
    question: str
    gold_cypher: str | None = None
    """None for questions the bot should decline (expected "refusal") and graph tool items."""
    follow_up_of: str | None = None
    """Id of the item this one follows: it is asked in the same conversation, after it."""
    tags: tuple[str, ...] = ()
    expected: Expected = "answer"
    """"answer": score the rows against the gold rows; "refusal": score the outcome."""
    split: Split | None = None
    """dev or test (see docs/eval.md); None in files that have no splits."""
    expected_tool: ToolName | None = None
    """The graph tool that should answer (card, neighbourhood, connection); None: a statement."""
    expected_names: tuple[str, ...] = ()
    """Names the answer must hold: a connection's path, a card's identifying value, some of a
    neighbourhood; for expected "clarification", candidates the choices must offer."""


@dataclass(frozen=True)
class Chain:
    """A conversation: a first question and the follow-ups asked after it, in order."""

    items: tuple[EvalItem, ...] = field(default_factory=tuple)

    @property
    def id(self) -> str:
        return self.items[0].id


def _item(raw: Any, where: str) -> EvalItem:
    if not isinstance(raw, dict):
        raise EvalFileError(f"{where}: expected a mapping with id and question, got {raw!r:.80}")
    try:
        item_id = str(raw["id"]).strip()
        question = str(raw["question"]).strip()
    except KeyError as exc:
        raise EvalFileError(f"{where}: missing {exc.args[0]!r}") from None
    gold = raw.get("gold_cypher")
    gold = str(gold).strip() if gold else None
    tool = raw.get("expected_tool")
    if tool is not None and tool not in TOOL_NAMES:
        raise EvalFileError(
            f"{where} ({item_id}): expected_tool must be one of {', '.join(TOOL_NAMES)}"
        )
    names = raw.get("expected_names") or ()
    if isinstance(names, str):
        names = [names]
    names = tuple(str(n).strip() for n in names if str(n).strip())
    default = "answer" if gold or (tool and names) else "refusal"
    wanted = raw.get("expected") or raw.get("gold_outcome") or default
    if wanted not in EXPECTED:
        raise EvalFileError(
            f"{where} ({item_id}): expected must be answer, refusal, clarification or no_data"
        )
    expected: Expected = wanted
    if expected == "answer" and not gold and not (tool and names):
        raise EvalFileError(
            f"{where} ({item_id}): an answerable item needs gold_cypher, or expected_tool "
            "with expected_names"
        )
    tags = raw.get("tags") or ()
    if isinstance(tags, str):
        tags = [tags]
    parent = raw.get("follow_up_of")
    split = raw.get("split")
    if split is not None and split not in SPLITS:
        raise EvalFileError(f"{where} ({item_id}): split must be dev or test, not {split!r}")
    return EvalItem(
        id=item_id,
        question=question,
        gold_cypher=gold,
        follow_up_of=str(parent).strip() if parent else None,
        tags=tuple(str(t) for t in tags),
        expected=expected,
        split=split,
        expected_tool=tool,
        expected_names=names,
    )


def parse_items(raw_items: Iterable[Any], source: str = "items") -> list[EvalItem]:
    """Items from already-parsed mappings; ids unique, a follow-up after the item it follows."""
    items: list[EvalItem] = []
    seen: dict[str, EvalItem] = {}
    for n, raw in enumerate(raw_items, start=1):
        item = _item(raw, f"{source} item {n}")
        if item.id in seen:
            raise EvalFileError(f"{source}: duplicate id {item.id!r}")
        if item.follow_up_of is not None:
            parent = seen.get(item.follow_up_of)
            if parent is None:
                raise EvalFileError(
                    f"{source}: {item.id!r} follows {item.follow_up_of!r}, which must come before it"
                )
            if parent.split != item.split:
                raise EvalFileError(
                    f"{source}: {item.id!r} is in split {item.split} but follows "
                    f"{parent.id!r} in split {parent.split}: a conversation stays in one split"
                )
        seen[item.id] = item
        items.append(item)
    return items


def select_split(items: Sequence[EvalItem], split: Split | Literal["all"]) -> list[EvalItem]:
    """The items of one split ("all": every item); a split of a file without splits is an error."""
    if split == "all":
        return list(items)
    if any(item.split is None for item in items):
        raise EvalFileError(
            f"--split {split}: some items have no split; give every item `split: dev` or "
            "`split: test`, or run with --split all"
        )
    return [item for item in items if item.split == split]


def assign_splits(
    items: Sequence[EvalItem], *, seed: int | str, test_share: float = 0.4
) -> dict[str, Split]:
    """A split for every item, drawn once at random: whole conversations go to one side.

    Stratified by each conversation's first tag (lookup, filter, no-data…), so every kind of
    question has dev items to learn from and test items to report on: within a kind the
    conversations are shuffled with `seed` and the test side takes them until it holds at
    least `test_share` of that kind. Items that already have a split keep it. Pass a seed that
    differs per file (`evals/assign_splits.py` adds the file's name): one integer for every
    file put the last items of similar files on the same side (the first split did so with
    every no-data item; docs/eval.md)."""
    fixed = {item.id: item.split for item in items if item.split is not None}
    strata: dict[str, list[Chain]] = {}
    for group in chains(items):
        if group.items[0].id not in fixed:
            kind = group.items[0].tags[0] if group.items[0].tags else ""
            strata.setdefault(kind, []).append(group)
    rng = random.Random(str(seed))
    out: dict[str, Split] = {k: v for k, v in fixed.items() if v is not None}
    for kind in sorted(strata):
        groups = strata[kind]
        rng.shuffle(groups)
        wanted = test_share * sum(len(g.items) for g in groups)
        test_n = 0
        for group in groups:
            side: Split = "test" if test_n < wanted else "dev"
            test_n += len(group.items) if side == "test" else 0
            for item in group.items:
                out[item.id] = side
    return out


def load_items(path: Path) -> list[EvalItem]:
    """Items from a `.yaml`/`.yml` file (a list, or a mapping with `items:`) or `.jsonl`."""
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise EvalFileError(f"Cannot read {path}: {exc.strerror or exc}") from exc
    raw: Any
    if path.suffix.lower() == ".jsonl":
        raw = []
        for line_no, line in enumerate(text.splitlines(), start=1):
            if not line.strip():
                continue
            try:
                raw.append(json.loads(line))
            except json.JSONDecodeError as exc:
                raise EvalFileError(f"{path}:{line_no}: not JSON ({exc.msg})") from None
    else:
        try:
            raw = yaml.safe_load(text)
        except yaml.YAMLError as exc:
            raise EvalFileError(f"{path}: not valid YAML ({exc})") from None
        if isinstance(raw, dict):
            raw = raw.get("items")
        if not isinstance(raw, list):
            raise EvalFileError(f"{path}: expected a list of items (or `items:` with a list)")
    items = parse_items(raw, str(path))
    if not items:
        raise EvalFileError(f"{path}: no items")
    return items


def chains(items: Sequence[EvalItem]) -> list[Chain]:
    """Group items into conversations: each root with every item that (transitively) follows it."""
    root_of: dict[str, str] = {}
    members: dict[str, list[EvalItem]] = {}
    for item in items:
        # A follow-up whose parent was left out (--limit) starts its own conversation.
        root = root_of.get(item.follow_up_of, item.id) if item.follow_up_of else item.id
        root_of[item.id] = root
        members.setdefault(root, []).append(item)
    return [Chain(tuple(group)) for group in members.values()]
