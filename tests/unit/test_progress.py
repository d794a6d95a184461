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


def _status_texts(client: FakeClient) -> list[str]:
    return [str(c["loading_messages"][0]) for c in _set_status_calls(client)]  # type: ignore[index]


def test_the_rows_found_replace_a_step_still_waiting_to_go_out() -> None:
    """Rows first (issue 29), within Slack's one update a second: a step waiting for the
    interval (an hour here) is replaced by the rows found, neutralised like every stored
    value; the step itself never goes out."""
    client = FakeClient()
    progress = Progress(client, "C", "1.1", status=StatusSupport(), min_interval_s=3600.0)  # type: ignore[arg-type]
    progress.start()
    progress.update(ProgressEvent("execute", "Running it…"))
    assert progress.pending == "Running it…"
    progress.update(
        ProgressEvent("evaluate", "Reading the results…", preview="• Payments @channel\n• Mobile")
    )
    shown = progress.pending or ""
    assert shown.startswith("Found: • Payments @\u200bchannel • Mobile"), shown
    assert shown.endswith("writing the answer…")
    progress.finish(render.notice("the answer"))
    assert _status_texts(client) == ["Working on it…"], "nothing within the interval"


def test_steps_in_a_burst_settle_on_the_last_one() -> None:
    client = FakeClient()
    progress = Progress(client, "C", "1.1", status=StatusSupport(), min_interval_s=0.0)  # type: ignore[arg-type]
    progress.start()
    progress.update(
        ProgressEvent("evaluate", "Reading the results…", preview="• Payments\n• Mobile")
    )
    _wait_until(lambda: len(_set_status_calls(client)) == 2)
    progress.finish(render.notice("the answer"))
    assert _status_texts(client)[1].startswith("Found: • Payments • Mobile")


def test_in_a_placeholder_the_rows_found_are_a_few_safe_lines() -> None:
    client = FakeClient()
    progress = Progress(
        client, "C", "1.1", status=StatusSupport(enabled=False), min_interval_s=3600.0
    )  # type: ignore[arg-type]
    progress.start()
    progress.update(
        ProgressEvent("evaluate", "Reading…", preview="• <!here> *Payments*\n" + "• x\n" * 2000)
    )
    text = progress.pending or ""
    progress.finish(render.notice("the answer"))
    assert text.startswith("_Found (writing the answer…):_\n• &lt;!here&gt; ∗Payments∗")
    assert len(text) < 1_600 and text.endswith("…")


def test_a_step_without_rows_still_waits_for_the_interval() -> None:
    client = FakeClient()
    progress = Progress(client, "C", "1.1", status=StatusSupport(), min_interval_s=3600.0)  # type: ignore[arg-type]
    progress.start()
    progress.update(ProgressEvent("execute", "Running it…"))
    progress.finish(render.notice("the answer"))
    assert "Running it…" not in _status_texts(client)
