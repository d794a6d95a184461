"""Rows first (issue 29): once the statement ran and passed its checks, the thread shows what
it found while the model is still judging and wording it; the answer then replaces it.

The scripted model's evaluate step does not answer until the test has seen the rows in the
thread (or gives up after a hang-detector wait and the test fails): an order, not a timing."""

from __future__ import annotations

import threading
from typing import Any

from langchain_core.messages import BaseMessage

from rig.scripted_llm import ScriptedChatModel
from rig.slack import CHANNEL, answer_text, graph_responder, prompt_kind
from tests.e2e.conftest import RigFactory

TEAM_SIZES = (
    "MATCH (p:Person)-[:MEMBER_OF]->(t:Team) "
    "RETURN t.name AS team, count(p) AS people ORDER BY people DESC LIMIT 3"
)


class HeldEvaluate:
    """graph_responder, with the evaluate step held until `seen` is set."""

    def __init__(self) -> None:
        self.seen = threading.Event()
        self.waited: list[bool] = []
        self._reply = graph_responder(lambda q: TEAM_SIZES)

    def __call__(self, messages: list[BaseMessage]) -> str:
        if prompt_kind(messages) == "evaluate":
            self.waited.append(self.seen.wait(timeout=30))  # a hang detector, not a bound
        return self._reply(messages)


def _shown(rig: Any, ts: str) -> list[str]:
    texts = [rig.emulator.statuses.get((CHANNEL, ts), "")]
    return texts + [str(m.get("text", "")) for m in rig.emulator.messages(CHANNEL, ts)]


def _rows_first(rig: Any, held: HeldEvaluate) -> tuple[str, str, str]:
    mention = rig.mention("Which teams have the most people?")
    ts = str(mention["ts"])
    rig.emulator.wait_for(lambda: any("Notifications" in t for t in _shown(rig, ts)), 30)
    before = next(t for t in _shown(rig, ts) if "Notifications" in t)
    assert not rig.answers(CHANNEL, ts), "the rows came before the answer"
    held.seen.set()
    [answer] = rig.wait_answers(CHANNEL, ts)
    assert held.waited == [True]
    return before, answer_text(answer), ts


def test_the_placeholder_shows_the_rows_then_becomes_the_answer(make_rig: RigFactory) -> None:
    held = HeldEvaluate()
    rig = make_rig(ScriptedChatModel(responder=held), status_supported=False)
    before, answer, ts = _rows_first(rig, held)
    assert before.startswith("_Found (writing the answer…):_"), before
    assert "Found: " in answer  # the scripted model's own wording of the rows
    # The placeholder became the answer: nothing in the thread still says "writing".
    texts = [str(m.get("text", "")) for m in rig.emulator.messages(CHANNEL, ts)]
    assert not [t for t in texts if "writing the answer" in t], texts


def test_the_status_line_shows_the_rows_while_the_answer_is_written(
    make_rig: RigFactory,
) -> None:
    held = HeldEvaluate()
    rig = make_rig(ScriptedChatModel(responder=held))
    before, _answer, _ts = _rows_first(rig, held)
    assert before.startswith("Found: ") and before.endswith("writing the answer…"), before
    sent = [
        c.params.get("loading_messages")
        for c in rig.emulator.calls_to("assistant.threads.setStatus")
    ]
    assert any("Notifications" in str(m) for m in sent), sent
