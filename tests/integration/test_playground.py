"""The playground's page server without a browser: JSON endpoints, live events, traces, safety checks."""

from __future__ import annotations

import json
import queue
import threading
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from pydantic import SecretStr
from typer.testing import CliRunner

import bot.cli
import bot.cli.playground as playground_command
from bot.cli.runtime import CliRuntime
from bot.playground import Playground
from bot.playground.page import slack_text
from bot.playground.playground import (
    CHANNEL_ID,
    PEOPLE,
    PLAYGROUND_RATE_PER_MINUTE,
    ensure_demo,
    playground_rates,
)
from bot.settings import Settings
from graph_agent.graphdb import GraphDB
from tests.support.playground import (
    FOLLOW_UP,
    FOLLOW_UP_STANDALONE,
    REDIS_SERVICES,
    REDIS_TIER_1,
    get_json,
    post_json,
    running_playground,
    scripted_model,
)

ALEX, SAM = PEOPLE[0].id, PEOPLE[1].id


@pytest.fixture(scope="module")
def pg(demo_db: GraphDB, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Playground]:
    with running_playground(tmp_path_factory.mktemp("pg"), demo_db, scripted_model()) as running:
        yield running


@pytest.fixture(scope="module")
def offline(demo_db: GraphDB, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Playground]:
    with running_playground(tmp_path_factory.mktemp("offline"), demo_db, None) as running:
        yield running


def _answers(pg: Playground, channel: str, thread_ts: str, n: int = 1) -> list[dict[str, Any]]:
    """The bot's finished answers in a thread, once `n` are there and linked to their turns."""

    def linked() -> list[dict[str, Any]]:
        found = [m for m in pg.emulator.bot_replies(channel, thread_ts) if m.get("blocks")]
        if len(found) < n:
            return []
        if any(pg.memory.conversations.by_message(channel, m["ts"]) is None for m in found):
            return []
        return found

    return list(pg.emulator.wait_for(linked, 60, f"no answer #{n} in {channel}/{thread_ts}"))


def _ask(pg: Playground, text: str, *, user: str = ALEX, channel: str = CHANNEL_ID) -> str:
    status, body = post_json(
        pg.url + "api/messages", {"user": user, "channel": channel, "text": text}
    )
    assert status == 200, body
    return str(body["ts"])


def _trace(pg: Playground, channel: str, ts: str) -> dict[str, Any]:
    status, body = get_json(f"{pg.url}api/trace?channel={channel}&ts={ts}")
    assert status == 200, body
    return dict(body)


def test_state_offers_channel_dms_people_and_seed_questions(pg: Playground) -> None:
    status, state = get_json(pg.url + "api/state")
    assert status == 200
    assert [c["name"] for c in state["channels"]] == ["eng-questions"]
    assert [p["name"] for p in state["people"]] == ["alex", "sam"]
    assert all(p["dm"].startswith("D") for p in state["people"])
    assert state["llm"] == {"configured": True, "model": "scripted"}
    seeds = {e.question for e in pg.memory.examples.list(source="seed", limit=100)}
    assert len(seeds) >= 10
    assert state["suggestions"] and set(state["suggestions"]) <= seeds
    assert "services" in state["graph"]


def test_mention_is_answered_in_its_thread_with_a_trace(pg: Playground) -> None:
    ts = _ask(pg, "@cypherbot Which services use Redis?")
    posted = pg.emulator.message(CHANNEL_ID, ts)
    assert posted is not None and posted["text"].startswith(f"<@{pg.emulator.bot_user_id}>")
    [answer] = _answers(pg, CHANNEL_ID, ts)
    status, listing = get_json(f"{pg.url}api/messages?channel={CHANNEL_ID}&user={ALEX}")
    assert status == 200
    shown = next(m for m in listing["messages"] if m["ts"] == answer["ts"])
    assert shown["thread_ts"] == ts and shown["turn_id"]
    trace = _trace(pg, CHANNEL_ID, answer["ts"])
    run = trace["run"]
    assert trace["turn"]["question"] == "Which services use Redis?"
    assert (
        run["attempts"][0]["cypher"].startswith(REDIS_SERVICES)
        and run["attempts"][0]["error"] is None
    )
    assert run["columns"] == ["service"] and run["row_count"] == len(run["rows"]) > 0
    assert run["llm_calls"] == 3 and run["llm_steps"][0] == "guard"
    assert run["total_ms"] > 0 and [s["text"] for s in run["steps"]]
    assert trace["taught_as"] == []


