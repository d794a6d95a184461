"""`cypherbot ask` prints every candidate with the attempt it was offered for (CANDIDATES at
the first generation, RETRY_CANDIDATES at the first correction)."""

from __future__ import annotations

import pytest
from rich.console import Console

import bot.cli.agent as cli_agent
from graph_agent.result import AgentResult, Candidate


def test_the_candidates_table_names_each_ones_attempt(monkeypatch: pytest.MonkeyPatch) -> None:
    wide = Console(width=200, record=True, color_system=None)
    monkeypatch.setattr(cli_agent, "console", wide)
    chosen = Candidate("MATCH (s:Service) RETURN count(s) AS n", 0.0, rows=1, agreeing=1)
    fresh = Candidate("MATCH (r:Robot) RETURN r", 0.7, error="no label Robot", attempt=2)
    retried = Candidate("MATCH (x:Service) RETURN count(*) AS n", 0.0, 1, None, 1, True, 2)
    result = AgentResult("q", "q", "38", "answered", candidates=[chosen, fresh, retried])
    cli_agent.print_result(result)
    table = wide.export_text().split("Candidates", 1)[1]
    rows = [line.split("│") for line in table.splitlines() if "MATCH" in line]
    cells = [[cell.strip() for cell in row[1:4]] for row in rows]
    assert cells == [["1", "1", ""], ["2", "2", ""], ["3", "2", "✓"]]
    assert "no label Robot" in table
