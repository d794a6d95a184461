"""The picture of a connection's routes: each route a left-to-right chain of named boxes joined by
labelled arrows, several routes stacked, as a Vega spec drawn by vl-convert in the chart process.

Why Vega through vl-convert rather than graphviz:

* vl-convert already draws the bot's charts: a Python wheel with its own renderer, so no system
  package (graphviz needs Debian's `graphviz` and a `dot` process per picture), no browser, no
  network, and the same child process, time bound and failure handling (`charts.Drawer`).
* A route is a chain, not a general graph: its layout is a grid (a route per row, a node per
  column) worked out here, so graphviz's layout engine would have nothing to do. Vega rather
  than Vega-Lite because Vega's marks (rect, text, rule, symbol) go where the spec puts them;
  Vega-Lite would map the same data onto axes and scales.

What it is drawn from: the rows the answer was made from (`Connection.rows()` after the
channel's redaction, as `AgentResult.rows` carries them), read back by `routes_in`. A row whose
chain does not read back exactly (`chain()` of what was read must give the row's chain again)
leaves the answer without a picture. So the picture shows the names, labels and relationship
types the text shows and nothing more: the two ends' labels, which no row holds, are not drawn.
"""

from __future__ import annotations

import logging
import re
import unicodedata
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from bot import charts
from graph_agent.tools import DEFAULT_LIMITS, Step, chain

logger = logging.getLogger(__name__)

VEGA_SCHEMA = "https://vega.github.io/schema/vega/v5.json"
MIN_HOPS = 3
"""A route of one or two hops reads at a glance as text; a longer one gets a picture."""
MAX_ROUTES = DEFAULT_LIMITS.max_paths
"""No more routes than the connection tool finds."""
NAME_CHARS = 22
LABEL_CHARS = 22
TYPE_CHARS = 18
"""Longer names, labels and relationship types are shortened with `…` to fit their box or arrow."""

NODE_WIDTH = 168
NODE_HEIGHT = 48
GAP = 132
"""Between two boxes: room for the arrow and its relationship type."""
CAPTION_HEIGHT = 22
ROW_HEIGHT = CAPTION_HEIGHT + NODE_HEIGHT + 26
PADDING = 16
INK = "#333333"
MUTED = "#5f5f5f"
END_FILL, END_STROKE = "#FCEFD9", charts.PALETTE[1]
"""The two entities asked about: Okabe-Ito orange, like the charts' second colour."""
INNER_FILL, INNER_STROKE = "#E3EFF8", charts.PALETTE[0]

_COLUMNS = ("hops", "chain", "through")
_ARROW = re.compile(r" (?:—(?P<out>[^\s—→←]+)→|←(?P<in>[^\s—→←]+)—) ")
"""The inverse of `graph_agent.tools.entity_card.arrow`, with the spaces `chain` puts around it."""


@dataclass(frozen=True)
class PathNode:
    """A node of a route as the answer shows it: its name, and its label where a row gives it."""

    name: str
    label: str | None = None


@dataclass(frozen=True)
class ShownRoute:
    """One route read back from the answer's rows: its nodes, its relationships, its chain."""

    nodes: tuple[PathNode, ...]
    steps: tuple[Step, ...]
    chain: str

    @property
    def hops(self) -> int:
        return len(self.steps)


class _Unreadable(ValueError):
    """A row that does not read back as the route it was written from."""


def routes_in(columns: Sequence[str], rows: Sequence[Sequence[Any]]) -> tuple[ShownRoute, ...]:
    """The routes of a connection's rows (`Connection.columns`), at most `MAX_ROUTES`; none at
    all when a column is missing or any row does not read back exactly (redacted, cut, or a
    name that holds an arrow)."""
    if not all(name in columns for name in _COLUMNS):
        return ()
    hops_at, chain_at, through_at = (list(columns).index(name) for name in _COLUMNS)
    try:
        return tuple(
            _route(row[hops_at], row[chain_at], row[through_at]) for row in rows[:MAX_ROUTES]
        )
    except (_Unreadable, IndexError):
        return ()


