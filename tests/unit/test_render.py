"""render.py: escaping, limits, splitting, tables, answers and errors as Block Kit."""

from __future__ import annotations

from typing import Any

import pytest

from bot.slack import render
from graph_agent.result import AgentResult, Attempt


def result(**kw: object) -> AgentResult:
    values: dict[str, object] = {
        "question": "q",
        "standalone_question": "q",
        "answer": "Forty-two.",
        "outcome": "answered",
        "cypher": "MATCH (n) RETURN count(n) AS n",
        "columns": ["n"],
        "rows": [[42]],
        "attempts": [Attempt("MATCH", stage="ok")],
        "timings_ms": {"total": 1500.0},
    }
    values.update(kw)
    return AgentResult(**values)  # type: ignore[arg-type]


def all_text(rendered: render.Rendered) -> str:
    parts = [rendered.text]
    for block in rendered.blocks:
        if "text" in block:
            parts.append(block["text"]["text"])
        parts.extend(e["text"] for e in block.get("elements", []) if "text" in e)
    return "\n".join(parts)


@pytest.mark.parametrize(
    ("raw", "safe"),
    [
        ("a & b", "a &amp; b"),
        ("<!channel> hi", "&lt;!channel&gt; hi"),
        ("<!here|here>", "&lt;!here|here&gt;"),
        ("<@U123> look", "&lt;@U123&gt; look"),
        ("<https://x.y|click>", "&lt;https://x.y|click&gt;"),
        ("3 > 2 < 4", "3 &gt; 2 &lt; 4"),
        ("@channel and @here and @Everyone", "@\u200bchannel and @\u200bhere and @\u200bEveryone"),
    ],
)
def test_neutralise(raw: str, safe: str) -> None:
    assert render.neutralise(raw) == safe


def test_markdown_bold_and_headings_become_mrkdwn() -> None:
    assert render.to_mrkdwn("## Teams\n**Payments** has 9") == "*Teams*\n*Payments* has 9"


@pytest.mark.parametrize("limit", [50, 200, 2900])
def test_split_text_respects_the_limit_and_keeps_everything(limit: int) -> None:
    text = ("word " * 700 + "\n\n") * 3
    pieces = render.split_text(text, limit)
    assert all(len(p) <= limit for p in pieces)
    assert " ".join(" ".join(pieces).split()) == " ".join(text.split())


def test_split_text_never_cuts_an_entity() -> None:
    text = "x" * 95 + "&amp;" + "y" * 50
    pieces = render.split_text(text, 98)
    assert all(not p.endswith(("&", "&a", "&am", "&amp")) for p in pieces)
    assert "".join(pieces) == text


def test_split_text_of_short_or_empty_text() -> None:
    assert render.split_text("hi") == ["hi"]
    assert render.split_text("") == [""]


def test_table_preview_caps_cell_widths_and_rows() -> None:
    rows = [[f"name {i} " + "x" * 80, i, None, {"a": [1, 2]}] for i in range(40)]
    table = render.table_preview(["name", "n", "empty", "map"], rows, max_rows=5)
    lines = table.splitlines()
    assert len(lines) == 2 + 5
    assert all(len(line) <= render.MAX_TABLE_WIDTH for line in lines)
    assert "…" in lines[2] and '{"a": [1, 2]}' in lines[2]


@pytest.mark.parametrize(
    ("value", "text"),
    [
        (None, ""),
        (True, "true"),
        (1.23456789, "1.23457"),
        ("a\nb", "a b"),
        ([1, "x"], '[1, "x"]'),
        ({"a": 1}, '{"a": 1}'),
        (
            {"_labels": ["Vehicle"], "year": "1926", "reg": "DJ02 XSG"},
            "Vehicle (year: 1926, reg: DJ02 XSG)",
        ),
    ],
)
def test_cell(value: object, text: str) -> None:
    assert render.cell(value) == text


def test_answer_has_text_table_query_and_context() -> None:
    rendered = render.answer_message(result())
    text = all_text(rendered)
    assert rendered.text == "Forty-two."
    assert "```\nn\n--\n42\n```" in text
    assert "*Query*\n```\nMATCH (n) RETURN count(n) AS n\n```" in text
    assert "1 attempt · 1.5 s · React :+1: if this is right — it teaches me" in text
    assert rendered.csv is None


def test_code_fences_in_data_cannot_escape_the_code_block() -> None:
    rendered = render.answer_message(result(columns=["v"], rows=[["```<!channel>```"]]))
    table = rendered.blocks[1]["text"]["text"]
    assert table.count("```") == 2 and "&lt;!channel&gt;" in table


