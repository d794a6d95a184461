"""docs/slack-checklist.md names only tests that exist."""

from __future__ import annotations

import ast
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
CHECKLIST = ROOT / "docs" / "slack-checklist.md"
_NAMED = re.compile(r"`(tests/[\w/]+\.py)::(test_\w+)`|`::(test_\w+)`")


def _tests_in(path: Path) -> set[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    return {n.name for n in tree.body if isinstance(n, ast.FunctionDef)}


def test_every_test_the_checklist_names_exists() -> None:
    named: list[tuple[str, str]] = []
    for line in CHECKLIST.read_text(encoding="utf-8").splitlines():
        path = ""
        for match in _NAMED.finditer(line):
            path = match.group(1) or path  # `::name` continues the last path on the line
            named.append((path, match.group(2) or match.group(3)))
    assert len(named) > 40
    missing = [
        f"{path}::{name}"
        for path, name in named
        if not (ROOT / path).is_file() or name not in _tests_in(ROOT / path)
    ]
    assert missing == []


def test_the_readme_links_the_checklist() -> None:
    assert "(docs/slack-checklist.md)" in (ROOT / "README.md").read_text(encoding="utf-8")
