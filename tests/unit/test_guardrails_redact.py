"""User text in logs and the secret filter."""

from __future__ import annotations

import logging

import pytest
from pydantic import SecretStr

from guardrails.redact import SecretFilter, redact_text


@pytest.mark.parametrize(
    ("text", "mode", "limit", "expected"),
    [
        ("short question", "truncate", 80, "short question"),
        ("a" * 100, "truncate", 10, "a" * 10 + "… [100 chars]"),
        ("exactly10!", "truncate", 10, "exactly10!"),
        ("line\nforged INFO line", "truncate", 80, "line\\nforged INFO line"),
        ("who owns billing?", "redact", 80, "[17 chars]"),
        ("", "redact", 80, "[0 chars]"),
        ("x" * 500, "full", 10, "x" * 500),
        ("a\r\nb", "full", 80, "a\\r\\nb"),
    ],
)
def test_redact_text(text: str, mode: str, limit: int, expected: str) -> None:
    assert redact_text(text, mode, limit) == expected  # type: ignore[arg-type]


class ListHandler(logging.Handler):
    def __init__(self) -> None:
        super().__init__()
        self.lines: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.lines.append(self.format(record))


@pytest.fixture
def captured() -> tuple[logging.Logger, ListHandler]:
    handler = ListHandler()
    handler.addFilter(SecretFilter(["xoxb-very-secret", SecretStr("hunter2-pass"), None, "", "ab"]))
    log = logging.getLogger("tests.redact")
    log.handlers = [handler]
    log.setLevel(logging.DEBUG)
    log.propagate = False
    return log, handler


def test_secret_in_message_args_and_dict_args(captured: tuple[logging.Logger, ListHandler]) -> None:
    log, handler = captured
    log.info("token xoxb-very-secret in the message")
    log.info("token %s and %r", "xoxb-very-secret", {"password": "hunter2-pass"})
    log.info("mapping %(tok)s", {"tok": "Bearer xoxb-very-secret"})
    log.info("object %s", RuntimeError("connect failed for neo4j:hunter2-pass@host"))
    assert all(
        "xoxb-very-secret" not in line and "hunter2-pass" not in line for line in handler.lines
    )
    assert handler.lines[0] == "token *** in the message"
    assert "***" in handler.lines[3]


def test_secret_in_traceback(captured: tuple[logging.Logger, ListHandler]) -> None:
    log, handler = captured
    try:
        raise ValueError("bad password hunter2-pass")
    except ValueError:
        log.exception("failed with %s", "xoxb-very-secret")
    text = "\n".join(handler.lines)
    assert "hunter2-pass" not in text and "xoxb-very-secret" not in text
    assert "ValueError: bad password ***" in text


def test_short_secrets_are_ignored(captured: tuple[logging.Logger, ListHandler]) -> None:
    log, handler = captured
    log.info("about a cab")
    assert handler.lines == ["about a cab"]


def test_longest_secret_wins() -> None:
    assert SecretFilter(["abcd", "abcdefgh"]).redact("x abcdefgh y") == "x *** y"


def test_bad_format_is_still_masked(captured: tuple[logging.Logger, ListHandler]) -> None:
    log, handler = captured
    log.info("two %s %s", "xoxb-very-secret")
    assert handler.lines and "xoxb-very-secret" not in handler.lines[0]
