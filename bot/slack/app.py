"""The Bolt app: `create_bot` builds it around the agent and memory; `register_listeners` wires every listener."""

from __future__ import annotations

import logging
import re
from dataclasses import dataclass
from typing import Any

from slack_bolt import Ack, App, Respond
from slack_bolt.error import BoltError
from slack_sdk import WebClient
from slack_sdk.errors import SlackApiError
from slack_sdk.http_retry.builtin_handlers import RateLimitErrorRetryHandler

from bot import charts
from bot.settings import Settings, mask_secrets_in_logs
from bot.slack import render
from bot.slack.answering import AgentPort, BotDeps, Guards, SettingsGuards
from bot.slack.delivery import Delivery
from bot.slack.listeners import (
    assistant,
    choices,
    feedback,
    home,
    ignored,
    mentions,
    messages,
    reactions,
)
from bot.slack.listeners import command as slash
from bot.slack.progress import StatusSupport
from memory import Memory

logger = logging.getLogger(__name__)


class SlackSetupError(Exception):
    """The Slack settings are missing, malformed or refused; the message names the setting."""


@dataclass
class SlackBot:
    """The Bolt app and what its listeners share (tests wait on `deps.delivery`)."""

    app: App
    deps: BotDeps

    def close(self) -> None:
        self.deps.delivery.shutdown(wait=True)


def check_tokens(settings: Settings, *, socket_mode: bool) -> None:
    """Raise `SlackSetupError` naming the setting when a token is missing or malformed."""
    bot_token = settings.slack_bot_token.get_secret_value() if settings.slack_bot_token else ""
    if not bot_token:
        raise SlackSetupError("SLACK_BOT_TOKEN is not set: copy the xoxb-… Bot User OAuth Token.")
    if not bot_token.startswith("xoxb-"):
        raise SlackSetupError("SLACK_BOT_TOKEN must be a bot token starting with xoxb-.")
    if socket_mode:
        app_token = settings.slack_app_token.get_secret_value() if settings.slack_app_token else ""
        if not app_token.startswith("xapp-"):
            raise SlackSetupError(
                "SLACK_APP_TOKEN must be an app-level token starting with xapp- "
                "(Basic Information → App-Level Tokens, scope connections:write)."
            )
    else:
        secret = settings.slack_signing_secret
        if secret is None or not secret.get_secret_value().strip():
            raise SlackSetupError(
                "SLACK_SIGNING_SECRET is not set: HTTP mode needs it (Basic Information → "
                "Signing Secret), or set SLACK_APP_TOKEN for Socket Mode."
            )


def web_client(settings: Settings) -> WebClient:
    """The Web API client, retrying 429s after Slack's Retry-After."""
    token = settings.slack_bot_token.get_secret_value() if settings.slack_bot_token else None
    client = WebClient(token=token, base_url=settings.slack_api_url or WebClient.BASE_URL)
    client.retry_handlers.append(RateLimitErrorRetryHandler(max_retry_count=3))
    return client


def create_bot(
    settings: Settings,
    agent: AgentPort,
    memory: Memory,
    *,
    client: WebClient | None = None,
    guards: Guards | None = None,
    socket_mode: bool | None = None,
) -> SlackBot:
    """Build the app: auth.test for the bot's ids, the worker pool, every listener.

    Also masks the configured secrets in the root logger's handlers (for embedded use; the
    CLI does it when it configures logging)."""
    mask_secrets_in_logs(settings)
    guards = guards or SettingsGuards(settings)
    if socket_mode is None:
        socket_mode = settings.slack_app_token is not None
    if client is None:
        check_tokens(settings, socket_mode=socket_mode)
        client = web_client(settings)
    elif not any(isinstance(h, RateLimitErrorRetryHandler) for h in client.retry_handlers):
        client.retry_handlers.append(RateLimitErrorRetryHandler(max_retry_count=3))
    secret = (
        settings.slack_signing_secret.get_secret_value() if settings.slack_signing_secret else None
    )
    try:
        auth = client.auth_test()
        app = App(
            client=client,
            signing_secret=secret,
            process_before_response=True,
            request_verification_enabled=not socket_mode,
            logger=logging.getLogger("bot.bolt"),
        )
    except (SlackApiError, BoltError) as exc:
        error = exc.response.get("error") if isinstance(exc, SlackApiError) else str(exc)
        raise SlackSetupError(
            f"Slack refused SLACK_BOT_TOKEN ({error}). Copy the Bot User OAuth Token again "
            "after (re)installing the app."
        ) from None
    deps = BotDeps(
        settings=settings,
        agent=agent,
        memory=memory,
        delivery=Delivery(memory.events, workers=settings.workers, lease_s=settings.claim_lease_s),
        guards=guards,
        status=StatusSupport(),
        streaming=StatusSupport() if settings.stream_answers == "auto" else None,
        bot_user_id=str(auth.get("user_id", "")),
        bot_id=str(auth.get("bot_id", "")),
        team_id=str(auth.get("team_id", "")),
    )
    register_listeners(app, deps)
    if settings.charts == "auto":
        charts.drawer.warm_up()  # the chart engine starts now, not in the first answer's thread
    logger.info("Slack app ready as bot user %s in team %s", deps.bot_user_id, deps.team_id)
    return SlackBot(app, deps)