def test_follow_up_in_the_thread_needs_no_mention(pg: Playground) -> None:
    ts = _ask(pg, "@cypherbot Which services use Redis?")
    _answers(pg, CHANNEL_ID, ts)
    status, _ = post_json(
        pg.url + "api/messages",
        {"user": ALEX, "channel": CHANNEL_ID, "text": FOLLOW_UP, "thread_ts": ts},
    )
    assert status == 200
    answers = _answers(pg, CHANNEL_ID, ts, 2)
    trace = _trace(pg, CHANNEL_ID, answers[-1]["ts"])
    assert trace["run"]["standalone_question"] == FOLLOW_UP_STANDALONE
    assert trace["run"]["history_turns"] == 1
    assert trace["run"]["attempts"][-1]["cypher"].startswith(REDIS_TIER_1)


def test_dm_is_answered_without_mention(pg: Playground) -> None:
    dm = pg.emulator.open_dm(SAM).id
    ts = _ask(pg, "How many teams are there?", user=SAM, channel=dm)
    [answer] = _answers(pg, dm, ts)
    assert "teams" in json.dumps(answer["blocks"])


def test_votes_teach_and_count_per_person(pg: Playground) -> None:
    ts = _ask(pg, "@cypherbot Which services use Redis, please?")
    [answer] = _answers(pg, CHANNEL_ID, ts)
    vote = {"channel": CHANNEL_ID, "ts": answer["ts"]}
    assert post_json(pg.url + "api/reactions", {**vote, "user": ALEX, "name": "+1"})[1] == {
        "changed": True
    }
    assert post_json(pg.url + "api/reactions", {**vote, "user": ALEX, "name": "+1"})[1] == {
        "changed": False
    }

    def taught() -> list[dict[str, Any]]:
        examples = get_json(pg.url + "api/examples")[1]["examples"]
        return [
            e
            for e in examples
            if e["source"] == "thumbs_up" and e["cypher"].startswith(REDIS_SERVICES)
        ]

    [example] = pg.emulator.wait_for(taught, 20, "the 👍 taught nothing")
    assert example["up_votes"] == 1 and example["taught_by"] == ALEX
    assert _trace(pg, CHANNEL_ID, answer["ts"])["taught_as"][0]["id"] == example["id"]
    post_json(pg.url + "api/reactions", {**vote, "user": SAM, "name": "-1"})
    pg.emulator.wait_for(lambda: taught() and taught()[0]["down_votes"] == 1, 20, "no 👎 counted")
    message = pg.emulator.message(CHANNEL_ID, answer["ts"])
    assert message is not None
    assert {r["name"]: r["users"] for r in message["reactions"]} == {"+1": [ALEX], "-1": [SAM]}
    post_json(pg.url + "api/reactions", {**vote, "user": SAM, "name": "-1", "add": False})
    message = pg.emulator.message(CHANNEL_ID, answer["ts"])
    assert message is not None and [r["name"] for r in message["reactions"]] == ["+1"]


def test_events_stream_status_messages_and_trace_ready(pg: Playground) -> None:
    events: queue.Queue[dict[str, Any]] = queue.Queue()
    opened = threading.Event()
    asked: list[str] = []

    def ours(event: dict[str, Any]) -> bool:
        if not asked or event.get("channel") != CHANNEL_ID:
            return False
        if asked[0] in (event.get("ts"), event.get("thread_ts")):
            return True
        message = pg.emulator.message(CHANNEL_ID, str(event.get("ts")))
        return message is not None and message.get("thread_ts") == asked[0]

    def listen() -> None:
        with urllib.request.urlopen(pg.url + "api/events", timeout=30) as stream:
            opened.set()
            for raw in stream:
                line = raw.decode().strip()
                if line.startswith("data: "):
                    event = json.loads(line[6:])
                    events.put(event)
                    if event["kind"] == "trace_ready" and ours(event):
                        return

    reader = threading.Thread(target=listen, daemon=True)
    reader.start()
    assert opened.wait(10)
    pg.emulator.wait_for(lambda: pg.page.broadcaster.listeners > 0, 5)
    asked.append(_ask(pg, "@cypherbot Which services use Redis today?"))
    reader.join(60)
    kinds = []
    while not events.empty():
        event = events.get()
        if ours(event):
            kinds.append(event["kind"])
    assert kinds[0] == "message_posted"
    assert "status_set" in kinds and kinds[-1] == "trace_ready"
    assert any(k in ("message_posted", "message_updated") for k in kinds[1:])
    assert _answers(pg, CHANNEL_ID, asked[0])


