"""The eval harness end to end: the product's LLM client against a fake OpenAI server that
answers from a table built from evals/demo.yaml, in both modes, through `cypherbot eval` too."""

from __future__ import annotations

import asyncio
import json
import re
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

import bot.cli
from graph_agent.agent import Agent
from graph_agent.evaluation import EvalItem, RunOptions, evaluate, load_items, summarize
from graph_agent.examples import InMemoryExampleStore
from graph_agent.graphdb import GraphDB
from graph_agent.grounding import leaning_words
from graph_agent.llm import make_llms
from rig.scripted_llm import cypher_reply, evaluation_reply, guard_reply
from tests.support.fake_openai import Failure, FakeOpenAI

DEMO_EVAL = Path(__file__).resolve().parents[2] / "evals" / "demo.yaml"
ITEMS = load_items(DEMO_EVAL)
UNKNOWN_LABEL = "MATCH (s:Sprocket) RETURN s.name AS name"
BROKEN = "MATCH (s:Service RETURN s.name AS name"
"""What the fake writes first for every fifth answerable question: a label the graph lacks
(runs, finds nothing; no misspelling of one it has, which `name-spelling` would put right)
or a syntax error, alternately. The full loop's checks catch both and
correct them; the single-shot baseline runs them as they are."""
NAIVE = "MATCH (p:Person) RETURN p.name AS person LIMIT 3"
"""What the fake writes for an out-of-scope question when nothing stopped it earlier."""
NOTHING = "MATCH (p:Person) WHERE p.name = 'nobody of that name' RETURN p.title AS title"
"""What the fake writes for a question without gold Cypher (a graph tool item that reached the
statement loop: a name nothing is called)."""
_PRONOUN = re.compile(r"\b(?:it|she|he)\b", re.IGNORECASE)


class TableModel:
    """Replies from a table: question → gold Cypher, out-of-scope questions, flawed drafts."""

    def __init__(self, items: Sequence[EvalItem]) -> None:
        self.gold = {item.question: item.gold_cypher for item in items if item.gold_cypher}
        self.refusals = {item.question for item in items if item.expected == "refusal"}
        answerable = [item.question for item in items if item.gold_cypher]
        self.flawed = {q: UNKNOWN_LABEL if n % 2 else BROKEN for n, q in enumerate(answerable[::5])}
        # A graph tool follow-up is rewritten as a good model would: its pronoun replaced by
        # the name the turn before it was about.
        by_id = {item.id: item for item in items}
        self.rewrites = {
            item.question: _PRONOUN.sub(
                by_id[item.follow_up_of].expected_names[0], item.question, count=1
            )
            for item in items
            if item.expected_tool and item.follow_up_of
        }

    @staticmethod
    def _question(user: str) -> str:
        # The question is the last "Question: …" of every prompt (examples come before it).
        tail = user.rsplit("Question: ", 1)[-1]
        return tail.split("\n\nThis statement did not work")[0].strip()

    def __call__(self, messages: list[dict[str, Any]]) -> str:
        system, user = str(messages[0]["content"]), str(messages[-1]["content"])
        if system.startswith("You are the front desk") and len(messages) > 2:
            # Asked to resolve a pronoun: this fake never does, it repeats the question.
            return guard_reply(standalone=self._question(str(messages[1]["content"])))
        if system.startswith("You are the front desk"):
            question = self._question(user)
            if question in self.refusals:
                return guard_reply(scope="out_of_scope", reason="not about the graph")
            return guard_reply(standalone=self.rewrites.get(question, question))
        if system.startswith("You write one read-only Cypher"):
            question = self._question(user)
            if question in self.refusals:
                return cypher_reply(NAIVE)
            if question in self.flawed and "This statement did not work" not in user:
                return cypher_reply(self.flawed[question])
            return cypher_reply(self.gold.get(question, NOTHING))
        # evaluate+answer: name the values of the first row shown (a graph tool's: every row)
        rows = user.split("):\n", 1)[-1].split("\n\nQuestion:")[0].splitlines()[1:]
        if rows and "// graph tool:" in user:
            values = [", ".join(map(str, json.loads(row))) for row in rows]
            return evaluation_reply(answer="It is " + "; ".join(values))
        first = json.loads(rows[0]) if rows else []
        answer = "The graph has none." if not rows else "It is " + ", ".join(map(str, first))
        return evaluation_reply(answer=answer)


