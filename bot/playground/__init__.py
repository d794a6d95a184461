"""The local playground: the real bot, agent, graph and memory in a browser, with Slack played locally."""

from bot.playground.page import PlaygroundStartError
from bot.playground.playground import Playground, build_playground
from bot.wiring import FROM_SETTINGS

__all__ = ["FROM_SETTINGS", "Playground", "PlaygroundStartError", "build_playground"]
