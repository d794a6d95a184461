"""Value similarity and the schema text, table-driven, without a database."""

from __future__ import annotations

import pytest

from graph_agent.graphdb import (
    GraphSchema,
    LabelInfo,
    PropertyInfo,
    RelPattern,
    schema_fingerprint,
    schema_text,
)
from graph_agent.graphdb.lookup import CatalogEntry, ValueCatalog, phrases, similarity
from graph_agent.graphdb.schema import properties_from_samples


@pytest.mark.parametrize(
    ("phrase", "value", "at_least"),
    [
        ("PostgreSQL", "postgresql", 1.0),
        ("Postgres", "PostgreSQL", 0.8),
        ("Science Fiction", "Sci-Fi", 0.8),
        ("sci fi", "Science Fiction", 0.8),
        ("node js", "Node.js", 0.95),
        ("checkout", "checkout-api", 0.6),
        ("kubernetes", "Kubernetes", 1.0),
    ],
)
def test_similar(phrase: str, value: str, at_least: float) -> None:
    assert similarity(phrase, value) >= at_least


@pytest.mark.parametrize(
    ("phrase", "value"),
    [("Alice", "Bob Smith"), ("Go", "Google Cloud Platform"), ("payments", "Search"), ("", "x")],
)
def test_not_similar(phrase: str, value: str) -> None:
    assert similarity(phrase, value) < 0.5


def test_phrases_skip_stopword_windows() -> None:
    found = phrases("Which services use Postgres?")
    assert "postgres" in found and "services use postgres" in found
    assert "which" not in found and "use" not in found


def test_catalog_reports_the_canonical_name_for_an_alias() -> None:
    catalog = ValueCatalog(
        entries=[
            CatalogEntry("Technology", "aliases", "k8s", "Kubernetes", "name"),
            CatalogEntry("Technology", "name", "Kubernetes", "Kubernetes", "name"),
            CatalogEntry("Genre", "name", "Sci-Fi", "Sci-Fi", "name"),
        ],
        large=[],
        built_at=0.0,
    )
    [match] = catalog.match("what runs on k8s", 5)
    assert (match.label, match.property, match.value, match.score) == (
        "Technology", "name", "Kubernetes", 1.0,
    )  # fmt: skip
    assert catalog.match("Science Fiction films", 5)[0].value == "Sci-Fi"


def test_properties_from_samples_types_nulls_and_sample_values() -> None:
    props = properties_from_samples(
        [{"sev": "SEV1", "n": 1}, {"sev": "SEV2"}, {"sev": "SEV1", "n": None}, {"sev": "SEV1"}]
    )
    by_name = {p.name: p for p in props}
    assert by_name["n"].types == ("INTEGER", "NULL")
    assert by_name["sev"].types == ("STRING",)
    assert by_name["sev"].sample_values == ("SEV1", "SEV2")


SCHEMA = GraphSchema(
    labels=(
        LabelInfo("Person", 3, (PropertyInfo("name", ("STRING",)),)),
        LabelInfo("Team", 1, (PropertyInfo("dept", ("STRING", "NULL"), ("Data", "Platform")),)),
        LabelInfo("Movie", 1, ()),
    ),
    relationships=(
        RelPattern("Person", "MEMBER_OF", "Team", 3, (PropertyInfo("since", ("DATE",)),)),
        RelPattern("Person", "LIKES", "Movie", 1),
    ),
)


def test_schema_text_snapshot() -> None:
    assert schema_text(SCHEMA) == (
        "Node labels and properties:\n"
        "(:Person) [3 nodes] {name: STRING}\n"
        '(:Team) [1 nodes] {dept: STRING (may be null) e.g. "Data", "Platform"}\n'
        "(:Movie) [1 nodes] {}\n"
        "Relationships:\n"
        "(:Person)-[:MEMBER_OF {since: DATE}]->(:Team)\n"
        "(:Person)-[:LIKES]->(:Movie)"
    )
    pruned = schema_text(SCHEMA, labels={"Person", "Team"})
    assert "Movie" not in pruned and "MEMBER_OF" in pruned


def test_fingerprint_ignores_counts_and_samples_but_not_shape() -> None:
    recount = GraphSchema(
        labels=tuple(LabelInfo(label.name, 99, label.properties) for label in SCHEMA.labels),
        relationships=SCHEMA.relationships,
    )
    assert schema_fingerprint(recount) == schema_fingerprint(SCHEMA)
    fewer = GraphSchema(labels=SCHEMA.labels, relationships=SCHEMA.relationships[:1])
    assert schema_fingerprint(fewer) != schema_fingerprint(SCHEMA)