@pytest.fixture
def fake() -> Iterator[FakeOpenAI]:
    with FakeOpenAI(respond=TableModel(ITEMS)).running() as server:
        yield server


def _agent(db: GraphDB, fake: FakeOpenAI) -> Agent:
    llms = make_llms(
        api_key=None, base_url=fake.base_url, model="fake-big", fast_model="fake-small",
        timeout_s=10, max_retries=0,
    )  # fmt: skip
    return Agent(db, llms, InMemoryExampleStore())


def _by_id(records: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    return {r["id"]: r for r in records}


def test_full_mode_scores_every_item_through_http(demo_db: GraphDB, fake: FakeOpenAI) -> None:
    options = RunOptions(mode="full", examples=False, timeout_s=30, concurrency=4)
    records = _by_id(asyncio.run(evaluate(_agent(demo_db, fake), ITEMS, options)))
    assert set(records) == {item.id for item in ITEMS}
    table = TableModel(ITEMS)
    for item in ITEMS:
        record = records[item.id]
        assert record["strict"] and record["relaxed"], record
        assert record["run"] == "full/examples-off" and not record["timed_out"]
        # A follow-up left with its pronoun ("they") gets one guard:resolve call.
        resolve = int(bool(item.follow_up_of and leaning_words(item.question, item.question)))
        if item.expected == "refusal":
            # Declined by the model's guard, or before it (a change, an errand, a topic such as
            # the weather that the graph has no word for).
            assert record["outcome"] == "out_of_scope"
            assert record["llm_steps"] in ([], ["guard"])
            assert record["llm_calls"] == len(record["llm_steps"])
        elif item.expected == "clarification":
            assert record["outcome"] == "needs_clarification" and record["llm_steps"] == ["guard"]
        elif item.expected == "no_data":
            # The name fits nothing in the graph: said so, without a statement.
            assert record["tool"] is None and record["outcome"] == "no_data"
            assert record["llm_steps"] == ["guard"]
        elif item.expected_tool:
            # The tool's own text is the answer: no call to word it.
            assert record["tool"] == item.expected_tool
            assert record["llm_steps"] == ["guard"]
        elif item.question in table.flawed:
            assert record["attempts"] == 2  # guard, gen, fix, eval
            # The record keeps each attempt: the flawed statement, its stage and why it failed.
            first, second = record["tries"]
            assert first["stage"] != "ok" and first["error"] and first["rows"] is None
            assert second["stage"] == "ok" and second["error"] is None and second["rows"] > 0
            assert second["cypher"] == record["cypher"]
            assert record["llm_calls"] == 4 + resolve
        else:
            assert record["llm_calls"] == 3 + resolve and record["answer_mentions"] > 0
        if record["llm_calls"]:
            assert record["prompt_tokens"] > 0 and record["completion_tokens"] > 0
    # The follow-up's guard prompt carried the earlier turns of its conversation.
    guard_prompts = [
        str(r["messages"][-1]["content"]) for r in fake.requests if r["model"] == "fake-small"
    ]
    follow_up = next(p for p in guard_prompts if p.endswith("And what databases do they use?"))
    assert "Which of those are in production?" in follow_up
    assert "What services does the Checkout team own?" in follow_up
    summary = summarize(records.values())["runs"]["full/examples-off"]
    assert summary["strict"] == 1.0 and summary["timeouts"] == summary["errors"] == 0


def test_single_shot_makes_one_call_and_keeps_its_mistakes(
    demo_db: GraphDB, fake: FakeOpenAI
) -> None:
    options = RunOptions(mode="single-shot", examples=False, timeout_s=30, concurrency=2)
    records = _by_id(asyncio.run(evaluate(_agent(demo_db, fake), ITEMS, options)))
    table = TableModel(ITEMS)
    assert {r["llm_calls"] for r in records.values()} == {1}
    assert {r["llm_steps"][0] for r in records.values()} == {"generate"}
    for item in ITEMS:
        record = records[item.id]
        if item.expected == "refusal":
            assert record["outcome"] == "answered" and not record["strict"]
        elif item.gold_cypher is None:
            # The baseline has no graph tools: it writes a statement for every question.
            assert record["tool"] is None and record["outcome"] == "no_data"
            assert record["strict"] is (item.expected == "no_data")
        elif table.flawed.get(item.question) == BROKEN:
            assert record["outcome"] == "failed" and not record["relaxed"]
            assert record["error_kind"] == "query_error"
        elif item.question in table.flawed:
            assert record["outcome"] == "no_data" and record["rows"] == 0
            assert not record["relaxed"]
        else:
            assert record["strict"], record
    assert all(r["model"] == "fake-big" for r in fake.requests)  # generation's model only


def test_a_slow_question_times_out_and_the_run_goes_on(demo_db: GraphDB, fake: FakeOpenAI) -> None:
    # The stalled reply outlasts the deadline five times over, and the deadline leaves the
    # other questions (a fraction of a second each) room on a busy machine.
    fake.failures.append(Failure(status=200, delay_s=30.0))
    items = [item for item in ITEMS if item.follow_up_of is None][:3]
    options = RunOptions(mode="full", examples=False, timeout_s=6.0)
    records = asyncio.run(evaluate(_agent(demo_db, fake), items, options))
    assert [r["id"] for r in records] == [item.id for item in items]
    assert records[0]["timed_out"] and not records[0]["strict"]
    assert all(r["strict"] for r in records[1:])


@pytest.fixture
def cli_env(
    monkeypatch: pytest.MonkeyPatch, demo_db: GraphDB, graph_data_dir: Path, fake: FakeOpenAI
) -> None:
    monkeypatch.setenv("DATA_DIR", str(graph_data_dir))
    monkeypatch.setenv("GRAPH_URL", "embedded")
    monkeypatch.setenv("GRAPH_NAME", "demo")
    monkeypatch.setenv("OPENAI_BASE_URL", fake.base_url)
    monkeypatch.setenv("LLM_MODEL", "fake-big")
    monkeypatch.setenv("LLM_MAX_RETRIES", "0")
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)


