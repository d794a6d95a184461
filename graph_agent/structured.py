"""Structured (JSON) replies that work on any server: ask in words, parse leniently, repair once."""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Literal, TypeVar

from langchain_core.language_models.chat_models import BaseChatModel
from langchain_core.messages import BaseMessage
from pydantic import BaseModel

from graph_agent.llm import LLMCall, call_llm
from graph_agent.prompts import repair_messages

logger = logging.getLogger(__name__)
T = TypeVar("T")

CUT_OFF = (
    "your reply was cut off at the length limit; reply shorter: the same JSON keys, "
    "at most one or two short sentences in each text field"
)
"""The repair reason for a JSON reply that stopped at the token cap."""


class Evaluation(BaseModel):
    """The evaluate+answer step's verdict on a query result."""

    answers_question: bool
    answer: str = ""
    feedback: str = ""


async def ask_structured(
    model: BaseChatModel,
    messages: list[BaseMessage],
    parse: Callable[[str], T],
    *,
    step: str,
    timeout_s: float,
    json_mode: Literal["prompt", "json_object"] = "prompt",
    max_tokens: int | None = None,
    salvage: Callable[[str], T | None] | None = None,
) -> tuple[T | None, list[LLMCall]]:
    """Call `model` and `parse` its reply; on a parse error ask once more with the error.

    Replies are capped at `max_tokens` (None: the step's cap); a reply cut off there that
    does not parse is first offered to `salvage` (what the step can use of a reply that
    stopped halfway; None: nothing), then repaired with "reply shorter". Returns (None, calls)
    when both replies are unreadable, so the caller applies its safe fallback. LLM errors
    (timeouts, HTTP failures) propagate.
    """
    runnable = (
        model.bind(response_format={"type": "json_object"}) if json_mode == "json_object" else model
    )
    reply, first = await call_llm(
        runnable, messages, step=step, timeout_s=timeout_s, max_tokens=max_tokens
    )
    try:
        return parse(reply), [first]
    except Exception as exc:  # any parse failure is the model's, not ours
        error = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        if first.cut_off:
            error = CUT_OFF
            if salvage is not None and (kept := salvage(reply)) is not None:
                logger.info("%s reply was cut off; kept what it had decided", step)
                return kept, [first]
        logger.info("%s reply was not valid JSON (%s); asking once more", step, error[:120])
    repaired, second = await call_llm(
        runnable,
        repair_messages(messages, reply, error),
        step=f"{step}:repair",
        timeout_s=timeout_s,
        max_tokens=max_tokens,
    )
    try:
        return parse(repaired), [first, second]
    except Exception:
        logger.warning("%s reply unreadable after one repair; using the fallback", step)
        return None, [first, second]
