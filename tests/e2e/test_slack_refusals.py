"""No lost answers: whatever Slack refuses a message for (its text, its blocks, their total), the
whole answer still reaches the thread, in plain messages or, when those are refused too, as a
file. Before, `post()` fell back to the 300-character notification text and the rest of the
answer was gone. Driven through the real renderer and the emulator, and once through the bot."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from slack_sdk import WebClient

from bot.playground.emulator import SlackEmulator
from bot.playground.emulator_limits import MESSAGE_REFUSALS, RateLimits
from bot.slack import render
from bot.slack.progress import PIECE_CHARS, message_texts, post
from graph_agent.result import AgentResult
from rig.scripted_llm import ScriptedChatModel, cypher_reply, evaluation_reply, guard_reply
from rig.slack import ALICE, CHANNEL, answer_text
from tests.e2e.conftest import RigFactory

WORDS = ["alpha", "bravo", "charlie", "delta", "echo", "foxtrot", "golf", "hotel", "india"]
ANSWER = "\n\n".join(
    f"the part called {w}: the {w} services & teams < their owners " + "hold details " * 60
    for w in WORDS
)
"""About 8,000 characters of model output, with characters Slack escapes (no capitalised word
or `<name>`: the answer guards would take those for names the rows do not hold)."""


@pytest.fixture
def emulator() -> Iterator[SlackEmulator]:
    unlimited = RateLimits(tier3_per_minute=10**9, posts_per_channel=10**9)
    with SlackEmulator(rate_limits=unlimited) as emulator:
        emulator.add_user(ALICE, "alice")
        emulator.add_channel(CHANNEL, "general", members=[ALICE])
        yield emulator


def _client(emulator: SlackEmulator) -> WebClient:
    return WebClient(token=emulator.bot_token, base_url=emulator.api_url)


def _answer() -> render.Rendered:
    result = AgentResult(
        question="everything?",
        standalone_question="everything?",
        answer=ANSWER,
        outcome="answered",
        cypher="UNWIND range(1, 40) AS n RETURN n, 'team ' + toString(n) AS team",
        columns=["n", "team"],
        rows=[[n, f"team {n}"] for n in range(1, 41)],
    )
    return render.answer_message(result, csv_upload=False)


def _asked(emulator: SlackEmulator) -> str:
    message, _ = emulator.post_message(ALICE, CHANNEL, "everything?", deliver=False)
    return str(message["ts"])


def _post_all(emulator: SlackEmulator, thread_ts: str, message: render.Rendered) -> str | None:
    """As the bot posts an answer: the message, then its follow-ups."""
    client = _client(emulator)
    ts = post(client, CHANNEL, thread_ts, message)
    for more in message.more:
        post(client, CHANNEL, thread_ts, more)
    return ts


def _thread_text(emulator: SlackEmulator, thread_ts: str) -> tuple[str, str]:
    """(every message's text and blocks, every uploaded file), whitespace joined."""
    said = []
    for message in emulator.bot_replies(CHANNEL, thread_ts):
        said.append(answer_text(message) if message.get("blocks") else message.get("text", ""))
    files = [emulator.file_content(f).decode() for f in emulator.files]
    return _flat("\n".join(said)), _flat("\n".join(files))


def _flat(text: str) -> str:
    return " ".join(text.split())


def _unescaped(text: str) -> str:
    return text.replace("&lt;", "<").replace("&gt;", ">").replace("&amp;", "&")


def _every_text(message: render.Rendered) -> list[str]:
    return [t for m in (message, *message.more) for t in message_texts(m)]


def _assert_whole(emulator: SlackEmulator, thread_ts: str, message: render.Rendered) -> None:
    said, filed = _thread_text(emulator, thread_ts)
    for text in _every_text(message):
        flat = _flat(text)
        assert flat in said or _unescaped(flat) in filed, f"lost: {flat[:120]}…"


@pytest.mark.parametrize("error", MESSAGE_REFUSALS)
def test_every_refusal_of_an_answer_still_delivers_all_of_it(
    emulator: SlackEmulator, error: str
) -> None:
    message = _answer()
    thread_ts = _asked(emulator)
    emulator.fail_next("chat.postMessage", error)
    ts = _post_all(emulator, thread_ts, message)
    [refused, *_] = emulator.calls_to("chat.postMessage")
    assert refused.response["error"] == error
    _assert_whole(emulator, thread_ts, message)
    posted = emulator.bot_replies(CHANNEL, thread_ts)
    assert ts == posted[0]["ts"], "the first piece stands for the answer (👍 goes there)"
    pieces = [m for m in posted if not m.get("blocks")]
    assert len(pieces) > 1 and all(len(m["text"]) <= PIECE_CHARS for m in pieces)
    assert not any(m["text"] == message.text for m in posted), "never the fallback text alone"


@pytest.mark.parametrize("error", MESSAGE_REFUSALS)
def test_when_the_pieces_are_refused_too_the_rest_goes_as_a_file(
    emulator: SlackEmulator, error: str
) -> None:
    message = _answer()
    thread_ts = _asked(emulator)
    emulator.fail_next("chat.postMessage", error, times=3)  # the message and its first 2 pieces
    _post_all(emulator, thread_ts, message)
    assert emulator.calls_to("files.completeUploadExternal")
    _assert_whole(emulator, thread_ts, message)
    _, filed = _thread_text(emulator, thread_ts)
    assert "teams < their owners" in filed and "&lt;" not in filed, "a file is plain text"


def _section(text: str, **extra: str) -> render.Block:
    return {"type": "section", "text": {"type": "mrkdwn", "text": text}, **extra}


REFUSED_AS_IS: dict[str, render.Rendered] = {
    "msg_too_long": render.Rendered(_flat("a long plain reply " * 300)),
    "invalid_blocks": render.Rendered(
        "fallback", [_section(f"block {n} " + "words " * 20) for n in range(60)]
    ),
    "invalid_blocks (a section over 3,000)": render.Rendered(
        "fallback", [{"type": "section", "text": {"type": "mrkdwn", "text": "x y " * 900}}]
    ),
    "invalid_blocks (a repeated block_id)": render.Rendered(
        "fallback", [_section("first part", block_id="a"), _section("second part", block_id="a")]
    ),
    "msg_blocks_too_long": render.Rendered(
        "fallback", [_section(f"part {n} " + "words of it " * 240) for n in range(5)]
    ),
}


@pytest.mark.parametrize("case", sorted(REFUSED_AS_IS))
def test_messages_slack_refuses_as_they_are_arrive_whole(
    emulator: SlackEmulator, case: str
) -> None:
    message = REFUSED_AS_IS[case]
    thread_ts = _asked(emulator)
    _post_all(emulator, thread_ts, message)
    [refused, *_] = emulator.calls_to("chat.postMessage")
    assert refused.response["error"] == case.split()[0]
    assert refused.response["error"] in MESSAGE_REFUSALS
    _assert_whole(emulator, thread_ts, message)


def test_a_refused_answer_reaches_the_thread_whole_through_the_bot(make_rig: RigFactory) -> None:
    rows = "UNWIND range(1, 30) AS n RETURN n, 'row ' + toString(n) AS label"
    model = ScriptedChatModel(
        replies=[guard_reply(), cypher_reply(rows), evaluation_reply(answer=ANSWER)]
    )
    rig = make_rig(model, stream_answers="off", csv_upload=False)
    rig.emulator.fail_next("chat.postMessage", "msg_blocks_too_long")
    mention = rig.mention("Tell me everything")
    rig.emulator.wait_for(lambda: len(rig.emulator.bot_replies(CHANNEL, mention["ts"])) > 1, 60)
    rig.settle()
    said = _flat(
        "\n".join(
            answer_text(m) if m.get("blocks") else m["text"]
            for m in rig.emulator.bot_replies(CHANNEL, mention["ts"])
        )
    )
    for word in WORDS:
        assert f"the {word} services &amp; teams &lt; their owners hold details" in said, word
    turn = rig.memory.conversations.by_message(
        CHANNEL, rig.emulator.bot_replies(CHANNEL, mention["ts"])[0]["ts"]
    )
    assert turn is not None, "👍 on the first piece teaches the answer's query"
