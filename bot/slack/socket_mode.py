"""Socket Mode: the connection that carries the app's events when SLACK_APP_TOKEN is set."""

from __future__ import annotations

from slack_bolt.adapter.socket_mode import SocketModeHandler
from slack_sdk.socket_mode.builtin import SocketModeClient
from slack_sdk.socket_mode.request import SocketModeRequest

from bot.settings import Settings
from bot.slack.app import SlackBot, SlackSetupError
from bot.slack.delivery import after_response


class AckFirstSocketModeHandler(SocketModeHandler):
    """Bolt's built-in handler, starting the work a listener queued only once the envelope's
    ack is sent (as `SlackHTTPServer` does over HTTP)."""

    def handle(self, client: SocketModeClient, req: SocketModeRequest) -> None:  # type: ignore[override]
        with after_response():
            super().handle(client, req)


def socket_mode_handler(bot: SlackBot, settings: Settings) -> SocketModeHandler:
    """The Socket Mode handler for `bot`: `apps.connections.open` with the app-level token,
    through the bot's own Web API client (so SLACK_API_URL and its retry handlers apply to it
    too). `connect()` returns once connected; `start()` also blocks; `close()` ends it.

    The app must have been built with `socket_mode=True`: no request signatures to verify."""
    if settings.slack_app_token is None:
        raise SlackSetupError("SLACK_APP_TOKEN is not set: Socket Mode needs the xapp-… token.")
    return AckFirstSocketModeHandler(bot.app, app_token=settings.slack_app_token.get_secret_value())
