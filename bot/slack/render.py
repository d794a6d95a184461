"""Slack rendering of answers, notices and errors: Block Kit built by pure functions within Slack's limits."""

from __future__ import annotations

import csv
import io
import json
import re
import secrets
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from typing import Any, Literal

from graph_agent.answer_offline import entity_text
from graph_agent.errors import FAILURE_TEXT
from graph_agent.result import AgentResult, Choice

MAX_BLOCKS = 50
SECTION_CHARS = 3000
"""Slack's limit for a section's text."""
SECTION_BUDGET = 2900
"""What we fill a section with, leaving room for code fences."""
FALLBACK_CHARS = 300
"""The notification text that goes with blocks."""
MAX_ANSWER_SECTIONS = 8
"""Longer answers are cut (the reader gets ~23k characters and a note)."""
BLOCK_TEXT_BUDGET = 10_000
"""Text all the blocks of one message may carry. Slack refuses more than roughly 11,000-13,000
characters in total with `msg_blocks_too_long` (undocumented; bolt-js issues 2509, 2867), so
longer answers continue in follow-up messages and a long table moves into the CSV."""
MAX_TABLE_WIDTH = 100
MAX_CELL_WIDTH = 30
TEACH_HINT = "React :+1: if this is right — it teaches me"

_BROADCAST = re.compile(r"@(channel|here|everyone)\b", re.IGNORECASE)
_BOLD = re.compile(r"\*\*(.+?)\*\*")
_HEADING = re.compile(r"^#{1,6}\s+(.+)$", re.MULTILINE)
_FENCE = "```"
_ZWSP = "\u200b"
_BIDI = re.compile("[\u200e\u200f\u202a-\u202e\u2066-\u2069]")
"""Bidirectional marks, embeddings, overrides and isolates: they can make text read
backwards (`gpj.exe` shown as `exe.jpg`), so shown text never carries them."""
_HELD = re.compile("\ue000(\\d+)\ue001")
_PRIVATE = re.compile("[\ue000\ue001]")
_RISKY = re.compile(r"[*_~`\\\[\]()|#]|" + _BIDI.pattern)
"""Characters that format or link in mrkdwn or Markdown; stored values holding one are
rendered by `shown()` wherever they appear in the answer text."""
_LOOKALIKE = str.maketrans({"*": "\u2217", "_": "\uff3f", "~": "\u223c", "`": "\u02cb"})
"""mrkdwn has no escape for its formatting characters: a stored value shows look-alikes."""
_MARKDOWN_SPECIAL = re.compile(r"([\\`*_~\[\]()|#])")
_CODE = re.compile(r"```.*?(?:```|\Z)|`[^`\n]*`", re.DOTALL)
_LINK_OPEN = re.compile(r"([\\\[\]])|(?<=\])\(")
MAX_HELD_VALUES = 2000
"""Stored values looked for in an answer's text (the first ones of the result)."""

Target = Literal["mrkdwn", "markdown", "code", "plain"]

Block = dict[str, Any]


@dataclass(frozen=True)
class Rendered:
    """One Slack message: notification text, blocks, and an optional CSV of the full result."""

    text: str
    blocks: list[Block] = field(default_factory=list)
    csv: str | None = None
    csv_name: str = "result.csv"
    more: tuple[Rendered, ...] = ()
    """Follow-up messages in the same thread, posted after this one, in order."""
    stream: Streamed | None = None
    """The same answer as streamed text and the blocks that end it (answers only)."""


@dataclass(frozen=True)
class Streamed:
    """An answer for Slack's chat streaming: its text as markdown, appended in pieces, then
    the blocks (table, query, context line, feedback buttons) that close the message."""

    markdown: str
    blocks: list[Block]


# ---- text safety ------------------------------------------------------------------------


def escape(text: str) -> str:
    """Escape `& < >` so nothing in `text` becomes a link, mention or broadcast."""
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def neutralise(text: str) -> str:
    """Text that may carry stored values, made safe for mrkdwn or Markdown while keeping its
    formatting: `& < >` escaped (no `<!here>`, `<@U…>` or `<url|label>`), bare
    `@channel`/`@here`/`@everyone` broken with a zero-width space so they notify nobody, and
    bidirectional controls dropped. For a value on its own, use `shown()`."""
    text = _BIDI.sub("", text)
    return _BROADCAST.sub(lambda m: "@" + _ZWSP + m.group(1), escape(text))


