"""The question-to-answer agent: LangGraph state machine, prompts, LLM factory and graph database adapters."""
