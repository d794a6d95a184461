"""The guard's decision parsing: lenient about JSON, strict about the fields."""

from __future__ import annotations

import pytest
from pydantic import BaseModel

from guardrails.topic import (
    DecisionParseError,
    ScopeDecision,
    fallback_decision,
    parse_decision,
    parse_json_object,
)

IN = ScopeDecision(standalone_question="Which teams own Postgres?", scope="in_scope")

PARSED: list[tuple[str, ScopeDecision]] = [
    ('{"standalone_question": "Which teams own Postgres?", "scope": "in_scope"}', IN),
    ('```json\n{"standalone_question": "Which teams own Postgres?", "scope": "in_scope"}\n```', IN),
    ('```\n{"standalone_question": "Which teams own Postgres?", "scope": "in_scope"}\n```', IN),
    (
        'Here is my decision:\n{"standalone_question": "Which teams own Postgres?", '
        '"scope": "in_scope"}\nHope that helps!',
        IN,
    ),
    ("{'standalone_question': 'Which teams own Postgres?', 'scope': 'in_scope'}", IN),
    ('{"standalone_question": "Which teams own Postgres?", "scope": "in_scope",}', IN),
    ('{\n  standalone_question: "Which teams own Postgres?",\n  scope: "in_scope"\n}', IN),
    ('{"standalone_question": "Which teams own Postgres?", "scope": "IN SCOPE"}', IN),
    ('{"standalone_question": "Which teams own Postgres?", "scope": "in-scope"}', IN),
    ('{"standalone_question": "Which teams own Postgres?", "scope": true}', IN),
    ("{'standalone_question': 'Which teams own Postgres?', 'scope': True}", IN),
    (
        '{"standalone_question": "Which teams own Postgres?", // rewritten\n "scope": "in_scope"}',
        IN,
    ),
    (
        '{"standalone_question": "Which teams own Postgres?", // a stray } here\n "scope": "in_scope"}',
        IN,
    ),
    (
        '{"standalone_question": "Which teams own Postgres?", "scope": "in_scope", '
        '"reason": null, "clarification": ""}',
        IN,
    ),
    (
        '{"standalone_question": "Which teams own Postgres?", "scope": "in_scope", "extra": 1}',
        IN,
    ),
    (
        '{"scope": "out_of_scope", "reason": "weather", "standalone_question": "Weather?"}',
        ScopeDecision(standalone_question="Weather?", scope="out_of_scope", reason="weather"),
    ),
    (
        "{'scope': 'ambiguous', 'clarification': 'Which service?', 'standalone_question': 'it?',}",
        ScopeDecision(
            standalone_question="it?", scope="needs_clarification", clarification="Which service?"
        ),
    ),
    (
        '{"scope": "needs clarification", "clarification": "Which \\"it\\"?"}',
        ScopeDecision(scope="needs_clarification", clarification='Which "it"?'),
    ),
    (
        "{'standalone_question': \"Who's on call?\", 'scope': 'in_scope'}",
        ScopeDecision(standalone_question="Who's on call?", scope="in_scope"),
    ),
    (
        "{'standalone_question': 'Who\\'s on call? {today}', 'scope': 'in_scope'}",
        ScopeDecision(standalone_question="Who's on call? {today}", scope="in_scope"),
    ),
    (
        '{"standalone_question": "Qui possède Postgres ?", "scope": "in_scope"}',
        ScopeDecision(standalone_question="Qui possède Postgres ?", scope="in_scope"),
    ),
    (
        '{"scope": "in_scope", "standalone_question": "x", "reason": "None of the above"}',
        ScopeDecision(standalone_question="x", scope="in_scope", reason="None of the above"),
    ),
]


@pytest.mark.parametrize(("reply", "expected"), PARSED)
def test_parse_decision(reply: str, expected: ScopeDecision) -> None:
    assert parse_decision(reply) == expected


@pytest.mark.parametrize(
    ("reply", "message"),
    [
        ("", "no JSON object"),
        ("I think it is in scope.", "no JSON object"),
        ('{"scope": "maybe"}', "scope"),
        ('{"standalone_question": "x"}', "scope"),
        ('{"scope": "in_scope", "standalone_question": ', "not valid JSON"),
        ("{scope in_scope}", "not valid JSON"),
        ('{"scope": "in_scope", "standalone_question": ["a"]}', "standalone_question"),
    ],
)
def test_parse_errors_carry_the_reason(reply: str, message: str) -> None:
    with pytest.raises(DecisionParseError) as raised:
        parse_decision(reply)
    assert message in str(raised.value)


def test_parse_error_is_a_value_error() -> None:
    assert issubclass(DecisionParseError, ValueError)


def test_fallback_is_in_scope_and_keeps_the_question() -> None:
    decision = fallback_decision("What does team Atlas own?")
    assert decision.scope == "in_scope"
    assert decision.standalone_question == "What does team Atlas own?"
    assert decision.clarification is None


class Evaluation(BaseModel):
    answers_question: bool
    answer: str = ""
    feedback: str = ""


@pytest.mark.parametrize(
    ("reply", "expected"),
    [
        (
            '{"answers_question": true, "answer": "3 teams."}',
            Evaluation(answers_question=True, answer="3 teams."),
        ),
        (
            "```json\n{'answers_question': False, 'feedback': 'add a filter',}\n```",
            Evaluation(answers_question=False, feedback="add a filter"),
        ),
        (
            'Verdict: {"answers_question": true, "answer": "It is {x}."} done',
            Evaluation(answers_question=True, answer="It is {x}."),
        ),
        (
            '{"answers_question": "yes", "answer": "ok"}',
            Evaluation(answers_question=True, answer="ok"),
        ),
        (
            '```json\n{"answers_question": true, "answer": "line1\\nline2"}\n```',
            Evaluation(answers_question=True, answer="line1\nline2"),
        ),
    ],
)
def test_parse_json_object_for_other_models(reply: str, expected: Evaluation) -> None:
    assert parse_json_object(reply, Evaluation) == expected


def test_parse_json_object_rejects_non_objects() -> None:
    with pytest.raises(DecisionParseError):
        parse_json_object("[1, 2]", Evaluation)
    with pytest.raises(DecisionParseError, match="answers_question"):
        parse_json_object('{"answer": "x"}', Evaluation)
