"""Graph tools: fixed, parameterised reads built from the schema (no model writes them).

* `resolve` — what a name means: candidates with scores, ambiguity, near misses (`recheck`:
  an entity chosen earlier, read again by its key);
* `card` — one entity: its label, visible properties, and per relationship type and
  direction how many neighbours and a few of their names;
* `neighbourhood` — what one entity is linked to, by relationship type, direction and label;
* `connection` — the shortest routes (up to 4 hops, either direction) between two entities,
  not through hubs.

Every statement is checked read-only and runs time-limited and row-capped; a channel's view
(`GraphView`, from the schema and the channel's policy) decides the only labels, relationship
types and properties a statement names or filters by, and every result is checked against it
again. Each result has `columns`, `rows()` (plain rows for the grounded answer step) and
`text()` (a readable rendering).
"""

from graph_agent.tools.entity_card import (
    EntityCard,
    LinkSummary,
    NeighbourGroup,
    Neighbourhood,
    card,
    neighbourhood,
)
from graph_agent.tools.names import (
    Candidate,
    Entity,
    Resolution,
    is_ambiguous,
    recheck,
    resolve,
)
from graph_agent.tools.reads import DEFAULT_LIMITS, FALKORDB, NEO4J, Dialect, ToolLimits, dialect_of
from graph_agent.tools.routes import (
    Connection,
    Route,
    Step,
    chain,
    connection,
    hub_cap,
    typical_degree,
)
from graph_agent.tools.view import GraphView, identifying_property

__all__ = [
    "DEFAULT_LIMITS",
    "FALKORDB",
    "NEO4J",
    "Candidate",
    "Connection",
    "Dialect",
    "Entity",
    "EntityCard",
    "GraphView",
    "LinkSummary",
    "NeighbourGroup",
    "Neighbourhood",
    "Resolution",
    "Route",
    "Step",
    "ToolLimits",
    "card",
    "chain",
    "connection",
    "dialect_of",
    "hub_cap",
    "identifying_property",
    "is_ambiguous",
    "neighbourhood",
    "recheck",
    "resolve",
    "typical_degree",
]