def _route(hops: Any, text: Any, through: Any) -> ShownRoute:
    if not isinstance(hops, int) or not isinstance(text, str) or not isinstance(through, list):
        raise _Unreadable("not a connection row")
    names: list[str] = []
    steps: list[Step] = []
    start = 0
    for found in _ARROW.finditer(text):
        names.append(text[start : found.start()])
        out, into = found.group("out"), found.group("in")
        steps.append(Step(out or into, out is not None))
        start = found.end()
    names.append(text[start:])
    if len(steps) != hops or len(through) != max(hops - 1, 0) or not all(names):
        raise _Unreadable("the chain does not have the row's hops")
    if chain(names, steps) != text:
        raise _Unreadable("the chain does not read back")
    inner = [_label_in(name, shown) for name, shown in zip(names[1:-1], through, strict=True)]
    labels = [None, *inner, None] if hops else [None]
    nodes = tuple(PathNode(name, label) for name, label in zip(names, labels, strict=True))
    return ShownRoute(nodes, tuple(steps), text)


def _label_in(name: str, shown: Any) -> str | None:
    """The label in an inner node's `Entity.text()` (`Payments (Team)`, `Payments (Team), …`);
    None for one named by its number (`Order 10248`)."""
    if not isinstance(shown, str):
        raise _Unreadable("not a node's text")
    if shown == name or shown.startswith(f"{name}, "):
        return None
    rest = shown.removeprefix(f"{name} (")
    label = rest.split(")", 1)[0] if rest != shown and ")" in rest else ""
    if not label:
        raise _Unreadable("not this node's text")
    return label


def wanted(routes: Sequence[ShownRoute]) -> bool:
    """Whether the routes get a picture: some route is longer than two hops."""
    return any(route.hops >= MIN_HOPS for route in routes)


def shortened(text: str, limit: int) -> str:
    """`text` in at most `limit` characters, `…` where cut; control and format characters (line
    breaks, bidi overrides) dropped, since they would rearrange the drawn text."""
    joined = " ".join(text.split())
    clean = "".join(c for c in joined if unicodedata.category(c) not in ("Cc", "Cf"))
    return clean if len(clean) <= limit else clean[: limit - 1].rstrip() + "…"


def title(routes: Sequence[ShownRoute]) -> str:
    """What the picture is called: the first chain, after how many routes there are (the title
    is cut short in Slack, the count first keeps it)."""
    if not routes:
        return ""
    return (f"{len(routes)} routes: " if len(routes) > 1 else "") + routes[0].chain


def alt_text(routes: Sequence[ShownRoute]) -> str:
    """What the picture shows, in words, for screen readers: every chain."""
    count = f"{len(routes)} route{'s' if len(routes) != 1 else ''}"
    chains = "; ".join(f"{n}. {route.chain}" for n, route in enumerate(routes, start=1))
    return f"How they are connected, {count}: {chains}."[:1000]


