"""Value similarity and the schema text, table-driven, without a database."""

from __future__ import annotations

import datetime as dt
import re

import pytest

from graph_agent.graphdb import (
    GraphSchema,
    LabelInfo,
    PropertyInfo,
    RelPattern,
    schema_fingerprint,
    schema_text,
)
from graph_agent.graphdb.lookup import (
    CatalogEntry,
    ValueCatalog,
    Words,
    coverage,
    is_code,
    phrases,
    similarity,
)
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


@pytest.mark.parametrize(
    ("values", "as_text"),
    [
        (["172", "96", "264", "unknown", "1,358", " 36.8 "], True),
        (["12", "7", "9", "n/a", "unknown", "none", "12"], True),  # three placeholders
        (["12", "7", "9", "n/a", "unknown", "none", "-"], False),  # four: not placeholders
        (["1", "2", "x", "y", "x", "y", "x", "y"], False),  # under 40% numbers
        (["1", "1", "1", "unknown"], False),  # one distinct number
        (["1 standard", "30-165", "0.9 standard", "2 days"], False),  # text with numbers in it
        (["ALFKI", "ANATR", "10248"], False),
    ],
)
def test_numbers_written_as_text_are_told_from_text(values: list[str], as_text: bool) -> None:
    props = properties_from_samples([{"v": v} for v in values])
    assert props[0].numbers_as_text is as_text


def test_a_property_with_numbers_and_text_of_both_types_is_not_numbers_as_text() -> None:
    samples = [{"v": 172}, {"v": 96}, {"v": "264"}, {"v": "180"}, {"v": "190"}]
    assert properties_from_samples(samples)[0].numbers_as_text is False


@pytest.mark.parametrize(
    ("values", "written"),
    [
        (["24/08/2017", "7/08/2017", "1/09/2017", "24/08/2017"], "d/m/y"),  # a day above 12
        (["08.24.2017", "7.08.2017", "09.01.2017"], "m.d.y"),  # a month first, dots
        (["1/08/2017", "7/08/2017", "1/09/2017"], ""),  # no part above 12: day or month?
        (["24/08/2017", "7-08-2017", "1/09/2017"], ""),  # two separators
        (["24/08/2017", "7/08/2017"], ""),  # too few to tell
        (["24/08/2017", "7/08/2017", "13/09/2017", "a", "b", "c", "d"], ""),  # mostly text
        (["2017-08-24", "2017-08-07", "2017-09-13"], ""),  # ISO: sorts as text already
    ],
)
def test_dates_written_as_text_are_told_with_their_order(values: list[str], written: str) -> None:
    props = properties_from_samples([{"v": v} for v in values])
    assert props[0].date_format == written
    assert not (written and props[0].unique)  # a date names nothing


@pytest.mark.parametrize(
    ("values", "iso"),
    [
        (["1961-08-26", "1915-07-03", "1980-12-24", "1961-08-26"], True),  # a foodmart trial's
        (["1982-01-09 00:00:00", "1970-04-02 00:00:00", "1959-06-07 00:00:00"], True),
        (["2017-08-24T10:00", "2017-08-07", "2017-09-13", "unknown"], True),  # a placeholder
        (["2017-08-24", "2017-08-07"], False),  # too few to tell
        (["24/08/2017", "7/08/2017", "13/09/2017"], False),  # day first: date_format's
        (["2017-08-24 to 2017-09-01", "2017-08-07", "x", "y", "z", "w"], False),  # mostly text
    ],
)
def test_iso_dates_written_as_text_are_told(values: list[str], iso: bool) -> None:
    props = properties_from_samples([{"v": v} for v in values])
    assert props[0].iso_dates is iso
    assert not (iso and props[0].unique)  # a date names nothing


