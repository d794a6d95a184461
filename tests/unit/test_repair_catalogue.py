"""The repair catalogue: every rule registered once, documented, and tested from data.

tests/unit/repair_cases/cases.yaml holds, per rule, statements it must fix or note and ones it
must leave alone; each case asks the rule directly, with a scripted prober for the rules that
read the graph. The runner's own duties (re-checks, once per question, switches) follow.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
import yaml

from graph_agent.config import AgentConfig
from graph_agent.context import Context
from graph_agent.examples import InMemoryExampleStore
from graph_agent.graphdb.errors import GraphError
from graph_agent.graphdb.protocol import GraphSchema, LabelInfo, PropertyInfo, RelPattern
from graph_agent.llm import LLMCall
from graph_agent.repair import BY_NAME, RULES, Case, Kind, Runner, Trigger, unknown_rules
from graph_agent.result import Attempt
from graph_agent.state import AgentState
from guardrails.cypher_policy import CypherPolicy
from memory.types import Turn

DATA = yaml.safe_load((Path(__file__).parent / "repair_cases" / "cases.yaml").read_text())


def _property(name: str, kind: str) -> PropertyInfo:
    """`NUMBER_TEXT` is a string property that holds numbers written as text; `KEY` one no
    two sampled nodes share; `DATE_TEXT` one that holds dates written day/month/year;
    `ISO_TEXT` one that holds ISO dates as text; `TEXT_OF:<prop>` one that holds the typed property <prop> written as text."""
    if kind.startswith("TEXT_OF:"):
        return PropertyInfo(name, ("STRING",), text_of=kind.split(":", 1)[1])
    if kind == "NUMBER_TEXT":
        return PropertyInfo(name, ("STRING",), numbers_as_text=True)
    if kind == "KEY":
        return PropertyInfo(name, ("STRING",), unique=True)
    if kind == "DATE_TEXT":
        return PropertyInfo(name, ("STRING",), date_format="d/m/y")
    if kind == "ISO_TEXT":
        return PropertyInfo(name, ("STRING",), iso_dates=True)
    return PropertyInfo(name, (kind,))


def _schema(raw: dict[str, Any]) -> GraphSchema:
    kinds = raw.get("kinds", {})
    labels = tuple(
        LabelInfo(
            name,
            10,
            tuple(_property(p, t) for p, t in props.items()),
            tuple(kinds.get(name, ())),
        )
        for name, props in raw["labels"].items()
    )
    rels = tuple(
        RelPattern(s, t, e, 10, tuple(_property(p, k) for p, k in props.items()))
        for s, t, e, *more in raw["relationships"]
        for props in [more[0] if more else {}]
    )
    return GraphSchema(labels, rels)


SCHEMA = _schema(DATA["schema"])
CASES: list[dict[str, Any]] = DATA["cases"]


class ScriptedProber:
    """Answers each probe with the next scripted rows; records the statements."""

    def __init__(self, answers: Sequence[list[list[Any]]]) -> None:
        self.answers = list(answers)
        self.asked: list[str] = []

    async def rows(
        self, statement: str, params: dict[str, Any] | None = None, max_rows: int = 1
    ) -> list[list[Any]]:
        self.asked.append(statement)
        if not self.answers:
            raise GraphError("no more scripted answers")
        return self.answers.pop(0)


class ScriptedChooser:
    """Picks the scripted value when it is one of those offered (a model picks by number, so
    it cannot make one up); with nothing scripted, no model answered. Records what it was
    offered."""

    def __init__(self, case: dict[str, Any]) -> None:
        self.scripted = "choice" in case
        self.choice: str | None = case.get("choice")
        self.offered: list[str] = []

    async def choose(
        self, question: str, label: str, prop: str, value: str, stored: Sequence[str]
    ) -> tuple[str | None, list[LLMCall]]:
        self.offered = list(stored)
        if not self.scripted:
            return None, []
        picked = self.choice if self.choice in stored else None
        return picked, [LLMCall("choose_value", 1.0, 100)]


def _ctx(policy: CypherPolicy | None = None, **config: Any) -> Context:
    return Context(
        db=None,  # type: ignore[arg-type]  # rules read the graph only through the prober
        llms=None,
        examples=InMemoryExampleStore(),
        config=AgentConfig(**config),
        schema=SCHEMA,
        schema_fingerprint=None,
        description="A library: people, books, genres, publishers, cities.",
        suggestions=[],
        policy=policy,
    )


RESTRICTED = CypherPolicy(hidden_properties=frozenset({"Person.born"}))
"""A channel's policy for the cases marked `restricted: true`."""


