"""Pure safety checks: Cypher read-only policy, topic-scope decisions, input limits, channel policy.

What the agent (graph_agent/) may use is exported here, and only here
(tests/unit/test_import_graph.py): the read-only policy, the row redaction, the reply and
question checks, and the Cypher room the policy and the repair rules share (the tokenizer, the
bracket walks and the names a statement references) with the one word helper (stem, camel-case
parts).
"""

from guardrails.cypher_policy import (
    RESTRICTION_CATEGORIES,
    CypherPolicy,
    PolicyResult,
    check_cypher,
    fold_word,
)
from guardrails.cypher_tokens import (
    ReferencedNames,
    Token,
    enclosing,
    matching_close,
    matching_open,
    nesting,
    referenced_names,
    split_top_level,
    tokenize,
)
from guardrails.extract import extract_cypher
from guardrails.intent import asks_for_a_task, asks_to_change
from guardrails.plan_check import plan_problem
from guardrails.redact_rows import redact_rows
from guardrails.relevance import Relevance, Vocabulary, content_words, name_words, relevance
from guardrails.topic import (
    Scope,
    ScopeDecision,
    fallback_decision,
    parse_decision,
    parse_json_object,
)
from guardrails.words import split_name, stem

__all__ = [
    "RESTRICTION_CATEGORIES",
    "CypherPolicy",
    "PolicyResult",
    "ReferencedNames",
    "Relevance",
    "Scope",
    "ScopeDecision",
    "Token",
    "Vocabulary",
    "asks_for_a_task",
    "asks_to_change",
    "check_cypher",
    "content_words",
    "enclosing",
    "extract_cypher",
    "fallback_decision",
    "fold_word",
    "matching_close",
    "matching_open",
    "name_words",
    "nesting",
    "parse_decision",
    "parse_json_object",
    "plan_problem",
    "redact_rows",
    "referenced_names",
    "relevance",
    "split_name",
    "split_top_level",
    "stem",
    "tokenize",
]