@pytest.mark.parametrize(
    ("samples", "unique"),
    [
        ([{"v": f"RY5{n} APF"} for n in range(5)], True),  # five registrations, none twice
        ([{"v": f"RY5{n} APF"} for n in range(4)], False),  # too few to tell
        ([{"v": f"RY5{n} APF"} for n in range(5)] + [{"v": "RY50 APF"}], False),  # one twice
        ([{"v": f"RY5{n} APF"} for n in range(5)] + [{}], False),  # one node lacks it
        ([{"v": str(n)} for n in range(5)], False),  # numbers as text are measures
        ([{"v": n} for n in range(5)], False),  # not a string
    ],
)
def test_a_string_no_two_sampled_nodes_share_is_unique(
    samples: list[dict[str, object]], unique: bool
) -> None:
    assert properties_from_samples(samples)[0].unique is unique


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
        "(:Person) [3 nodes] {name: STRING (identifies it)}\n"
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


# --- value hints on a graph with free text ----------------------------------------------------

FILMS = {
    ("Movie", "title"): [
        "The Matrix",
        "The Matrix Reloaded",
        "Top Gun",
        "Cloud Atlas",
        "Snow White",
        "Cast Away",
    ],
    ("Movie", "tagline"): [
        "400 million people were waiting for the truth.",
        "Welcome to the Real World",
        "Everything is connected",
        "I feel the need, the need for speed.",
        "In the heart of the nation's capital, in a courthouse of the U.S. government.",
    ],
    ("Movie", "summary_text"): ["short", "tiny"],
    ("Person", "name"): ["Keanu Reeves", "Tom Hanks", "Tom Cruise", "Carrie-Anne Moss"],
    ("Person", "motto"): [
        "Every day is a chance to make a film that people remember for years",
        "Acting is what I was made for and I have never wanted to do anything else",
    ],
    ("Genre", "name"): ["Science Fiction", "Drama"],
}
FILM_SCHEMA = GraphSchema(
    labels=(
        LabelInfo(
            "Movie",
            5,
            (
                PropertyInfo("released", ("INTEGER",)),
                PropertyInfo("summary_text", ("STRING",)),
                PropertyInfo("tagline", ("STRING",)),
                PropertyInfo("title", ("STRING",)),
            ),
        ),
        LabelInfo(
            "Person", 4, (PropertyInfo("motto", ("STRING",)), PropertyInfo("name", ("STRING",)))
        ),
        LabelInfo("Genre", 2, (PropertyInfo("name", ("STRING",)),)),
    ),
    relationships=(
        RelPattern("Person", "ACTED_IN", "Movie", 5, (PropertyInfo("screenTime", ("INTEGER",)),)),
    ),
)


def _film_catalog() -> tuple[ValueCatalog, list[str]]:
    asked: list[str] = []

    def read(cypher: str) -> list[list[object]]:
        asked.append(cypher)
        found = re.search(r"MATCH \(n:`(\w+)`\) WHERE n\.`(\w+)`", cypher)
        assert found, cypher
        return [[v] for v in FILMS[(found.group(1), found.group(2))]]

    return ValueCatalog.build(read, FILM_SCHEMA), asked


def test_catalog_skips_prose_by_name_and_by_measured_length() -> None:
    catalog, asked = _film_catalog()
    held = {(e.label, e.property) for e in catalog.entries}
    assert held == {("Movie", "title"), ("Person", "name"), ("Genre", "name")}
    # Named like prose: never even read.
    assert not any("tagline" in q or "summary_text" in q for q in asked)
    # Named innocently but measured as sentences.
    assert any("motto" in q for q in asked) and ("Person", "motto") not in held


def test_the_catalog_knows_every_schema_name_as_words() -> None:
    catalog, _ = _film_catalog()
    assert {"acted", "in", "summary", "text", "tagline", "released", "movie"} <= catalog.vocabulary
    assert {"screen", "time"} <= catalog.vocabulary  # a relationship's property too


