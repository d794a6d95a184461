"""Failure replies say what to try next; engine and Python text stays in the log and the trace."""

from __future__ import annotations

from bot.slack.render import error_message
from graph_agent.errors import FAILURE_TEXT


def test_an_error_reply_never_carries_engine_text() -> None:
    detail = "The last problem was: errMsg: Invalid input errCtx: MATCH (p:Person) RETURN"
    rendered = error_message("attempts_exhausted", "abc123", detail)
    shown = rendered.text + str(rendered.blocks)
    assert "errMsg" not in shown and "errCtx" not in shown
    assert FAILURE_TEXT["attempts_exhausted"] in shown, "the kind's own wording instead"
    kind = error_message("attempts_exhausted", "abc123", "Try rephrasing it.")
    assert "Try rephrasing it." in kind.text
