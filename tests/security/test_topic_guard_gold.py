"""evals/topic_guard.yaml: every gold query passes the read-only policy and returns rows on the demo graph."""

from __future__ import annotations

from pathlib import Path

import pytest

from graph_agent.evaluation.items import EvalItem, load_items
from graph_agent.graphdb import GraphDB
from guardrails.cypher_policy import check_cypher

ITEMS = load_items(Path(__file__).parents[2] / "evals" / "topic_guard.yaml")


@pytest.mark.parametrize("item", [i for i in ITEMS if i.gold_cypher], ids=lambda i: i.id)
def test_gold_query_is_allowed_and_returns_rows(item: EvalItem, demo_db: GraphDB) -> None:
    assert item.gold_cypher is not None
    assert check_cypher(item.gold_cypher).allowed
    assert demo_db.run_read(item.gold_cypher, max_rows=1000).rows