def test_huge_answer_and_result_stay_within_slack_limits() -> None:
    rows = [[i, "v" * 200] for i in range(500)]
    rendered = render.answer_message(
        result(answer="blah " * 20_000, columns=["i", "v"], rows=rows, cypher="RETURN 1 " * 1000)
    )
    assert len(rendered.blocks) <= render.MAX_BLOCKS
    assert all(
        len(b.get("text", {}).get("text", "")) <= render.SECTION_CHARS for b in rendered.blocks
    )
    assert len(rendered.text) <= render.FALLBACK_CHARS
    assert rendered.csv is not None and rendered.csv.count("\n") == 501
    messages = [rendered, *rendered.more]
    assert all(render.block_text(m.blocks) <= render.BLOCK_TEXT_BUDGET for m in messages)
    assert "The 500 rows are in the attached CSV." in all_text(rendered)
    assert "*Query*" in all_text(rendered), "the query stays with the answer"
    assert rendered.blocks[-1]["type"] == "context_actions", "so do the feedback buttons"
    assert "(answer cut)" in all_text(messages[-1])


def test_an_answer_under_the_block_text_budget_is_one_message() -> None:
    rows = [[i, "v"] for i in range(40)]
    rendered = render.answer_message(result(answer="short", columns=["i", "v"], rows=rows))
    assert rendered.more == () and "Showing 15 of 40 rows" in all_text(rendered)


def test_without_csv_uploads_a_long_table_moves_to_its_own_message() -> None:
    rows = [[i, "v" * 200] for i in range(100)]
    rendered = render.answer_message(
        result(answer="blah " * 2_000, columns=["i", "v"], rows=rows), csv_upload=False
    )
    assert rendered.csv is None
    assert any("```" in all_text(m) for m in rendered.more), "the table is not lost"
    assert all(render.block_text(m.blocks) <= render.BLOCK_TEXT_BUDGET for m in rendered.more)


def test_csv_upload_can_be_disabled() -> None:
    rendered = render.answer_message(result(rows=[[i] for i in range(30)]), csv_upload=False)
    assert rendered.csv is None and "Showing 15 of 30 rows." in all_text(rendered)


def test_refusal_lists_suggestions_without_teach_hint() -> None:
    rendered = render.answer_message(
        result(
            outcome="out_of_scope",
            answer="I answer questions about the graph.",
            cypher=None,
            columns=[],
            rows=[],
            suggestions=["Who owns <billing>?"],
        )
    )
    text = all_text(rendered)
    assert "• Who owns &lt;billing&gt;?" in text and "React" not in text


def test_failed_outcome_renders_a_kind_error_with_reference() -> None:
    rendered = render.answer_message(result(outcome="failed", error_kind="graph_down"))
    assert "couldn't reach the graph database" in all_text(rendered)
    assert "Reference: `" in all_text(rendered)


@pytest.mark.parametrize("kind", [*render.FAILURE_TEXTS, "something_new"])
def test_error_messages_are_kind_and_short(kind: str) -> None:
    rendered = render.error_message(kind, "abc123")
    assert "Reference: `abc123`" in all_text(rendered)
    assert len(rendered.text) <= render.FALLBACK_CHARS and "`" not in rendered.text


def test_reference_ids_are_short_and_distinct() -> None:
    ids = {render.reference_id() for _ in range(50)}
    assert len(ids) == 50 and all(len(i) == 6 for i in ids)


def test_unlisted_failure_shows_the_agents_own_explanation_neutralised() -> None:
    rendered = render.answer_message(
        result(
            outcome="failed",
            error_kind="attempts_exhausted",
            answer="I couldn't write a query (3 attempts). <!channel> try naming the team.",
        )
    )
    text = all_text(rendered)
    assert "3 attempts" in text and "try naming the team" in text
    assert "<!channel>" not in text
    assert "Something went wrong" not in text


# ---- hostile stored values ----------------------------------------------------------------

HOSTILE = [
    "@channel",
    "@here",
    "<!here>",
    "<!channel>",
    "<@U123>",
    "<https://x|y>",
    "[text](https://x)",
    "[Reset your SSO password](https://evil.example/login)",
    "*bold*",
    "_it_",
    "~s~",
    "`",
    "a `tick",
    "Fish & Chips",
    "a < b",
    "c > d",
    "evil\u202etxt.exe",
]
"""Stored values that would ping, format, link or read backwards if shown as they are."""

_UNSHOW = str.maketrans({"\u2217": "*", "\uff3f": "_", "\u223c": "~", "\u02cb": "`", "\u200b": ""})


def as_read(text: str, *, markdown: bool = False) -> str:
    """Roughly what a person reads: entities decoded, zero-width spaces gone, look-alikes
    read as what they stand for, Markdown's backslash escapes applied."""
    import html
    import re

    if markdown:
        text = re.sub(r"\\(.)", r"\1", text)
    return html.unescape(text).translate(_UNSHOW)


def readable(value: str) -> str:
    return value.replace("\u202e", "")


def hostile_result(value: str) -> AgentResult:
    return result(
        answer=f"## Owners\n**{value}** owns it; the name is {value} .\n\n```\nMATCH stays code\n```",
        cypher=f"MATCH (t:Team {{name: {value!r}}}) RETURN t.name AS name",
        columns=["name"],
        rows=[[value], [{"nested": value}]],
    )


