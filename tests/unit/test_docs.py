"""The README stays true: its settings table and command list match the code."""

from __future__ import annotations

import re
from pathlib import Path

import typer.main

from bot.cli import app
from bot.settings import settings_table

README = Path(__file__).resolve().parents[2] / "README.md"


def test_readme_settings_table_matches_settings() -> None:
    text = README.read_text()
    match = re.search(
        r"<!-- settings-table:start -->\n(.*?)\n<!-- settings-table:end -->", text, re.S
    )
    assert match, "README lacks the settings-table markers"
    assert match.group(1) == settings_table(), (
        "README's settings table is stale; regenerate it with "
        "`.venv/bin/python -c 'from bot.settings import settings_table; print(settings_table())'`"
    )


def test_every_cli_command_is_documented_in_readme() -> None:
    text = README.read_text()
    group = typer.main.get_group(app)
    names = sorted(group.commands)
    assert names, "the CLI has no commands"
    missing = [name for name in names if f"cypherbot {name}" not in text]
    assert not missing, f"README does not document: {missing}"


def test_readme_opens_with_the_two_commands() -> None:
    first_block = README.read_text().split("```sh\n", 1)[1].split("```", 1)[0]
    commands = [line.split("#")[0].strip() for line in first_block.splitlines() if line.strip()]
    assert commands == ["python3 dev.py run", "python3 dev.py test"]
