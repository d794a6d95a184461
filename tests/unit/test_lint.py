"""graph_agent.lint: the string filters a statement makes (the statement fixes that lived here
were removed after the dev-split measurements; docs/eval.md lists them and why)."""

from __future__ import annotations

from graph_agent.lint import filtered_node, literal_filters


def test_literal_filters_and_the_node_that_holds_one() -> None:
    cypher = (
        "MATCH (v:Version {name: 'Ubuntu'})<-[:VERSION]-(o:OS) WHERE o.name = 'Linux' RETURN v.name"
    )
    assert literal_filters(cypher) == [("Version", "name", "Ubuntu"), ("OS", "name", "Linux")]
    start, end, var = filtered_node(cypher, "Version", "name", "Ubuntu") or (0, 0, "")
    assert cypher[start:end] == "(v:Version {name: 'Ubuntu'})" and var == "v"
    assert filtered_node(cypher, "OS", "name", "Linux") is None  # in WHERE, not in the map
