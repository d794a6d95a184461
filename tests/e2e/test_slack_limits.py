"""Slack as it really behaves: block-text and rate limits, slash commands acked at once, files in
DMs, per-user declines only the asker sees. The emulator plays each limit (bot/playground/emulator_limits.py)
and checks every call against manifest.yml's scopes; each test here failed before the bot handled
the limit."""

from __future__ import annotations

from typing import Any

from bot.playground.emulator import SlackEmulator
from bot.playground.emulator_limits import MAX_BLOCK_TEXT, block_text_length
from bot.slack.answering import ATTACHMENTS_ONLY, BUDGET_MESSAGE
from rig.scripted_llm import (
    ScriptedChatModel,
    cypher_reply,
    evaluation_reply,
    guard_reply,
)
from rig.slack import ALICE, BOB, CHANNEL, answer_text, graph_responder
from tests.e2e.conftest import HeldStep, RigFactory

TEAM_COUNT = "MATCH (t:Team) RETURN count(t) AS teams"


def _answered(answer: str, cypher: str) -> list[str]:
    return [guard_reply(), cypher_reply(cypher), evaluation_reply(answer=answer)]


def _limited(emulator: SlackEmulator, method: str) -> list[Any]:
    return [c for c in emulator.calls_to(method) if c.status == 429]


def test_a_long_answer_continues_in_the_thread_within_slacks_block_text_limit(
    make_rig: RigFactory,
) -> None:
    words = [
        "alpha",
        "bravo",
        "charlie",
        "delta",
        "echo",
        "foxtrot",
        "golf",
        "hotel",
        "india",
        "juliet",
        "kilo",
        "lima",
    ]
    paragraphs = [f"the part called {w} has " + "details of the answer " * 60 for w in words]
    rig = make_rig(
        ScriptedChatModel(
            replies=_answered(
                "\n\n".join(paragraphs),
                "UNWIND range(1, 90) AS n RETURN n, 'row ' + toString(n) AS label",
            )
        )
    )
    mention = rig.mention("everything please")
    first, *more = rig.wait_answers(CHANNEL, mention["ts"], n=2)
    assert not [c for c in rig.emulator.calls if c.response.get("error") == "msg_blocks_too_long"]
    for message in (first, *more):
        assert block_text_length(message["blocks"]) <= MAX_BLOCK_TEXT
    text = "\n".join(answer_text(m) for m in (first, *more))
    assert "part called alpha" in text and "part called hotel" in text, "the answer is not lost"
    assert "UNWIND range(1, 90)" in answer_text(first), "the query stays on the answer"
    assert "attached CSV" in answer_text(first)
    rig.emulator.wait_for(lambda: rig.emulator.calls_to("files.completeUploadExternal"), 10)
    [csv] = [rig.emulator.file_content(f).decode() for f in rig.emulator.files]
    assert len(csv.splitlines()) == 91, "the table moved into the CSV, whole"


def test_a_rate_limited_progress_step_is_dropped_not_retried(make_rig: RigFactory) -> None:
    # The query is written only once a progress step has met the rate limit.
    held = HeldStep(
        "generate",
        lambda emulator: any(c.status == 429 for c in emulator.calls_to("chat.update")),
        graph_responder(lambda q: TEAM_COUNT),
    )
    rig = make_rig(
        ScriptedChatModel(responder=held), status_supported=False, progress_interval_s=0.0
    )
    held.emulator = rig.emulator
    # The placeholder is posted, then every progress step edits it with chat.update.
    rig.emulator.fail_next("chat.update", "ratelimited", status=429, retry_after=3)
    mention = rig.mention("How many teams are there?")
    [answer] = rig.wait_answers(CHANNEL, mention["ts"])
    assert "Found:" in answer_text(answer) or "teams" in answer_text(answer).lower()
    updates = rig.emulator.calls_to("chat.update")
    [limited] = [c for c in updates if c.status == 429]
    after = updates[updates.index(limited) + 1 :]
    assert limited.params["text"] not in [c.params.get("text") for c in after], (
        "the step that hit the rate limit was sent again (the SDK's retry slept on it)"
    )


def test_many_questions_at_once_stay_within_the_workspaces_update_budget(
    make_rig: RigFactory,
) -> None:
    model = ScriptedChatModel(responder=graph_responder(lambda q: TEAM_COUNT))
    rig = make_rig(model, status_supported=False, progress_interval_s=0.0, workers=8)
    channels = [CHANNEL, "C0TWO", "C0THREE", "C0FOUR"]
    for channel in channels[1:]:
        rig.emulator.add_channel(channel, channel.lower(), members=[ALICE, BOB])
    asked = [
        (channel, rig.mention(f"How many teams are there? ({i})", channel=channel)["ts"])
        for i in range(5)
        for channel in channels
    ]
    for channel, ts in asked:
        rig.wait_answers(channel, ts)
    assert not _limited(rig.emulator, "chat.update"), (
        "progress updates of 20 questions exceeded Slack's Tier 3 budget"
    )
    assert len(rig.emulator.calls_to("chat.update")) >= len(asked), "every answer was posted"


