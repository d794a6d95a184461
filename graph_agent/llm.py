"""The LLM factory (langchain-openai, any OpenAI-compatible server) and one guarded call."""

from __future__ import annotations

import asyncio
import logging
import time
from dataclasses import dataclass
from typing import Any

from langchain_core.exceptions import ModelTimeoutError
from langchain_core.language_models.chat_models import BaseChatModel
from langchain_core.messages import AIMessage, BaseMessage
from langchain_core.runnables import Runnable

from graph_agent.errors import LLMError, LLMTimeoutError

logger = logging.getLogger(__name__)

STEP_MAX_TOKENS: dict[str, int] = {"guard": 200, "generate": 400, "correct": 400, "evaluate": 500}
"""Reply cap per step, in tokens. Measured need (demo and Northwind eval sets): a guard JSON
reply is ~70 tokens, a fenced statement at most ~80 (200 characters of Cypher), an
evaluate JSON reply with a short list ~150; the caps leave 2.5-5x headroom, so only a
rambling reply reaches them."""
DEFAULT_MAX_TOKENS = 500
"""Cap for a step not in STEP_MAX_TOKENS."""


@dataclass(frozen=True)
class LLMs:
    """The chat models the agent uses: a strong one for Cypher, a cheap one for the rest."""

    cypher: BaseChatModel
    """Writes and corrects Cypher."""
    fast: BaseChatModel
    """Rewrites follow-ups, guards the topic, judges rows and writes the answer."""


@dataclass(frozen=True)
class LLMCall:
    """One chat-model call, for the result and the benchmark."""

    step: str
    """Node that made the call (guard, generate, evaluate, correct, or `<step>:repair`)."""
    ms: float
    prompt_chars: int
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cached_tokens: int = 0
    """Prompt tokens the server answered from its prompt cache (OpenAI-compatible
    `usage.prompt_tokens_details.cached_tokens`; 0 when the server does not say)."""
    cut_off: bool = False
    """The reply stopped at the token cap (finish_reason "length"): it is incomplete."""


def make_llms(
    *,
    api_key: str | None,
    base_url: str | None,
    model: str,
    fast_model: str | None,
    timeout_s: float,
    max_retries: int,
) -> LLMs | None:
    """ChatOpenAI models at temperature 0; None when neither an API key nor a base URL is set."""
    if not api_key and not base_url:
        return None
    from langchain_openai import ChatOpenAI

    def build(name: str) -> BaseChatModel:
        # Local servers accept any key, but the client refuses to start without one.
        return ChatOpenAI(
            model=name,
            api_key=api_key or "not-needed",  # type: ignore[arg-type]
            base_url=base_url,
            temperature=0,
            timeout=timeout_s,
            max_retries=max_retries,
        )

    cypher = build(model)
    fast = cypher if not fast_model or fast_model == model else build(fast_model)
    return LLMs(cypher=cypher, fast=fast)


def max_tokens_for(step: str, override: int | None = None) -> int:
    """The reply cap for `step` (`guard:repair` counts as `guard`); `override` (the
    LLM_MAX_TOKENS setting) wins for every step."""
    if override:
        return override
    return STEP_MAX_TOKENS.get(step.split(":", 1)[0], DEFAULT_MAX_TOKENS)


def _cut_off_reply(exc: BaseException) -> AIMessage | None:
    """The reply inside the OpenAI client's `LengthFinishReasonError` (a reply that reached
    the token cap while a response_format was asked for), as the message a cut-off reply
    would have been; None for any other error."""
    completion = getattr(exc, "completion", None)
    if type(exc).__name__ != "LengthFinishReasonError" or completion is None:
        return None
    choices = getattr(completion, "choices", None) or []
    message = getattr(choices[0], "message", None) if choices else None
    usage = getattr(completion, "usage", None)
    details = getattr(usage, "prompt_tokens_details", None)
    cached = int(getattr(details, "cached_tokens", 0) or 0)
    prompt = int(getattr(usage, "prompt_tokens", 0) or 0)
    output = int(getattr(usage, "completion_tokens", 0) or 0)
    return AIMessage(
        content=str(getattr(message, "content", "") or ""),
        response_metadata={"finish_reason": "length"},
        usage_metadata={
            "input_tokens": prompt,
            "output_tokens": output,
            "total_tokens": prompt + output,
            "input_token_details": {"cache_read": cached},
        },
    )


