"""Runs the real Bolt app against the local Slack API emulator, over HTTP or in Socket Mode, for e2e tests and the bench."""

from __future__ import annotations

import re
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import yaml
from langchain_core.messages import BaseMessage
from pydantic import SecretStr

from bot.playground.emulator import SlackEmulator, Transport
from bot.playground.emulator_limits import RateLimits
from bot.settings import Settings
from bot.slack.answering import AgentPort
from bot.slack.app import SlackBot, create_bot
from bot.slack.http_server import SlackHTTPServer
from bot.slack.socket_mode import socket_mode_handler
from memory import Memory, open_memory
from rig.scripted_llm import cypher_reply, evaluation_reply, guard_reply

if TYPE_CHECKING:
    from slack_bolt.adapter.socket_mode import SocketModeHandler

CHANNEL = "C0GENERAL"
ALICE = "U0ALICE"
BOB = "U0BOB"
OTHER_BOT_USER = "U0OTHERBOT"
OTHER_BOT_ID = "B0OTHERBOT"
MANIFEST = Path(__file__).resolve().parents[1] / "manifest.yml"


def manifest_scopes() -> list[str]:
    """The bot scopes manifest.yml asks for: the emulator refuses any method needing another."""
    manifest = yaml.safe_load(MANIFEST.read_text(encoding="utf-8"))
    return list(manifest["oauth_config"]["scopes"]["bot"])


def manifest_events() -> list[str]:
    """The bot events manifest.yml subscribes to: the emulator delivers no other."""
    manifest = yaml.safe_load(MANIFEST.read_text(encoding="utf-8"))
    return list(manifest["settings"]["event_subscriptions"]["bot_events"])


def rig_settings(data_dir: Path, **overrides: Any) -> Settings:
    """Settings for a test: no environment, no .env, generous rate limits, and every LLM call
    made (the conversations tests script answer the guard and the evaluator too; the product's
    skips of those calls have their own tests: tests/e2e/test_slack_fewer_calls.py), one
    candidate statement, three attempts (the library's default; the product's is two)."""
    values: dict[str, Any] = {
        "data_dir": data_dir,
        "workers": 4,
        "rate_per_minute": 10_000,
        "rate_per_day": 100_000,
        "guard_first_questions": "all",
        "evaluate_plain_rows": True,
        "candidates": 1,  # unset, the scripted model without a base URL would count as OpenAI's
        "max_attempts": 3,  # the conversations script up to two corrections
        **overrides,
    }
    return Settings(_env_file=None, **values)  # type: ignore[call-arg]


@dataclass
class SlackRig:
    """Emulator + the app's transport (HTTP server or Socket Mode connection) + bot + memory,
    and helpers to talk to them."""

    emulator: SlackEmulator
    server: SlackHTTPServer | None
    """The app's HTTP server (None in Socket Mode)."""
    bot: SlackBot
    memory: Memory
    settings: Settings
    socket: SocketModeHandler | None = None
    """The app's Socket Mode handler (None over HTTP)."""

    @property
    def transport(self) -> Transport:
        return self.emulator.transport

    @property
    def bot_user(self) -> str:
        return self.emulator.bot_user_id

    def mention(
        self, text: str, *, user: str = ALICE, channel: str = CHANNEL, thread_ts: str | None = None
    ) -> dict[str, Any]:
        message, _ = self.emulator.post_message(
            user, channel, f"<@{self.bot_user}> {text}", thread_ts
        )
        return message

    def say(
        self, text: str, *, user: str = ALICE, channel: str = CHANNEL, thread_ts: str | None = None
    ) -> dict[str, Any]:
        message, _ = self.emulator.post_message(user, channel, text, thread_ts)
        return message

    def dm(self, text: str, *, user: str = ALICE, thread_ts: str | None = None) -> dict[str, Any]:
        channel = self.emulator.open_dm(user).id
        message, _ = self.emulator.post_message(user, channel, text, thread_ts)
        return message

    def answers(self, channel: str, thread_ts: str) -> list[dict[str, Any]]:
        """The bot's finished messages in a thread (with blocks: not a placeholder)."""
        return [m for m in self.emulator.bot_replies(channel, thread_ts) if m.get("blocks")]

    def wait_answers(
        self, channel: str, thread_ts: str, n: int = 1, timeout: float = 60.0
    ) -> list[dict[str, Any]]:
        self.emulator.wait_for(
            lambda: len(self.answers(channel, thread_ts)) >= n,
            timeout,
            f"no answer #{n} in {channel}/{thread_ts}",
        )
        self.settle()
        return self.answers(channel, thread_ts)

    def settle(self, timeout: float = 60.0) -> None:
        """Wait until the app's workers and the emulator's deliveries are all done."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            self.bot.deps.delivery.wait_idle(timeout)
            self.emulator.wait_idle(timeout)
            if self.bot.deps.delivery.in_flight == 0:
                return
        raise TimeoutError("the app did not settle")


def answer_text(message: dict[str, Any]) -> str:
    """All text of a message's blocks (sections and context)."""
    parts = []
    for block in message.get("blocks", []):
        if isinstance(block.get("text"), str):  # a streamed answer's markdown block
            parts.append(block["text"])
        elif "text" in block:
            parts.append(block["text"]["text"])
        for element in block.get("elements", []):
            parts.append(element.get("text", ""))
    return "\n".join(parts)


