"""The scripted chat model itself: order, recording, exceptions, exhaustion."""

from __future__ import annotations

import asyncio

import pytest
from langchain_core.messages import HumanMessage

from rig.scripted_llm import ScriptedChatModel, ScriptNotEnoughRepliesError


def test_replies_in_order_and_records_prompts() -> None:
    model = ScriptedChatModel(replies=["one", lambda msgs: f"echo {msgs[-1].content}"])
    assert model.invoke([HumanMessage("a")]).content == "one"
    assert asyncio.run(model.ainvoke([HumanMessage("b")])).content == "echo b"
    assert model.prompts == ["a", "b"]


def test_raises_scripted_exception_and_reports_unscripted_call() -> None:
    model = ScriptedChatModel(replies=[TimeoutError("slow")])
    with pytest.raises(TimeoutError):
        model.invoke("x")
    with pytest.raises(ScriptNotEnoughRepliesError, match="unscripted LLM call #2"):
        model.invoke("y")


def test_usage_metadata_is_reported() -> None:
    reply = ScriptedChatModel(replies=["12345678"]).invoke("x" * 40)
    assert reply.usage_metadata is not None
    assert reply.usage_metadata["output_tokens"] == 2


def test_usage_counts_a_repeated_prompt_start_as_cached() -> None:
    from langchain_core.messages import HumanMessage, SystemMessage

    from rig.scripted_llm import common_start

    assert common_start("abcdef", "abcxyz") == 3
    assert common_start("", "abc") == 0 and common_start("abc", "abc") == 3
    model = ScriptedChatModel(replies=["one", "two"])
    stable = SystemMessage("the same instructions and schema " * 20)
    first = model.invoke([stable, HumanMessage("first question")])
    second = model.invoke([stable, HumanMessage("another question")])
    assert first.usage_metadata is not None and second.usage_metadata is not None
    assert first.usage_metadata["input_token_details"]["cache_read"] == 0
    cached = second.usage_metadata["input_token_details"]["cache_read"]
    assert len(str(stable.content)) // 4 <= cached < second.usage_metadata["input_tokens"]
