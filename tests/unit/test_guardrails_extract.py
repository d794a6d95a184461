"""Extracting the Cypher statement from an LLM reply."""

from __future__ import annotations

import pytest

from guardrails.extract import extract_cypher

Q = "MATCH (n) RETURN n"

CASES: list[tuple[str, str]] = [
    # plain statements and trailing semicolons / whitespace
    (Q, Q),
    (Q + ";", Q),
    ("  " + Q + " ;; \n", Q),
    ("\n\n" + Q + "\n\n", Q),
    ("MATCH (n)\r\nRETURN n;\r\n", "MATCH (n)\nRETURN n"),
    # fences
    ("```cypher\n" + Q + "\n```", Q),
    ("```Cypher\nMATCH (n)\nRETURN n;\n```", "MATCH (n)\nRETURN n"),
    ("```\n" + Q + "\n```", Q),
    ("~~~cypher\n" + Q + "\n~~~", Q),
    ("```cypher " + Q + "```", Q),
    ("```" + Q + "```", Q),
    ("```cypher\n" + Q + "\n", Q),  # unclosed fence
    ("Here is the query:\n```cypher\n" + Q + "\n```\nThis returns all nodes.", Q),
    ("```cypher\n" + Q + "\n```\n```cypher\nMATCH (m) RETURN m\n```", Q),  # first block
    ("```json\n{}\n```\n```cypher\n" + Q + "\n```", Q),  # the cypher block wins
    ("```sql\n" + Q + "\n```", Q),
    ("```cypher\ncypher\n" + Q + "\n```", Q),
    # prose before and after
    ("Here is the query:\n" + Q, Q),
    ("Sure! Here's a Cypher query that answers it:\n\n" + Q + "\n", Q),
    (
        "Here is the query:\nMATCH (n:Person)\nWHERE n.age > 3\nRETURN n.name\n\nThis finds people.",
        "MATCH (n:Person)\nWHERE n.age > 3\nRETURN n.name",
    ),
    (
        "MATCH (n:Person)\nRETURN n.name\nThis query finds people.",
        "MATCH (n:Person)\nRETURN n.name",
    ),
    (Q + "\n\n**Explanation**: it returns everything.", Q),
    (Q + "\n\nExplanation:\n- it matches nodes", Q),
    (Q + "\n\n- The query matches every node.", Q),
    (Q + "\n\n# Notes\nnone", Q),
    ("The answer is: " + Q, Q),
    # labels and a leading "cypher" word
    ("cypher\n" + Q, Q),
    ("Cypher: " + Q, Q),
    ("Query: " + Q, Q),
    ("cypher " + Q, Q),
    ("CYPHER runtime=slotted " + Q, "CYPHER runtime=slotted " + Q),
    # inline code
    ("`" + Q + "`", Q),
    ("MATCH (n:`My Label`) RETURN n", "MATCH (n:`My Label`) RETURN n"),
    ("`MATCH (n:`My Label`) RETURN n`", "MATCH (n:`My Label`) RETURN n"),
    ("Try `" + Q + "` instead.", Q),
    # multi-line statements survive, including blank lines inside them
    ("MATCH (a)\n\n-[:R]->(b)\n\nRETURN b", "MATCH (a)\n\n-[:R]->(b)\n\nRETURN b"),
    (
        "MATCH (a)\n\nWITH a\n\n  ORDER BY a.x\nRETURN a",
        "MATCH (a)\n\nWITH a\n\n  ORDER BY a.x\nRETURN a",
    ),
    ("MATCH (n)\n// a comment\nRETURN n", "MATCH (n)\n// a comment\nRETURN n"),
    ("match (n) return n", "match (n) return n"),
    # writes are handed on unchanged so the policy can refuse them with a reason
    ("Sure! The answer:\n\nMERGE (n:X)\n", "MERGE (n:X)"),
    ("```cypher\nMATCH (n) DETACH DELETE n;\n```", "MATCH (n) DETACH DELETE n"),
    ("MATCH (n) RETURN n; MATCH (m) DELETE m;", "MATCH (n) RETURN n; MATCH (m) DELETE m"),
    (
        "I'd run:\nLOAD CSV FROM 'file:///etc/passwd' AS l RETURN l",
        "LOAD CSV FROM 'file:///etc/passwd' AS l RETURN l",
    ),
    # nothing to extract
    ("", ""),
    ("   ", ""),
    ("I cannot answer that from this graph.", ""),
    ("```\n```", ""),
    (";", ""),
]


@pytest.mark.parametrize(("reply", "expected"), CASES)
def test_extract_cypher(reply: str, expected: str) -> None:
    assert extract_cypher(reply) == expected
