"""Two bot processes in HTTP mode sharing one PostgreSQL memory, as behind a load balancer.

Each instance is the real Slack app in its own process (`rig.instance`); Slack is
the emulator in this process, delivering each event to the instance the test chooses.
"""

from __future__ import annotations

import signal
import time
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import psycopg
import pytest

from bot.playground.emulator import SlackEmulator
from graph_agent.graphdb import GraphDB
from memory import Memory, open_memory
from rig.instance import instance_process
from tests.conftest import DEMO_GRAPH

ALICE = "U0ALICE"
BOB = "U0BOB"
CHANNEL = "C0GENERAL"
TEAM_SIZES = (
    "MATCH (p:Person)-[:MEMBER_OF]->(t:Team) "
    "RETURN t.name AS team, count(p) AS people ORDER BY people DESC LIMIT 3"
)
LEASE_S = 8.0


def _poll(predicate: Callable[[], Any], timeout: float = 90.0, what: str = "") -> Any:
    """Wait for a condition held in another process (the shared database)."""
    deadline = time.monotonic() + timeout
    while True:
        value = predicate()
        if value:
            return value
        if time.monotonic() > deadline:
            raise TimeoutError(f"not met in {timeout:.0f} s: {what}")
        time.sleep(0.1)


@pytest.fixture
def emulator() -> Iterator[SlackEmulator]:
    slack = SlackEmulator().start()
    slack.add_user(ALICE, "alice")
    slack.add_user(BOB, "bob")
    slack.add_channel(CHANNEL, "general", members=[ALICE, BOB])
    yield slack
    slack.stop()


@pytest.fixture
def instances(
    emulator: SlackEmulator, demo_db: GraphDB, graph_data_dir: Path, pg_url: str, tmp_path: Path
) -> Iterator[tuple[tuple[str, Any], tuple[str, Any]]]:
    """Instances A and B; A is slow (60 s) on questions that say "slowly"."""
    common = [
        "--memory-url", pg_url, "--graph-dir", str(graph_data_dir), "--graph-name", DEMO_GRAPH,
        "--api-url", emulator.api_url, "--bot-token", emulator.bot_token,
        "--signing-secret", emulator.signing_secret, "--cypher", TEAM_SIZES,
        "--lease-s", str(LEASE_S),
    ]  # fmt: skip
    with (
        instance_process(
            *common, "--data-dir", str(tmp_path / "a"), "--slow-word", "slowly", "--slow-s", "60"
        ) as a,  # fmt: skip
        instance_process(*common, "--data-dir", str(tmp_path / "b")) as b,
    ):
        yield a, b


def _answers(emulator: SlackEmulator, ts: str) -> list[dict[str, Any]]:
    """The bot's finished answers in the thread of `ts` (messages with Block Kit blocks)."""
    return [m for m in emulator.bot_replies(CHANNEL, ts) if m.get("blocks")]


def _claims(pg_url: str) -> dict[str, tuple[str, float]]:
    with psycopg.connect(pg_url) as conn:
        found = conn.execute("SELECT key, state, lease_until FROM events").fetchall()
    return {key: (state, lease) for key, state, lease in found}


def _teach(emulator: SlackEmulator, memory: Memory, ts: str) -> None:
    """Alice reacts 👍 on the answer at `ts` once its turn is stored (a person needs more
    than the milliseconds between the message appearing and the bot recording it)."""
    _poll(lambda: memory.conversations.by_message(CHANNEL, ts), what="answer recorded")
    emulator.add_reaction(ALICE, CHANNEL, ts, "+1")
    _poll(lambda: memory.examples.list(source="thumbs_up"), what="👍 stored")


def _ask(emulator: SlackEmulator, text: str) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """A person posts a mention; nothing is delivered yet. Returns (message, payloads)."""
    message, _ = emulator.post_message(
        ALICE, CHANNEL, f"<@{emulator.bot_user_id}> {text}", deliver=False
    )
    return message, emulator.events_for_message(CHANNEL, message)


