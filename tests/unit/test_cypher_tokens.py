"""The Cypher tokenizer and the reader of referenced labels, types, properties and patterns."""

from __future__ import annotations

import pytest

from guardrails.cypher_tokens import Token, referenced_names, tokenize


def _kinds(cypher: str) -> list[tuple[str, str]]:
    return [(t.kind, t.value) for t in tokenize(cypher)]


@pytest.mark.parametrize(
    ("cypher", "expected"),
    [
        ("MATCH", [("keyword", "MATCH")]),
        ("match", [("keyword", "MATCH")]),
        ("MaTcH", [("keyword", "MATCH")]),
        ("person", [("identifier", "person")]),
        ("_x1", [("identifier", "_x1")]),
        ("'a b'", [("string", "a b")]),
        ('"a b"', [("string", "a b")]),
        ("'it\\'s'", [("string", "it's")]),
        ('"say \\"hi\\""', [("string", 'say "hi"')]),
        ("'a\\\\'", [("string", "a\\")]),
        ("'tab\\there'", [("string", "tab\there")]),
        ("'\\u00e9'", [("string", "é")]),
        ("'\\U0001F642'", [("string", "🙂")]),
        ("'\"'", [("string", '"')]),
        ('"\'"', [("string", "'")]),
        ("`weird name`", [("quoted_identifier", "weird name")]),
        ("`a``b`", [("quoted_identifier", "a`b")]),
        ("`CREATE`", [("quoted_identifier", "CREATE")]),
        ("$name", [("parameter", "name")]),
        ("$create", [("parameter", "create")]),
        ("$0", [("parameter", "0")]),
        ("$`my param`", [("parameter", "my param")]),
        ("42", [("number", "42")]),
        ("3.14", [("number", "3.14")]),
        (".5", [("number", ".5")]),
        ("1e10", [("number", "1e10")]),
        ("1.5E-3", [("number", "1.5E-3")]),
        ("0x1F", [("number", "0x1F")]),
        ("0o17", [("number", "0o17")]),
        ("1_000", [("number", "1_000")]),
        ("1..3", [("number", "1"), ("punct", ".."), ("number", "3")]),
        ("n.x", [("identifier", "n"), ("punct", "."), ("identifier", "x")]),
        ("a<>b", [("identifier", "a"), ("punct", "<>"), ("identifier", "b")]),
        ("a<=b", [("identifier", "a"), ("punct", "<="), ("identifier", "b")]),
        ("a=~'x'", [("identifier", "a"), ("punct", "=~"), ("string", "x")]),
        ("n += m", [("identifier", "n"), ("punct", "+="), ("identifier", "m")]),
        ("x :: INTEGER", [("identifier", "x"), ("punct", "::"), ("identifier", "INTEGER")]),
        ("a // CREATE\nb", [("identifier", "a"), ("identifier", "b")]),
        ("a /* CREATE\n */ b", [("identifier", "a"), ("identifier", "b")]),
        ("a // x\rb", [("identifier", "a"), ("identifier", "b")]),
        ("a // x\u2028b", [("identifier", "a"), ("identifier", "b")]),
        ("CRE/**/ATE", [("identifier", "CRE"), ("identifier", "ATE")]),
        ("'// not a comment'", [("string", "// not a comment")]),
        ("'/* not */'", [("string", "/* not */")]),
        ("`//x`", [("quoted_identifier", "//x")]),
        ("Société", [("identifier", "Société")]),
        ("名前", [("identifier", "名前")]),
        ("\u0421REATE", [("identifier", "\u0421REATE")]),
        ("CRE\u200bATE", [("identifier", "CRE\u200bATE")]),
        ("'unterminated", [("error", "unterminated string")]),
        ("/* open", [("error", "unterminated comment")]),
        ("`open", [("error", "unterminated quoted name")]),
        ("", []),
        ("  \n\t ", []),
    ],
)
def test_tokenize(cypher: str, expected: list[tuple[str, str]]) -> None:
    assert _kinds(cypher) == expected


def test_positions_and_text_round_trip() -> None:
    cypher = "MATCH (n:`A b` {x: 'y'}) // c\nRETURN n.x AS `z`, $p"
    for tok in tokenize(cypher):
        assert cypher[tok.position : tok.end] == tok.text


def test_comments_on_request() -> None:
    tokens = tokenize("a /* b */ c // d", include_comments=True)
    assert [(t.kind, t.value) for t in tokens] == [
        ("identifier", "a"),
        ("comment", " b "),
        ("identifier", "c"),
        ("comment", " d"),
    ]


def test_relationship_arrows_are_single_characters() -> None:
    texts = [t.text for t in tokenize("(a)<-[:R]-(b)-->(c)")]
    assert texts == [
        "(",
        "a",
        ")",
        "<",
        "-",
        "[",
        ":",
        "R",
        "]",
        "-",
        "(",
        "b",
        ")",
        "-",
        "-",
        ">",
        "(",
        "c",
        ")",
    ]


def test_token_helpers() -> None:
    tok = Token("keyword", "Match", "MATCH", 0)
    assert tok.is_keyword("MATCH") and tok.is_word and tok.is_name
    assert tok.name == "Match"
    assert Token("quoted_identifier", "`a b`", "a b", 0).name == "a b"
    assert Token("punct", "(", "(", 0).is_punct("(", "[")


def test_never_raises() -> None:
    for text in ["\x00", "$", "'\\", "\\u", "0x", "1e", "🙂🙂", "`" * 7, "." * 5]:
        tokenize(text)


