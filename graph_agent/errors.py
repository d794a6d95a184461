"""The agent's exceptions (graph-layer errors live in graph_agent.graphdb.errors)."""

from __future__ import annotations

from typing import Literal

ErrorKind = Literal[
    "llm_not_configured",
    "llm_error",
    "llm_timeout",
    "graph_down",
    "graph_restarted",
    "query_timeout",
    "query_error",
    "deadline",
    "attempts_exhausted",
    "internal",
]
"""Why a run failed (AgentResult.error_kind): the bot and the eval branch on it."""


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


FAILURE_TEXT: dict[ErrorKind, str] = {
    "llm_not_configured": str(LLMNotConfiguredError()),
    "llm_timeout": "The language model took too long to answer. Try again in a minute, "
    "or ask a shorter question.",
    "llm_error": "I couldn't reach the language model. Try again shortly; if it keeps "
    "happening, ask an admin to check the LLM settings (OPENAI_BASE_URL, LLM_MODEL).",
    "graph_down": "I couldn't reach the graph database. Try again shortly, or ask an admin "
    "to run `cypherbot doctor`.",
    "graph_restarted": "The graph database stopped while it ran the query for this question "
    "(the query may have been too large for it) and is back with its saved data. "
    "Please ask again, perhaps a little narrower.",
    "query_timeout": "The query took too long each time I tried. Try narrowing the question, "
    "for example to one named thing or a time range.",
    "query_error": "The query could not run.",
    "deadline": "I ran out of time before finding an answer. Try a narrower question.",
    "attempts_exhausted": "None of the queries I wrote gave an answer. Try rephrasing it.",
    "internal": "Something went wrong on my side while answering. Please try again; if it "
    "keeps happening, tell an admin (the bot's log has the details).",
}
"""The one wording of each failure for the person asking (never an engine's or a library's)."""
