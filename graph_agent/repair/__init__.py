"""The repair catalogue: every rewrite, hint and answer guard the agent applies, in one place.

`registry.RULES` lists them in order; `runner.Runner` asks them at each trigger, re-checks any
rewrite (policy, and schema or EXPLAIN where the trigger needs it), enforces "once per
question" and records what fired (`AgentState.rules_fired`, shown in every trace).
"""

from graph_agent.repair.registry import BY_NAME, RULES, unknown_rules
from graph_agent.repair.rule import Case, Firing, Fix, Kind, Phase, Rule, Trigger
from graph_agent.repair.runner import Runner

__all__ = [
    "BY_NAME",
    "RULES",
    "Case",
    "Firing",
    "Fix",
    "Kind",
    "Phase",
    "Rule",
    "Runner",
    "Trigger",
    "unknown_rules",
]
