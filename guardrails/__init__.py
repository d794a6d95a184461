"""Pure safety checks: Cypher read-only policy, topic-scope decisions, input limits, channel policy."""