def _state(case: dict[str, Any]) -> AgentState:
    extra = dict(case.get("state") or {})
    if "attempts" in extra:
        extra["attempts"] = [Attempt(**a) for a in extra["attempts"]]
    if "history" in extra:
        extra["history"] = [Turn(**t) for t in extra["history"]]
    state: dict[str, Any] = {
        "question": case.get("question", "q"),
        "history": [],
        "standalone_question": case.get("question", "q"),
        "attempt_count": 1,
        "max_attempts": 3,
        "value_hints": [tuple(h) for h in case.get("hints") or []],
        **extra,
    }
    return state  # type: ignore[return-value]


def _case(
    case: dict[str, Any],
    prober: ScriptedProber | None = None,
    chooser: ScriptedChooser | None = None,
) -> Case:
    return Case(
        question=case.get("question", "q"),
        cypher=case.get("cypher", ""),
        ctx=_ctx(RESTRICTED if case.get("restricted") else None),
        state=_state(case),
        error=case.get("error", ""),
        unknown=case.get("unknown", ()),
        columns=case.get("columns", ()),
        rows=case.get("rows", ()),
        answer=case.get("answer", ""),
        prober=prober,
        chooser=chooser,
    )


def _id(case: dict[str, Any]) -> str:
    return f"{case['rule']}-{'fires' if case.get('fires', True) else 'quiet'}"


@pytest.mark.parametrize("case", CASES, ids=[_id(c) for c in CASES])
def test_rule_case(case: dict[str, Any]) -> None:
    rule = BY_NAME[case["rule"]]
    prober = ScriptedProber(case.get("probe") or [])
    chooser = ScriptedChooser(case)
    fix = asyncio.run(rule.apply(_case(case, prober, chooser)))
    if "offered" in case:
        assert chooser.offered == case["offered"]
    for wanted in case.get("probe_asked") or []:
        assert any(wanted in asked for asked in prober.asked), prober.asked
    if not case.get("fires", True):
        assert fix is None, fix
        return
    assert fix is not None and fix.detail
    if rule.kind is Kind.REWRITE and case.get("rewrites", True):
        assert fix.cypher is not None and fix.cypher != case["cypher"]
    if not case.get("rewrites", True):
        assert fix.cypher is None
    if "cypher_contains" in case:
        assert case["cypher_contains"] in (fix.cypher or ""), fix.cypher
    if "cypher_lacks" in case:
        assert case["cypher_lacks"] not in (fix.cypher or ""), fix.cypher
    if "note_contains" in case:
        assert case["note_contains"] in (fix.note or ""), fix.note
    if "stage" in case:
        assert fix.stage == case["stage"]
    for key, value in (case.get("update") or {}).items():
        assert fix.update.get(key) == value, fix.update


CASE_KEYS = {
    "rule", "question", "cypher", "fires", "cypher_contains", "cypher_lacks", "note_contains",
    "stage", "update", "rewrites", "restricted", "error", "unknown", "columns", "rows",
    "answer", "hints", "state", "probe", "choice", "offered", "probe_asked",
}  # fmt: skip


def test_every_case_key_is_one_the_test_reads() -> None:
    # A misspelt key would be an expectation nobody checks.
    assert [sorted(set(c) - CASE_KEYS) for c in CASES if set(c) - CASE_KEYS] == []


def test_every_rule_is_registered_once_documented_and_has_cases_both_ways() -> None:
    names = [r.name for r in RULES]
    assert len(names) == len(set(names))
    for r in RULES:
        assert len(r.doc) > 40, f"{r.name} needs a docstring that names the failure it answers"
        outcomes = {c.get("fires", True) for c in CASES if c["rule"] == r.name}
        assert True in outcomes, f"{r.name} has no case where it fires"
    assert {c["rule"] for c in CASES} <= set(names)
    assert unknown_rules(frozenset({"counted-label", "no-such-rule"})) == ["no-such-rule"]


def test_the_registry_is_ordered_by_phase() -> None:
    order = ["validate", "execute", "correct", "answer"]
    phases = [order.index(r.phase) for r in RULES]
    assert phases == sorted(phases)


# --- the runner ------------------------------------------------------------------------------


