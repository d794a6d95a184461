"""Every prompt the agent sends, as templates: stable part first, the question last."""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, SystemMessage

from graph_agent.graphdb.protocol import GraphSchema
from graph_agent.graphdb.schema import display_property
from graph_agent.tool_routing import is_tool_note
from memory.types import Example, Turn


@dataclass(frozen=True)
class PromptTemplate:
    """A system part (stable across questions, so servers can cache it) and a user part."""

    system: str
    user: str

    def render(self, **values: str) -> list[BaseMessage]:
        """Messages with `{name}` placeholders filled (literal braces are doubled)."""
        return [
            SystemMessage(self.system.format_map(values)),
            HumanMessage(self.user.format_map(values)),
        ]


GUARD = PromptTemplate(
    system="""\
You are the front desk of a bot that answers questions about one graph database.
The graph holds: {description}

Decide whether the user's question can be answered from this graph.
- "in_scope": the graph could answer it, even partly or with a count of zero. Lean towards
  in scope for anything about the things and relationships above.
- "out_of_scope": it is about something else entirely (general knowledge, chit-chat,
  weather, coding help, other data sources).
- "needs_clarification": it is about the graph but too vague to turn into one query
  (for example "tell me about it" with nothing to refer to).

When previous turns are given, first rewrite the latest question into a standalone question
that names everything it refers to and keeps every condition of the turns it builds on.
Replace every he, she, it, they, them, those, these or "that one" with the name or the
things it stands for in the previous turns.
{follow_up_example}
Without previous turns, the standalone question is the question itself.

Reply with one JSON object and nothing else:
{{"standalone_question": "...", "scope": "in_scope" | "out_of_scope" | "needs_clarification",
 "reason": "short reason", "clarification": "question to ask back, or empty"}}""",
    user="""{history}Question: {question}""",
)

FOLLOW_UP_EXAMPLE = """\
Example ({name} stands for the {start}'s {prop} given in the earlier turn):
after "Which {end} nodes are linked to the {start} {name}?",
the follow-up "and how many of them are there?" becomes
"How many {end} nodes are linked to the {start} {name}?", and
"what else is linked to it?" becomes "What else is linked to the {start} {name}?"."""

RESOLVE = """\
Your standalone question still says {words} without naming what that means, so it cannot be \
read without the previous turns. Replace those words with the names or things they stand for \
in the previous turns and reply again with the whole JSON object."""

HISTORY_TURN = """\
Turn {n}:
  question: {question}
  standalone question: {standalone_question}
  cypher: {cypher}
  answer: {answer}
"""

GENERATE = PromptTemplate(
    system="""\
You write one read-only Cypher statement that answers a question about a graph database.
Database: {dialect}.

Rules:
- Use only the labels, relationship types, properties and directions in the schema below.
- Read only: MATCH, OPTIONAL MATCH, WITH, WHERE, RETURN, ORDER BY, SKIP, LIMIT, UNWIND.
- Return properties, not whole nodes or relationships. For a node, return the property
  marked "(identifies it)" in the schema.
- For "which", "who" and superlative questions (most, least, oldest, highest…), return the
  property that identifies the thing asked for together with the measured value.
- Sort directions: oldest, earliest, first, lowest = ascending (smallest year or date
  first); newest, latest, most recent, highest = descending.
- Aggregate in the query (count, sum, avg, collect) rather than returning rows to count.
- When you sort on a property, filter out nulls first: WHERE x.prop IS NOT NULL.
- Name returned columns after what they hold, with words from the schema.
- Return at most {row_limit} rows; add LIMIT when the question asks for a top or a sample.
- When a value hint gives the stored value, compare with it exactly: {{prop: "Stored Value"}}.
  Otherwise compare text case-insensitively: WHERE toLower(n.prop) = toLower("text").
  Never write toLower() inside {{...}}.
- One statement, no semicolon, no comments.
- If the schema cannot answer the question, reply NO_DATA: followed by what is missing.

Reply with the statement in a ```cypher code block and nothing else.

Schema:
{schema}""",
    user="""{examples}{hints}{paths}{previous}Question: {question}""",
)