@pytest.mark.parametrize(
    "question",
    [
        "Which films were made in 1999?",
        "What is the capital of France?",
        "Which people were waiting for the truth?",
        "Who made the most films?",
    ],
)
def test_no_hint_from_common_words_or_free_text(question: str) -> None:
    catalog, _ = _film_catalog()
    assert catalog.match(question, 5) == []


def test_one_word_of_a_title_in_lower_case_beside_capitals_is_a_word() -> None:
    # A Movies trial: "Which movie has the largest cast?" was offered the film "Cast Away".
    catalog, _ = _film_catalog()
    assert catalog.match("Which movie has the largest cast?", 5) == []
    hinted = catalog.match("Which film with Tom Hanks has the largest cast?", 5)
    assert [m.value for m in hinted] == ["Tom Hanks"]
    # in lower case throughout, a word may be a name: nothing says it is not
    assert [m.value for m in catalog.match("which movie has the largest cast?", 5)] == ["Cast Away"]


# A drug classification (a trial on a graphgist nobody here wrote): mechanisms of action named
# by a class and what it is, posologies named by ingredient, dose and form.
DRUGS = {
    ("MechanismOfAction", "name"): [
        "Anti ulcer:H2 receptor antagonists",
        "Antithrombotic:Heparin and derivatives",
        "Antiarrhythmics. Class III",
    ],
    ("Posology", "name"): ["Famotidine 10 mg", "Bemiparina 3500 UI injectable SC"],
}
DRUG_SCHEMA = GraphSchema(
    labels=(
        LabelInfo("MechanismOfAction", 3, (PropertyInfo("name", ("STRING",)),)),
        LabelInfo("Posology", 2, (PropertyInfo("name", ("STRING",)),)),
    ),
    relationships=(),
)


def _drug_catalog() -> ValueCatalog:
    def read(cypher: str) -> list[list[object]]:
        found = re.search(r"MATCH \(n:`(\w+)`\) WHERE n\.`(\w+)`", cypher)
        assert found, cypher
        return [[v] for v in DRUGS[(found.group(1), found.group(2))]]

    return ValueCatalog.build(read, DRUG_SCHEMA)


@pytest.mark.parametrize(
    ("question", "value"),
    [
        (
            "What are the active ingredients of the antithrombotic mechanism of action?",
            "Antithrombotic:Heparin and derivatives",
        ),
        ("Which mechanisms of action are antiarrhythmics?", "Antiarrhythmics. Class III"),
        ("Which posologies are injectable?", "Bemiparina 3500 UI injectable SC"),
    ],
)
def test_a_word_in_lower_case_beside_its_values_label_names_the_value(
    question: str, value: str
) -> None:
    assert [m.value for m in _drug_catalog().match(question, 5)] == [value]


@pytest.mark.parametrize(
    "question",
    [
        "Which ingredients are antithrombotic?",  # beside no label of the value's
        "Which mechanism of action is antithrombotik?",  # not as the value holds it
        "Which mechanism of action was placed first?",
    ],
)
def test_a_word_in_lower_case_away_from_its_values_label_is_a_word(question: str) -> None:
    assert _drug_catalog().match(question, 5) == []


@pytest.mark.parametrize(
    ("question", "value"),
    [
        ("Which movies did keanu reeves act in?", "Keanu Reeves"),
        ("movies with Keanu Reaves", "Keanu Reeves"),
        ("Who acted in the matrix reloaded?", "The Matrix Reloaded"),
        ("sci-fi movies", "Science Fiction"),
        ("Who starred in cast away?", "Cast Away"),
        ("Who starred in Cast Away?", "Cast Away"),
    ],
)
def test_hints_name_most_of_the_stored_value(question: str, value: str) -> None:
    catalog, _ = _film_catalog()
    assert catalog.match(question, 5)[0].value == value


