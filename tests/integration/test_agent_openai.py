"""`cypherbot ask` through a real HTTP round trip: langchain-openai against a fake OpenAI server."""

from __future__ import annotations

import json
import sqlite3
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

import bot.cli
from graph_agent.agent import Agent
from graph_agent.examples import InMemoryExampleStore
from graph_agent.graphdb import GraphDB
from graph_agent.llm import make_llms
from rig.scripted_llm import cypher_reply, evaluation_reply, guard_reply
from tests.support.fake_openai import Failure, FakeOpenAI

TEAM_SIZES = (
    "MATCH (p:Person)-[:MEMBER_OF]->(t:Team) "
    "RETURN t.name AS team, count(p) AS people ORDER BY people DESC LIMIT 3"
)


def respond(messages: list[dict[str, Any]]) -> str:
    system = str(messages[0]["content"])
    if system.startswith("You are the front desk"):
        return guard_reply()
    if system.startswith("You write one read-only Cypher"):
        return cypher_reply(TEAM_SIZES)
    return evaluation_reply(answer="Notifications has the most people (11).")


@pytest.fixture
def fake() -> Iterator[FakeOpenAI]:
    with FakeOpenAI(respond=respond).running() as server:
        yield server


@pytest.fixture
def cli_env(
    monkeypatch: pytest.MonkeyPatch, demo_db: GraphDB, graph_data_dir: Path, fake: FakeOpenAI
) -> None:
    monkeypatch.setenv("DATA_DIR", str(graph_data_dir))
    monkeypatch.setenv("GRAPH_URL", "embedded")
    monkeypatch.setenv("GRAPH_NAME", "demo")
    monkeypatch.setenv("OPENAI_BASE_URL", fake.base_url)
    monkeypatch.setenv("LLM_MODEL", "local-test")
    monkeypatch.setenv("LLM_MAX_RETRIES", "2")
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    # Every call made, so that each one's round trip is seen (the defaults skip the guard and
    # the evaluator here: test_cli_ask_with_the_defaults_makes_one_call).
    monkeypatch.setenv("GUARD_FIRST_QUESTIONS", "all")
    monkeypatch.setenv("EVALUATE_PLAIN_ROWS", "true")