def _is_timeout(exc: BaseException) -> bool:
    if isinstance(exc, TimeoutError | ModelTimeoutError):
        return True
    # openai.APITimeoutError and httpx timeouts, without importing either here.
    return any("Timeout" in cls.__name__ for cls in type(exc).__mro__)


async def call_llm(
    model: Runnable[Any, Any],
    messages: list[BaseMessage],
    *,
    step: str,
    timeout_s: float,
    max_tokens: int | None = None,
    temperature: float | None = None,
) -> tuple[str, LLMCall]:
    """Invoke `model` once within `timeout_s`, the reply capped at `max_tokens` (None: the
    step's cap, `max_tokens_for(step)`); return the reply text and the call's record.
    `temperature` replaces the model's own (0, as `make_llms` builds it) for this call only:
    sampled candidates (graph_agent/candidates.py); None binds nothing.

    A reply cut at the cap comes back with `cut_off=True` in its record: the caller decides
    (repair a JSON reply, fail a statement). Raises LLMTimeoutError or LLMError with a
    message fit for a person; the reply itself is never logged (it may quote user text).
    """
    started = time.perf_counter()
    prompt_chars = sum(len(str(m.content)) for m in messages)
    cap = max_tokens or max_tokens_for(step)
    options: dict[str, Any] = {"max_tokens": cap}
    if temperature is not None:
        options["temperature"] = temperature
    try:
        reply = await asyncio.wait_for(
            model.bind(**options).ainvoke(messages), timeout=max(timeout_s, 0.001)
        )
    except Exception as exc:
        if (cut := _cut_off_reply(exc)) is not None:
            # With a response_format (LLM_JSON_MODE=json_object) the OpenAI client raises on a
            # reply cut at the cap instead of returning it: it is the same cut-off reply.
            reply = cut
        elif _is_timeout(exc):
            waited = time.perf_counter() - started
            # Say which limit it was: the question's deadline (what was left of it) or the
            # client's own per-request timeout (LLM_TIMEOUT_S), which fires first when shorter.
            limit = (
                f"the question's deadline ({timeout_s:.0f} s left)"
                if isinstance(exc, TimeoutError) and waited >= timeout_s - 0.05
                else "the per-request timeout (LLM_TIMEOUT_S)"
            )
            logger.warning("LLM call for %s timed out after %.1f s: %s", step, waited, limit)
            raise LLMTimeoutError(
                f"The language model did not answer within {waited:.0f} s ({limit})."
            ) from exc
        else:
            logger.warning("LLM call for %s failed: %s", step, type(exc).__name__)
            raise LLMError(
                f"The language model call failed ({type(exc).__name__}: {exc})."
            ) from exc
    ms = (time.perf_counter() - started) * 1000
    text = reply.content if isinstance(reply, AIMessage) else getattr(reply, "content", reply)
    if isinstance(text, list):  # content blocks
        text = "".join(
            part.get("text", "") if isinstance(part, dict) else str(part) for part in text
        )
    usage = getattr(reply, "usage_metadata", None) or {}
    metadata = getattr(reply, "response_metadata", None) or {}
    cut_off = metadata.get("finish_reason") == "length"
    if cut_off:
        logger.warning("LLM reply for %s was cut off at %d tokens", step, cap)
    record = LLMCall(
        step=step,
        ms=ms,
        prompt_chars=prompt_chars,
        prompt_tokens=int(usage.get("input_tokens", 0) or 0),
        completion_tokens=int(usage.get("output_tokens", 0) or 0),
        cached_tokens=int((usage.get("input_token_details") or {}).get("cache_read", 0) or 0),
        cut_off=cut_off,
    )
    logger.debug("LLM %s: %.0f ms, %d prompt chars", step, ms, prompt_chars)
    return str(text), record