def test_big_results_come_with_a_downloadable_csv(demo_db: GraphDB, tmp_path: Path) -> None:
    with running_playground(tmp_path, demo_db, scripted_model(), rows_shown=2) as small:
        ts = _ask(small, "@cypherbot Which services use Redis?")
        _answers(small, CHANNEL_ID, ts)
        shared = small.emulator.wait_for(
            lambda: [m for m in small.emulator.bot_replies(CHANNEL_ID, ts) if m.get("files")], 30
        )
        listing = get_json(f"{small.url}api/messages?channel={CHANNEL_ID}&user={ALEX}")[1]
        files = next(m for m in listing["messages"] if m["ts"] == shared[0]["ts"])["files"]
        with urllib.request.urlopen(small.url + files[0]["url"].lstrip("/")) as response:
            assert response.headers["Content-Disposition"].startswith("attachment;")
            assert response.read().decode().splitlines()[0] == "service"


def test_without_an_llm_seed_questions_are_answered_offline(offline: Playground) -> None:
    state = get_json(offline.url + "api/state")[1]
    assert state["llm"]["configured"] is False
    question = state["suggestions"][0]
    ts = _ask(offline, f"@cypherbot {question}")
    [answer] = _answers(offline, CHANNEL_ID, ts)
    run = _trace(offline, CHANNEL_ID, answer["ts"])["run"]
    assert run["reused_example_id"] is not None and run["llm_calls"] == 0
    assert offline.memory.examples.exact(question) is not None
    assert "verified query reused" in json.dumps(answer["blocks"])
    other = _ask(offline, "@cypherbot Who has the most hobbies?")
    offline.emulator.wait_for(lambda: offline.emulator.bot_replies(CHANNEL_ID, other), 30)
    offline.bot.deps.delivery.wait_idle(30)
    reply = offline.emulator.bot_replies(CHANNEL_ID, other)[-1]
    assert "No LLM is configured" in json.dumps(reply.get("blocks", reply["text"]))


def test_page_and_static_files_are_served(pg: Playground) -> None:
    for path, kind in (
        ("", "text/html"),
        ("static/app.js", "javascript"),
        ("static/style.css", "css"),
    ):
        with urllib.request.urlopen(pg.url + path) as response:
            assert kind in response.headers["Content-Type"]
            assert "default-src 'self'" in response.headers["Content-Security-Policy"]
    assert get_json(pg.url + "static/../page.py")[0] == 404
    assert get_json(pg.url + "api/nothing")[0] == 404


def test_requests_from_other_sites_and_bad_input_are_refused(pg: Playground) -> None:
    message = {"user": ALEX, "channel": CHANNEL_ID, "text": "hello"}
    assert post_json(pg.url + "api/messages", message, content_type="text/plain")[0] == 415
    assert post_json(pg.url + "api/messages", message, host="evil.example:80")[0] == 403
    assert post_json(pg.url + "api/messages", {**message, "user": "U0NOBODY"})[0] == 400
    assert post_json(pg.url + "api/messages", {**message, "channel": "C0NONE"})[0] == 404
    assert post_json(pg.url + "api/messages", {**message, "text": "  "})[0] == 400
    assert post_json(pg.url + "api/messages", {**message, "thread_ts": "1.0"})[0] == 404
    bad = {"user": ALEX, "channel": CHANNEL_ID, "ts": "1.0", "name": "<script>"}
    assert post_json(pg.url + "api/reactions", bad)[0] == 400
    assert get_json(f"{pg.url}api/trace?channel={CHANNEL_ID}&ts=1.0")[0] == 404


