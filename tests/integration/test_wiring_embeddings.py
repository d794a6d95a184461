"""EMBEDDINGS_MODEL turns on semantic example retrieval through a real HTTP embeddings call."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from bot.settings import Settings
from bot.wiring import build_embedder, open_memory_for
from tests.support.fake_openai import FakeOpenAI


@pytest.fixture
def fake() -> Iterator[FakeOpenAI]:
    with FakeOpenAI().running() as server:
        yield server


def settings(tmp_path: Path, **values: object) -> Settings:
    return Settings(_env_file=None, data_dir=tmp_path, **values)  # type: ignore[call-arg]


def test_without_embeddings_model_retrieval_stays_lexical(tmp_path: Path) -> None:
    assert build_embedder(settings(tmp_path)) is None


def test_semantic_retrieval_uses_the_configured_endpoint(tmp_path: Path, fake: FakeOpenAI) -> None:
    s = settings(tmp_path, embeddings_model="emb-small", openai_base_url=fake.base_url)
    with open_memory_for(s) as mem:
        mem.examples.add(
            "Which teams own the most services?",
            "MATCH (t:Team)-[:OWNS]->(s:Service) RETURN t.name, count(s) ORDER BY count(s) DESC",
            source="admin",
        )
        mem.examples.add(
            "How many incidents were SEV1?",
            "MATCH (i:Incident {severity: 'SEV1'}) RETURN count(i)",
            source="admin",
        )
        found = mem.examples.similar("which teams own the most services", 1)
    assert [e.question for e in found] == ["Which teams own the most services?"]
    assert fake.embedding_requests, "no embeddings request reached the server"
    assert {r["model"] for r in fake.embedding_requests} == {"emb-small"}