def spec(routes: Sequence[ShownRoute]) -> dict[str, Any]:
    """The Vega spec of the routes: a row per route, captioned with its number and hops; a box
    per node (the two ends in orange) with its name and, where shown, its label; an arrow per
    relationship, pointing the way it points in the graph, with its type above it."""
    routes = list(routes[:MAX_ROUTES])
    if not routes:
        raise ValueError("no route to draw")
    columns = max(len(route.nodes) for route in routes)
    width = columns * NODE_WIDTH + (columns - 1) * GAP
    captions: list[dict[str, Any]] = []
    nodes: list[dict[str, Any]] = []
    steps: list[dict[str, Any]] = []
    for row, route in enumerate(routes):
        top = row * ROW_HEIGHT
        box_top = top + CAPTION_HEIGHT
        middle = box_top + NODE_HEIGHT / 2
        captions.append(
            {
                "x": 0,
                "y": top + CAPTION_HEIGHT - 6,
                "text": f"Route {row + 1} · {route.hops} hop{'s' if route.hops != 1 else ''}",
            }
        )
        last = len(route.nodes) - 1
        for column, node in enumerate(route.nodes):
            end = column in (0, last)
            nodes.append(
                {
                    "route": row + 1,
                    "x": column * (NODE_WIDTH + GAP),
                    "y": box_top,
                    "name": shortened(node.name, NAME_CHARS),
                    "label": shortened(node.label, LABEL_CHARS) if node.label else "",
                    "name_y": middle - 7 if node.label else middle,
                    "label_y": middle + 11,
                    "fill": END_FILL if end else INNER_FILL,
                    "stroke": END_STROKE if end else INNER_STROKE,
                }
            )
        for column, step in enumerate(route.steps):
            left = column * (NODE_WIDTH + GAP) + NODE_WIDTH
            right = left + GAP
            steps.append(
                {
                    "route": row + 1,
                    "relationship": shortened(step.relationship, TYPE_CHARS),
                    "forward": step.forward,
                    "x": left,
                    "x2": right,
                    "y": middle,
                    "head": "triangle-right" if step.forward else "triangle-left",
                    "head_x": right - 6 if step.forward else left + 6,
                    "text_x": (left + right) / 2,
                    "text_y": middle - 8,
                }
            )

    def field(name: str) -> dict[str, str]:
        return {"field": name}

    def value(v: Any) -> dict[str, Any]:
        return {"value": v}

    return {
        "$schema": VEGA_SCHEMA,
        "description": alt_text(routes),
        "width": width,
        "height": len(routes) * ROW_HEIGHT - 26,
        "padding": PADDING,
        "background": "white",
        "config": {"text": {"font": "sans-serif"}, "title": {"font": "sans-serif"}},
        "data": [
            {"name": "captions", "values": captions},
            {"name": "nodes", "values": nodes},
            {"name": "steps", "values": steps},
        ],
        "marks": [
            {
                "type": "text",
                "from": {"data": "captions"},
                "encode": {
                    "enter": {
                        "x": field("x"),
                        "y": field("y"),
                        "text": field("text"),
                        "fontSize": value(12),
                        "fill": value(MUTED),
                    }
                },
            },
            {
                "type": "rule",
                "from": {"data": "steps"},
                "encode": {
                    "enter": {
                        "x": field("x"),
                        "x2": field("x2"),
                        "y": field("y"),
                        "stroke": value(INK),
                        "strokeWidth": value(1.5),
                    }
                },
            },
            {
                "type": "symbol",
                "from": {"data": "steps"},
                "encode": {
                    "enter": {
                        "x": field("head_x"),
                        "y": field("y"),
                        "shape": field("head"),
                        "size": value(110),
                        "fill": value(INK),
                    }
                },
            },
            {
                "type": "text",
                "from": {"data": "steps"},
                "encode": {
                    "enter": {
                        "x": field("text_x"),
                        "y": field("text_y"),
                        "text": field("relationship"),
                        "align": value("center"),
                        "baseline": value("bottom"),
                        "fontSize": value(11),
                        "fill": value(INK),
                        "limit": value(GAP - 8),
                    }
                },
            },
            {
                "type": "rect",
                "from": {"data": "nodes"},
                "encode": {
                    "enter": {
                        "x": field("x"),
                        "y": field("y"),
                        "width": value(NODE_WIDTH),
                        "height": value(NODE_HEIGHT),
                        "cornerRadius": value(6),
                        "fill": field("fill"),
                        "stroke": field("stroke"),
                        "strokeWidth": value(1.5),
                    }
                },
            },
            {
                "type": "text",
                "from": {"data": "nodes"},
                "encode": {
                    "enter": {
                        "x": {"field": "x", "offset": NODE_WIDTH / 2},
                        "y": field("name_y"),
                        "text": field("name"),
                        "align": value("center"),
                        "baseline": value("middle"),
                        "fontSize": value(13),
                        "fontWeight": value("bold"),
                        "fill": value(INK),
                        "limit": value(NODE_WIDTH - 10),
                    }
                },
            },
            {
                "type": "text",
                "from": {"data": "nodes"},
                "encode": {
                    "enter": {
                        "x": {"field": "x", "offset": NODE_WIDTH / 2},
                        "y": field("label_y"),
                        "text": field("label"),
                        "align": value("center"),
                        "baseline": value("middle"),
                        "fontSize": value(11),
                        "fill": value(MUTED),
                        "limit": value(NODE_WIDTH - 10),
                    }
                },
            },
        ],
    }


@dataclass(frozen=True)
class PathImage:
    """A drawn picture of a connection's routes, and what it was drawn from."""

    png: bytes
    spec: dict[str, Any]
    title: str
    alt_text: str
    routes: tuple[ShownRoute, ...]


def image_for(columns: Sequence[str], rows: Sequence[Sequence[Any]]) -> PathImage | None:
    """The picture of a connection answer's routes, drawn in the chart process (`ChartError`
    when it cannot be); None when no route is longer than two hops or the rows do not read
    back as routes."""
    routes = routes_in(columns, rows)
    if not routes:
        if rows:
            logger.debug("no route picture: the rows do not read back as routes")
        return None
    if not wanted(routes):
        return None
    drawn_spec = spec(routes)
    return PathImage(
        png=charts.render_png(drawn_spec),
        spec=drawn_spec,
        title=title(routes),
        alt_text=alt_text(routes),
        routes=routes,
    )
