"""The demo graph: deterministic, the expected shape, and every seed example answers on it."""

from __future__ import annotations

import itertools
from importlib import resources
from typing import Any

import pytest
import yaml

from graph_agent.demo import DemoStats, is_loaded, load_demo
from graph_agent.demo.generator import DemoGenerator
from graph_agent.graphdb import GraphDB


def _seed_examples() -> list[dict[str, Any]]:
    text = resources.files("graph_agent.demo").joinpath("seed_examples.yaml").read_text()
    examples: list[dict[str, Any]] = yaml.safe_load(text)
    return examples


def test_seed_examples_file_has_about_fifteen_pairs() -> None:
    examples = _seed_examples()
    assert len(examples) >= 15
    assert all(set(e) == {"question", "cypher"} for e in examples)
    assert len({e["question"] for e in examples}) == len(examples)


@pytest.mark.parametrize("example", _seed_examples(), ids=lambda e: e["question"][:40])
def test_seed_example_runs_and_returns_rows(demo_db: GraphDB, example: dict[str, Any]) -> None:
    assert demo_db.validate(example["cypher"]).ok
    result = demo_db.run_read(example["cypher"], timeout_s=10, max_rows=1000)
    assert result.rows, example["question"]


def test_demo_is_loaded(demo_db: GraphDB) -> None:
    assert is_loaded(demo_db)
    nodes, rels = demo_db.counts()
    assert 250 <= nodes <= 400
    assert rels > nodes


def test_demo_has_null_tiers_aliases_and_multi_hop(demo_db: GraphDB) -> None:
    rows = demo_db.run_read("MATCH (s:Service) WHERE s.tier IS NULL RETURN count(s)").rows
    assert rows[0][0] > 0
    rows = demo_db.run_read(
        "MATCH (t:Technology) WHERE 'Postgres' IN t.aliases OR 'k8s' IN t.aliases "
        "RETURN t.name ORDER BY t.name"
    ).rows
    assert rows == [["Kubernetes"], ["PostgreSQL"]]


def test_same_seed_same_rows_different_seed_different_rows() -> None:
    def rows(seed: int) -> list[dict[str, Any]]:
        gen = DemoGenerator(300, seed)
        return [*gen.teams(), *gen.people(), *gen.services()]

    assert rows(7) == rows(7)
    assert rows(7) != rows(8)


def test_loading_twice_with_the_same_seed_gives_the_same_graph(scratch_db: GraphDB) -> None:
    first = load_demo(scratch_db, scale=300, seed=3)
    snapshot = scratch_db.run_read(
        "MATCH (p:Person)-[:MEMBER_OF]->(t:Team) RETURN p.name, t.name ORDER BY p.name",
        max_rows=10_000,
    ).rows
    assert isinstance(first, DemoStats)
    assert (first.nodes, first.relationships) == scratch_db.counts()
    scratch_db.run_write("MATCH (n) DETACH DELETE n")
    load_demo(scratch_db, scale=300, seed=3)
    again = scratch_db.run_read(
        "MATCH (p:Person)-[:MEMBER_OF]->(t:Team) RETURN p.name, t.name ORDER BY p.name",
        max_rows=10_000,
    ).rows
    assert snapshot == again


def test_scale_grows_the_graph_and_reports_progress(scratch_db: GraphDB) -> None:
    seen: list[tuple[int, int]] = []
    stats = load_demo(
        scratch_db, scale=3000, progress=lambda done, total: seen.append((done, total))
    )
    assert 2700 <= stats.nodes <= 3300
    assert seen and seen[-1][0] == seen[-1][1]
    assert all(b[0] >= a[0] for a, b in itertools.pairwise(seen))
