"""A scripted LangChain chat model the tests own: replies from a script, records every prompt."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Sequence
from typing import Any

from langchain_core.callbacks import CallbackManagerForLLMRun
from langchain_core.language_models.chat_models import BaseChatModel
from langchain_core.messages import AIMessage, BaseMessage
from langchain_core.outputs import ChatGeneration, ChatResult
from pydantic import Field, PrivateAttr

Reply = str | AIMessage | Exception | Callable[[list[BaseMessage]], str]


CACHED_PROMPTS = 8
"""How many earlier prompts the played server's prompt cache keeps."""


def common_start(a: str, b: str) -> int:
    """Length of the longest common start of `a` and `b` (binary search on slices)."""
    low, high = 0, min(len(a), len(b))
    while low < high:
        mid = (low + high + 1) // 2
        if a[:mid] == b[:mid]:
            low = mid
        else:
            high = mid - 1
    return low


class ScriptNotEnoughRepliesError(AssertionError):
    """The code under test made more LLM calls than the test scripted."""


class ScriptedChatModel(BaseChatModel):
    """Answers each call with the next scripted reply (a string, an AIMessage as is (e.g. with
    response_metadata={"finish_reason": "length"}), an exception to raise, or a function of the
    prompt). With `responder`, every call is answered by that function instead (for
    concurrent tests where call order is not fixed). `calls` records each prompt and
    `call_kwargs` the call options bound to it (max_tokens…).

    Usage is reported as a server would: about 4 characters a token, and, like llama-server's
    prompt cache, the prompt's longest common start with any earlier prompt counted as cached
    (`input_token_details.cache_read`, which langchain-openai fills from the OpenAI-compatible
    `prompt_tokens_details.cached_tokens`)."""

    replies: list[Any] = Field(default_factory=list)
    sampled: list[Any] = Field(default_factory=list)
    """Replies for calls bound with a temperature (sampled candidates), in order; while it
    holds any, those calls take them instead of `replies` (concurrent calls at temperature 0
    and above then get a fixed reply each, whatever order they arrive in)."""
    responder: Callable[[list[BaseMessage]], str] | None = None
    delay_s: float = 0.0
    _calls: list[list[BaseMessage]] = PrivateAttr(default_factory=list)
    _kwargs: list[dict[str, Any]] = PrivateAttr(default_factory=list)
    _lock: threading.Lock = PrivateAttr(default_factory=threading.Lock)
    _seen: list[str] = PrivateAttr(default_factory=list)

    @property
    def _llm_type(self) -> str:
        return "scripted"

    @property
    def calls(self) -> list[list[BaseMessage]]:
        """Every prompt received, in order."""
        return self._calls

    @property
    def call_kwargs(self) -> list[dict[str, Any]]:
        """The options of each call (e.g. max_tokens), in order."""
        return self._kwargs

    @property
    def prompts(self) -> list[str]:
        """Every prompt as one text (messages joined), in order."""
        return ["\n".join(str(m.content) for m in call) for call in self._calls]

    def extend(self, replies: Sequence[Reply]) -> None:
        with self._lock:
            self.replies.extend(replies)

    def _next(self, messages: list[BaseMessage], sampled: bool = False) -> str | AIMessage:
        with self._lock:
            self._calls.append(list(messages))
            if sampled and self.sampled:
                reply: Reply = self.sampled.pop(0)
            elif self.responder is not None:
                reply = self.responder
            elif self.replies:
                reply = self.replies.pop(0)
            else:
                raise ScriptNotEnoughRepliesError(
                    f"unscripted LLM call #{len(self._calls)}; prompt ends: "
                    f"{str(messages[-1].content)[-300:]!r}"
                )
        if self.delay_s:
            time.sleep(self.delay_s)
        if isinstance(reply, Exception):
            raise reply
        if callable(reply):
            return reply(list(messages))
        return reply

    def _cached_chars(self, prompt: str) -> int:
        """The longest start `prompt` shares with one of the last few prompts (a server keeps a
        few in its slots); then remembered."""
        with self._lock:
            best = max((common_start(prompt, seen) for seen in self._seen), default=0)
            self._seen = [*self._seen[-(CACHED_PROMPTS - 1) :], prompt]
        return best

    def _generate(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: CallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> ChatResult:
        with self._lock:
            self._kwargs.append(dict(kwargs))
        scripted = self._next(messages, sampled=bool(kwargs.get("temperature")))
        if isinstance(scripted, AIMessage):
            return ChatResult(generations=[ChatGeneration(message=scripted)])
        text = scripted
        prompt = "\n".join(str(m.content) for m in messages)
        prompt_tokens = len(prompt) // 4
        message = AIMessage(
            content=text,
            usage_metadata={
                "input_tokens": prompt_tokens,
                "output_tokens": len(text) // 4,
                "total_tokens": prompt_tokens + len(text) // 4,
                "input_token_details": {"cache_read": self._cached_chars(prompt) // 4},
            },
        )
        return ChatResult(generations=[ChatGeneration(message=message)])


# --- replies in the shapes the agent asks for ----------------------------------------------


def guard_reply(
    scope: str = "in_scope", standalone: str = "", reason: str = "ok", clarification: str = ""
) -> str:
    """The guard's JSON decision."""
    import json

    return json.dumps(
        {
            "standalone_question": standalone,
            "scope": scope,
            "reason": reason,
            "clarification": clarification,
        }
    )


def cypher_reply(statement: str) -> str:
    """A generate/correct reply: the statement in a fenced block."""
    return f"```cypher\n{statement}\n```"


def evaluation_reply(answers: bool = True, answer: str = "", feedback: str = "") -> str:
    """The evaluate+answer step's JSON verdict."""
    import json

    return json.dumps({"answers_question": answers, "answer": answer, "feedback": feedback})
