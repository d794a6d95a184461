"""The agent's exceptions (graph-layer errors live in graph_agent.graphdb.errors)."""

from __future__ import annotations


class AgentError(Exception):
    """Root of the agent's own errors."""


class LLMNotConfiguredError(AgentError):
    """No LLM settings: the message names the settings to set."""

    def __init__(self) -> None:
        super().__init__(
            "No LLM is configured. Set OPENAI_API_KEY (OpenAI), or OPENAI_BASE_URL with "
            "LLM_MODEL for a local OpenAI-compatible server such as Ollama "
            "(OPENAI_BASE_URL=http://localhost:11434/v1 LLM_MODEL=qwen2.5-coder:7b)."
        )


class LLMError(AgentError):
    """The LLM call failed (network, 5xx after retries, bad reply)."""


class LLMTimeoutError(LLMError):
    """The LLM did not answer within LLM_TIMEOUT_S."""