@contextmanager
def slack_rig(
    agent: AgentPort,
    data_dir: Path,
    *,
    memory: Memory | None = None,
    status_supported: bool = True,
    progress_interval_s: float = 1.0,
    slack_rate_limits: bool = True,
    transport: Transport = "http",
    ack_timeout_s: float = 3.0,
    **settings_overrides: Any,
) -> Iterator[SlackRig]:
    """Start emulator, memory, app and its transport; stop them all afterwards.

    `transport="socket"` runs the app in Socket Mode (Bolt's built-in handler, connected with
    the emulator's app-level token) instead of behind its HTTP server; `ack_timeout_s` is how
    long the emulator waits for an envelope's ack before Slack's retry. `slack_rate_limits=False`
    lifts the emulator's rate limits (the bench measures the bot's own concurrency, not
    Slack's per-channel budget)."""
    emulator = SlackEmulator(
        status_supported=status_supported,
        scopes=manifest_scopes(),
        events=manifest_events(),
        rate_limits=None
        if slack_rate_limits
        else RateLimits(tier3_per_minute=10**9, posts_per_channel=10**9),
        transport=transport,
        ack_timeout_s=ack_timeout_s,
    ).start()
    emulator.add_user(ALICE, "alice")
    emulator.add_user(BOB, "bob")
    emulator.add_user(OTHER_BOT_USER, "otherbot", is_bot=True, bot_id=OTHER_BOT_ID)
    emulator.add_channel(CHANNEL, "general", members=[ALICE, BOB, OTHER_BOT_USER])
    socket_mode = transport == "socket"
    values: dict[str, Any] = {
        "slack_bot_token": SecretStr(emulator.bot_token),
        "slack_signing_secret": SecretStr(emulator.signing_secret),
        "slack_api_url": emulator.api_url,
        **settings_overrides,
    }
    if socket_mode:  # the emulator's own app-level token, whatever the test set
        values["slack_app_token"] = SecretStr(emulator.app_token)
    settings = rig_settings(data_dir, **values)
    own_memory = memory is None
    mem = memory or open_memory(settings.memory_path)
    bot = create_bot(settings, agent, mem, socket_mode=socket_mode)
    bot.deps.progress_interval_s = progress_interval_s
    server: SlackHTTPServer | None = None
    handler: SocketModeHandler | None = None
    try:
        if socket_mode:
            handler = socket_mode_handler(bot, settings)
            handler.connect()  # type: ignore[no-untyped-call]
            emulator.wait_for(
                lambda: any(c.live for c in emulator.socket_connections),
                30,
                "the app did not open its Socket Mode connection",
            )
        else:
            server = SlackHTTPServer(
                bot.app, host="127.0.0.1", port=0, health={"memory": mem.ping}
            ).start()
            emulator.app_url = server.events_url
        yield SlackRig(emulator, server, bot, mem, settings, handler)
    finally:
        if server is not None:
            server.stop()
        if handler is not None:
            # Closed from the emulator's side first: Bolt's client otherwise waits out its
            # 3 s receive timeout before its own close returns.
            handler.client.auto_reconnect_enabled = False
            emulator.socket_close_connections()
            handler.close()  # type: ignore[no-untyped-call]
        bot.close()
        emulator.stop()
        if own_memory:
            mem.close()


_QUESTION = re.compile(r"^Question: (.*)$", re.MULTILINE)


def step_prompt(messages: list[BaseMessage]) -> str:
    """The step's own prompt text: the first message after the system prompt. A correction
    that repeated a failed statement is asked again by appending the reply and a note, so the
    last message is not always the prompt."""
    return str(messages[1].content) if len(messages) > 1 else ""


def prompt_kind(messages: list[BaseMessage]) -> str:
    """guard, generate, correct or evaluate, from the agent's system prompt."""
    system = str(messages[0].content)
    if system.startswith("You are the front desk"):
        return "guard"
    if system.startswith("You write one read-only Cypher"):
        return "correct" if "did not work" in step_prompt(messages) else "generate"
    if system.startswith("You check whether"):
        return "evaluate"
    return "?"


def prompt_question(messages: list[BaseMessage]) -> str:
    found = _QUESTION.findall(step_prompt(messages))
    return str(found[-1]).strip() if found else ""


def graph_responder(
    cypher_for: Callable[[str], str],
    *,
    standalone_for: Callable[[str, str], str] | None = None,
    delay_s: Callable[[str], float] | None = None,
) -> Callable[[list[BaseMessage]], str]:
    """A scripted-LLM responder for any order of calls: the guard accepts (rewriting with
    `standalone_for(question, prompt)`), generate writes `cypher_for(question)`, evaluate
    answers with the rows it was shown."""

    def reply(messages: list[BaseMessage]) -> str:
        kind = prompt_kind(messages)
        if delay_s is not None:
            time.sleep(delay_s(kind))
        question = prompt_question(messages)
        if kind == "guard":
            prompt = step_prompt(messages)
            standalone = standalone_for(question, prompt) if standalone_for else ""
            return guard_reply(standalone=standalone)
        if kind in ("generate", "correct"):
            return cypher_reply(cypher_for(question))
        if kind == "evaluate":
            content = step_prompt(messages)
            rows = content.split("):\n", 1)[-1].split("\n\nQuestion:", 1)[0]
            return evaluation_reply(answer=f"Found: {' '.join(rows.split())[:400]}")
        raise AssertionError(f"unexpected prompt: {str(messages[0].content)[:80]}")

    return reply
