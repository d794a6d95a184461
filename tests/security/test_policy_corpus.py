"""The read-only policy alone on the hostile corpus: every attack refused, every control allowed."""

from __future__ import annotations

import pytest

from guardrails.cypher_policy import check_cypher
from tests.security.conftest import Ledger, Outcome
from tests.security.corpus import CORPUS, WITH_CYPHER, HostileInput


def test_the_corpus_is_big_and_every_input_names_its_class_and_layer() -> None:
    assert len(CORPUS) >= 100
    assert all(item.attack_class and item.layer for item in CORPUS)
    assert sum(1 for item in CORPUS if item.layer == "none") >= 10, "too few benign controls"
    assert any(len(item.question) >= 100_000 for item in CORPUS)
    assert any(item.cypher is not None and len(item.cypher) >= 100_000 for item in CORPUS)


@pytest.mark.parametrize("item", WITH_CYPHER, ids=lambda item: item.id)
def test_policy_refuses_attacks_and_allows_controls(item: HostileInput, ledger: Ledger) -> None:
    assert item.cypher is not None
    verdict = check_cypher(item.cypher)
    expected_allowed = item.layer == "none"
    ledger.record(
        Outcome(
            item.id,
            "policy",
            "none" if verdict.allowed else "policy",
            mutated=False,
            detail=verdict.category or "allowed",
        )
    )
    assert verdict.allowed is expected_allowed, (item.cypher[:200], verdict)
    if not verdict.allowed:
        assert verdict.reason and verdict.category
        # The reason goes back to the model and may be shown: it must not echo a huge input.
        assert len(verdict.reason) < 300
