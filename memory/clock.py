"""Timestamps as memory stores them: UTC ISO-8601 text that sorts in time order."""

from __future__ import annotations

from datetime import UTC, datetime


def now() -> datetime:
    """The current time, timezone-aware UTC."""
    return datetime.now(UTC)


def to_text(moment: datetime) -> str:
    """`moment` as sortable UTC text; a naive datetime is taken to be UTC already."""
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=UTC)
    return moment.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def from_text(text: str | None) -> datetime | None:
    """Parse text written by `to_text` (None stays None)."""
    if text is None:
        return None
    return datetime.strptime(text, "%Y-%m-%dT%H:%M:%S.%fZ").replace(tzinfo=UTC)