def test_the_same_event_sent_to_both_instances_and_retried_is_answered_once(
    emulator: SlackEmulator, instances: Any, pg_url: str
) -> None:
    (a_url, _), (b_url, _) = instances
    message, payloads = _ask(emulator, "Which teams are biggest?")
    assert len(payloads) == 2  # app_mention and message, as Slack sends both
    with ThreadPoolExecutor(max_workers=8) as pool:
        sent = [
            pool.submit(emulator.deliver, payload, url=url, retries=2)
            for payload in payloads
            for url in (a_url, b_url)
        ]
        assert all(f.result().status == 200 for f in sent)
    emulator.wait_for(lambda: _answers(emulator, message["ts"]), 90, "no answer")
    # Once every claim is done, neither instance can start this delivery again.
    _poll(
        lambda: (c := _claims(pg_url)) and all(state == "done" for state, _ in c.values()),
        what="claims marked done",
    )
    assert len(_answers(emulator, message["ts"])) == 1
    assert "Notifications" in str(_answers(emulator, message["ts"])[0]["blocks"])


def test_a_thumbs_up_given_through_one_instance_is_used_through_the_other(
    emulator: SlackEmulator, instances: Any, pg_url: str
) -> None:
    (a_url, _), (b_url, _) = instances
    emulator.app_url = a_url
    first, _ = emulator.post_message(
        ALICE, CHANNEL, f"<@{emulator.bot_user_id}> Which teams are biggest?"
    )
    answer = emulator.wait_for(lambda: _answers(emulator, first["ts"]), 90, "A did not answer")[0]
    with open_memory(pg_url) as memory:
        _teach(emulator, memory, answer["ts"])
        taught = memory.examples.list(source="thumbs_up")
        emulator.app_url = b_url
        second, _ = emulator.post_message(
            BOB, CHANNEL, f"<@{emulator.bot_user_id}> Which teams have the most people?"
        )
        reply = emulator.wait_for(lambda: _answers(emulator, second["ts"]), 90, "B no answer")[0]
        turn = _poll(lambda: memory.conversations.by_message(CHANNEL, reply["ts"]), what="turn")
        assert taught[0].id in turn.example_ids  # B's prompt carried what A was taught


def test_an_instance_killed_mid_answer_loses_no_thumbs_up_and_the_retry_is_answered_by_the_other(
    emulator: SlackEmulator, instances: Any, pg_url: str
) -> None:
    (a_url, a_proc), (b_url, _) = instances
    emulator.app_url = a_url
    first, _ = emulator.post_message(
        ALICE, CHANNEL, f"<@{emulator.bot_user_id}> Which teams are biggest?"
    )
    answer = emulator.wait_for(lambda: _answers(emulator, first["ts"]), 90, "A did not answer")[0]
    with open_memory(pg_url) as memory:
        _teach(emulator, memory, answer["ts"])

    message, payloads = _ask(emulator, "Which teams are biggest, slowly?")
    for payload in payloads:
        assert emulator.deliver(payload, url=a_url).status == 200
    ids = [message["ts"], *(p["event_id"] for p in payloads)]
    keys = _poll(
        lambda: [k for k, (state, _) in _claims(pg_url).items()
                 if state == "claimed" and any(i in k for i in ids)],
        what="A claimed the slow question",
    )  # fmt: skip
    a_proc.send_signal(signal.SIGKILL)
    a_proc.wait(timeout=30)
    assert not _answers(emulator, message["ts"])

    with open_memory(pg_url) as memory:  # the 👍 given through A is all there
        taught = memory.examples.list(source="thumbs_up")
        assert len(taught) == 1 and taught[0].up_votes == 1 and taught[0].status == "active"

    # Slack retries to B after A's lease ran out: B takes the delivery over and answers, once.
    lease_until = max(lease for key, (_, lease) in _claims(pg_url).items() if key in keys)
    _poll(lambda: time.time() > lease_until + 0.5, timeout=LEASE_S + 30, what="lease expiry")
    for payload in payloads:
        assert emulator.deliver(payload, url=b_url, first_retry=1).status == 200
    emulator.wait_for(lambda: _answers(emulator, message["ts"]), 90, "B did not answer the retry")
    _poll(
        lambda: all(state == "done" for k, (state, _) in _claims(pg_url).items() if k in keys),
        what="B finished",
    )
    assert len(_answers(emulator, message["ts"])) == 1
