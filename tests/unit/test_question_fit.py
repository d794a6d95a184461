"""Statements held to the question's words: the label it counts, a number compared with an
aggregate in WHERE. Shapes from a real 1.5B model on the network-management graph."""

from __future__ import annotations

import pytest

from graph_agent.graphdb.protocol import GraphSchema, LabelInfo, PropertyInfo, RelPattern
from graph_agent.question_fit import (
    counted_label,
    counted_label_feedback,
)


def _network() -> GraphSchema:
    def label(name: str, *props: str) -> LabelInfo:
        return LabelInfo(name, 10, tuple(PropertyInfo(p, ("STRING",)) for p in props))

    return GraphSchema(
        labels=(
            label("DataCenter", "name"),
            label("Rack", "name", "zone"),
            label("Machine", "id", "name"),
            label("Type", "name", "cpu", "ram"),
            label("OS", "name"),
            label("Version", "name"),
            label("Service", "name"),
        ),
        relationships=(
            RelPattern("DataCenter", "CONTAINS", "Rack"),
            RelPattern("Rack", "HOLDS", "Machine"),
            RelPattern("Machine", "TYPE", "Type"),
            RelPattern("Machine", "RUNS", "OS"),
            RelPattern("OS", "INSTANCE", "Version"),
            RelPattern("Machine", "RUNS", "Service"),
        ),
    )


@pytest.mark.parametrize(
    ("question", "label"),
    [
        ("How many machines are in rack DC1-RCK-1-1?", "Machine"),
        ("Which data center has the most racks?", "Rack"),
        ("How many machine types are there?", "Type"),
        ("What is the number of machines per zone?", "Machine"),
        ("Which rack has the fewest machines?", "Machine"),
        ("How many CPUs does the xl type have?", None),  # cpu is a property, not a label
        ("Which racks are in zone 3?", None),  # counts nothing
        # labels said in several words: by their parts, or a short capital label by initials
        ("How many OSes are there?", "OS"),
        ("How many data centers are there?", "DataCenter"),
        ("How many different operating systems run?", None),  # initials alone: no evidence
        ("How many open slots are there?", None),  # ("open slots" is no OS)
        # a count compared with a number: "more than one team", "at least 3 racks"
        ("Which racks hold more than 40 machines?", "Machine"),
        ("Which zones have at least three racks?", "Rack"),
        ("Which types have fewer than ten machines?", "Machine"),
        ("Which machine types have more than 8 CPUs?", None),  # cpu is a property
        ("Which machines have more than 16 GB of RAM?", None),
    ],
)
def test_the_counted_label_is_the_noun_after_how_many_or_most(
    question: str, label: str | None
) -> None:
    assert counted_label(question, _network()) == label


@pytest.mark.parametrize(
    ("question", "label"),
    [
        ("How many different operating systems run in rack DC1-RCK-1-3?", "OS"),
        ("What is the number of operating system versions?", "Version"),  # the compound's head
        ("How many other services run on it?", "Service"),  # not OS: "services" is a label
        ("How many machines run Ubuntu?", "Machine"),  # a word that names a label: that label
    ],
)
def test_a_matched_capital_label_is_counted_by_its_words_initials(
    question: str, label: str | None
) -> None:
    assert counted_label(question, _network(), matched={"OS", "Machine"}) == label


def test_counting_the_rack_for_how_many_machines_is_named_with_the_pattern_to_use() -> None:
    feedback = counted_label_feedback(
        "MATCH (r:Rack {name: 'DC1-RCK-1-1'}) RETURN count(DISTINCT r) AS count",
        "How many machines are in rack DC1-RCK-1-1?",
        _network(),
    )
    assert feedback == (
        "The question counts machines, but the statement never matches a Machine (it counts r, "
        "a Rack): match the machines and count m, e.g. through (r:Rack)-[:HOLDS]->(m:Machine)."
    )


def test_counting_data_centres_for_the_most_racks_is_named() -> None:
    feedback = counted_label_feedback(
        "MATCH (dc:DataCenter) WITH dc, count(*) AS rackCount "
        "RETURN dc.name AS name, rackCount ORDER BY rackCount DESC LIMIT 1",
        "Which data center has the most racks?",
        _network(),
    )
    assert feedback is not None
    assert feedback.startswith("The question counts racks, but the statement never matches")
    assert "(dc:DataCenter)-[:CONTAINS]->(r:Rack)" in feedback


@pytest.mark.parametrize(
    ("cypher", "question"),
    [
        (
            "MATCH (r:Rack {name: 'R'})-[:HOLDS]->(m:Machine) RETURN count(m) AS n",
            "How many machines are in rack R?",
        ),
        ("MATCH (r:Rack {zone: 3}) RETURN r.name AS name", "Which racks are in zone 3?"),
        ("MATCH (t:Type) RETURN t.cpu AS cpu", "How many CPUs does the xl type have?"),
    ],
)
def test_a_statement_matching_the_counted_label_passes(cypher: str, question: str) -> None:
    assert counted_label_feedback(cypher, question, _network()) is None
