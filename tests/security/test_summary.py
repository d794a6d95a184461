"""The security suite's verdict: zero mutations, and which layer stopped each class (`-s` prints it).

Runs last in this directory (file order); it reads what the other modules recorded.
"""

from __future__ import annotations

from collections import Counter, defaultdict

import pytest

from tests.security.conftest import Ledger
from tests.security.corpus import BY_ID, CORPUS, WITH_CYPHER


def _counts(values: list[str]) -> str:
    return ", ".join(f"{name} {n}" for name, n in sorted(Counter(values).items()))


def test_no_input_changed_the_graph_and_every_layer_saw_every_input(ledger: Ledger) -> None:
    layers = {"policy": len(WITH_CYPHER), "engine": len(WITH_CYPHER), "e2e": len(CORPUS)}
    ran = {layer: ledger.for_layer(layer) for layer in layers}
    if not any(ran.values()):
        pytest.skip("run the whole tests/security directory for the summary")
    by_class: dict[str, dict[str, list[str]]] = defaultdict(lambda: defaultdict(list))
    for layer, outcomes in ran.items():
        for outcome in outcomes:
            by_class[BY_ID[outcome.input_id].attack_class][layer].append(outcome.stopped_by)
    mutations = sum(o.mutated for outcomes in ran.values() for o in outcomes)

    lines = [
        "",
        f"hostile corpus: {len(CORPUS)} inputs ({len(WITH_CYPHER)} with attack Cypher); "
        f"mutations: {mutations}",
        f"{'class':<52} {'n':>3}  {'policy alone':<26} {'engine alone (run_read)':<28} "
        "whole path (stopped by)",
    ]
    for attack_class in sorted(by_class):
        n = sum(1 for item in CORPUS if item.attack_class == attack_class)
        seen = by_class[attack_class]
        lines.append(
            f"{attack_class:<52} {n:>3}  {_counts(seen['policy']) or '-':<26} "
            f"{_counts(seen['engine']) or '-':<28} {_counts(seen['e2e']) or 'not run'}"
        )
    print("\n".join(lines))

    assert mutations == 0
    for layer, expected in layers.items():
        if ran[layer]:
            assert len({o.input_id for o in ran[layer]}) == expected, f"{layer} missed inputs"