def shown(value: Any, target: Target = "mrkdwn") -> str:
    """A stored value as Slack text: the one way a database value (a cell, a name in the
    answer, the query that quotes it) reaches Slack. Always `neutralise`d (no broadcast,
    mention or link, no bidi controls); then, so that it cannot format or hide a link:

    - `mrkdwn` (section or context text): `* _ ~ `` ` `` become look-alikes (mrkdwn has no
      escape for them), so `*bold*` shows as `∗bold∗`;
    - `markdown` (a streamed answer): Markdown's specials backslash-escaped, so
      `[text](https://x)` shows as written instead of a link hiding its target;
    - `code` (inside a ``` block): triple backticks broken so the block cannot be closed;
    - `plain` (plain_text objects, alt text): only bidi controls dropped, whitespace joined
      (Slack does not parse plain text)."""
    text = value if isinstance(value, str) else cell(value)
    if target == "plain":
        return " ".join(_BIDI.sub("", text).split())
    safe = neutralise(text)
    if target == "code":
        return _defence(safe)
    if target == "markdown":
        return _MARKDOWN_SPECIAL.sub(r"\\\1", safe)
    return safe.translate(_LOOKALIKE)


def to_mrkdwn(markdown: str, values: Sequence[str] = ()) -> str:
    """Model output (Markdown-ish) as safe Slack mrkdwn: `**b**`/headings → `*b*`; the stored
    `values` it quotes are `shown()` as values (they cannot format)."""
    text, held = _hold(markdown, values)
    text = neutralise(text)
    text = _HEADING.sub(r"*\1*", text)
    text = _BOLD.sub(r"*\1*", text)
    return _release(text, held, "mrkdwn")


def to_markdown(answer: str, values: Sequence[str] = ()) -> str:
    """Model output as safe Markdown for streaming: `neutralise`d, no link (brackets escaped
    outside code, so `[text](url)` shows as written), and the stored `values` it quotes
    `shown()` as values. Its bold, headings, lists and code blocks are kept."""
    text, held = _hold(answer, values)
    text = neutralise(text)
    text = "".join(
        piece if is_code else _LINK_OPEN.sub(lambda m: "\\" + m.group(0), piece)
        for piece, is_code in _code_pieces(text)
    )
    return _release(text, held, "markdown")


def stored_values(rows: Sequence[Sequence[Any]], columns: Sequence[str] = ()) -> list[str]:
    """The distinct strings of a result that could format or link (see `_RISKY`)."""
    found: dict[str, None] = {}

    def walk(value: Any) -> None:
        if len(found) >= MAX_HELD_VALUES:
            return
        if isinstance(value, str):
            if value.strip() and _RISKY.search(value):
                found.setdefault(value)
        elif isinstance(value, dict):
            for item in value.values():
                walk(item)
        elif isinstance(value, list | tuple):
            for item in value:
                walk(item)

    walk(list(columns))
    walk(list(rows))
    return list(found)


def _hold(text: str, values: Sequence[str]) -> tuple[str, list[str]]:
    """`text` with each quoted stored value replaced by a placeholder (private-use
    characters), and the values held, in placeholder order."""
    text = _PRIVATE.sub("", text.strip())
    held: list[str] = []
    if not values:
        return text, held
    parts = []
    for value in sorted({v for v in values if v}, key=len, reverse=True):
        if len(value) == 1:  # a lone `*` or `_` only when it stands alone, not the model's own
            parts.append(rf"(?<!\S){re.escape(value)}(?=[\s.,;:!?)]|$)")
        else:
            parts.append(re.escape(value))

    def hold(match: re.Match[str]) -> str:
        held.append(match.group(0))
        return f"\ue000{len(held) - 1}\ue001"

    return re.compile("|".join(parts)).sub(hold, text), held


