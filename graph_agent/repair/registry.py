"""Every repair rule, in the order it is asked. One screen: what runs where.

| phase    | trigger         | kind    | rule                                               |
|----------|-----------------|---------|----------------------------------------------------|
| validate | statement       | rewrite | stored-value-literal, string-alias, nulls-last,    |
|          |                 |         | final-with-returns, recount-grouped                |
| validate | schema_problem  | rewrite | relabel-for-value, property-through-neighbour      |
| validate | schema_problem  | hint    | value-on-another-label                             |
| validate | schema_problem  | guard   | asked-but-missing                                  |
| validate | before_engine   | guard   | costly-read-repeated, aggregate-in-where           |
| validate | engine_error    | rewrite | bind-unbound-variable (EXPLAINed again)            |
| validate | engine_error    | hint    | unbound-variable-note, order-by-aggregate-note     |
| execute  | empty_result    | hint    | missed-value, value-next-door, value-spelling      |
|          |                 |         | (one of the three per question)                    |
| execute  | rows            | hint    | counted-label (once per question)                  |
| correct  | reply           | rewrite | run-the-shown-statement                            |
| correct  | reply           | hint    | reask-repeated-statement (once per question)       |
| answer   | worded_answer   | guard   | answer-denies-rows, unsupported-claims,            |
|          |                 |         | omits-the-value                                    |

A new rule: write it in the module of its phase with the `rule` decorator (a docstring that
names the failure with a general example), add it here in its place, and add its cases to
tests/unit/repair_cases/. Not here: the read-only policy and channel restrictions
(guardrails/), the schema check's own notes and direction flips (statement.check_schema),
the row cap (statement.with_limit) — checks every statement gets, not repairs.
"""

from __future__ import annotations

from graph_agent.repair import answer_rules as a
from graph_agent.repair import correct_rules as c
from graph_agent.repair import execute_rules as e
from graph_agent.repair import validate_rules as v
from graph_agent.repair.rule import Rule

RULES: tuple[Rule, ...] = (
    v.stored_value_literal,
    v.string_alias,
    v.nulls_last,
    v.final_with,
    v.recount_grouped,
    v.relabel,
    v.property_from_neighbour,
    v.value_elsewhere,
    v.asked_but_missing,
    v.costly_read_repeated,
    v.aggregate_where,
    v.bind_unbound,
    v.unbound_note,
    v.order_by_aggregate,
    e.missed_value,
    e.value_next_door,
    e.value_spelling,
    e.counted_label,
    c.run_shown,
    c.reask_repeated,
    a.answer_denies_rows,
    a.unsupported,
    a.omits_the_value,
)

BY_NAME = {r.name: r for r in RULES}


def unknown_rules(names: set[str] | frozenset[str]) -> list[str]:
    """Names that are not rules (for `--without-rule` typos)."""
    return sorted(n for n in names if n not in BY_NAME)
