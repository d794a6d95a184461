"""Two short questions to the model behind a rule: which stored value the user's word means.

A small model given a list of stored values inside a correction note rewrites its whole
statement and, on the dev splits, mostly sent the old one back unchanged ('Drinks' with
'Beverages' listed; 'ISL' with 'IS' offered). Asked only to pick a number from the list, it
picks well when one value is meant, and picks one anyway when none is ("toys" → 'Produce');
asked then whether the user means its pick, in the question's words, it says no to those. The
rule puts a confirmed value into the statement itself. Rules reach the model only through a
`Chooser`, so they can be tested without one.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from typing import Protocol, TypeVar

from langchain_core.messages import BaseMessage
from pydantic import BaseModel

from graph_agent.context import Context
from graph_agent.errors import LLMError
from graph_agent.llm import LLMCall
from graph_agent.prompts import CHOOSE_VALUE, CONFIRM_VALUE
from graph_agent.schema_examples import literal
from graph_agent.structured import ask_structured
from guardrails import name_words, parse_json_object

logger = logging.getLogger(__name__)
T = TypeVar("T", bound=BaseModel)

CHOICE_MAX_TOKENS = 30
"""Each reply is one short JSON object: `{"choice": 3}`, `{"means": true}`."""


class Choice(BaseModel):
    choice: int | None = None


class Meaning(BaseModel):
    means: bool = False


class Chooser(Protocol):
    async def choose(
        self, question: str, label: str, prop: str, value: str, stored: Sequence[str]
    ) -> tuple[str | None, list[LLMCall]]:
        """The stored value (written as stored) the question means by `value`, or None; and
        the calls it took. Raises nothing: a failed call is no choice."""
        ...


class ModelChooser:
    """Asks the run's fast model (a pick from a numbered list, then whether it is meant),
    within the question's deadline."""

    def __init__(self, ctx: Context) -> None:
        self._ctx = ctx

    async def choose(
        self, question: str, label: str, prop: str, value: str, stored: Sequence[str]
    ) -> tuple[str | None, list[LLMCall]]:
        if self._ctx.llms is None or not stored:
            return None, []
        calls: list[LLMCall] = []
        try:
            choice = await self._ask(
                "choose_value",
                CHOOSE_VALUE.render(
                    question=question,
                    label=label,
                    prop=prop,
                    value=literal(value),
                    values="\n".join(f"{i}. {v}" for i, v in enumerate(stored, 1)),
                ),
                Choice,
                calls,
            )
            number = choice.choice if choice else None
            if number is None or not 1 <= number <= len(stored):
                return None, calls
            picked = stored[number - 1]
            what = " ".join([label, *(w.lower() for w in name_words(prop))])
            meaning = await self._ask(
                "confirm_value",
                CONFIRM_VALUE.render(
                    question=question, what=what, stored=literal(picked), value=literal(value)
                ),
                Meaning,
                calls,
            )
        except LLMError:
            logger.info("the value choice failed; no choice", exc_info=True)
            return None, calls
        return (picked if meaning is not None and meaning.means else None), calls

    async def _ask(
        self, step: str, messages: list[BaseMessage], model: type[T], calls: list[LLMCall]
    ) -> T | None:
        ctx = self._ctx
        assert ctx.llms is not None
        reply, spent = await ask_structured(
            ctx.llms.fast,
            messages,
            lambda text: parse_json_object(text, model),
            step=step,
            timeout_s=max(ctx.remaining_s(), 0.001),
            json_mode=ctx.config.json_mode,
            max_tokens=CHOICE_MAX_TOKENS,
        )
        calls.extend(spent)
        return reply
