"""Processed Slack deliveries: claim a key once, so retries never produce a second answer."""

from __future__ import annotations

import logging
import time

from memory.db import Conns, Db

log = logging.getLogger(__name__)


class EventStore:
    """Claims on keys such as `event:<event_id>` and `msg:<channel>:<ts>`, with lease and TTL."""

    def __init__(self, conns: Conns) -> None:
        self._conns = conns

    def claim(self, key: str, *, lease_s: float = 120, ttl_s: float = 3600) -> bool:
        """True when this process should handle `key` now.

        That is when the key is new (or its TTL passed), or when an earlier claim was never
        marked done and its lease expired: the attempt that claimed it died.
        """

        def take(db: Db) -> bool:
            now = time.time()
            # One statement, atomic on both engines: a new key is inserted; an existing one
            # is taken over only when its TTL passed or its claim was never finished and its
            # lease ran out. RETURNING says whether this call got it.
            claimed = db.execute(
                "INSERT INTO events (key, state, lease_until, expires_at) "
                "VALUES (?, 'claimed', ?, ?) "
                "ON CONFLICT (key) DO UPDATE SET state = 'claimed', "
                "lease_until = excluded.lease_until, expires_at = excluded.expires_at "
                "WHERE events.expires_at <= ? "
                "OR (events.state <> 'done' AND events.lease_until <= ?) "
                "RETURNING key",
                [key, now + lease_s, now + max(ttl_s, lease_s), now, now],
            ).fetchall()
            return bool(claimed)

        return self._conns.write(take)

    def done(self, key: str) -> None:
        """Mark `key` handled: later claims are refused until its TTL passes."""
        self._conns.write(
            lambda db: db.execute("UPDATE events SET state = 'done' WHERE key = ?", [key])
        )

    def release(self, key: str) -> None:
        """Give a claim back (the handler failed in a way worth retrying at once)."""
        self._conns.write(
            lambda db: db.execute("DELETE FROM events WHERE key = ? AND state = 'claimed'", [key])
        )

    def purge_expired(self) -> int:
        """Delete keys whose TTL passed; return how many."""
        now = time.time()
        count = self._conns.write(
            lambda db: db.execute("DELETE FROM events WHERE expires_at <= ?", [now]).rowcount
        )
        return int(count)
