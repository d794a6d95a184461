"""The graph's nodes, one module each: async `(state, runtime) -> dict` functions returning
only what they change. The flows (flow.py, single_shot.py) wire them; routing.py says where
each goes next."""

from graph_agent.errors import FAILURE_TEXT
from graph_agent.nodes.answer import evaluate
from graph_agent.nodes.choosing import choose
from graph_agent.nodes.common import NO_DATA_MARK, Update, step
from graph_agent.nodes.execution import READ_GRACE_S, execute
from graph_agent.nodes.generation import correct, generate
from graph_agent.nodes.giving_up import give_up
from graph_agent.nodes.prompt_parts import prompt_parts
from graph_agent.nodes.tooling import use_tool
from graph_agent.nodes.understanding import TASK_REQUEST, WRITE_REQUEST, clarify, refuse, understand
from graph_agent.nodes.validation import validate

__all__ = [
    "FAILURE_TEXT",
    "NO_DATA_MARK",
    "READ_GRACE_S",
    "TASK_REQUEST",
    "WRITE_REQUEST",
    "Update",
    "choose",
    "clarify",
    "correct",
    "evaluate",
    "execute",
    "generate",
    "give_up",
    "prompt_parts",
    "refuse",
    "step",
    "understand",
    "use_tool",
    "validate",
]
