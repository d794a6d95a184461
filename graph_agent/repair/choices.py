"""One short question to the model behind a rule: which stored value the user's word means.

A small model given a list of stored values inside a correction note rewrites its whole
statement and, on the dev splits, mostly sent the old one back unchanged ('Drinks' with
'Beverages' listed; 'ISL' with 'IS' offered). Asked only to pick one value from the list, it
has one thing to do; the rule then puts the value into the statement itself. Rules reach the
model only through a `Chooser`, so they can be tested without one.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from typing import Protocol

from pydantic import BaseModel

from graph_agent.context import Context
from graph_agent.errors import LLMError
from graph_agent.llm import LLMCall
from graph_agent.prompts import CHOOSE_VALUE
from graph_agent.schema_examples import literal
from graph_agent.structured import ask_structured
from guardrails import parse_json_object

logger = logging.getLogger(__name__)

CHOICE_MAX_TOKENS = 60
"""A reply is one short JSON object: `{"value": "Dairy Products"}` is about 10 tokens."""


class Choice(BaseModel):
    value: str | None = None


class Chooser(Protocol):
    async def choose(
        self, question: str, label: str, prop: str, value: str, stored: Sequence[str]
    ) -> tuple[str | None, list[LLMCall]]:
        """The stored value (written as stored) the question means by `value`, or None; and
        the calls it took. Raises nothing: a failed call is no choice."""
        ...


class ModelChooser:
    """Asks the run's fast model, within the question's deadline."""

    def __init__(self, ctx: Context) -> None:
        self._ctx = ctx

    async def choose(
        self, question: str, label: str, prop: str, value: str, stored: Sequence[str]
    ) -> tuple[str | None, list[LLMCall]]:
        ctx = self._ctx
        if ctx.llms is None:
            return None, []
        messages = CHOOSE_VALUE.render(
            question=question,
            label=label,
            prop=prop,
            value=literal(value),
            values=", ".join(map(literal, stored)),
        )
        try:
            choice, calls = await ask_structured(
                ctx.llms.fast,
                messages,
                lambda reply: parse_json_object(reply, Choice),
                step="choose_value",
                timeout_s=max(ctx.remaining_s(), 0.001),
                json_mode=ctx.config.json_mode,
                max_tokens=CHOICE_MAX_TOKENS,
            )
        except LLMError:
            logger.info("the value choice failed; no choice", exc_info=True)
            return None, []
        return as_stored(choice.value if choice else None, stored), calls


def as_stored(picked: str | None, stored: Sequence[str]) -> str | None:
    """`picked` written as one of `stored` (case and quotes aside), or None: a value the
    model made up is no choice."""
    if not picked:
        return None
    key = picked.strip().strip("'\"").casefold()
    return next((v for v in stored if v.casefold() == key), None)