def _release(text: str, held: list[str], target: Target) -> str:
    """Put the held values back, `shown()` for `target`, or as code inside code."""
    if not held:
        return text
    out = []
    for piece, is_code in _code_pieces(text):
        if is_code:
            inline = not piece.startswith(_FENCE)

            def code(m: re.Match[str], inline: bool = inline) -> str:
                value = shown(held[int(m.group(1))], "code")
                return value.replace("`", "\u02cb") if inline else value

            out.append(_HELD.sub(code, piece))
        else:
            out.append(_HELD.sub(lambda m: shown(held[int(m.group(1))], target), piece))
    return "".join(out)


def _code_pieces(text: str) -> list[tuple[str, bool]]:
    """`text` cut into (piece, is code) at its code blocks and inline code spans."""
    pieces: list[tuple[str, bool]] = []
    at = 0
    for match in _CODE.finditer(text):
        if match.start() > at:
            pieces.append((text[at : match.start()], False))
        pieces.append((match.group(0), True))
        at = match.end()
    if at < len(text) or not pieces:
        pieces.append((text[at:], False))
    return pieces


def _defence(code: str) -> str:
    """Text that cannot close a code block it is put in."""
    return code.replace(_FENCE, "`" + _ZWSP + "``")


def split_text(text: str, limit: int = SECTION_BUDGET) -> list[str]:
    """Cut `text` into pieces of at most `limit` characters, at paragraph, line or word
    boundaries where possible, never inside an `&amp;`-style entity."""
    pieces: list[str] = []
    rest = text
    while len(rest) > limit:
        window = rest[:limit]
        cut = max(window.rfind("\n\n"), window.rfind("\n"), window.rfind(" "))
        if cut < limit // 2:
            cut = limit
        amp = window.rfind("&", max(0, cut - 6), cut)
        if amp != -1 and ";" not in window[amp:cut]:
            cut = amp
        pieces.append(rest[:cut].rstrip())
        rest = rest[cut:].lstrip("\n ")
    if rest or not pieces:
        pieces.append(rest)
    return pieces


def truncate(text: str, limit: int) -> str:
    """At most `limit` characters, with `…` where cut; never inside an `&amp;`-style entity."""
    if len(text) <= limit:
        return text
    kept = text[: limit - 1]
    amp = kept.rfind("&", max(0, len(kept) - 6))
    if amp != -1 and ";" not in kept[amp:]:
        kept = kept[:amp]
    return kept.rstrip() + "…"


# ---- tables -----------------------------------------------------------------------------


def cell(value: Any) -> str:
    """One value as table text: no newlines, a node or relationship by its names first, JSON
    for other lists and maps, blank for null."""
    if value is None:
        return ""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float):
        return f"{value:.6g}"
    if isinstance(value, dict) and ({"_labels", "_type", "_nodes"} & value.keys()):
        text = entity_text(value)  # a node, relationship or path: by its names, not its map
    elif isinstance(value, dict | list | tuple):
        text = json.dumps(value, ensure_ascii=False, default=str)
    else:
        text = str(value)
    return " ".join(text.split())