def _runner(state: dict[str, Any] | None = None, **ctx: Any) -> Runner:
    case = _case({"rule": "-", **(state or {})})
    return Runner(replace(case, ctx=_ctx(**ctx)))


def test_rewrites_are_traced_with_the_statement_they_made() -> None:
    runner = _runner()
    cypher = "MATCH (b:Book) WHERE b.country = 'UK' RETURN b.title"
    out = asyncio.run(runner.rewrite(Trigger.SCHEMA_PROBLEM, cypher))
    assert ":PUBLISHED_BY]->" in out
    assert [f.rule for f in runner.fired] == ["property-through-neighbour"]
    assert runner.fired[-1].cypher == out and runner.fired[-1].attempt == 1
    assert runner.trace() == {"rules_fired": runner.fired}


def test_a_rewrite_the_policy_refuses_is_dropped() -> None:
    # The channel hides Publisher: moving the property to that neighbour would read it.
    policy = CypherPolicy(hidden_labels=frozenset({"Publisher"}))
    runner = _runner(policy=policy)
    cypher = "MATCH (b:Book) WHERE b.country = 'UK' RETURN b.title"
    out = asyncio.run(runner.rewrite(Trigger.SCHEMA_PROBLEM, cypher))
    assert out == cypher and runner.fired == []


def test_a_rewrite_verify_refuses_is_dropped() -> None:
    async def never(_cypher: str) -> bool:
        return False

    runner = _runner({"question": "How many books did Ada Lovelace write?"})
    cypher = "MATCH (p:Person {name: 'Ada Lovelace'}) RETURN count(b)"
    out = asyncio.run(
        runner.rewrite(Trigger.ENGINE_ERROR, cypher, verify=never, error="'b' not defined")
    )
    assert out == cypher and runner.fired == []


def test_a_disabled_rule_is_never_asked() -> None:
    runner = _runner(disabled_rules=frozenset({"property-through-neighbour"}))
    cypher = "MATCH (b:Book) WHERE b.country = 'UK' RETURN b.title"
    assert asyncio.run(runner.rewrite(Trigger.SCHEMA_PROBLEM, cypher)) == cypher


def test_a_skipped_rule_is_not_asked_and_the_others_are() -> None:
    runner = _runner()
    cypher = "MATCH (b:Book) WHERE b.country = 'UK' RETURN b.title"
    skipped = asyncio.run(
        runner.rewrite(Trigger.SCHEMA_PROBLEM, cypher, skip={"property-through-neighbour"})
    )
    assert skipped == cypher and runner.fired == []
    asked = asyncio.run(runner.rewrite(Trigger.SCHEMA_PROBLEM, cypher, skip={"name-spelling"}))
    assert ":PUBLISHED_BY]->" in asked


def test_once_per_question_is_read_from_the_trace() -> None:
    case = {
        "question": "How many books did Ada Lovelace write?",
        "cypher": "MATCH (p:Person {name: 'Ada Lovelace'}) RETURN count(p) AS n",
        "rows": [[1]],
    }
    first = _runner(case)
    assert asyncio.run(first.first(Trigger.ROWS)) is not None
    # The same question, later: the counted-label note was already given.
    later = _runner({**case, "state": {"rules_fired": first.fired}})
    assert asyncio.run(later.first(Trigger.ROWS)) is None
    # Within one runner too: the group is spent once it fired.
    assert asyncio.run(first.first(Trigger.ROWS)) is None


# --- stored-values: the reads and the limits the data cases cannot show ----------------------

SCI_FI = {"rule": "stored-values", "cypher": "MATCH (g:Genre {name: 'Sci-Fi'}) RETURN g.name"}


def _stored_values(answers: list[list[list[Any]]], **ctx: Any) -> tuple[Any, ScriptedProber]:
    prober = ScriptedProber(answers)
    case = replace(_case(SCI_FI, prober), ctx=_ctx(**ctx))
    return asyncio.run(BY_NAME["stored-values"].apply(case)), prober


def test_stored_values_reads_one_bounded_list_per_literal() -> None:
    fix, prober = _stored_values([[["Science Fiction"], ["Fantasy"]]])
    assert fix is not None and "(closest: 'Science Fiction')" in (fix.note or "")
    assert prober.asked == [
        "MATCH (n:`Genre`) WHERE n.`name` IS NOT NULL RETURN DISTINCT n.`name` LIMIT 2001"
    ]


