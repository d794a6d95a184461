"""The compiled state machines: the product's full loop, and the single-shot baseline."""

from __future__ import annotations

import functools
from typing import Literal

from langgraph.graph import START, StateGraph
from langgraph.graph.state import CompiledStateGraph

from graph_agent import nodes, routing
from graph_agent.context import Context
from graph_agent.single_shot import build_single_shot_graph
from graph_agent.state import AgentState

Graph = CompiledStateGraph[AgentState, Context, AgentState, AgentState]
Flow = Literal["full", "single-shot"]
"""Which state machine answers: the full loop, or one generation run as-is (the eval's baseline)."""


def build_graph() -> Graph:
    """Compile the state machine (contextualize+guard → generate → validate → execute →
    evaluate+answer, with the bounded correction loop; or contextualize+guard → a graph tool →
    evaluate+answer, falling back to generate). With CANDIDATES > 1, choose stands for
    validate → execute after the first generation: it tries every sampled statement."""
    graph = StateGraph(AgentState, context_schema=Context)
    graph.add_node("understand", nodes.understand)
    graph.add_node("refuse", nodes.refuse)
    graph.add_node("clarify", nodes.clarify)
    graph.add_node("use_tool", nodes.use_tool)
    graph.add_node("generate", nodes.generate)
    graph.add_node("choose", nodes.choose)
    graph.add_node("validate", nodes.validate)
    graph.add_node("execute", nodes.execute)
    graph.add_node("evaluate", nodes.evaluate)
    graph.add_node("correct", nodes.correct)
    graph.add_node("give_up", nodes.give_up)
    graph.add_edge(START, "understand")
    graph.add_conditional_edges("understand", routing.after_understand)
    graph.add_conditional_edges("use_tool", routing.after_tool)
    graph.add_conditional_edges("generate", routing.after_draft)
    graph.add_conditional_edges("correct", routing.after_draft)
    graph.add_conditional_edges("choose", routing.after_choose)
    graph.add_conditional_edges("validate", routing.after_validate)
    graph.add_conditional_edges("execute", routing.after_execute)
    graph.add_conditional_edges("evaluate", routing.after_evaluate)
    for terminal in ("refuse", "clarify", "give_up"):
        graph.add_edge(terminal, "__end__")
    return graph.compile()


@functools.cache
def compiled(flow: Flow = "full") -> Graph:
    """One compiled copy per flow for the whole process: the graphs hold no dependencies (they
    travel in the Context), and compiling costs ~10 ms."""
    if flow == "single-shot":
        return build_single_shot_graph()
    return build_graph()
