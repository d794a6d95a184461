"""Requests to change the graph, recognised in the question itself (no LLM needed)."""

from __future__ import annotations

import re

_POLITE = r"(?:(?:please|pls|kindly|now|then|and|also|go ahead and|just)\s+)*"
_ASKING = (
    r"(?:(?:can|could|would|will)\s+you\s+|i\s+(?:want|need|would like)\s+(?:you\s+)?to\s+|"
    r"let'?s\s+|you\s+(?:should|must)\s+)?"
)
_VERBS = (
    r"delete|remove|erase|wipe|purge|drop|clear|truncate|destroy|"
    r"set|update|change|modify|edit|rename|replace|overwrite|"
    r"create|add|insert|merge|import|load|"
    r"connect|link|unlink|disconnect|detach|assign|unassign|reassign|move|mark"
)
_CHANGE = re.compile(
    rf"^\W*{_POLITE}{_ASKING}{_POLITE}(?:{_VERBS})\b(?!\s+of\b)(?!\s+(?:\w+\s+)?(?:up|together)\b)",
    re.IGNORECASE,
)
_NOT_A_COMMAND = re.compile(r"\?\s*$")


def asks_to_change(question: str) -> bool:
    """True when the question is an instruction to change data ("Delete all orders from 1996",
    "Can you set the price of Chai to 20?", "Please add a product").

    Only the sentence's leading verb counts, so questions about changes ("Which products were
    added in 1997?", "When was the price set?") are not requests. A leading verb phrased as a
    question about the data ("Set of products that …?") is rare enough to accept.
    """
    for sentence in re.split(r"(?<=[.!?;])\s+|\n+", question.strip()):
        if _CHANGE.match(sentence) and not _is_listing(sentence):
            return True
    return False


_READ_PRODUCTS = re.compile(
    r"\b(?:create|make|add)\s+(?:me\s+)?(?:a|an)\s+(?:list|table|report|summary|overview|chart)\b"
    r"|^\W*set\s+of\b",
    re.IGNORECASE,
)


def _is_listing(sentence: str) -> bool:
    # "Create a list of …" asks for a read; "Set of customers in Berlin?" is a noun phrase.
    return bool(_READ_PRODUCTS.search(sentence)) and (
        not sentence.lower().lstrip().startswith("set") or bool(_NOT_A_COMMAND.search(sentence))
    )


_TASK = re.compile(
    rf"^\W*{_POLITE}{_ASKING}{_POLITE}(?:"
    # Errands: "Book me a flight", "Schedule a meeting with …", "Remind me to …".
    r"(?:book|reserve|schedule|remind|email|e-mail|text|call|phone|buy|pay)\s+(?:me|us|a|an|my|our)\b"
    # Writing something other than a read of the graph: code, prose, a message.
    r"|(?:write|compose|draft)\s+(?:me\s+|us\s+)?(?:a|an|some)\s+(?!(?:cypher\s+)?(?:query|list|"
    r"table|report|summary|overview|chart)\b)"
    r")",
    re.IGNORECASE,
)


def asks_for_a_task(question: str) -> bool:
    """True when the question is an errand or a writing task rather than a question about data
    ("Book me a flight to Rome", "Write a Python function that …", "Schedule a meeting with the
    Search team"). Asking for a read of the graph in writing ("Write a list of …", "Write a
    query that …") is not a task."""
    return any(
        _TASK.match(sentence) for sentence in re.split(r"(?<=[.!?;])\s+|\n+", question.strip())
    )
