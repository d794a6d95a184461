"""Row redaction: what a restricted channel keeps of nodes, relationships, paths, maps and columns."""

from __future__ import annotations

from typing import Any

import pytest

from guardrails.channels import ChannelRestrictions, parse_channel_restrictions
from guardrails.cypher_policy import CypherPolicy
from guardrails.redact_rows import RowRedactor, redact_rows

HIDDEN = parse_channel_restrictions("C9:Ticket,Member.salary,[MANAGES]")["C9"]


def member(name: str, **extra: Any) -> dict[str, Any]:
    return {"_labels": ["Member"], "name": name, "salary": 99, **extra}


def ticket(key: str) -> dict[str, Any]:
    return {"_labels": ["Ticket"], "key": key}


def rel(rel_type: str, **props: Any) -> dict[str, Any]:
    return {"_type": rel_type, **props}


def test_no_restrictions_change_nothing() -> None:
    rows = [[member("ana"), ticket("T-1"), rel("MANAGES")]]
    for names in (None, ChannelRestrictions()):
        redacted = redact_rows(["a", "b", "c"], rows, names)
        assert redacted.rows == rows and redacted.columns == ["a", "b", "c"]
        assert not redacted.changed


def test_hidden_properties_go_from_nodes_relationships_and_maps_at_any_depth() -> None:
    rows = [
        [
            member("ana"),
            rel("KNOWS", salary=1, since=2020),
            {"who": "ana", "SALARY": 5, "inner": [{"salary": 3, "ok": True}]},
        ]
    ]
    redacted = redact_rows(["m", "r", "x"], rows, HIDDEN)
    assert redacted.rows == [
        [
            {"_labels": ["Member"], "name": "ana"},
            {"_type": "KNOWS", "since": 2020},
            {"who": "ana", "inner": [{"ok": True}]},
        ]
    ]
    assert redacted.removed_values == 4 and redacted.removed_rows == 0


def test_a_row_whose_cell_is_a_hidden_entity_goes_whole() -> None:
    rows = [["T-1", ticket("T-1")], ["M", member("ana")], ["R", rel("MANAGES", since=1)]]
    redacted = redact_rows(["k", "n"], rows, HIDDEN)
    assert redacted.rows == [["M", {"_labels": ["Member"], "name": "ana"}]]
    assert redacted.removed_rows == 2


def test_hidden_entities_inside_lists_and_maps_go_and_the_rest_stays() -> None:
    rows = [[[member("ana"), ticket("T-1"), rel("MANAGES")], {"a": ticket("T-2"), "b": 1}]]
    redacted = redact_rows(["xs", "m"], rows, HIDDEN)
    assert redacted.rows == [[[{"_labels": ["Member"], "name": "ana"}], {"b": 1}]]


def test_a_node_with_any_hidden_label_goes_whatever_the_case() -> None:
    node = {"_labels": ["Member", "TICKET"], "name": "both"}
    assert RowRedactor.for_names(HIDDEN).value([node]) == []
    assert RowRedactor.for_names(HIDDEN).value(rel("manages")) is None


def test_paths_keep_visible_nodes_and_relationships_between_kept_nodes() -> None:
    path = {
        "_nodes": [member("ana"), member("bo"), ticket("T-1"), member("cy")],
        "_relationships": [rel("KNOWS"), rel("FILED"), rel("FILED")],
    }
    kept = RowRedactor.for_names(HIDDEN).value(path)
    assert kept == {
        "_nodes": [
            {"_labels": ["Member"], "name": "ana"},
            {"_labels": ["Member"], "name": "bo"},
            {"_labels": ["Member"], "name": "cy"},
        ],
        "_relationships": [{"_type": "KNOWS"}],
    }
    hidden_rel = {"_nodes": [member("a"), member("b")], "_relationships": [rel("MANAGES")]}
    assert RowRedactor.for_names(HIDDEN).value(hidden_rel)["_relationships"] == []


@pytest.mark.parametrize(
    ("columns", "kept"),
    [
        (["m.salary", "m.name"], ["m.name"]),
        (["ticket", "n"], ["n"]),
        (["managesCount", "n"], ["managesCount", "n"]),  # only whole words
        (["`MANAGES`", "n"], ["n"]),
    ],
)
def test_columns_that_spell_a_hidden_name_go(columns: list[str], kept: list[str]) -> None:
    redacted = redact_rows(columns, [[1, 2]], HIDDEN)
    assert redacted.columns == kept
    assert redacted.rows == [[2]] if len(kept) == 1 else [[1, 2]]


def test_a_cypher_policy_carries_the_same_names() -> None:
    policy = CypherPolicy(**HIDDEN._asdict())
    assert RowRedactor.for_names(policy) == RowRedactor.for_names(HIDDEN)
    assert not RowRedactor.for_names(CypherPolicy())


def test_json_text_is_redacted_like_values() -> None:
    node = '{"type": "node", "labels": ["Member"], "properties": {"name": "ana", "salary": 9}}'
    hidden = '{"type": "node", "labels": ["Ticket"], "properties": {"key": "T-1"}}'
    edge = '{"type": "relationship", "relationship": "MANAGES", "properties": {}}'
    redactor = RowRedactor.for_names(HIDDEN)
    assert "salary" not in redactor.value(node) and '"ana"' in redactor.value(node)
    assert redactor.value(hidden) is None and redactor.value(edge) is None
    assert redactor.value(f"[{node}, {edge}]").count("relationship") == 0
    plain = '{"not": "json'  # unreadable JSON stays as it was
    assert redactor.value(plain) == plain
    untouched = '{"name": "ana"}'
    assert redactor.value(untouched) == untouched
