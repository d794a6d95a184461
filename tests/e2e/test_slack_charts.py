"""Charts in Slack: after the text answer, in its thread, a PNG with alt text; never for a list
of names; never with CHARTS=off."""

from __future__ import annotations

from bot.playground.emulator import SlackEmulator
from rig.scripted_llm import ScriptedChatModel
from rig.slack import CHANNEL, answer_text, graph_responder
from tests.e2e.conftest import RigFactory

PER_SEVERITY = (
    "MATCH (i:Incident) RETURN i.severity AS severity, count(i) AS incidents ORDER BY severity"
)
PAYMENTS_PEOPLE = (
    "MATCH (p:Person)-[:MEMBER_OF]->(:Team {name: 'Payments'}) RETURN p.name AS person"
)


def _charts(emulator: SlackEmulator, thread_ts: str) -> list[dict[str, object]]:
    return [
        f
        for m in emulator.messages(CHANNEL, thread_ts)
        for f in m.get("files", [])
        if str(f["name"]).endswith(".png")
    ]


def test_a_count_per_category_gets_a_chart_after_the_text_answer(make_rig: RigFactory) -> None:
    rig = make_rig(ScriptedChatModel(responder=graph_responder(lambda q: PER_SEVERITY)))
    mention = rig.mention("How many incidents of each severity were there?")
    [answer] = rig.wait_answers(CHANNEL, mention["ts"])
    rig.emulator.wait_for(lambda: _charts(rig.emulator, mention["ts"]), 30, "no chart")
    [chart] = _charts(rig.emulator, mention["ts"])
    shared = next(m for m in rig.emulator.messages(CHANNEL, mention["ts"]) if m.get("files"))
    assert float(shared["ts"]) > float(answer["ts"]), "the text answer goes first"
    assert shared["thread_ts"] == mention["ts"]
    png = rig.emulator.file_content(str(chart["id"]))
    assert png[:8] == b"\x89PNG\r\n\x1a\n"
    assert str(chart["alt_txt"]).startswith("Bar chart for “How many incidents of each severity")
    assert "severity SEV1, incidents" in str(chart["alt_txt"])
    assert "SEV1" in answer_text(answer)


def test_a_list_of_names_gets_no_chart(make_rig: RigFactory) -> None:
    rig = make_rig(ScriptedChatModel(responder=graph_responder(lambda q: PAYMENTS_PEOPLE)))
    mention = rig.mention("Who is on the Payments team?")
    rig.wait_answers(CHANNEL, mention["ts"])
    rig.settle()
    assert _charts(rig.emulator, mention["ts"]) == []


def test_charts_can_be_turned_off(make_rig: RigFactory) -> None:
    rig = make_rig(
        ScriptedChatModel(responder=graph_responder(lambda q: PER_SEVERITY)), charts="off"
    )
    mention = rig.mention("How many incidents of each severity were there?")
    rig.wait_answers(CHANNEL, mention["ts"])
    rig.settle()
    assert _charts(rig.emulator, mention["ts"]) == []
    assert not rig.emulator.calls_to("files.getUploadURLExternal")


def test_a_charts_title_and_alt_text_are_plain_text(make_rig: RigFactory) -> None:
    # A question with a right-to-left override and line breaks: plain text, whitespace joined.
    rig = make_rig(ScriptedChatModel(responder=graph_responder(lambda q: PER_SEVERITY)))
    mention = rig.mention("How many incidents\n\nof each \u202eseverity were there?")
    rig.wait_answers(CHANNEL, mention["ts"])
    rig.emulator.wait_for(lambda: _charts(rig.emulator, mention["ts"]), 30, "no chart")
    [chart] = _charts(rig.emulator, mention["ts"])
    for text in (str(chart["title"]), str(chart["alt_txt"])):
        assert "\u202e" not in text and "\n" not in text
        assert "How many incidents of each severity" in text