def test_the_slash_command_is_acked_at_once_and_answered_through_response_url(
    make_rig: RigFactory,
) -> None:
    rig = make_rig(ScriptedChatModel())

    def run(text: str) -> str:
        seen = len(rig.emulator.responses)
        delivery = rig.emulator.slash_command(ALICE, CHANNEL, text)
        assert delivery.status == 200 and delivery.body == "", "nothing computed in the ack"
        rig.emulator.wait_for(lambda: len(rig.emulator.responses) > seen, 30)
        reply = rig.emulator.responses[seen]
        assert reply["response_type"] == "ephemeral"
        return " ".join(b["text"]["text"] for b in reply["blocks"])

    assert "Ask me a question about the graph" in run("help")
    assert "Nobody has taught me" in run("examples") or "verified query" in run("examples")
    assert "team" in run("schema").lower()
    assert "/cypherbot help" in run("frobnicate")
    shown = [e for e in rig.emulator.ephemerals if e["user"] == ALICE]
    assert len(shown) == 4 and all(e["channel"] == CHANNEL for e in shown)


def test_a_dm_with_a_file_is_answered_from_its_text_and_says_files_are_not_read(
    make_rig: RigFactory,
) -> None:
    model = ScriptedChatModel(responder=graph_responder(lambda q: TEAM_COUNT))
    rig = make_rig(model)
    dm = rig.emulator.open_dm(ALICE).id
    message, _ = rig.emulator.post_message(
        ALICE, dm, "How many teams are there?", files=["org-chart.pdf"]
    )
    assert message["subtype"] == "file_share"
    [answer] = rig.wait_answers(dm, message["ts"])
    assert "don't read attached files" in answer_text(answer)
    assert "teams" in answer_text(answer).lower()
    only_file, _ = rig.emulator.post_message(ALICE, dm, "", files=["diagram.png"])
    rig.settle()
    [reply] = rig.emulator.bot_replies(dm, only_file["ts"])
    assert ATTACHMENTS_ONLY.split(".")[0] in answer_text(reply) + reply["text"]


def test_a_per_user_decline_in_a_channel_is_seen_only_by_the_asker(
    make_rig: RigFactory,
) -> None:
    model = ScriptedChatModel(responder=graph_responder(lambda q: TEAM_COUNT))
    rig = make_rig(model, daily_token_budget=100)
    first = rig.mention("How many teams are there?")
    rig.wait_answers(CHANNEL, first["ts"])
    second = rig.mention("And how many teams now?", user=BOB)
    rig.emulator.wait_for(lambda: rig.emulator.ephemerals, 30)
    rig.settle()
    [declined] = rig.emulator.ephemerals
    assert declined["user"] == BOB and declined["thread_ts"] == second["ts"]
    assert BUDGET_MESSAGE.split(",")[0] in declined["text"] + str(declined.get("blocks"))
    assert rig.emulator.bot_replies(CHANNEL, second["ts"]) == [], "nothing public"


def test_every_call_of_a_whole_conversation_is_within_the_manifests_scopes(
    make_rig: RigFactory,
) -> None:
    model = ScriptedChatModel(responder=graph_responder(lambda q: TEAM_COUNT))
    rig = make_rig(model)
    mention = rig.mention("How many teams are there?")
    [answer] = rig.wait_answers(CHANNEL, mention["ts"])
    rig.emulator.add_reaction(ALICE, CHANNEL, answer["ts"], "+1")
    rig.emulator.slash_command(ALICE, CHANNEL, "examples")
    rig.dm("How many teams are there?")
    rig.settle()
    refused = [c.method for c in rig.emulator.calls if c.response.get("error") == "missing_scope"]
    assert refused == []
    assert rig.emulator.scopes is not None and "chat:write" in rig.emulator.scopes


def test_the_emulator_refuses_what_slack_refuses() -> None:
    with SlackEmulator(scopes=["chat:write"]) as emulator:
        emulator.add_channel(CHANNEL, "general", members=[])
        emulator.add_channel("C0QUIET", "quiet", members=[])
        answer = emulator.handle_api("reactions.add", {}, emulator.bot_token)
        assert answer.body == {"ok": False, "error": "missing_scope", "needed": "reactions:write"}
        big = [{"type": "section", "text": {"type": "mrkdwn", "text": "x" * 2900}}] * 5
        posted = emulator.handle_api(
            "chat.postMessage", {"channel": CHANNEL, "text": "t", "blocks": big}, emulator.bot_token
        )
        assert posted.body["error"] == "msg_blocks_too_long"
        statuses = [
            emulator.handle_api(
                "chat.postMessage", {"channel": "C0QUIET", "text": f"m{i}"}, emulator.bot_token
            )
            for i in range(6)
        ]
        assert [a.status for a in statuses] == [200] * 5 + [429]
        assert int(statuses[-1].headers["Retry-After"]) >= 1