PREVIOUS_BLOCK = """\
This question follows up on the previous one in the conversation. Its statement (reuse its
patterns and conditions, change only what this question changes):
Previous question: {question}
```cypher
{cypher}
```
"""

EXAMPLES_BLOCK = """\
Verified examples for similar questions:
{items}"""

EXAMPLE_ITEM = """\
Question: {question}
```cypher
{cypher}
```
"""

HINTS_BLOCK = """\
Stored values the question may refer to (when one is meant, use it exactly as written here):
{items}"""

PATHS_BLOCK = """\
Paths the schema has from those values to what the question asks about (start from one):
{items}"""


def render_paths(patterns: Sequence[str]) -> str:
    """Ready MATCH patterns as lines, or empty."""
    if not patterns:
        return ""
    return PATHS_BLOCK.format(items="".join(f"- {p}\n" for p in patterns)) + "\n"


CORRECT = PromptTemplate(
    system=GENERATE.system,
    user="""{examples}{hints}{paths}{previous}Question: {question}

This statement did not work:
```cypher
{cypher}
```
Problem: {error}

Write a corrected statement that answers the question.""",
)


EVALUATE = PromptTemplate(
    system="""\
You check whether the result of a database query answers a question, and if it does, you
answer the question from the result alone.

- Use only the rows shown. Never add facts, names or numbers that are not in them.
- Be concise: one to three sentences, or a short list. Name the numbers.
- When there are rows, they are the answer: state what they say (list the names, give the
  counts), even when the question asks for things that lack something.
- When the result is empty and the query clearly asked the right thing, set
  answers_question to true and answer "Nothing in the graph matches."
- If the rows do not answer the question (wrong columns, wrong filter, a likely misspelt
  name, missing grouping), set answers_question to false and explain in feedback how the
  query should change.

Reply with one JSON object and nothing else:
{{"answers_question": true | false, "answer": "the answer, or empty",
 "feedback": "what to change in the query, or empty"}}""",
    user="""\
Query:
```cypher
{cypher}
```
Result ({row_note}):
{rows}

Question: {question}""",
)

NATURAL_WORDING = PromptTemplate(
    system="""\
You reword questions about a database so that they read the way someone would ask them.
Each question below was written by a program from the database's names and reads stiffly.

For each numbered question, write one natural question that:
- asks exactly the same thing: the same things, the same conditions, the same numbers;
- keeps every name, value, number and date exactly as written (same spelling);
- adds nothing and leaves nothing out.

Reply with one JSON object and nothing else, mapping each question's number to its
rewording: {{"1": "...", "2": "..."}}""",
    user="""{questions}""",
)
"""One pass at start-up over the schema examples' mechanical questions (SCHEMA_EXAMPLES_WORDING
=llm); names no graph, so a small model copies nothing but the rule."""


CHOOSE_VALUE = PromptTemplate(
    system="""\
You match a word in a user's question to one of the values a database stores. The database
does not store the word itself. Choose the stored value that means the same thing (a
synonym, the general term, an abbreviation, a code, a translation or a misspelling). If no
stored value means it, choose 0.

Reply with one JSON object and nothing else: {{"choice": <number>}}""",
    user="""\
Question: {question}
The word: {value} (a {label}'s {prop})
Stored values:
{values}
0. none of them""",
)
"""value-chosen's first question (graph_agent/repair/choices.py): a numbered list, because a
1.5B model asked to write the value back mostly wrote the user's word again."""

CONFIRM_VALUE = PromptTemplate(
    system="""\
You check what a user means.

Reply with one JSON object and nothing else: {{"means": true}} or {{"means": false}}""",
    user="""\
Question: {question}
The database stores the {what} as {stored}. When the user says {value}, do they mean {stored}?""",
)
"""value-chosen's second question: a small model picks some value even when none is meant
("toys" → 'Produce'); asked about its pick in the question's words, it says no."""


REPAIR = """\
Your reply could not be read as the JSON object asked for ({error}).
Reply again with only that JSON object: no code fences, no text before or after."""