def _eval(*args: str) -> Any:
    outcome = CliRunner().invoke(bot.cli.app, ["eval", str(DEMO_EVAL), *args])
    assert outcome.exit_code == 0, outcome.output
    return outcome


def test_cli_both_modes_resume_summary_and_chart(
    cli_env: None, fake: FakeOpenAI, tmp_path: Path
) -> None:
    out = tmp_path / "eval"
    _eval("--limit", "8", "--out", str(out), "--concurrency", "2")
    first = (out / "results-full-examples-on.jsonl").read_text().splitlines()
    assert len(first) == 8
    asked = len(fake.requests)
    # Resuming asks only what is missing; the first eight are not asked again.
    _eval("--limit", "12", "--out", str(out), "--resume")
    lines = (out / "results-full-examples-on.jsonl").read_text().splitlines()
    assert [json.loads(line)["id"] for line in lines[:8]] == [json.loads(x)["id"] for x in first]
    assert len(lines) == 12 and len(fake.requests) - asked < 4 * 4 + 1
    outcome = _eval("--limit", "12", "--out", str(out), "--mode", "single-shot")
    assert len((out / "results-single-shot-examples-on.jsonl").read_text().splitlines()) == 12
    summary = json.loads((out / "summary.json").read_text())
    assert set(summary["runs"]) == {"full/examples-on", "single-shot/examples-on"}
    assert summary["runs"]["full/examples-on"]["strict"] == 1.0
    assert summary["runs"]["single-shot/examples-on"]["strict"] < 1.0
    assert "lookup" in summary["tags"]["full/examples-on"]
    assert (out / "accuracy.png").read_bytes()[:4] == b"\x89PNG"
    assert "Accuracy by run" in outcome.stdout and "single-shot/examples-on" in outcome.stdout


