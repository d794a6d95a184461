"""Runs the rules of one trigger in the registry's order, re-checks every rewrite, keeps the trace.

"At most once per question" is decided here, from the trace (`rules_fired` in the state):
a rule whose `once` group already fired is not asked again. Rules the configuration turns off
(`AgentConfig.disabled_rules`, `cypherbot eval --without-rule NAME`) are never asked.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable, Collection, Iterator
from dataclasses import replace

from graph_agent.repair.registry import RULES
from graph_agent.repair.rule import Case, Firing, Fix, Kind, Rule, Trigger
from guardrails import check_cypher

logger = logging.getLogger(__name__)

Verify = Callable[[str], Awaitable[bool]]
"""A rewrite's extra check (EXPLAIN, say): True keeps the rewritten statement."""


class Runner:
    """The rules for one node's run over one state; `fired` is what the node adds to the trace."""

    def __init__(self, case: Case) -> None:
        self.case = case
        self.fired: list[Firing] = []
        self._disabled = case.ctx.config.disabled_rules
        done = [*case.state.get("rules_fired", [])]
        self._used_groups = {r.once for r in RULES if r.once and r.name in {f.rule for f in done}}

    def _rules(self, trigger: Trigger, *kinds: Kind) -> Iterator[Rule]:
        for r in RULES:
            if r.trigger is not trigger or (kinds and r.kind not in kinds):
                continue
            if r.name in self._disabled or (r.once is not None and r.once in self._used_groups):
                continue
            yield r

    def _record(self, r: Rule, fix: Fix, cypher: str | None = None) -> None:
        attempt = self.case.state.get("attempt_count", 1)
        self.fired.append(Firing(r.name, r.phase, r.kind, attempt, fix.detail, cypher))
        if r.once is not None:
            self._used_groups.add(r.once)
        logger.info("rule %s fired: %s", r.name, fix.detail)

    async def rewrite(
        self,
        trigger: Trigger,
        cypher: str,
        *,
        verify: Verify | None = None,
        needed: Callable[[str], bool] | None = None,
        skip: Collection[str] = (),
        **case: object,
    ) -> str:
        """`cypher` after every rewrite of `trigger` that fired and passed the re-checks.

        Each rewritten statement must pass the channel's policy again (its canonical text is
        kept) and `verify` when given; `needed` stops the chain once the statement no longer
        needs a rewrite (the schema check passes, say); the rules named in `skip` are not
        asked."""
        for r in self._rules(trigger, Kind.REWRITE):
            if needed is not None and not needed(cypher):
                break
            if r.name in skip:
                continue
            fix = await r.apply(replace(self.case, cypher=cypher, **case))  # type: ignore[arg-type]
            if fix is None or fix.cypher is None or fix.cypher.strip() == cypher.strip():
                continue
            verdict = check_cypher(fix.cypher, self.case.ctx.policy)
            if not verdict.allowed:
                logger.info("rule %s: rewrite refused by the policy (%s)", r.name, verdict.reason)
                continue
            candidate = verdict.canonical or fix.cypher
            if verify is not None and not await verify(candidate):
                continue
            self._record(r, fix, candidate)
            cypher = candidate
        return cypher

    async def first(self, trigger: Trigger, *kinds: Kind, **case: object) -> Fix | None:
        """The first hint or guard of `trigger` that fires (recorded), or None."""
        for r in self._rules(trigger, *(kinds or (Kind.HINT, Kind.GUARD))):
            fix = await r.apply(replace(self.case, **case))  # type: ignore[arg-type]
            if fix is not None:
                self._record(r, fix)
                return fix
        return None

    def trace(self) -> dict[str, list[Firing]]:
        """The state update for the trace (empty when nothing fired)."""
        return {"rules_fired": self.fired} if self.fired else {}
