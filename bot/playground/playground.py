"""Starting the playground: graph, memory, agent, the local Slack, the real Bolt app and the page."""

from __future__ import annotations

import logging
import secrets
from contextlib import ExitStack
from dataclasses import dataclass, field
from typing import Final

from pydantic import SecretStr

from bot.playground.emulator import SlackEmulator
from bot.playground.page import LLMInfo, PageServer, Person
from bot.playground.trace import TracingAgent
from bot.settings import Settings
from bot.slack.app import SlackBot, create_bot
from bot.slack.http_server import SlackHTTPServer
from bot.wiring import (
    FROM_SETTINGS,
    _FromSettings,
    build_db,
    open_runtime,
    start_schema_examples,
)
from graph_agent.graphdb import GraphDB
from graph_agent.llm import LLMs
from memory import Memory

logger = logging.getLogger(__name__)

PEOPLE: Final = (Person("U0ALEX", "alex"), Person("U0SAM", "sam"))
"""Two people, so votes by several users can be tried."""
CHANNEL_ID: Final = "C0ENGQUEST"
CHANNEL_NAME: Final = "eng-questions"
SUGGESTED = 6
"""Seed questions offered as one-click chips."""


@dataclass
class Playground:
    """Everything the playground runs; `close()` stops it all (in reverse order)."""

    settings: Settings
    db: GraphDB
    memory: Memory
    agent: TracingAgent
    emulator: SlackEmulator
    bot: SlackBot
    app_server: SlackHTTPServer
    page: PageServer
    _stack: ExitStack = field(repr=False)

    @property
    def url(self) -> str:
        return self.page.url

    def serve_forever(self) -> None:
        """Block until interrupted (the servers run on their own threads)."""
        self.page.wait_closed()

    def close(self) -> None:
        self._stack.close()

    def __enter__(self) -> Playground:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def ensure_demo(db: GraphDB) -> bool:
    """Load the demo graph into an empty database; True when it did."""
    from graph_agent.demo import load_demo
    from graph_agent.graphdb.protocol import persist

    nodes, _ = db.counts()
    if nodes:
        return False
    logger.info("the graph is empty: loading the demo graph")
    stats = load_demo(db)
    persist(db)
    logger.info("loaded %d nodes and %d relationships", stats.nodes, stats.relationships)
    return True


def ensure_seed_examples(memory: Memory, db: GraphDB, fingerprint: str | None) -> int:
    """Import the demo's verified questions into an empty example store; returns how many."""
    if memory.examples.list(limit=1):
        return 0

    def validate(cypher: str) -> str | None:
        verdict = db.validate(cypher)
        if verdict.ok and verdict.read_only is not False:
            return None
        return verdict.error or "not a read-only query"

    from graph_agent.demo import seed_examples_path

    report = memory.examples.import_file(
        seed_examples_path(), validate, schema_fingerprint=fingerprint
    )
    for invalid in report.invalid:
        logger.warning("seed example %d not imported: %s", invalid.index, invalid.error)
    return len(report.imported)


def _workspace(emulator: SlackEmulator) -> None:
    for person in PEOPLE:
        emulator.add_user(person.id, person.name)
        emulator.open_dm(person.id)
    emulator.add_channel(CHANNEL_ID, CHANNEL_NAME, members=[p.id for p in PEOPLE])


def build_playground(
    settings: Settings,
    *,
    llms: LLMs | _FromSettings | None = FROM_SETTINGS,
    db: GraphDB | None = None,
    port: int | None = None,
    llm_name: str | None = None,
) -> Playground:
    """Start the playground and return it running; `port` None is PLAYGROUND_PORT, 0 a free one.

    Tests pass their scripted `llms` (or None: no LLM configured) and the session's `db`."""
    with ExitStack() as stack:
        if db is None:
            db = build_db(settings)
            stack.callback(db.close)
        ensure_demo(db)
        runtime = stack.enter_context(open_runtime(settings, db=db, llms=llms))
        memory, agent = runtime.memory, runtime.agent
        assert memory is not None
        seeded = ensure_seed_examples(memory, db, agent.schema_fingerprint)
        if seeded:
            logger.info("seeded %d example questions", seeded)
        # After the seeds (they are imported only into an empty store); on a thread, joined
        # before memory closes, so the page is up while a big graph is still being sampled.
        schema_thread = start_schema_examples(settings, memory, agent)
        if schema_thread is not None:
            stack.callback(schema_thread.join, 30)
        tracing = TracingAgent(agent)

        # A fresh secret per run: the app verifies every event exactly as it would Slack's.
        emulator = SlackEmulator(
            signing_secret=secrets.token_hex(16),
            bot_token=f"xoxb-playground-{secrets.token_hex(8)}",
        ).start()
        stack.callback(emulator.stop)
        _workspace(emulator)
        slack_settings = settings.model_copy(
            update={
                "slack_bot_token": SecretStr(emulator.bot_token),
                "slack_signing_secret": SecretStr(emulator.signing_secret),
                "slack_app_token": None,
                "slack_api_url": emulator.api_url,
                **playground_rates(settings),
            }
        )
        bot = create_bot(slack_settings, tracing, memory, socket_mode=False)
        stack.callback(bot.close)
        app_server = SlackHTTPServer(
            bot.app,
            host="127.0.0.1",
            port=0,
            health={"memory": memory.ping, "graph": db.ping},
        ).start()
        stack.callback(app_server.stop)
        emulator.app_url = app_server.events_url

        if agent.llms is None:
            info = LLMInfo(configured=False, model=None)
        else:
            info = LLMInfo(configured=True, model=llm_name or settings.llm_model)
        suggestions = [
            e.question for e in memory.examples.list(status="active", source="seed", limit=50)
        ]
        page = PageServer(
            emulator,
            memory,
            tracing,
            people=PEOPLE,
            llm=info,
            suggestions=list(reversed(suggestions))[:SUGGESTED],
            port=settings.playground_port if port is None else port,
        ).start()
        stack.callback(page.stop)
        playground = Playground(
            settings, db, memory, tracing, emulator, bot, app_server, page, stack.pop_all()
        )
    logger.info("playground ready at %s", playground.url)
    return playground


PLAYGROUND_RATE_PER_MINUTE = 30
"""Questions a minute in the playground when RATE_PER_MINUTE is not set: one person trying
the bot on their own machine met Slack's default of 6 at the seventh question of a minute."""


def playground_rates(settings: Settings) -> dict[str, int]:
    """The playground's per-minute limit: RATE_PER_MINUTE when set, else a trial's pace."""
    if "rate_per_minute" in settings.model_fields_set:
        return {}
    return {"rate_per_minute": max(settings.rate_per_minute, PLAYGROUND_RATE_PER_MINUTE)}