def test_typed_text_becomes_what_slack_sends() -> None:
    names = {"U0BOT": "cypherbot", "U0SAM": "sam"}
    assert slack_text("@cypherbot a < b & @Sam > @nobody", names) == (
        "<@U0BOT> a &lt; b &amp; <@U0SAM> &gt; @nobody"
    )


def test_an_empty_graph_gets_the_demo(scratch_db: GraphDB) -> None:
    assert ensure_demo(scratch_db) is True
    assert scratch_db.counts()[0] > 100
    assert ensure_demo(scratch_db) is False


@pytest.fixture
def cli_settings(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Settings:
    s = Settings(_env_file=None, data_dir=tmp_path)  # type: ignore[call-arg]
    return s


def test_start_without_slack_tokens_opens_the_playground(
    cli_settings: Settings, monkeypatch: pytest.MonkeyPatch
) -> None:
    seen: list[tuple[int | None, bool]] = []
    monkeypatch.setattr(
        "bot.cli.start.run_playground",
        lambda settings, *, port, open_browser: seen.append((port, open_browser)),
    )
    result = CliRunner().invoke(
        bot.cli.app, ["start", "--port", "0", "--no-browser"], obj=CliRuntime(cli_settings)
    )
    assert result.exit_code == 0, result.output
    assert seen == [(0, False)]


def test_start_with_a_slack_token_runs_the_bot(
    cli_settings: Settings, monkeypatch: pytest.MonkeyPatch
) -> None:
    cli_settings.slack_bot_token = SecretStr("xoxb-real")
    ran: list[bool] = []
    monkeypatch.setattr(playground_command, "run_playground", lambda *a, **k: ran.append(False))
    monkeypatch.setattr("bot.cli.start.run_bot", lambda ctx: ran.append(True))
    result = CliRunner().invoke(bot.cli.app, ["start"], obj=CliRuntime(cli_settings))
    assert result.exit_code == 0, result.output
    assert ran == [True]


def test_a_busy_port_is_a_clear_error_and_nothing_is_left_running(
    demo_db: GraphDB, tmp_path: Path
) -> None:
    import socket

    from bot.playground import PlaygroundStartError, build_playground
    from rig.slack import rig_settings

    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        with pytest.raises(PlaygroundStartError, match=rf"127.0.0.1:{port}.*--port"):
            build_playground(rig_settings(tmp_path), llms=None, db=demo_db, port=port)
    assert demo_db.counts()[0] > 0  # a db passed in stays open for its owner


def test_the_playground_starts_and_applies_channel_restrictions(
    demo_db: GraphDB, tmp_path: Path
) -> None:
    # It used to end in a SlackSetupError: the tracing wrapper's run() took no policy.
    with running_playground(
        tmp_path, demo_db, scripted_model(), channel_restrictions="*:Technology"
    ) as restricted:
        ts = _ask(restricted, "@cypherbot Which services use Redis?")
        [answer] = _answers(restricted, CHANNEL_ID, ts)
        run = _trace(restricted, CHANNEL_ID, answer["ts"])["run"]
        assert "not available in this channel" in json.dumps(answer)
        # Every statement read the hidden label: the policy refused each, none ran.
        assert run["attempts"] and all(a["stage"] == "policy" for a in run["attempts"])
        ts = _ask(restricted, "@cypherbot How many teams are there?")
        [answer] = _answers(restricted, CHANNEL_ID, ts)
        assert _trace(restricted, CHANNEL_ID, answer["ts"])["run"]["row_count"] == 1


def test_the_playground_allows_a_trials_pace_unless_the_rate_is_set(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.delenv("RATE_PER_MINUTE", raising=False)
    unset = Settings(_env_file=None)  # type: ignore[call-arg]
    assert playground_rates(unset) == {"rate_per_minute": PLAYGROUND_RATE_PER_MINUTE}
    assert unset.rate_per_minute < PLAYGROUND_RATE_PER_MINUTE  # Slack keeps its default
    monkeypatch.setenv("RATE_PER_MINUTE", "4")
    assert playground_rates(Settings(_env_file=None)) == {}  # type: ignore[call-arg]