def test_cli_split_runs_only_that_split(cli_env: None, tmp_path: Path) -> None:
    _eval("--limit", "6", "--out", str(tmp_path), "--split", "test")
    records = [
        json.loads(x)
        for x in (tmp_path / "results-full-examples-on.jsonl").read_text().splitlines()
    ]
    wanted = [i.id for i in load_items(DEMO_EVAL) if i.split == "test"][:6]
    assert [r["id"] for r in records] == wanted
    assert {r["split"] for r in records} == {"test"}


def test_cli_without_rule_is_its_own_run_and_a_typo_is_refused(
    cli_env: None, tmp_path: Path
) -> None:
    _eval("--limit", "2", "--out", str(tmp_path), "--without-rule", "counted-label")
    records = (tmp_path / "results-full-examples-on-without-counted-label.jsonl").read_text()
    assert len(records.splitlines()) == 2
    outcome = CliRunner().invoke(
        bot.cli.app, ["eval", str(DEMO_EVAL), "--without-rule", "counted-lable"]
    )
    assert outcome.exit_code == 2 and "no repair rule called counted-lable" in outcome.output


def test_cli_eval_in_a_channel_is_its_own_run_with_its_restrictions(
    cli_env: None, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("CHANNEL_RESTRICTIONS", "C0EVAL:Person")
    _eval("--limit", "3", "--out", str(tmp_path), "--channel", "C0EVAL")
    path = tmp_path / "results-full-examples-on-channel-C0EVAL.jsonl"
    records = [json.loads(line) for line in path.read_text().splitlines()]
    assert len(records) == 3 and all(r["run"].endswith("/channel-C0EVAL") for r in records)
    by_id = {r["id"]: r for r in records}
    # The second demo item asks a person's title: in this channel Person is hidden, so it
    # cannot be answered; the questions about teams still are.
    assert by_id["lookup-person-title"]["outcome"] == "failed"
    assert by_id["lookup-team-department"]["strict"]


def test_cli_examples_off_and_a_bad_file(cli_env: None, tmp_path: Path) -> None:
    _eval("--limit", "2", "--out", str(tmp_path), "--examples", "off")
    records = (tmp_path / "results-full-examples-off.jsonl").read_text().splitlines()
    assert len(records) == 2
    bad = tmp_path / "bad.yaml"
    bad.write_text("- id: a\n")
    outcome = CliRunner().invoke(bot.cli.app, ["eval", str(bad)])
    assert outcome.exit_code == 2 and "missing 'question'" in outcome.output


def test_cli_repeat_asks_the_items_again_and_reports_the_spread(
    cli_env: None, fake: FakeOpenAI, tmp_path: Path
) -> None:
    outcome = _eval("--limit", "3", "--out", str(tmp_path), "--repeat", "2")
    first = (tmp_path / "results-full-examples-on.jsonl").read_text().splitlines()
    again = (tmp_path / "results-full-examples-on-repeat-2.jsonl").read_text().splitlines()
    assert [json.loads(x)["id"] for x in first] == [json.loads(x)["id"] for x in again]
    assert {json.loads(x)["run"] for x in again} == {"full/examples-on/repeat-2"}
    spread = json.loads((tmp_path / "summary.json").read_text())["spread"]["full/examples-on"]
    # The scripted model answers the same way every time: nothing flips.
    assert spread["repeats"] == 2 and spread["items"] == 3
    assert spread["sometimes"] == 0 and spread["min"] == spread["max"] == spread["always"]
    assert "Run-to-run spread" in outcome.stdout
