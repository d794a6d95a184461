"""The one guarded read of the graph tools: read-only check, no hidden name, a time budget, a row cap;
and the few pieces of Cypher the tools' statements are built from."""

from __future__ import annotations

import logging
import time
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal

from graph_agent.graphdb.errors import NotReadOnlyError, QueryTimeoutError
from graph_agent.graphdb.protocol import GraphReader, QueryResult
from graph_agent.graphdb.schema import quote_name
from graph_agent.tools.view import GraphView
from guardrails import CypherPolicy, check_cypher, referenced_names

logger = logging.getLogger(__name__)

READ_ONLY = CypherPolicy()
"""The strict read-only rules every tool statement must pass (the channel's hidden names are
kept out by construction and checked by `ToolReader` and on the results)."""


@dataclass(frozen=True)
class Dialect:
    """The expressions that differ between the engines the tools read."""

    engine: Literal["falkordb", "neo4j"]
    node_key: str
    """A node's engine id, with `{v}` for the variable."""
    degree: str
    """How many relationships a node has, with `{v}` for the variable."""

    def key(self, variable: str) -> str:
        return self.node_key.format(v=variable)

    def degree_of(self, variable: str) -> str:
        return self.degree.format(v=variable)


FALKORDB = Dialect("falkordb", "id({v})", "indegree({v}) + outdegree({v})")
"""FalkorDB: `size((v)--())` walks every relationship of a hub on every row (8 s where this
takes 0.6 s, 10,000 rows of the healthcare graph)."""
NEO4J = Dialect("neo4j", "elementId({v})", "COUNT {{ ({v})--() }}")
"""Neo4j 5: `id()` is deprecated and pattern expressions in size() are gone."""


def dialect_of(graph: GraphReader) -> Dialect:
    """The dialect of the adapter's engine, from the name it gives its prompts."""
    return NEO4J if graph.dialect.casefold().startswith("neo4j") else FALKORDB


@dataclass(frozen=True)
class ToolLimits:
    """Bounds of one tool call."""

    timeout_s: float = 5.0
    """For all the reads of one call together."""
    max_rows: int = 2000
    """Per read; a read that reaches it marks the result as partial."""
    max_hops: int = 4
    max_paths: int = 3
    examples: int = 3
    """Neighbour names shown per relationship group."""
    candidates: int = 5
    """Candidates (and near misses) a resolution keeps."""
    per_label: int = 25
    """Nodes per label a name search reads."""
    hub_factor: float = 50.0
    """A node with more relationships than this many times the typical node is a hub…"""
    hub_min_degree: int = 20
    """…but never one with this many or fewer…"""
    hub_max_degree: int = 1000
    """…and always one with more than this."""


DEFAULT_LIMITS = ToolLimits()


class ToolReader:
    """Runs the statements of one tool call: each one checked read-only and free of the
    channel's hidden names before it runs, all of them within one time budget, each under
    the row cap."""

    def __init__(self, graph: GraphReader, view: GraphView, limits: ToolLimits) -> None:
        self.graph = graph
        self.view = view
        self.limits = limits
        self.dialect = dialect_of(graph)
        self.deadline = time.monotonic() + limits.timeout_s
        self.partial = False
        """True once a read reached the row cap."""
        self.reads: list[tuple[str, float]] = []
        """(statement, engine ms) of each read, for traces and the benchmark."""

    def read(self, cypher: str, params: Mapping[str, Any] | None = None) -> QueryResult:
        verdict = check_cypher(cypher, READ_ONLY)
        if not verdict.allowed:
            raise NotReadOnlyError(f"A graph tool statement was refused: {verdict.reason}")
        self._refuse_hidden(cypher)
        remaining = self.deadline - time.monotonic()
        if remaining <= 0:
            raise QueryTimeoutError(
                f"The graph tool ran out of its {self.limits.timeout_s:g} s for all its reads."
            )
        result = self.graph.run_read(
            verdict.canonical or cypher,
            params,
            timeout_s=remaining,
            max_rows=self.limits.max_rows,
        )
        self.partial |= result.truncated
        self.reads.append((cypher, result.elapsed_ms))
        logger.debug(
            "graph tool read: %d rows in %.1f ms%s",
            len(result.rows),
            result.elapsed_ms,
            " (row cap)" if result.truncated else "",
        )
        return result

    def _refuse_hidden(self, cypher: str) -> None:
        if not self.view.hidden:
            return
        names = referenced_names(cypher)
        named = names.labels | names.rel_types | names.properties
        leaked = sorted(n for n in named if n.casefold() in self.view.hidden)
        if leaked:
            # The statements are built from the view alone: this is a bug, never a question.
            raise NotReadOnlyError(
                f"A graph tool statement names what this channel may not see: {leaked}"
            )

    # --- pieces of Cypher ----------------------------------------------------------------

    def label_filter(self, variable: str) -> str:
        """`all(l IN labels(v) WHERE l IN $labels)`: no node carrying a label outside the view.

        After a seek or a traversal it goes in a `WITH … WHERE` of its own: in the MATCH's
        WHERE it made FalkorDB plan an all-node scan of that variable (250 ms instead of 2 ms
        to expand one node of the healthcare graph)."""
        return f"all(l IN labels({variable}) WHERE l IN $labels)"

    def rel_pattern(self, variable: str) -> str:
        """`[r:`A`|`B`]`: only the view's relationship types."""
        types = "|".join(quote_name(t) for t in self.view.rel_types)
        return f"[{variable}:{types}]"

    def name_expression(self, variable: str) -> str:
        """The identifying value of a node, whatever its label (`CASE WHEN v:`L` THEN v.`p` …`)."""
        arms = [
            f"WHEN {variable}:{quote_name(label)} THEN {variable}.{quote_name(prop)}"
            for label in self.view.labels
            if (prop := self.view.identifying.get(label)) is not None
        ]
        return f"CASE {' '.join(arms)} END" if arms else "null"

    def projection(self, variable: str, properties: tuple[str, ...]) -> str:
        """`v {.`a`, .`b`}`: exactly these properties (never the whole node)."""
        if not properties:
            return "{}"
        return f"{variable} {{{', '.join('.' + quote_name(p) for p in properties)}}}"

    def base_params(self) -> dict[str, Any]:
        return {"labels": list(self.view.labels)}
