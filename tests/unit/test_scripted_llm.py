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
