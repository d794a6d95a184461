"""A local Slack for tests and the playground: `SlackEmulator` serves the Web API on 127.0.0.1,
keeps the workspace's state and delivers signed events to the app.

Split by concern: `emulator_state.py` (the workspace), `emulator_events.py` (people's actions
and event delivery), `emulator_web_api.py` (the Web API methods and their HTTP handler), with
the AI-app surface in `emulator_ai.py`, Slack's limits in `emulator_limits.py`, Socket Mode's
websocket in `emulator_socket.py`, the acknowledgement contract in `emulator_acks.py` and
people's typed text as Slack sends it in `emulator_text.py`.
"""

from __future__ import annotations

from bot.playground.emulator_state import (
    MAX_BLOCKS,
    MAX_SECTION_CHARS,
    MAX_TEXT_CHARS,
    ApiCall,
    Channel,
    ChannelKind,
    Delivery,
    DeliveryKind,
    StateChange,
    Subscriber,
    Transport,
    User,
)
from bot.playground.emulator_web_api import WebApi, handler_for
from bot.playground.local_server import LocalServer

__all__ = [
    "MAX_BLOCKS",
    "MAX_SECTION_CHARS",
    "MAX_TEXT_CHARS",
    "ApiCall",
    "Channel",
    "ChannelKind",
    "Delivery",
    "DeliveryKind",
    "SlackEmulator",
    "StateChange",
    "Subscriber",
    "Transport",
    "User",
]


class SlackEmulator(WebApi):
    """Plays Slack for a Bolt app: serves the Web API on 127.0.0.1 (port 0), keeps channels,
    users, messages, reactions and files in memory, records every call, injects errors, and
    delivers events to the app as signed HTTP requests or, with `transport="socket"`, as
    Socket Mode envelopes over the websocket the app opens (`apps.connections.open`)."""

    _http: LocalServer | None = None

    def start(self) -> SlackEmulator:
        """Bind 127.0.0.1 on a free port and serve in a background thread."""
        self._http = LocalServer(0, handler_for(self), name="slack-emulator").start()
        self._base_url = f"http://127.0.0.1:{self._http.port}"
        return self

    def stop(self) -> None:
        self._sender.shutdown(wait=False, cancel_futures=True)
        self._stop_socket()
        if self._http is not None:
            self._http.stop()
            self._http = None
            self._base_url = None

    def __enter__(self) -> SlackEmulator:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    @property
    def api_url(self) -> str:
        """The `base_url` for `WebClient` (ends with a slash)."""
        return f"{self.base_url}/api/"
