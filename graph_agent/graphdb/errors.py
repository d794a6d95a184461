"""The graph layer's exceptions: one root, one subclass per thing a user can fix."""

from __future__ import annotations


class GraphError(Exception):
    """Root of every graph-layer error. The message says what happened and what to do next."""


class GraphURLError(GraphError):
    """GRAPH_URL is malformed or names an unsupported scheme."""


class GraphConnectionError(GraphError):
    """The engine could not be reached (the message names the URL, never the password)."""


class GraphAuthError(GraphError):
    """The engine refused the credentials."""


class EmbeddedUnavailableError(GraphError):
    """The embedded FalkorDB cannot run on this platform or failed to start."""


class QueryTimeoutError(GraphError):
    """The engine stopped a query that ran longer than its timeout."""


class CypherSyntaxError(GraphError):
    """The engine rejected the statement; `engine_message` is its own text."""

    def __init__(self, message: str, *, engine_message: str, position: int | None = None) -> None:
        super().__init__(message)
        self.engine_message = engine_message
        self.position = position


class NotReadOnlyError(GraphError):
    """The statement would write, or the engine could not prove it reads only."""


class ResourceLimitError(GraphError):
    """The engine stopped a read at its memory or result limit; a near copy would hit it again."""


class GraphDataLossError(GraphConnectionError):
    """The embedded engine came back with fewer nodes than it had saved: an operator must look."""


class EngineRestartedError(GraphConnectionError):
    """The embedded engine died while a statement ran and is back: asking again works.

    The statement is not sent again on its own: it may be what made the engine die.
    """


class EngineCrashLoopError(GraphConnectionError):
    """The embedded engine died too often in a minute and is left down: an operator must look."""