def slack_entities(rendered_or_blocks: dict[str, Any]) -> list[str]:
    from bot.playground.emulator_state import slack_entities as found

    return found(rendered_or_blocks)


@pytest.mark.parametrize("value", HOSTILE)
def test_a_hostile_stored_value_cannot_ping_link_or_format(value: str) -> None:
    rendered = render.answer_message(hostile_result(value))
    assert rendered.stream is not None
    posted = {"text": rendered.text, "blocks": rendered.blocks}
    streamed = {
        "text": rendered.stream.markdown,
        "blocks": [{"type": "markdown", "text": rendered.stream.markdown}, *rendered.stream.blocks],
    }
    # Nothing Slack would turn into a broadcast, a mention or a link, posted or streamed.
    assert slack_entities(posted) == []
    assert slack_entities(streamed) == []
    [answer, table, query] = [b["text"]["text"] for b in rendered.blocks[:3]]
    # The value is still there to read: in the answer (mrkdwn and Markdown), table and query.
    assert readable(value) in as_read(answer)
    assert readable(value) in as_read(rendered.stream.markdown, markdown=True)
    assert readable(value)[:20] in as_read(table)  # cells are cut at MAX_CELL_WIDTH
    assert readable(repr(value)) in as_read(query)
    assert "\u202e" not in all_text(rendered) + rendered.stream.markdown
    # It cannot format: quoted in the answer, it is shown as a value, in mrkdwn and Markdown.
    plain = render.answer_message(result(answer=f"The name is {value} .", rows=[[value]]))
    assert plain.blocks[0]["text"]["text"] == f"The name is {render.shown(value)} ."
    assert plain.stream is not None
    assert plain.stream.markdown == f"The name is {render.shown(value, 'markdown')} ."
    # The bot's own formatting is kept: its heading, bold, code block and query label.
    assert answer.startswith("*Owners*\n*") and "```\nMATCH stays code\n```" in answer
    assert rendered.stream.markdown.startswith("## Owners\n**")
    assert "```\nMATCH stays code\n```" in rendered.stream.markdown
    assert table.startswith("```\n") and table.endswith("\n```") and table.count("```") == 2
    assert query.startswith("*Query*\n```\n")


@pytest.mark.parametrize(
    ("value", "target", "text"),
    [
        ("@channel", "mrkdwn", "@\u200bchannel"),
        ("<!here>", "mrkdwn", "&lt;!here&gt;"),
        (
            "*bold* _it_ ~s~ `c`",
            "mrkdwn",
            "\u2217bold\u2217 \uff3fit\uff3f \u223cs\u223c \u02cbc\u02cb",
        ),
        ("[text](https://x)", "mrkdwn", "[text](https://x)"),
        ("[text](https://x)", "markdown", "\\[text\\]\\(https://x\\)"),
        ("*bold* & <b>", "markdown", "\\*bold\\* &amp; &lt;b&gt;"),
        ("a ``` b @here", "code", "a `\u200b`` b @\u200bhere"),
        ("*bold*", "code", "*bold*"),
        ("x\u202ey\u2066z", "plain", "xyz"),
        (None, "mrkdwn", ""),
        (1.5, "markdown", "1.5"),
    ],
)
def test_shown_is_the_one_way_a_value_reaches_slack(
    value: object, target: render.Target, text: str
) -> None:
    assert render.shown(value, target) == text


def test_links_the_model_writes_are_not_streamed_as_links() -> None:
    markdown = render.to_markdown("See [Reset](https://evil.example) or `[a](b)` and \\[c](d)")
    assert markdown == "See \\[Reset\\]\\(https://evil.example) or `[a](b)` and \\\\\\[c\\]\\(d)"


def test_the_models_own_formatting_is_kept_where_it_does_not_quote_a_value() -> None:
    values = render.stored_values([["_it_"], ["*"]], ["name"])
    assert values == ["_it_", "*"]
    text = render.to_mrkdwn("**Top** _team_ is _it_; 2 * 3 and * alone", values)
    assert text == "*Top* _team_ is \uff3fit\uff3f; 2 \u2217 3 and \u2217 alone"


def test_a_value_inside_the_models_code_stays_code() -> None:
    text = render.to_mrkdwn("Name: `*bold*` and *bold*", ["*bold*"])
    assert text == "Name: `*bold*` and \u2217bold\u2217"


def test_truncate_never_cuts_an_entity() -> None:
    assert render.truncate("x" * 7 + "&amp;yyy", 10) == "xxxxxxx…"
    assert render.truncate("abc&amp; and more", 12) == "abc&amp; an…"


def test_a_stored_question_in_a_list_cannot_format_or_ping() -> None:
    # The Home tab and `/cypherbot examples` list stored questions through shown().
    listed = render.shown(render.truncate("Who is *on call* for @channel <!here>?", 200))
    assert "*" not in listed and "<!here>" not in listed and "@channel" not in listed
    assert "on call" in listed
