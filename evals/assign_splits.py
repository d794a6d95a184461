"""Give every item of an eval file a `split: dev|test` line, drawn once with a fixed seed.

    .venv/bin/python evals/assign_splits.py evals/northwind.yaml [--seed 25] [--all dev|test]

Items that already have a split keep it; follow-up chains stay whole; within each kind of
question (an item's first tag) the test side holds at least 40%; the seed is mixed with the
file's name. The file is edited in place, comments and layout kept: one line is
inserted after each item's `- id:` line. Run once per file and commit the result; see
docs/eval.md ("Dev and test splits") for the rule the splits serve.
"""

from __future__ import annotations

import argparse
import re
import sys
from pathlib import Path

from graph_agent.evaluation import assign_splits, load_items

ID_LINE = re.compile(r"^(?P<indent>\s*)- id:\s*(?P<id>\S+)\s*$")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("file", type=Path)
    parser.add_argument("--seed", type=int, default=25)
    parser.add_argument("--all", choices=("dev", "test"), help="put every item in one split")
    args = parser.parse_args()
    items = load_items(args.file)
    if args.all:
        wanted = {item.id: item.split or args.all for item in items}
    else:
        wanted = assign_splits(items, seed=f"{args.seed}:{args.file.stem}")
    has_split = {item.id for item in items if item.split is not None}
    out: list[str] = []
    for line in args.file.read_text(encoding="utf-8").splitlines(keepends=True):
        out.append(line)
        match = ID_LINE.match(line)
        if match and match["id"] in wanted and match["id"] not in has_split:
            out.append(f"{match['indent']}  split: {wanted[match['id']]}\n")
    args.file.write_text("".join(out), encoding="utf-8")
    test = sum(1 for v in wanted.values() if v == "test")
    sys.stdout.write(f"{args.file}: {len(wanted) - test} dev, {test} test\n")


if __name__ == "__main__":
    main()