def test_hints_rank_by_closeness_and_stop_at_the_limit() -> None:
    catalog, _ = _film_catalog()
    found = catalog.match("Who acted in The Matrix with Tom?", 5)
    assert [m.value for m in found][:1] == ["The Matrix"]
    assert "The Matrix Reloaded" not in [m.value for m in found[:1]]
    assert found == sorted(found, key=lambda m: -m.score)
    # "Tom" alone is a third of "Tom Hanks": not most of it.
    assert not {"Tom Hanks", "Tom Cruise"} & {m.value for m in found}
    assert len(catalog.match("Keanu Reeves, Tom Hanks, Tom Cruise and The Matrix", 2)) == 2


@pytest.mark.parametrize(
    ("phrase", "value", "at_least", "below"),
    [
        ("keanu reeves", "Keanu Reeves", 1.0, 1.01),
        ("were made", "400 million people were waiting for the truth.", 0.0, 0.3),
        ("services", "Amazon Web Services", 0.0, 0.6),
        ("sev1", "SEV2", 0.0, 0.01),
        ("node js", "Node.js", 1.0, 1.01),
    ],
)
def test_coverage(phrase: str, value: str, at_least: float, below: float) -> None:
    assert at_least <= coverage(phrase, value) < below


def _airports() -> ValueCatalog:
    names = [
        "London Gatwick",
        "London Heathrow",
        "London Luton",
        "Amsterdam Airport Schiphol",
        "Region of Murcia International Airport",
        "Bol Airport",
        "Kos Airport",
        *(f"Town {n} Airport" for n in range(40)),
    ]
    entries = [CatalogEntry("Airport", "descr", v, v, "descr") for v in names]
    entries += [CatalogEntry("Airport", "iata", c, c, "iata") for c in ("REG", "LGW", "NO")]
    entries += [CatalogEntry("Region", "name", "GB-SCT", "GB-SCT", "name")]
    return ValueCatalog(entries=entries, large=[], built_at=0.0)


@pytest.mark.parametrize(
    ("question", "value"),
    [
        ("What are the longest routes out of Gatwick?", "London Gatwick"),
        ("How many runways does Schipol have?", "Amsterdam Airport Schiphol"),  # one typo
    ],
)
def test_a_word_few_values_hold_is_a_hint(question: str, value: str) -> None:
    assert value in [m.value for m in _airports().match(question, 5)]


@pytest.mark.parametrize(
    ("question", "not_hinted"),
    [
        ("Which airports are in Scotland?", "Bol Airport"),  # "airport": held by many values
        ("Which region is Zurich in?", "Region of Murcia International Airport"),  # a label
        ("Which region is Zurich in?", "REG"),  # a code is no abbreviation of "region"
        ("How many routes are nonstop?", "NO"),
    ],
)
def test_words_many_values_share_and_short_codes_are_no_hint(
    question: str, not_hinted: str
) -> None:
    assert not_hinted not in [m.value for m in _airports().match(question, 10)]


@pytest.mark.parametrize(
    ("text", "spaced", "joined"),
    [("Sci-Fi", "sci fi", "scifi"), ("Node.js", "node js", "nodejs"), ("  ", "", "")],
)
def test_words_are_the_text_tokenised_once(text: str, spaced: str, joined: str) -> None:
    words = Words.of(text)
    assert (words.spaced, words.joined) == (spaced, joined)
    assert words.token_set == frozenset(spaced.split())


