"""graph_agent.lint: the string filters a statement makes (the statement fixes that lived here
were removed after the dev-split measurements; docs/eval.md lists them and why)."""

from __future__ import annotations

from graph_agent.lint import filtered_node, literal_filters, node_map_entries


def test_literal_filters_and_the_node_that_holds_one() -> None:
    cypher = (
        "MATCH (v:Version {name: 'Ubuntu'})<-[:VERSION]-(o:OS) WHERE o.name = 'Linux' RETURN v.name"
    )
    assert literal_filters(cypher) == [("Version", "name", "Ubuntu"), ("OS", "name", "Linux")]
    start, end, var = filtered_node(cypher, "Version", "name", "Ubuntu") or (0, 0, "")
    assert cypher[start:end] == "(v:Version {name: 'Ubuntu'})" and var == "v"
    assert filtered_node(cypher, "OS", "name", "Linux") is None  # in WHERE, not in the map


def test_node_map_entries_are_the_node_patterns_own() -> None:
    cypher = (
        "MATCH (p:Product {name: 'Tofu', tags: ['a', 'b']})-[:IN {since: 1}]->(:Category {x: 1}), "
        "(p {price: 2}) RETURN collect({k: 1}) AS m, p {.name}"
    )
    found = [(e.variable, e.label, e.prop, e.text) for e in node_map_entries(cypher)]
    assert found == [
        ("p", "Product", "name", "name: 'Tofu'"),
        ("p", "Product", "tags", "tags: ['a', 'b']"),
        (None, "Category", "x", "x: 1"),
        ("p", "Product", "price", "price: 2"),  # the variable's label, bound earlier
    ]
    first = node_map_entries(cypher)[0]
    assert cypher[first.braces[0] : first.braces[1]] == "{name: 'Tofu', tags: ['a', 'b']}"
    assert cypher[first.node] == "("
