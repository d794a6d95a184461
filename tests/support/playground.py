"""A running playground on the demo graph for tests: the scripted LLM (or none) injected, port 0."""

from __future__ import annotations

import json
import urllib.error
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from bot.playground import Playground, build_playground
from graph_agent.graphdb import GraphDB
from graph_agent.llm import LLMs
from rig.scripted_llm import ScriptedChatModel
from rig.slack import graph_responder, rig_settings

REDIS_SERVICES = (
    "MATCH (s:Service)-[:USES]->(:Technology {name: 'Redis'}) "
    "RETURN s.name AS service ORDER BY service"
)
REDIS_TIER_1 = (
    "MATCH (s:Service)-[:USES]->(:Technology {name: 'Redis'}) WHERE s.tier = 1 "
    "RETURN s.name AS service, s.tier AS tier ORDER BY service"
)
TEAM_COUNT = "MATCH (t:Team) RETURN count(t) AS teams"
PER_SEVERITY = (
    "MATCH (i:Incident) RETURN i.severity AS severity, count(i) AS incidents ORDER BY severity"
)
FOLLOW_UP = "Which of those are tier 1?"
FOLLOW_UP_STANDALONE = "Which services that use Redis are tier 1?"


def _cypher_for(question: str) -> str:
    text = question.lower()
    if "tier 1" in text:
        return REDIS_TIER_1
    if "redis" in text:
        return REDIS_SERVICES
    if "severity" in text:
        return PER_SEVERITY
    if "team" in text:
        return TEAM_COUNT
    return "MATCH (s:Service) RETURN count(s) AS services"


def _standalone_for(question: str, prompt: str) -> str:
    return FOLLOW_UP_STANDALONE if question == FOLLOW_UP else ""


def scripted_model(delay_s: float = 0.0) -> ScriptedChatModel:
    """Answers any question about the demo graph; `delay_s` before each call keeps the
    "working on it" status on screen long enough to see."""
    return ScriptedChatModel(
        responder=graph_responder(
            _cypher_for,
            standalone_for=_standalone_for,
            delay_s=(lambda kind: delay_s) if delay_s else None,
        )
    )


@contextmanager
def running_playground(
    data_dir: Path, db: GraphDB, model: ScriptedChatModel | None, **overrides: Any
) -> Iterator[Playground]:
    """A started playground (page on a free port) on `db`; `model` None means no LLM."""
    settings = rig_settings(data_dir, **overrides)
    llms = LLMs(cypher=model, fast=model) if model is not None else None
    playground = build_playground(settings, llms=llms, db=db, port=0, llm_name="scripted")
    playground.bot.deps.progress_interval_s = 0.2
    try:
        yield playground
    finally:
        playground.close()


def get_json(url: str) -> tuple[int, Any]:
    try:
        with urllib.request.urlopen(url, timeout=10) as response:
            return response.status, json.loads(response.read())
    except urllib.error.HTTPError as exc:
        return exc.code, json.loads(exc.read() or b"{}")


def post_json(
    url: str, body: Any, *, content_type: str = "application/json", host: str | None = None
) -> tuple[int, Any]:
    headers = {"Content-Type": content_type}
    if host:
        headers["Host"] = host
    request = urllib.request.Request(
        url, data=json.dumps(body).encode(), headers=headers, method="POST"
    )
    try:
        with urllib.request.urlopen(request, timeout=10) as response:
            return response.status, json.loads(response.read())
    except urllib.error.HTTPError as exc:
        return exc.code, json.loads(exc.read() or b"{}")