def table_preview(
    columns: Sequence[str],
    rows: Sequence[Sequence[Any]],
    *,
    max_rows: int = 15,
    max_cell: int = MAX_CELL_WIDTH,
    max_width: int = MAX_TABLE_WIDTH,
) -> str:
    """A fixed-width text table of the first `max_rows` rows, cell widths capped (unescaped)."""
    if not columns:
        return ""
    shown = [[cell(v) for v in row] for row in rows[:max_rows]]
    per_column = max(6, min(max_cell, (max_width - 2 * (len(columns) - 1)) // len(columns)))
    widths = []
    for i, name in enumerate(columns):
        longest = max([len(name)] + [len(r[i]) for r in shown if i < len(r)])
        widths.append(min(longest, per_column))

    def line(values: Sequence[str]) -> str:
        padded = [truncate(v, w).ljust(w) for v, w in zip(values, widths, strict=False)]
        return "  ".join(padded).rstrip()

    out = [line(list(columns)), "  ".join("-" * w for w in widths)]
    out.extend(line(r + [""] * (len(columns) - len(r))) for r in shown)
    return "\n".join(out)


def csv_content(columns: Sequence[str], rows: Sequence[Sequence[Any]]) -> str:
    buffer = io.StringIO()
    writer = csv.writer(buffer)
    writer.writerow(columns)
    for row in rows:
        writer.writerow(
            [json.dumps(v, default=str) if isinstance(v, dict | list) else v for v in row]
        )
    return buffer.getvalue()


# ---- blocks -----------------------------------------------------------------------------


def section(mrkdwn: str) -> Block:
    return {"type": "section", "text": {"type": "mrkdwn", "text": mrkdwn[:SECTION_CHARS]}}


def context(mrkdwn: str) -> Block:
    return {"type": "context", "elements": [{"type": "mrkdwn", "text": mrkdwn[:SECTION_CHARS]}]}


def code_sections(code: str, *, label: str = "") -> list[Block]:
    """Code (unescaped) in code-block sections, split to fit; `label` goes above the first.
    The code is `shown()` as code: the table and the query quote stored values."""
    safe = shown(code, "code")
    budget = SECTION_BUDGET - len(label) - 10
    blocks = []
    for i, piece in enumerate(split_text(safe, budget)):
        head = f"{label}\n" if label and i == 0 else ""
        blocks.append(section(f"{head}{_FENCE}\n{piece}\n{_FENCE}"))
    return blocks


def _seconds(result: AgentResult) -> str:
    total = result.total_ms / 1000
    return f"{total:.1f} s" if total < 60 else f"{total / 60:.1f} min"


def context_line(result: AgentResult, *, teach: bool = True) -> str:
    attempts = max(1, len(result.attempts))
    parts = [f"{attempts} attempt{'s' if attempts != 1 else ''}", _seconds(result)]
    if result.reused_example_id is not None:
        parts[0] = "verified query reused"
    if teach:
        parts.append(TEACH_HINT)
    return " · ".join(parts)


def answer_message(
    result: AgentResult, *, rows_shown: int = 15, csv_upload: bool = True
) -> Rendered:
    """The bot's answer: text, a table preview, the Cypher and a context line.

    Within `BLOCK_TEXT_BUDGET`: past it the table preview gives way to the CSV (or, with
    uploads off, to a follow-up message), and the answer text continues in follow-up
    messages; the first message keeps the query, the context line and the feedback buttons,
    since 👍 and the buttons act on it."""
    if result.outcome == "failed":
        return error_message(result.error_kind or "failed", reference_id(), result.answer)
    values = stored_values(result.rows, result.columns)
    answer = to_mrkdwn(result.answer or "I have no answer to that.", values)
    answer_pieces = split_text(answer)
    if len(answer_pieces) > MAX_ANSWER_SECTIONS:
        answer_pieces = answer_pieces[:MAX_ANSWER_SECTIONS]
        answer_pieces[-1] = truncate(answer_pieces[-1], SECTION_BUDGET - 40) + "\n_(answer cut)_"
    said: list[Block] = [section(p) for p in answer_pieces]
    if result.outcome == "needs_clarification" and (buttons := choice_buttons(result.choices)):
        said.append(buttons)
    if result.outcome in ("out_of_scope", "needs_clarification") and result.suggestions:
        bullets = "\n".join(f"• {neutralise(s)}" for s in result.suggestions[:5])
        said.append(section(truncate(f"*You could ask:*\n{bullets}", SECTION_BUDGET)))
    table: list[Block] = []
    note: str | None = None
    all_rows = len(result.rows)
    if result.columns and result.rows:
        table = code_sections(table_preview(result.columns, result.rows, max_rows=rows_shown))[:3]
        if all_rows > rows_shown or result.truncated:
            note = f"Showing {min(rows_shown, all_rows)} of {all_rows}"
            note += "+ rows" if result.truncated else " rows"
            note += " — the full result is attached as CSV." if csv_upload else "."
    query = code_sections(result.cypher, label="*Query*")[:4] if result.cypher else []
    if result.tool:
        # A graph tool's fixed read, not a statement anyone wrote: named, not shown as Cypher.
        query = [context(f"Answered by the graph tool *{shown(result.tool)}* (no query written).")]
    tail: list[Block] = []
    if result.outcome in ("answered", "no_data"):
        tail.append(context(context_line(result, teach=result.outcome == "answered")))
    if result.outcome == "answered" and result.cypher:
        tail.append(feedback_buttons())
    fallback = _fallback(result.answer)
    wants_csv = csv_upload and note is not None
    blocks = [*said, *table, *([context(note)] if note else []), *query, *tail]
    if block_text(blocks) <= BLOCK_TEXT_BUDGET:
        rest = _fit(blocks[len(answer_pieces) :])
        stream = Streamed(to_markdown(result.answer or "I have no answer to that.", values), rest)
        return Rendered(
            fallback, _fit(blocks), csv=_csv(result) if wants_csv else None, stream=stream
        )
    # Over Slack's total: the table leaves the message first, then the answer continues below.
    more: list[Rendered] = []
    if table and csv_upload:
        note, wants_csv = f"The {all_rows} rows are in the attached CSV.", True
    elif table:
        more.append(Rendered("The result table", [*table, *([context(note)] if note else [])]))
    query = query[:2]
    fixed = [*([context(note)] if note else []), *query, *tail]
    room = BLOCK_TEXT_BUDGET - block_text(fixed) - 100
    first: list[Block] = []
    while said and block_text([*first, said[0]]) <= room:
        first.append(said.pop(0))
    if said:
        first.append(context("_(continued in the next message)_"))
    chunks: list[list[Block]] = []
    for block in said:
        if not chunks or block_text([*chunks[-1], block]) > BLOCK_TEXT_BUDGET - 100:
            chunks.append([])
        chunks[-1].append(block)
    more[:0] = [Rendered(f"{fallback} (continued)", chunk) for chunk in chunks]
    return Rendered(
        fallback, _fit([*first, *fixed]), csv=_csv(result) if wants_csv else None, more=tuple(more)
    )


def with_note(message: Rendered, mrkdwn: str) -> Rendered:
    """`message` with a context line on top (a word about how the question was read)."""
    stream = message.stream
    if stream is not None:  # streamed, the note closes the message with the other blocks
        stream = replace(stream, blocks=_fit([context(mrkdwn), *stream.blocks]))
    return replace(message, blocks=_fit([context(mrkdwn), *message.blocks]), stream=stream)


def _csv(result: AgentResult) -> str:
    return csv_content(result.columns, result.rows)


def block_text(blocks: Sequence[Block]) -> int:
    """The characters of text `blocks` carry (what Slack's total limit counts)."""
    total = 0
    for block in blocks:
        total += len((block.get("text") or {}).get("text", ""))
        total += sum(
            len(e.get("text", ""))
            for e in block.get("elements") or ()
            if "text" in e and isinstance(e["text"], str)
        )
    return total


FEEDBACK_ACTION = "answer_feedback"
CHOICE_ACTION = "answer_choice"
"""Prefix of the "did you mean…?" buttons' action_ids (`answer_choice:0`…; unique per block)."""
MAX_CHOICE_BUTTONS = 6
"""Up to five candidates and "none of these"."""
BUTTON_TEXT = 75
BUTTON_VALUE = 2000
"""Slack's limits on a button's text and value."""


def choice_buttons(choices: Sequence[Choice]) -> Block | None:
    """One button per choice of a "did you mean…?" (bot/slack/listeners/choices.py), its
    value the choice itself as JSON; None when there is none to show."""
    elements = []
    for index, choice in enumerate(choices[:MAX_CHOICE_BUTTONS]):
        value = json.dumps(choice.to_dict(), ensure_ascii=False, separators=(",", ":"))
        if len(value) > BUTTON_VALUE:
            continue
        elements.append(
            {
                "type": "button",
                "action_id": f"{CHOICE_ACTION}:{index}",
                "text": {
                    "type": "plain_text",
                    "text": truncate(shown(choice.text, "plain"), BUTTON_TEXT) or "?",
                },
                "value": value,
            }
        )
    return {"type": "actions", "block_id": "choices", "elements": elements} if elements else None


def feedback_buttons() -> Block:
    """Slack's feedback buttons for AI answers: "Good answer" teaches like 👍, "Wrong" counts
    like 👎 (bot/slack/listeners/feedback.py)."""
    return {
        "type": "context_actions",
        "elements": [
            {
                "type": "feedback_buttons",
                "action_id": FEEDBACK_ACTION,
                "positive_button": {
                    "text": {"type": "plain_text", "text": "Good answer"},
                    "value": "good",
                    "accessibility_label": "Mark this answer right: its query is reused",
                },
                "negative_button": {
                    "text": {"type": "plain_text", "text": "Wrong"},
                    "value": "bad",
                    "accessibility_label": "Mark this answer wrong",
                },
            }
        ],
    }


def _fit(blocks: list[Block]) -> list[Block]:
    """At most 50 blocks, keeping the last (the context line)."""
    if len(blocks) <= MAX_BLOCKS:
        return blocks
    return [*blocks[: MAX_BLOCKS - 2], context("_(message cut to fit Slack)_"), blocks[-1]]


def _fallback(text: str) -> str:
    return truncate(neutralise(" ".join(text.split())), FALLBACK_CHARS) or "Answer"


# ---- notices and errors -----------------------------------------------------------------

BOT_FAILURE_TEXT: dict[str, str] = {
    "busy": "I'm answering a lot of questions right now. Please ask again in a minute.",
}
"""Failures of the bot itself; the agent's own are worded once, in
`graph_agent.errors.FAILURE_TEXT`."""
FAILURE_TEXTS: dict[str, str] = {**dict(FAILURE_TEXT.items()), **BOT_FAILURE_TEXT}
EXPLAINED_FAILURES = frozenset({"attempts_exhausted", "query_error"})
"""Failures the agent explains itself (what it tried, what to change): its words are shown."""
DEFAULT_ERROR = FAILURE_TEXT["internal"]
# Text that only engines, drivers and Python write; a reply that would carry it gets
# DEFAULT_ERROR instead.
_INTERNAL_MARKERS = (
    "errMsg",
    "errCtx",
    "Traceback",
    "ResponseError",
    "Neo.ClientError",
    "RO_QUERY",
)


def reference_id() -> str:
    """A short id to quote to an admin; it is also logged."""
    return secrets.token_hex(3)


def error_message(kind: str, reference: str, detail: str | None = None) -> Rendered:
    """A kind, specific error: what happened, what to try, a reference id. Never internals.

    `detail` is the agent's own explanation, used for failures the table does not cover
    (e.g. attempts exhausted: what was tried and what to change); it is neutralised."""
    if detail and any(marker in detail for marker in _INTERNAL_MARKERS):
        detail = None  # engine or Python internals belong in the log and the trace, not here
    fixed = None if kind in EXPLAINED_FAILURES else FAILURE_TEXTS.get(kind)
    explained = neutralise(detail) if detail else None
    text = fixed or explained or FAILURE_TEXTS.get(kind) or DEFAULT_ERROR
    return Rendered(
        text=truncate(text.replace("`", ""), FALLBACK_CHARS),
        blocks=[section(f":warning: {text}"), context(f"Reference: `{reference}`")],
    )


def notice(mrkdwn: str) -> Rendered:
    """A short message the bot wrote itself (guardrails, help); `mrkdwn` is trusted."""
    return Rendered(
        text=truncate(mrkdwn.replace("*", "").replace("`", ""), FALLBACK_CHARS),
        blocks=[section(p) for p in split_text(mrkdwn)][:MAX_BLOCKS],
    )


def help_message(suggestions: Sequence[str], *, description: str | None = None) -> Rendered:
    """What the bot answers, with example questions."""
    lines = ["Ask me a question about the graph in plain words, and I'll query it for you."]
    if description:
        lines.append(neutralise(truncate(description, 600)))
    if suggestions:
        lines.append("*For example:*\n" + "\n".join(f"• {neutralise(s)}" for s in suggestions[:5]))
    lines.append("Follow up in the thread, and react :+1: to a right answer to teach me.")
    return notice("\n\n".join(lines))
