"""One bot instance in its own process, for tests and benches of several instances.

`python -m rig.instance --memory-url … --api-url … …` runs the real Slack app in
HTTP mode (real Bolt app, real HTTP server, the memory at `--memory-url`, the graph on the
embedded server under `--graph-dir`) with a scripted LLM that answers every question with
`--cypher`. It prints its events URL, then serves until its stdin closes. Questions that
contain `--slow-word` wait `--slow-s` in the generate step (to kill an instance mid-answer);
`--llm-delay-s` is added to every generate step (to stand in for a real model's latency).
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from langchain_core.messages import BaseMessage

ROOT = Path(__file__).resolve().parents[1]


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    for option in (
        "--memory-url", "--graph-dir", "--graph-name", "--api-url", "--bot-token",
        "--signing-secret", "--cypher", "--data-dir",
    ):  # fmt: skip
        parser.add_argument(option, required=True)
    parser.add_argument("--lease-s", type=float, default=120.0)
    parser.add_argument("--slow-word", default="")
    parser.add_argument("--slow-s", type=float, default=0.0)
    parser.add_argument("--llm-delay-s", type=float, default=0.0)
    parser.add_argument("--workers", type=int, default=32)
    args = parser.parse_args(argv)

    from pydantic import SecretStr

    from bot.settings import Settings
    from bot.slack.app import create_bot
    from bot.slack.http_server import SlackHTTPServer
    from bot.wiring import build_agent
    from graph_agent.graphdb import connect
    from graph_agent.llm import LLMs
    from memory import open_memory
    from rig.scripted_llm import ScriptedChatModel
    from rig.slack import graph_responder, prompt_kind, prompt_question

    settings = Settings(
        _env_file=None,  # type: ignore[call-arg]
        data_dir=Path(args.data_dir),
        memory_url=args.memory_url,
        claim_lease_s=args.lease_s,
        workers=args.workers,
        rate_per_minute=100_000,
        rate_per_day=1_000_000,
        candidates=1,  # the scripted model stands in for a local server
        slack_bot_token=SecretStr(args.bot_token),
        slack_signing_secret=SecretStr(args.signing_secret),
        slack_api_url=args.api_url,
        charts="off",
    )
    answer = graph_responder(lambda question: str(args.cypher))

    def reply(messages: list[BaseMessage]) -> str:
        if prompt_kind(messages) == "generate":
            if args.slow_word and args.slow_word in prompt_question(messages).lower():
                time.sleep(args.slow_s)
            elif args.llm_delay_s:
                time.sleep(args.llm_delay_s)
        return answer(messages)

    db = connect("embedded", data_dir=Path(args.graph_dir), graph_name=args.graph_name)
    model = ScriptedChatModel(responder=reply)
    with open_memory(settings.memory_location) as memory:
        agent = build_agent(settings, memory.examples, db=db, llms=LLMs(cypher=model, fast=model))
        bot = create_bot(settings, agent, memory, socket_mode=False)
        server = SlackHTTPServer(bot.app, host="127.0.0.1", port=0, health={}).start()
        print(server.events_url, flush=True)  # noqa: T201 - the parent reads the URL here
        sys.stdin.read()  # the parent closes stdin to stop us
        server.stop()
        bot.close()
    db.close()


@contextmanager
def instance_process(*args: str) -> Iterator[tuple[str, subprocess.Popen[str]]]:
    """Start an instance with these arguments; yield (events URL, process); stop it after."""
    proc = subprocess.Popen(
        [sys.executable, "-m", "rig.instance", *args],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, cwd=ROOT,
        env={**os.environ, "PYTHONHASHSEED": "0"},
    )  # fmt: skip
    try:
        assert proc.stdout is not None
        url = proc.stdout.readline().strip()
        if not url:
            raise RuntimeError("the bot instance did not start (see its stderr above)")
        yield url, proc
    finally:
        if proc.poll() is None and proc.stdin is not None:
            proc.stdin.close()
            try:
                proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()


if __name__ == "__main__":
    main()
