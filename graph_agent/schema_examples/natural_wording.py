"""One optional LLM pass that rewords the schema examples' mechanical questions naturally."""

from __future__ import annotations

import logging
import re
from collections.abc import Sequence
from dataclasses import replace
from typing import Literal

from langchain_core.language_models.chat_models import BaseChatModel
from pydantic import RootModel

from graph_agent import prompts
from graph_agent.errors import LLMError
from graph_agent.schema_examples.sampling import SchemaExample
from graph_agent.structured import ask_structured
from guardrails import parse_json_object, tokenize

logger = logging.getLogger(__name__)

BATCH_SIZE = 10
"""Questions per call: few calls at start-up, and a reply (~250 tokens) a 1.5B model on a CPU
writes in ~25 s, inside the default LLM_TIMEOUT_S of 60 s (measured: ~11 tokens/s generation)."""
TOKENS_PER_QUESTION = 60
"""Reply budget per question (a reworded question is ~20-30 tokens, plus its JSON key)."""
MAX_CHARS = 300
"""A rewording longer than this, or three times its plain question, is rambling."""


class Rewordings(RootModel[dict[str, str]]):
    """The model's reply: question number → reworded question."""


def parse_rewordings(reply: str) -> dict[str, str]:
    """The number → rewording map from a reply (lenient about fences and quotes); raises on
    anything that is not one JSON object of strings, so the caller can ask once more."""
    return parse_json_object(reply, Rewordings).root


def kept_values(example: SchemaExample) -> list[str]:
    """The literal values of the example's Cypher that its plain question names: a rewording
    must name every one of them, or it asks about something else."""
    values = []
    for token in tokenize(example.cypher):
        if token.kind in ("string", "number") and token.value.strip():
            value = token.value.strip()
            if _names(example.question, value) and value not in values:
                values.append(value)
    return values


def _names(question: str, value: str) -> bool:
    """`value` occurs in `question` as a whole word or phrase, whatever its case."""
    return re.search(rf"(?<!\w){re.escape(value)}(?!\w)", question, re.IGNORECASE) is not None


def acceptable(example: SchemaExample, reworded: str) -> bool:
    """A rewording is kept only when it is a short non-empty question that still names every
    value the plain question names; otherwise the plain question stays."""
    text = reworded.strip()
    if not text or text == example.question:
        return False
    if len(text) > min(MAX_CHARS, 3 * len(example.question)):
        return False
    return all(_names(text, value) for value in kept_values(example))


async def natural_questions(
    examples: Sequence[SchemaExample],
    model: BaseChatModel,
    *,
    timeout_s: float,
    json_mode: Literal["prompt", "json_object"] = "prompt",
    batch_size: int = BATCH_SIZE,
) -> list[SchemaExample]:
    """`examples` with each question reworded by `model` where the rewording passes
    `acceptable`; Cypher, shape and order unchanged. One call per `batch_size` questions; a
    batch whose call fails or whose reply is unreadable keeps its plain questions (logged,
    never raised: the examples are verified either way)."""
    result = list(examples)
    reworded = refused = 0
    for start in range(0, len(result), batch_size):
        batch = result[start : start + batch_size]
        numbered = "\n".join(f"{i}. {e.question}" for i, e in enumerate(batch, 1))
        try:
            replies, _calls = await ask_structured(
                model,
                prompts.NATURAL_WORDING.render(questions=numbered),
                parse_rewordings,
                step="natural_wording",
                timeout_s=timeout_s,
                json_mode=json_mode,
                max_tokens=TOKENS_PER_QUESTION * len(batch) + 50,
            )
        except LLMError as exc:  # LLMTimeoutError included
            logger.warning("schema example rewording failed, plain questions kept: %s", exc)
            continue
        if replies is None:
            continue
        for i, example in enumerate(batch, 1):
            text = replies.get(str(i), "")
            if acceptable(example, text):
                result[start + i - 1] = replace(example, question=text.strip())
                reworded += 1
            elif text.strip() and text.strip() != example.question:
                refused += 1
    logger.info(
        "schema example questions: %d reworded, %d rewordings refused, %d plain",
        reworded,
        refused,
        len(result) - reworded,
    )
    return result
