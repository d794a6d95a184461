"""Progress and posting without Slack: a fixed assistant status with the steps as loading
messages, and a refused message's text cut into pieces that lose nothing."""

from __future__ import annotations

import pytest

from bot.slack import render
from bot.slack.progress import (
    PIECE_CHARS,
    STATUS,
    Progress,
    StatusSupport,
    _pieces,
    message_texts,
)
from graph_agent.result import Choice, ProgressEvent
from tests.unit.test_bot_units import FakeClient, _wait_until


def _set_status_calls(client: FakeClient) -> list[dict[str, object]]:
    return [c[2] for c in client.calls if c[0] == "assistant_threads_setStatus"]


def test_the_status_is_fixed_and_each_step_is_a_loading_message() -> None:
    client = FakeClient()
    progress = Progress(client, "C", "1.1", status=StatusSupport(), min_interval_s=0.0)  # type: ignore[arg-type]
    progress.start()
    progress.update(ProgressEvent("generate", "Writing a query…"))
    _wait_until(lambda: len(_set_status_calls(client)) == 2)
    progress.finish(render.notice("the answer"))
    calls = _set_status_calls(client)
    assert [c["status"] for c in calls] == [STATUS, STATUS]
    assert [c["loading_messages"] for c in calls] == [["Working on it…"], ["Writing a query…"]]


def _section(text: str) -> render.Block:
    return {"type": "section", "text": {"type": "mrkdwn", "text": text}}


def test_a_messages_texts_are_every_block_in_order() -> None:
    buttons = render.choice_buttons([Choice(text="Team Atlas", question="About Atlas?")])
    assert buttons is not None
    message = render.Rendered(
        "fallback",
        [
            _section("the answer"),
            buttons,
            {"type": "context", "elements": [{"type": "mrkdwn", "text": "1 attempt"}]},
            render.feedback_buttons(),
            {"type": "markdown", "text": "**streamed**"},
        ],
    )
    assert message_texts(message) == ["the answer", "• Team Atlas", "1 attempt", "**streamed**"]
    assert message_texts(render.Rendered("only text")) == ["only text"]


@pytest.mark.parametrize(
    "texts",
    [
        ["short"],
        [f"paragraph {n} " + "word " * 500 for n in range(9)],
        ["```\n" + "x = 1\n" * 480 + "```", "after the code"],
        ["a" * 7_000],  # one text longer than a piece: cut, nothing lost
        ["", "  ", "kept"],
    ],
)
def test_pieces_fit_a_message_and_lose_nothing(texts: list[str]) -> None:
    pieces = _pieces(texts)
    assert pieces and all(0 < len(p) <= PIECE_CHARS for p in pieces)
    assert "".join("".join(pieces).split()) == "".join("".join(texts).split())
    for text in texts:
        if len(text) <= PIECE_CHARS and text.strip():
            assert any(text in piece for piece in pieces), "a text that fits is never cut"
