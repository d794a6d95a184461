"""Keeping user text short and secrets out of log records."""

from __future__ import annotations

import logging
import traceback
from collections.abc import Iterable
from typing import Literal, Protocol

logger = logging.getLogger(__name__)

RedactMode = Literal["truncate", "redact", "full"]
MASK = "***"
# Shorter "secrets" (an empty password, "x" for a local API key) would mask ordinary words.
MIN_SECRET_CHARS = 4


class _Secret(Protocol):
    def get_secret_value(self) -> str: ...


def _one_line(text: str) -> str:
    # A newline in user text could forge a whole log line; keep each record on one line.
    return text.replace("\r", "\\r").replace("\n", "\\n")


def redact_text(text: str, mode: RedactMode, limit: int = 80) -> str:
    """User text for an INFO log line: cut to `limit` characters, replaced, or full (one line)."""
    if mode == "redact":
        return f"[{len(text)} chars]"
    if mode == "full":
        return _one_line(text)
    if len(text) <= limit:
        return _one_line(text)
    return f"{_one_line(text[:limit])}… [{len(text)} chars]"


class SecretFilter(logging.Filter):
    """Replaces every configured secret with *** in a record's message, args and traceback.

    Add it to the *handlers* (a filter on a logger does not see its children's records).
    Accepts plain strings and pydantic SecretStr; None and very short values are skipped.
    """

    def __init__(self, secrets: Iterable[str | _Secret | None]) -> None:
        super().__init__()
        values = {
            s if isinstance(s, str) else s.get_secret_value() for s in secrets if s is not None
        }
        # Longest first, so that a secret containing another one is masked whole.
        self._secrets = sorted(
            (v for v in values if len(v) >= MIN_SECRET_CHARS), key=len, reverse=True
        )

    def redact(self, text: str) -> str:
        """The text with every secret masked."""
        for secret in self._secrets:
            if secret in text:
                text = text.replace(secret, MASK)
        return text

    def filter(self, record: logging.LogRecord) -> bool:
        if not self._secrets:
            return True
        try:
            message = record.getMessage()
        except Exception:  # a bad format string; mask what there is rather than drop it
            message = f"{record.msg} {record.args}"
        masked = self.redact(message)
        if masked != message or record.args:
            # Freeze the rendered message so a handler cannot re-render the secret from args.
            record.msg = masked
            record.args = None
        if record.exc_info and record.exc_info[0] is not None and not record.exc_text:
            record.exc_text = "".join(traceback.format_exception(*record.exc_info)).rstrip("\n")
        if record.exc_text:
            record.exc_text = self.redact(record.exc_text)
        if record.stack_info:
            record.stack_info = self.redact(record.stack_info)
        return True
