"""Short reads behind a correction note (a value's spelling, a route through a neighbour).

Rules read the graph only through a `Prober`, so they can be tested without an engine.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Sequence
from typing import Any, Protocol

from graph_agent.graphdb.errors import GraphError
from graph_agent.graphdb.protocol import GraphReader
from guardrails import CypherPolicy, check_cypher

logger = logging.getLogger(__name__)

PROBE_TIMEOUT_S = 2.0
"""Engine timeout of each probe."""


class Prober(Protocol):
    async def rows(
        self, statement: str, params: dict[str, Any] | None = None, max_rows: int = 1
    ) -> list[list[Any]]:
        """The rows of a read the channel's policy allows; raises GraphError when it fails."""
        ...


class GraphProber:
    """Probes on the run's graph, through the run's policy, with a short timeout."""

    def __init__(self, db: GraphReader, policy: CypherPolicy | None) -> None:
        self._db = db
        self._policy = policy

    async def rows(
        self, statement: str, params: dict[str, Any] | None = None, max_rows: int = 1
    ) -> list[list[Any]]:
        judged = check_cypher(statement, self._policy)
        if not judged.allowed:
            raise GraphError(f"probe refused by the policy: {judged.reason}")
        result = await asyncio.to_thread(
            self._db.run_read,
            judged.canonical or statement,
            params,
            timeout_s=PROBE_TIMEOUT_S,
            max_rows=max_rows,
        )
        return [list(r) for r in result.rows]


def nothing_found(rows: Sequence[Sequence[Any]]) -> bool:
    """No rows, or the one row an aggregate gives over no match (`count(m)` → 0, `sum` → null):
    `t.type = 'xs-1/1/1'` where that is a Type's name answered "0" in a real playground
    follow-up, and the value checks never looked because a row came back."""
    if not rows:
        return True
    return len(rows) == 1 and all(
        value is None or (value == 0 and not isinstance(value, bool)) for value in rows[0]
    )


async def matches_something(prober: Prober, statement: str) -> bool:
    """Whether a statement finds something: a row, and not an aggregate's 0 or null over no
    match (`count(m)` is one row, 0, whatever road it took: "How many machines run Ubuntu?",
    a trial on the network graph, found every moved road "matching"). A refused or failing
    read: no."""
    try:
        return not nothing_found(await prober.rows(statement, None, 1))
    except GraphError:
        logger.debug("a probe failed", exc_info=True)
        return False