def register_listeners(app: App, deps: BotDeps) -> None:
    """Every listener of the app. Each is small: filter, claim, enqueue (the work runs later)."""

    @app.event("app_mention")
    def handle_mention(event: dict[str, Any], body: dict[str, Any], client: WebClient) -> None:
        mentions.on_mention(deps, client, event, body)

    @app.event("message")
    def handle_message(event: dict[str, Any], body: dict[str, Any], client: WebClient) -> None:
        messages.on_message(deps, client, event, body)

    @app.event("reaction_added")
    def handle_reaction_added(
        event: dict[str, Any], body: dict[str, Any], client: WebClient
    ) -> None:
        reactions.on_reaction(deps, client, event, body, added=True)

    @app.event("reaction_removed")
    def handle_reaction_removed(
        event: dict[str, Any], body: dict[str, Any], client: WebClient
    ) -> None:
        reactions.on_reaction(deps, client, event, body, added=False)

    @app.event("assistant_thread_started")
    def handle_thread_started(
        event: dict[str, Any], body: dict[str, Any], client: WebClient
    ) -> None:
        assistant.on_thread_started(deps, client, event, body)

    @app.event("app_home_opened")
    def handle_home_opened(event: dict[str, Any], body: dict[str, Any], client: WebClient) -> None:
        home.on_home_opened(deps, client, event, body)

    @app.action(render.FEEDBACK_ACTION)
    def handle_feedback(ack: Ack, body: dict[str, Any], client: WebClient) -> None:
        ack()
        feedback.on_feedback(deps, client, body)

    @app.action(re.compile(rf"^{re.escape(render.CHOICE_ACTION)}:\d+$"))
    def handle_choice(ack: Ack, body: dict[str, Any], client: WebClient) -> None:
        ack()
        choices.on_choice(deps, client, body)

    for name in ignored.IGNORED_EVENTS:
        app.event(name)(ignored.ignore)

    @app.command("/cypherbot")
    def handle_command(ack: Ack, respond: Respond, command: dict[str, Any]) -> None:
        # Acked at once (Slack allows 3 s): the reply may read the example store, which with
        # EMBEDDINGS_MODEL set is an HTTP call, so a worker sends it through response_url
        # after the ack (Bolt sends the ack only when this listener returns).
        ack()

        def reply() -> None:
            respond(**_command_reply(deps, command))

        deps.delivery.submit([f"command:{command.get('trigger_id', '')}"], reply)

    @app.error
    def handle_error(error: Exception, body: dict[str, Any]) -> None:
        logger.error("listener error (%s) for %s", type(error).__name__, _describe(body))


def _command_reply(deps: BotDeps, command_body: dict[str, Any]) -> dict[str, Any]:
    channel = command_body.get("channel_id")
    reply = slash.command_reply(
        deps, str(command_body.get("text", "")), str(channel) if channel else None
    )
    return slash.ack_payload(reply)


def _describe(body: dict[str, Any]) -> str:
    event = body.get("event") or {}
    return str(event.get("type") or body.get("command") or body.get("type") or "request")