def test_stored_values_of_many_shows_only_the_close_ones() -> None:
    many = [[f"Genre {i:03}"] for i in range(150)] + [["Science Fiction"]]
    fix, _prober = _stored_values([many])
    assert fix is not None
    assert "Of the 151 stored values of Genre.name, the closest are: 'Science Fiction'." in (
        fix.note or ""
    )
    assert "Genre 001" not in (fix.note or "")


def test_stored_values_of_many_with_none_close_says_nothing() -> None:
    fix, _prober = _stored_values([[[f"Person {i:03}"] for i in range(150)]])
    assert fix is None


def test_stored_values_of_a_name_property_shows_the_close_ones() -> None:
    # More values than are ever shown whole (a city's name): the close ones still are.
    fix, _prober = _stored_values([[[f"Genre {i:04}"] for i in range(600)] + [["Sci Fi"]]])
    assert fix is not None and "Of the 601 stored values of Genre.name" in (fix.note or "")
    assert "'Sci Fi'" in (fix.note or "")


def test_stored_values_not_for_a_property_of_more_than_2000_values() -> None:
    fix, _prober = _stored_values([[[f"Genre {i:04}"] for i in range(2001)] + [["Sci Fi"]]])
    assert fix is None


def test_stored_values_a_failing_read_gives_no_note() -> None:
    fix, _prober = _stored_values([])  # the scripted prober raises GraphError
    assert fix is None


def test_stored_values_not_in_a_restricted_channel() -> None:
    # The values would reach the model without the channel's row redaction.
    policy = CypherPolicy(hidden_properties=frozenset({"Person.born"}))
    fix, prober = _stored_values([[["Science Fiction"]]], policy=policy)
    assert fix is None and prober.asked == []


def test_value_next_door_speaks_before_stored_values_and_one_note_per_question() -> None:
    # 'Fantasy' is stored, as a Genre's name: the note about the node next door, not the Book
    # titles; and the value group is then spent for the question.
    case = {
        "cypher": "MATCH (b:Book {title: 'Fantasy'}) RETURN b.title",
        "hints": [["Genre", "name", "Fantasy"]],
    }
    runner = Runner(_case(case, ScriptedProber([[[1]], [["Dracula"]]])))
    fix = asyncio.run(runner.first(Trigger.EMPTY_RESULT))
    assert fix is not None and [f.rule for f in runner.fired] == ["value-next-door"]
    assert asyncio.run(runner.first(Trigger.EMPTY_RESULT)) is None


def test_stored_values_through_the_runner_and_switched_off() -> None:
    on = Runner(_case(SCI_FI, ScriptedProber([[["Science Fiction"]]])))
    assert asyncio.run(on.first(Trigger.EMPTY_RESULT)) is not None
    assert [f.rule for f in on.fired] == ["stored-values"]
    off = Runner(
        replace(
            _case(SCI_FI, ScriptedProber([[["Science Fiction"]]])),
            ctx=_ctx(disabled_rules=frozenset({"stored-values"})),
        )
    )
    assert asyncio.run(off.first(Trigger.EMPTY_RESULT)) is None


_CUT_SHORT = [
    "MATCH (n) RETURN max(",
    "MATCH (n) RETURN",
    "(a:Person {name: 'X'})-[:LIVES_IN]->(c:City {name: 'London'})<-[:LIVES_IN]-(p:Person) RETURN p.name",
    "MATCH (a:Person)-[:LIVES_IN]->(c:City), (a)-[:LIVES_IN]->(",
    "MATCH (e:Edition) WHERE e.price >",
    "MATCH (e:Edition) RETURN e.isbn ORDER BY",
    "MATCH (e:Edition) RETURN avg(e.price) AS p ORDER BY p DESC, ",
    "RETURN 'unclosed",
]


@pytest.mark.parametrize("cypher", _CUT_SHORT)
def test_statement_rules_pass_a_statement_cut_short_by_without_raising(cypher: str) -> None:
    """A model's reply can stop mid-statement: every statement rule reads it and gives a fix
    or nothing; the engine's own check then reports what is wrong with it."""
    questions = ["Which people from London influenced X?", "Who else lives in London?"]
    for rule in (r for r in RULES if r.trigger is Trigger.STATEMENT):
        for question in questions:
            case = _case({"rule": rule.name, "cypher": cypher, "question": question}, None, None)
            asyncio.run(rule.apply(case))
