"""Route pictures in Slack: a connection answer with a route longer than two hops gets a PNG of
its routes after the text in its thread; one of one or two hops does not; CHARTS=off turns it
off; in a restricted channel the picture holds nothing the channel may not see."""

from __future__ import annotations

import json
from typing import Any

import pytest

from bot import path_image
from bot.playground.emulator import SlackEmulator
from rig.scripted_llm import ScriptedChatModel
from rig.slack import ALICE, BOB, CHANNEL, answer_text, graph_responder
from tests.e2e.conftest import RigFactory

# On the demo graph: three hops, by her on-call rotation or by her team (Payments).
THREE_HOPS = "How is Hana Smith connected to PostgreSQL?"
# Two hops: both are members of Payments and report to Alice Nguyen.
TWO_HOPS = "How is Wei Nguyen connected to Hana Smith?"
ONE_HOP = "How is Alice Nguyen connected to Wei Nguyen?"
UNUSED = "MATCH (p:Person) RETURN p.name AS person LIMIT 1"


def _model() -> ScriptedChatModel:
    return ScriptedChatModel(responder=graph_responder(lambda q: UNUSED))


def _pictures(emulator: SlackEmulator, channel: str, thread_ts: str) -> list[dict[str, Any]]:
    return [
        f
        for m in emulator.messages(channel, thread_ts)
        for f in m.get("files", [])
        if str(f["name"]).endswith(".png")
    ]


@pytest.fixture
def drawn_specs(monkeypatch: pytest.MonkeyPatch) -> list[dict[str, Any]]:
    """Every route picture's spec, as the bot (in this process) made it."""
    specs: list[dict[str, Any]] = []
    made = path_image.spec

    def recording(routes: Any) -> dict[str, Any]:
        specs.append(made(routes))
        return specs[-1]

    monkeypatch.setattr(path_image, "spec", recording)
    return specs


def test_a_three_hop_connection_gets_a_picture_after_the_text(
    make_rig: RigFactory, drawn_specs: list[dict[str, Any]]
) -> None:
    rig = make_rig(_model())
    mention = rig.mention(THREE_HOPS)
    [answer] = rig.wait_answers(CHANNEL, mention["ts"])
    assert "connection" in answer_text(answer) and "PostgreSQL" in answer_text(answer)
    rig.emulator.wait_for(
        lambda: _pictures(rig.emulator, CHANNEL, mention["ts"]), 30, "no route picture"
    )
    [picture] = _pictures(rig.emulator, CHANNEL, mention["ts"])
    shared = next(m for m in rig.emulator.messages(CHANNEL, mention["ts"]) if m.get("files"))
    assert float(shared["ts"]) > float(answer["ts"]), "the text answer goes first"
    assert shared["thread_ts"] == mention["ts"]
    assert rig.emulator.file_content(str(picture["id"]))[:8] == b"\x89PNG\r\n\x1a\n"
    alt = str(picture["alt_txt"])
    assert alt.startswith("How they are connected, 2 routes: 1. Hana Smith —")
    assert "—USES→ PostgreSQL" in alt and "\n" not in alt
    assert str(picture["title"]).startswith("2 routes: Hana Smith —")
    assert len(str(picture["title"])) <= 80
    [spec] = drawn_specs
    nodes = next(d["values"] for d in spec["data"] if d["name"] == "nodes")
    names = {node["name"] for node in nodes}
    assert {"Hana Smith", "PostgreSQL", "payments-service"} <= names


@pytest.mark.parametrize("question", [TWO_HOPS, ONE_HOP])
def test_a_connection_of_one_or_two_hops_gets_no_picture(
    make_rig: RigFactory, question: str
) -> None:
    rig = make_rig(_model())
    mention = rig.mention(question)
    [answer] = rig.wait_answers(CHANNEL, mention["ts"])
    assert "connection" in answer_text(answer)
    rig.settle()
    assert _pictures(rig.emulator, CHANNEL, mention["ts"]) == []
    assert not rig.emulator.calls_to("files.getUploadURLExternal")


def test_charts_off_means_no_route_picture(make_rig: RigFactory) -> None:
    rig = make_rig(_model(), charts="off")
    mention = rig.mention(THREE_HOPS)
    [answer] = rig.wait_answers(CHANNEL, mention["ts"])
    assert "PostgreSQL" in answer_text(answer)
    rig.settle()
    assert _pictures(rig.emulator, CHANNEL, mention["ts"]) == []
    assert not rig.emulator.calls_to("files.getUploadURLExternal")


def test_in_a_restricted_channel_the_picture_shows_no_hidden_label(
    make_rig: RigFactory, drawn_specs: list[dict[str, Any]]
) -> None:
    # Elsewhere one of the routes goes through the Payments team; where Team is hidden only the
    # on-call rotation's route is left, and neither the team, its label nor MEMBER_OF is drawn.
    secret = "C0SECRET"
    rig = make_rig(_model(), channel_restrictions=f"{secret}:Team")
    rig.emulator.add_channel(secret, "secret", members=[ALICE, BOB])
    open_mention = rig.mention(THREE_HOPS)
    rig.wait_answers(CHANNEL, open_mention["ts"])
    rig.emulator.wait_for(
        lambda: _pictures(rig.emulator, CHANNEL, open_mention["ts"]), 30, "no route picture"
    )
    assert "Team" in json.dumps(drawn_specs[0]), "elsewhere a route goes through the team"
    hidden_mention = rig.mention(THREE_HOPS, channel=secret)
    [hidden_answer] = rig.wait_answers(secret, hidden_mention["ts"])
    rig.emulator.wait_for(
        lambda: _pictures(rig.emulator, secret, hidden_mention["ts"]), 30, "no route picture"
    )
    [picture] = _pictures(rig.emulator, secret, hidden_mention["ts"])
    [_, spec] = drawn_specs
    drawn = json.dumps(spec, ensure_ascii=False)
    alt = str(picture["alt_txt"])
    for hidden in ("Team", "MEMBER_OF", '"Payments"'):
        assert hidden not in drawn
    assert "Team" not in alt and "MEMBER_OF" not in alt and "1 route:" in alt
    assert "Team" not in answer_text(hidden_answer)
    assert "Payments primary" in drawn and "OnCallRotation" in drawn