def test_cli_ask_with_the_defaults_makes_one_call(
    cli_env: None, fake: FakeOpenAI, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("GUARD_FIRST_QUESTIONS")
    monkeypatch.delenv("EVALUATE_PLAIN_ROWS")
    outcome = CliRunner().invoke(
        bot.cli.app, ["ask", "Which teams have the most people?", "--json", "--no-memory"]
    )
    assert outcome.exit_code == 0, outcome.output
    result = json.loads(outcome.stdout)
    assert result["outcome"] == "answered" and result["cypher"] == TEAM_SIZES
    assert result["llm_calls"] == 1 and len(fake.requests) == 1
    # Written from the rows: the three teams and their head counts.
    assert [team for team, _people in result["rows"]] == ["Notifications", "Mobile", "Checkout"]
    assert all(f"{team}, people: {people}" in result["answer"] for team, people in result["rows"])


def test_cli_ask_answers_through_http_and_retries_a_500(cli_env: None, fake: FakeOpenAI) -> None:
    fake.failures.append(Failure(status=500))
    outcome = CliRunner().invoke(
        bot.cli.app, ["ask", "Which teams have the most people?", "--json", "--no-memory"]
    )
    assert outcome.exit_code == 0, outcome.output
    result = json.loads(outcome.stdout)
    assert result["outcome"] == "answered"
    assert result["answer"] == "Notifications has the most people (11)."
    assert result["cypher"] == TEAM_SIZES
    assert result["rows"][0] == ["Notifications", 11]
    assert result["llm_calls"] == 3
    assert result["rules_fired"] == []  # the trace is part of the JSON; nothing needed fixing
    assert result["prompt_tokens"] > 0  # usage came back through langchain-openai
    # One 500, retried by the client, then guard, generate, evaluate.
    assert len(fake.requests) == 4
    assert fake.requests[0] == fake.requests[1]
    assert {r["model"] for r in fake.requests} == {"local-test"}
    assert all(r["temperature"] == 0 for r in fake.requests)


def test_the_servers_cached_prompt_tokens_reach_the_result(cli_env: None, fake: FakeOpenAI) -> None:
    """`usage.prompt_tokens_details.cached_tokens` (llama-server, vLLM, OpenAI) → langchain-openai
    → the result: a second question repeats each step's stable start, which the server caches."""
    results = []
    for question in ("Which teams have the most people?", "Which teams are the biggest?"):
        outcome = CliRunner().invoke(bot.cli.app, ["ask", question, "--json", "--no-memory"])
        assert outcome.exit_code == 0, outcome.output
        results.append(json.loads(outcome.stdout))
    first, second = results
    assert first["cached_prompt_tokens"] < first["prompt_tokens"] / 2, first
    assert second["cached_prompt_tokens"] > second["prompt_tokens"] / 2, second


def test_cli_ask_prints_answer_cypher_rows_and_timings(cli_env: None) -> None:
    outcome = CliRunner().invoke(
        bot.cli.app, ["ask", "Which teams have the most people?", "--no-memory"]
    )
    assert outcome.exit_code == 0, outcome.output
    out = outcome.stdout
    assert "Notifications has the most people (11)." in out
    assert "MEMBER_OF" in out and "Checkout" in out
    assert "LLM calls: 3 (guard, generate, evaluate)" in out
    assert "Time:" in out


def test_json_object_mode_sends_response_format(demo_db: GraphDB, fake: FakeOpenAI) -> None:
    from graph_agent.config import AgentConfig

    llms = make_llms(
        api_key="sk-test", base_url=fake.base_url, model="m", fast_model="small",
        timeout_s=5, max_retries=0,
    )  # fmt: skip
    agent = Agent(demo_db, llms, InMemoryExampleStore(), AgentConfig(json_mode="json_object"))
    result = agent.run("Which teams have the most people?")
    assert result.outcome == "answered"
    guard, generate, evaluate = fake.requests
    assert guard["response_format"] == {"type": "json_object"} and guard["model"] == "small"
    assert "response_format" not in generate and generate["model"] == "m"
    assert evaluate["response_format"] == {"type": "json_object"}


def test_slow_server_gives_llm_timeout(demo_db: GraphDB, fake: FakeOpenAI) -> None:
    fake.failures.append(Failure(status=200, delay_s=2.0))
    llms = make_llms(
        api_key=None, base_url=fake.base_url, model="m", fast_model=None,
        timeout_s=0.3, max_retries=0,
    )  # fmt: skip
    result = Agent(demo_db, llms, InMemoryExampleStore()).run("Which teams?")
    assert result.outcome == "failed" and result.error_kind == "llm_timeout"


def test_make_llms_is_none_without_key_or_url() -> None:
    assert (
        make_llms(
            api_key=None, base_url=None, model="m", fast_model=None, timeout_s=1, max_retries=0
        )
        is None
    )


def test_cli_chat_records_turns_and_sends_history_to_follow_ups(
    cli_env: None, fake: FakeOpenAI, graph_data_dir: Path
) -> None:
    from memory import open_memory

    outcome = CliRunner().invoke(
        bot.cli.app,
        ["chat"],
        input="Which teams have the most people?\nand which of those is biggest?\n\n",
    )
    assert outcome.exit_code == 0, outcome.output
    # First guard calls only: this fake never resolves "those", so the follow-up's guard
    # call is followed by one `guard:resolve` call (system, user, its reply, the request).
    guard_prompts = [
        json.dumps(r["messages"])
        for r in fake.requests
        if "front desk" in str(r["messages"][0]) and len(r["messages"]) == 2
    ]
    assert len(guard_prompts) == 2
    # The follow-up's guard call saw the first turn, read back from the memory database.
    assert "Which teams have the most people?" in guard_prompts[1]
    assert TEAM_SIZES.split(" RETURN")[0].replace('"', '\\"') in guard_prompts[1]
    with sqlite3.connect(graph_data_dir / "cypherbot.sqlite3") as conn:
        keys = {k for (k,) in conn.execute("SELECT DISTINCT conversation FROM turns")}
    chat_keys = [k for k in keys if k.startswith("cli:chat:")]
    assert chat_keys
    with open_memory(graph_data_dir / "cypherbot.sqlite3") as mem:
        histories = [mem.conversations.history(k, 5) for k in chat_keys]
    chat = next(
        h
        for h in histories
        if [t.question for t in h]
        == ["Which teams have the most people?", "and which of those is biggest?"]
    )
    # Turns carry the schema they were verified on, so a 👍 stamps the example with it.
    assert all(t.schema_fingerprint for t in chat)


def test_repeated_runs_reuse_pooled_connections(demo_db: GraphDB, fake: FakeOpenAI) -> None:
    # Each run used to get a fresh event loop (asyncio.run) while the HTTP client kept
    # connections bound to the previous, closed one: every other question failed on a real
    # keep-alive server. Runs from several threads must all work too.
    llms = make_llms(
        api_key="k", base_url=fake.base_url, model="m", fast_model=None,
        timeout_s=5, max_retries=0,
    )  # fmt: skip
    agent = Agent(demo_db, llms, InMemoryExampleStore())
    outcomes = [agent.run("Which teams have the most people?").outcome for _ in range(3)]
    threads = [
        threading.Thread(
            target=lambda: outcomes.append(agent.run("Which teams have the most people?").outcome)
        )
        for _ in range(3)
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert outcomes == ["answered"] * 6


def test_cli_ask_in_a_channel_applies_its_restrictions(
    cli_env: None, fake: FakeOpenAI, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The model's statement reads Team, which C0RESTRICT hides: as the bot would in that
    # channel, every attempt is refused and nothing about teams comes back.
    monkeypatch.setenv("CHANNEL_RESTRICTIONS", "C0RESTRICT:Team")
    question = "Which teams have the most people?"
    outcome = CliRunner().invoke(
        bot.cli.app, ["ask", question, "--json", "--no-memory", "--channel", "C0RESTRICT"]
    )
    result = json.loads(outcome.stdout)
    assert outcome.exit_code == 1, outcome.output
    assert result["outcome"] == "failed" and result["rows"] == []
    assert result["attempts"] and all(a["stage"] == "policy" for a in result["attempts"])
    assert "not available in this channel" in result["answer"]
    # Another channel has no restrictions: the same question is answered.
    other = CliRunner().invoke(
        bot.cli.app, ["ask", question, "--json", "--no-memory", "--channel", "C0OPEN"]
    )
    assert other.exit_code == 0, other.output
    assert json.loads(other.stdout)["rows"][0] == ["Notifications", 11]


def test_cli_ask_in_a_channel_the_bot_does_not_answer_in_says_so(
    cli_env: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("DENIED_CHANNELS", '["C0DENIED"]')
    outcome = CliRunner().invoke(bot.cli.app, ["ask", "Who?", "--channel", "C0DENIED"])
    assert outcome.exit_code == 2
    assert "does not answer in C0DENIED" in outcome.output and "DENIED_CHANNELS" in outcome.output
