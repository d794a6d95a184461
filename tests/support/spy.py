"""A graph that records the statements reaching the engine: the agent tests' window on what ran."""

from __future__ import annotations

from typing import Any

from graph_agent.graphdb import GraphDB


class SpyDB:
    """Delegates to a real graph and records every statement validated and every one run."""

    def __init__(self, db: GraphDB) -> None:
        self._db = db
        self.validated: list[str] = []
        self.ran: list[str] = []

    def __getattr__(self, name: str) -> Any:
        return getattr(self._db, name)

    def validate(self, cypher: str) -> Any:
        self.validated.append(cypher)
        return self._db.validate(cypher)

    def run_read(self, cypher: str, params: Any = None, **kw: Any) -> Any:
        self.ran.append(cypher)
        return self._db.run_read(cypher, params, **kw)