DEMO = (
    "MATCH (p:Person)-[:OWNS]->(s:Service) "
    "MATCH (p)<-[:MEMBER_OF]-(t:Team) "
    "WHERE s.tier = 1 AND p:Employee "
    "RETURN p {.name, teamName: t.name}, "
    "COUNT { (s)-[:DEPENDS_ON]-(x:Service {name: 'a'}) } AS deps"
)


def test_referenced_labels_types_properties() -> None:
    names = referenced_names(DEMO)
    assert names.labels == {"Person", "Service", "Team", "Employee"}
    assert names.rel_types == {"OWNS", "MEMBER_OF", "DEPENDS_ON"}
    # teamName is an output key of a map projection, not a property.
    assert names.properties == {"name", "tier"}


def test_referenced_patterns_use_earlier_bindings() -> None:
    assert referenced_names(DEMO).patterns == [
        ("Person", "OWNS", "Service", "->"),
        ("Person", "MEMBER_OF", "Team", "<-"),
        ("Service", "DEPENDS_ON", "Service", "-"),
    ]


@pytest.mark.parametrize(
    ("cypher", "patterns"),
    [
        ("MATCH (a:A)-[:R]->(b:B) RETURN a", [("A", "R", "B", "->")]),
        ("MATCH (a:A)<-[:R]-(b:B) RETURN a", [("A", "R", "B", "<-")]),
        ("MATCH (a:A)-[:R]-(b:B) RETURN a", [("A", "R", "B", "-")]),
        ("MATCH (a:A)<-[:R]->(b:B) RETURN a", [("A", "R", "B", "-")]),
        ("MATCH (:A)-[r:R*1..3]->(:B) RETURN r", [("A", "R", "B", "->")]),
        ("MATCH (a)-[:R|S]->(b) RETURN a", [(None, "R", None, "->"), (None, "S", None, "->")]),
        ("MATCH (a:A)-->(b:B) RETURN a", []),
        (
            "MATCH (a:A)-[:R]->(b:B)<-[:S]-(c:C) RETURN a",
            [("A", "R", "B", "->"), ("B", "S", "C", "<-")],
        ),
        ("MATCH (a:`My Label`)-[:`HAS ONE`]->(b) RETURN b", [("My Label", "HAS ONE", None, "->")]),
        (
            "MATCH (a:A {x: 1})-[:R {since: 2020}]->(b:B) RETURN a",
            [("A", "R", "B", "->")],
        ),
        # A value in an untyped relationship's map is not its type.
        ("MATCH (a:A)-[r {since: y}]->(b:B) RETURN a", []),
        ("MATCH (a) WHERE a:A MATCH (a)-[:R]->(b) RETURN b", [("A", "R", None, "->")]),
        ("RETURN (1)-(2)", []),
        ("MATCH (a:A) RETURN [(a)-[:R]->(b:B) | b.name]", [("A", "R", "B", "->")]),
    ],
)
def test_patterns(cypher: str, patterns: list[tuple[str | None, str, str | None, str]]) -> None:
    assert referenced_names(cypher).patterns == patterns


@pytest.mark.parametrize(
    ("cypher", "labels", "rel_types", "properties"),
    [
        ("MATCH (n:A:B) RETURN n", {"A", "B"}, set(), set()),
        ("MATCH (n:A|B&!C) RETURN n", {"A", "B", "C"}, set(), set()),
        ("MATCH (n:Match) RETURN n", {"Match"}, set(), set()),
        ("MATCH ()-[r:KNOWS|LIKES]->() RETURN r", set(), {"KNOWS", "LIKES"}, set()),
        ("MATCH (n {name: 'x', `full name`: 'y'}) RETURN n", set(), set(), {"name", "full name"}),
        ("MATCH (n) RETURN n.a.b", set(), set(), {"a", "b"}),
        ("MATCH (n) RETURN n.`odd key`", set(), set(), {"odd key"}),
        ("RETURN {a: 1, b: 2} AS m", set(), set(), set()),
        ("MATCH (n) RETURN date.truncate('day', n.at)", set(), set(), {"at"}),
        ("CALL db.schema.visualization()", set(), set(), set()),
        (
            "MATCH (n) CALL { WITH n MATCH (n:X) WHERE n:Y RETURN n.z AS z } RETURN z",
            {"X", "Y"},
            set(),
            {"z"},
        ),
        ("MATCH (n) WHERE n.x :: INTEGER RETURN n", set(), set(), {"x"}),
        ("MATCH (n) RETURN 'n:Fake', \"m.fake\"", set(), set(), set()),
        ("MATCH (n) // n:Fake\nRETURN n", set(), set(), set()),
        ("MATCH (n) WHERE n.x = $p.y RETURN n", set(), set(), {"x", "y"}),
    ],
)
def test_names(cypher: str, labels: set[str], rel_types: set[str], properties: set[str]) -> None:
    names = referenced_names(cypher)
    assert (names.labels, names.rel_types, names.properties) == (labels, rel_types, properties)


def test_referenced_names_never_raises() -> None:
    for text in ["(", ")-[", "MATCH (a)-[:", "-[:R]->", "'", "(a)<-", "MATCH (n:"]:
        referenced_names(text)


def test_variables_and_property_reads() -> None:
    names = referenced_names(
        "MATCH (a:Airport)-[r:HAS_ROUTE]->(b) WHERE a.runways > 1 "
        "CALL db.labels() YIELD label "
        "RETURN a.descr, r.distance, b.city, date.truncate('day', a.opened), label"
    )
    assert names.variables == {"a": "Airport"}
    assert names.accesses == [
        ("a", "runways"),
        ("a", "descr"),
        ("r", "distance"),
        ("b", "city"),
        ("a", "opened"),
    ]