def follow_up_example(schema: GraphSchema) -> str:
    """The guard's follow-up example in the connected graph's own labels (placeholders when
    the graph is empty), so a small model copies nothing of another graph."""
    by_name = {label.name: label for label in schema.labels}
    linked = [r for r in schema.relationships if r.start != r.end and r.start in by_name]
    if linked:
        rel = max(linked, key=lambda r: r.count)
        start, end = by_name[rel.start], rel.end
    elif schema.labels:
        start, end = max(schema.labels, key=lambda label: label.count), "other"
    else:
        return FOLLOW_UP_EXAMPLE.format(start="<Label>", end="<Other>", prop="name", name="<name>")
    prop = display_property(start) or "name"
    return FOLLOW_UP_EXAMPLE.format(start=start.name, end=end, prop=prop, name=f"<{prop}>")


def render_history(turns: Sequence[Turn], max_chars: int) -> str:
    """Previous turns, newest kept when the text is too long; empty without turns."""
    blocks: list[str] = []
    used = 0
    for n, turn in reversed(list(enumerate(turns, start=1))):
        block = HISTORY_TURN.format(
            n=n,
            question=turn.question,
            standalone_question=turn.standalone_question,
            cypher=(turn.cypher or "(none)").replace("\n", " "),
            answer=turn.answer[:300].replace("\n", " "),
        )
        if blocks and used + len(block) > max_chars:
            break
        blocks.append(block)
        used += len(block)
    if not blocks:
        return ""
    return "Previous turns:\n" + "".join(reversed(blocks)) + "\n"


def render_examples(examples: Sequence[Example]) -> str:
    """The few-shot block, or empty."""
    if not examples:
        return ""
    items = "".join(
        EXAMPLE_ITEM.format(question=e.question, cypher=e.cypher.strip()) for e in examples
    )
    return EXAMPLES_BLOCK.format(items=items) + "\n"


def render_hints(hints: Sequence[tuple[str, str, str]]) -> str:
    """(label, property, value) triples as `(:Label {prop: "value"})` lines, or empty."""
    if not hints:
        return ""
    items = "".join(
        f"- (:{label} {{{prop}: {json.dumps(value, ensure_ascii=False)}}})\n"
        for label, prop, value in hints
    )
    return HINTS_BLOCK.format(items=items) + "\n"


def resolve_messages(
    messages: list[BaseMessage], reply: str, words: Sequence[str]
) -> list[BaseMessage]:
    """The guard prompt, its reply, and a request to resolve the words still leaning on history."""
    named = ", ".join(f'"{w}"' for w in dict.fromkeys(words))
    return [*messages, AIMessage(reply), HumanMessage(RESOLVE.format(words=named))]


def render_rows(
    columns: Sequence[str], rows: Sequence[Sequence[Any]], *, max_rows: int, max_chars: int
) -> tuple[str, int]:
    """Rows as one JSON array per line under a header, within both caps; (text, rows shown)."""
    lines = [json.dumps(list(columns), ensure_ascii=False)]
    used = len(lines[0])
    shown = 0
    for row in rows[:max_rows]:
        line = json.dumps(list(row), ensure_ascii=False, default=str)
        if used + len(line) + 1 > max_chars:
            break
        lines.append(line)
        used += len(line) + 1
        shown += 1
    return "\n".join(lines), shown


def repair_messages(messages: list[BaseMessage], reply: str, error: str) -> list[BaseMessage]:
    """The original prompt, the unreadable reply, and a request to fix it."""
    return [*messages, AIMessage(reply), HumanMessage(REPAIR.format(error=error[:300]))]


def render_previous(history: Sequence[Turn]) -> str:
    """The last turn's standalone question and statement, for a follow-up's generation: most
    follow-ups ("and which of those are tier 1?") change one condition of that statement.
    Empty without history, or when the last turn ran no statement (a graph tool answered it)."""
    last = history[-1] if history else None
    if last is None or not last.cypher or is_tool_note(last.cypher):
        # A graph tool's note is no statement to build on (the guard still sees it).
        return ""
    question = last.standalone_question or last.question
    return PREVIOUS_BLOCK.format(question=question, cypher=last.cypher.strip()) + "\n"
