"""Memory's exceptions: one root, with what to do next in every message."""

from __future__ import annotations


class MemoryStoreError(Exception):
    """Root of memory errors (unreadable, corrupt or too-new database file)."""