def test_a_catalog_tokenises_its_values_once_not_per_question(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    catalog = _airports()
    first = [m.value for m in catalog.match("longest routes out of Gatwick", 5)]
    tokenised: list[str] = []
    original = Words.of

    def counting(text: str) -> Words:
        tokenised.append(text)
        return original(text)

    monkeypatch.setattr(Words, "of", counting)
    again = [m.value for m in catalog.match("longest routes out of Gatwick", 5)]
    assert again == first
    assert set(tokenised) <= set(phrases("longest routes out of Gatwick"))


def _racks() -> ValueCatalog:
    """Rack and machine names as the network graph writes them: every part shared."""
    racks = [f"DC1-RCK-{a}-{b}" for a in range(1, 5) for b in range(1, 11)]
    machines = [f"{rack}-M-{m}" for rack in racks for m in range(1, 30)]
    entries = [CatalogEntry("Rack", "name", v, v, "name") for v in racks]
    entries += [CatalogEntry("Machine", "name", v, v, "name") for v in machines]
    entries += [CatalogEntry("Type", "name", "xs-1/1/1", "xs-1/1/1", "name")]
    return ValueCatalog(entries=entries, large=[], built_at=0.0)


@pytest.mark.parametrize(
    ("question", "value", "label"),
    [
        ("What operating systems do the machines in rack DC1-RCK-2-1 run?", "DC1-RCK-2-1", "Rack"),
        ("Which rack is dc1-rck-2-1.", "DC1-RCK-2-1", "Rack"),  # case aside, a full stop after
        ("Which ports does DC1-RCK-2-1-M-17 listen on?", "DC1-RCK-2-1-M-17", "Machine"),
        ("and how many of those are of type xs-1/1/1?", "xs-1/1/1", "Type"),
    ],
)
def test_a_code_written_out_whole_is_a_hint(question: str, value: str, label: str) -> None:
    # Word similarity finds none of these: 'DC1' and 'RCK' are in every value.
    matches = _racks().match(question, 5)
    assert (label, value, 1.0) in [(m.label, m.value, m.score) for m in matches]


def test_part_of_a_code_is_no_code_hint() -> None:
    # The machine's name holds the rack's: only the whole word names one value.
    values = [m.value for m in _racks().match("Which ports does DC1-RCK-2-1-M-17 listen on?", 5)]
    assert "DC1-RCK-2-1" not in values


@pytest.mark.parametrize(
    ("value", "code"),
    [("DC1-RCK-2-1", True), ("xs-1/1/1", True), ("SEV-2", True), ("8-Jessie", True),
     ("Jean-Luc", False), ("2024", False), ("16.04", False), ("SEV1", False),
     ("London Gatwick", False)],
)  # fmt: skip
def test_is_code(value: str, code: bool) -> None:
    assert is_code(value) is code


def _police() -> ValueCatalog:
    """The POLE graph's shapes (a trial, no eval set): crime types, vehicle models, people."""
    values = [
        ("Crime", "type", "Other crime"),
        ("Crime", "type", "Vehicle crime"),
        ("Crime", "type", "Drugs"),
        ("Vehicle", "model", "S-Type"),
        ("Vehicle", "model", "Type R"),
        ("Person", "surname", "Long"),
        ("Person", "surname", "Biggs"),
        ("Officer", "name", "Augustine"),
        ("Officer", "name", "Marchant"),
        ("Vehicle", "model", "Reventón"),
        ("Location", "city", "São Paulo"),
    ]
    values += [
        ("Person", "surname", "Peterson"),
        ("PhoneCall", "call_duration", "24"),
        ("PhoneCall", "call_time", "08:24"),
        ("PhoneCall", "call_time", "17:17"),
        ("Vehicle", "model", "240SX"),
        ("Film", "title", "Average Joe"),
        ("Film", "title", "Total Recall"),
    ]
    entries = [CatalogEntry(label, prop, v, v, prop) for label, prop, v in values]
    vocabulary = frozenset({"person", "knows", "crime", "phone", "call", "duration", "time"})
    return ValueCatalog(entries=entries, large=[], built_at=0.0, vocabulary=vocabulary)


@pytest.mark.parametrize(
    ("question", "not_hinted"),
    [
        ("What is the most common type of crime?", "S-Type"),  # "type": a property's name
        ("What is the most common type of crime?", "Other crime"),  # "crime": a label's
        ("What was the longest phone call?", "Long"),  # a superlative is no name
        ("Which is the biggest car?", "Biggs"),
        ("How many crimes were there in August 2017?", "Augustine"),  # a month is no name
        ("Which crimes happened in March?", "Marchant"),
        ("What is the most recent crime?", "Reventón"),  # "revent" was one typo from it
        ("Which person knows the most people?", "Peterson"),  # a label and a relationship
        ("Which crimes happened on 24/08/2017?", "24"),  # a date is no run of numbers
        ("Which crimes happened on 24/08/2017?", "08:24"),
        ("Which crimes happened on 24/08/2017?", "240SX"),
        ("Which calls were made on 2017-08-24?", "24"),
        ("When was the last crime at 178 Polding Street?", "17:17"),  # a number, whole only
        ("What is the average call duration?", "Average Joe"),  # a word asking for a figure
    ],
)
def test_schema_words_superlatives_and_months_name_no_value_they_only_start(
    question: str, not_hinted: str
) -> None:
    assert not_hinted not in [m.value for m in _police().match(question, 10)]


@pytest.mark.parametrize(
    ("question", "value"),
    [
        ("Which cars of model S-Type were involved?", "S-Type"),
        ("Who is called Long?", "Long"),
        ("How many drug crimes are there?", "Drugs"),
        ("Which officer is Augustine?", "Augustine"),
        ("Which crimes happened in Sao Paulo?", "São Paulo"),  # accents folded
        ("Which vehicles are Reventóns?", "Reventón"),
        ("Who knows Mr Peterson?", "Peterson"),
        ("Which calls lasted 24 minutes?", "24"),  # a number alone is still one
        ("Who watched Average Joe?", "Average Joe"),
        ("Who watched Total Recall?", "Total Recall"),
    ],
)
def test_those_values_written_out_are_still_hints(question: str, value: str) -> None:
    assert value in [m.value for m in _police().match(question, 10)]


_FILINGS = [
    {"end": dt.date(2016, 4, d), "end_date": f"Apr {d}, 2016", "transactions": d * 10,
     "number_transactions": str(d * 10), "amount": d * 1.5e7, "amount_transactions": f"{d * 1.5}E7",
     "note": f"filed {d}"}
    for d in range(1, 8)
]  # fmt: skip


@pytest.mark.parametrize(
    ("samples", "twins"),
    [
        (
            _FILINGS,  # a FinCEN import: each column kept as text beside its typed copy
            {"end_date": "end", "number_transactions": "transactions",
             "amount_transactions": "amount"},
        ),
        (
            [{**f, "number_transactions": ""} if n == 2 else f for n, f in enumerate(_FILINGS)],
            {"end_date": "end", "number_transactions": "transactions",
             "amount_transactions": "amount"},  # an empty cell holds nothing to compare
        ),
        (
            [{**f, "end_date": "Apr 9, 2016"} if n == 3 else f for n, f in enumerate(_FILINGS)],
            {"number_transactions": "transactions", "amount_transactions": "amount"},
        ),  # one node where the text says another day: not a copy
        (_FILINGS[:4], {}),  # too few nodes hold both to tell
        (
            [{"year": 2000 + n, "title": f"Film {2000 + n}", "code": str(2000 + n)} for n in range(6)],
            {"code": "year"},
        ),  # the text of a number, whatever its name
    ],
)  # fmt: skip
def test_a_column_kept_as_text_beside_its_typed_copy_is_found(
    samples: list[dict[str, object]], twins: dict[str, str]
) -> None:
    props = properties_from_samples(samples)
    assert {p.name: p.text_of for p in props if p.text_of} == twins


def test_a_column_kept_as_text_is_left_out_of_the_schema_text() -> None:
    label = LabelInfo("Filing", 7, properties_from_samples(_FILINGS))
    text = schema_text(GraphSchema((label,), ()))
    assert "end: DATE" in text and "transactions: INTEGER" in text and "note: STRING" in text
    assert "end_date" not in text and "number_transactions" not in text
