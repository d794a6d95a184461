"""Charts for answers that read better as a picture: the kind from the result's shape, a
Vega-Lite spec, a PNG or SVG rendered locally by vl-convert (no browser, no network, no LLM).

`decide` is pure: columns and rows in, a chart kind (or the reason for none) out. `spec` builds
the Vega-Lite description, `render_png`/`render_svg` draw it in a child process (`Drawer`),
which draws Vega specs too (the route pictures of bot/path_image.py).
Everything here works on the rows a person may see (already redacted for the channel) and never
touches the graph.
"""

from __future__ import annotations

import atexit
import itertools
import logging
import math
import os
import re
import subprocess
import sys
import threading
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import date, datetime
from multiprocessing.connection import Connection
from pathlib import Path
from typing import Any, Literal

logger = logging.getLogger(__name__)

ChartKind = Literal["bar", "line", "scatter", "grouped_bar"]

MIN_ROWS = 2
MAX_BAR_ROWS = 30
MAX_LINE_ROWS = 200
MAX_SERIES = 4
"""A category and up to this many numbers: a grouped bar; more is a table, not a picture."""
LONG_LABEL = 12
"""Bar labels longer than this read better on a horizontal bar."""
WIDTH = 560
HEIGHT = 320
PALETTE = ("#0072B2", "#E69F00", "#009E73", "#D55E00", "#56B4E9", "#CC79A7", "#F0E442")
"""Okabe-Ito: told apart with every common colour-vision deficiency."""
VEGA_LITE_SCHEMA = "https://vega.github.io/schema/vega-lite/v5.json"

_TIME_NAME = re.compile(r"(date|day|week|month|year|quarter|time|period)", re.IGNORECASE)
_ISO_DATE = re.compile(r"^\d{4}-\d{2}(-\d{2})?([T ][\d:.]+Z?)?$")


@dataclass(frozen=True)
class Decision:
    """A chart kind for a result, or None with the reason (said by `ask --chart`)."""

    kind: ChartKind | None
    reason: str
    category: int | None = None
    """Column index of the labels (bar, grouped bar) or of the time axis (line)."""
    values: tuple[int, ...] = ()
    """Column indexes of the numbers (scatter: x then y)."""
    horizontal: bool = False


def _is_number(value: Any) -> bool:
    return (
        isinstance(value, int | float)
        and not isinstance(value, bool)
        and not (isinstance(value, float) and (math.isnan(value) or math.isinf(value)))
    )


def _column_kind(name: str, values: Sequence[Any]) -> str:
    """number, time, category or other, from the non-null values (and the name for years)."""
    present = [v for v in values if v is not None]
    if not present:
        return "empty"
    if all(_is_number(v) for v in present):
        named_time = bool(_TIME_NAME.search(name))
        years = all(isinstance(v, int) and 1000 <= v <= 2999 for v in present)
        return "time" if named_time and years else "number"
    if all(isinstance(v, date | datetime) for v in present):
        return "time"
    if all(isinstance(v, str) for v in present):
        if all(_ISO_DATE.match(v) for v in present):
            return "time"
        return "category"
    return "other"


def decide(columns: Sequence[str], rows: Sequence[Sequence[Any]]) -> Decision:
    """The chart a result's shape calls for: one category + one number → bar (horizontal when
    labels are long), a time column + numbers → line, two numbers → scatter, a category +
    several numbers → grouped bar. Single values, lists of names, wide or mixed tables, fewer
    than 2 or more than 30 rows (200 for a line): no chart."""
    if len(rows) < MIN_ROWS:
        return Decision(None, "a single value reads best as text")
    if len(columns) < 2:
        return Decision(None, "a list reads best as text")
    kinds = [
        _column_kind(name, [r[i] if i < len(r) else None for r in rows])
        for i, name in enumerate(columns)
    ]
    numbers = tuple(i for i, k in enumerate(kinds) if k == "number")
    labels = [i for i, k in enumerate(kinds) if k in ("category", "time")]
    if not numbers:
        return Decision(None, "no numbers to draw")
    if len(columns) > MAX_SERIES + 1 or "other" in kinds or len(labels) > 1:
        return Decision(None, "too wide a table for one picture")
    time = next((i for i in labels if kinds[i] == "time"), None)
    if time is not None:
        if len(rows) > MAX_LINE_ROWS:
            return Decision(None, f"more than {MAX_LINE_ROWS} points")
        return Decision("line", "numbers over time", category=time, values=numbers)
    if len(rows) > MAX_BAR_ROWS:
        return Decision(None, f"more than {MAX_BAR_ROWS} rows")
    if not labels:
        if len(numbers) == 2:
            return Decision("scatter", "two numbers", values=numbers)
        return Decision(None, "numbers without labels")
    category = labels[0]
    longest = max((len(str(r[category] or "")) for r in rows), default=0)
    horizontal = longest > LONG_LABEL or len(rows) > 12
    kind: ChartKind = "bar" if len(numbers) == 1 else "grouped_bar"
    why = "a number per category" if kind == "bar" else "several numbers per category"
    return Decision(kind, why, category=category, values=numbers, horizontal=horizontal)


def _title_case(name: str) -> str:
    words = re.sub(r"[_\s]+", " ", name).strip()
    return words[:1].upper() + words[1:] if words else name


def _label(value: Any) -> str:
    return "(none)" if value is None else str(value)


def spec(
    question: str, columns: Sequence[str], rows: Sequence[Sequence[Any]], decision: Decision
) -> dict[str, Any]:
    """The Vega-Lite spec of `decision` (kind must be set): the question as title, the column
    aliases as axis titles, rows with an empty number left out."""
    if decision.kind is None:
        raise ValueError(f"no chart: {decision.reason}")
    title = question.strip() if len(question.strip()) <= 90 else question.strip()[:89] + "…"
    base: dict[str, Any] = {
        "$schema": VEGA_LITE_SCHEMA,
        "title": {"text": title, "anchor": "start", "fontSize": 15},
        "width": WIDTH,
        "height": HEIGHT,
        "config": {
            "font": "sans-serif",
            "axis": {"labelFontSize": 12, "titleFontSize": 13, "labelLimit": 220},
            "legend": {"labelFontSize": 12, "titleFontSize": 12},
            "range": {"category": list(PALETTE)},
            "background": "white",
        },
    }
    if decision.kind == "scatter":
        x, y = decision.values[:2]
        points = [{"x": r[x], "y": r[y]} for r in rows if _is_number(r[x]) and _is_number(r[y])]
        return base | {
            "data": {"values": points},
            "mark": {"type": "point", "filled": True, "color": PALETTE[0], "size": 70},
            "encoding": {
                "x": {"field": "x", "type": "quantitative", "title": _title_case(columns[x])},
                "y": {"field": "y", "type": "quantitative", "title": _title_case(columns[y])},
            },
        }
    assert decision.category is not None
    category = decision.category
    long_rows = [
        {"label": _label(r[category]), "series": _title_case(columns[i]), "value": r[i]}
        for r in rows
        for i in decision.values
        if _is_number(r[i])
    ]
    label_title = _title_case(columns[category])
    if decision.kind == "line":
        time_type = "temporal" if isinstance(rows[0][category], str) else "ordinal"
        encoding: dict[str, Any] = {
            "x": {"field": "label", "type": time_type, "title": label_title, "sort": None},
            "y": {
                "field": "value",
                "type": "quantitative",
                "title": _value_title(columns, decision),
            },
        }
        if len(decision.values) > 1:
            encoding["color"] = {"field": "series", "type": "nominal", "title": None}
        mark: dict[str, Any] = {"type": "line", "point": True, "strokeWidth": 2.5}
        if len(decision.values) == 1:
            mark["color"] = PALETTE[0]
        return base | {"data": {"values": long_rows}, "mark": mark, "encoding": encoding}
    # The rows' order when the query sorted them (by label or by value, as the person asked:
    # SEV1..SEV4, fewest first); otherwise largest first. Grouped bars keep the rows' order.
    by_value = "-x" if decision.horizontal else "-y"
    ordered = decision.kind == "grouped_bar" or _sorted_rows(rows, category, decision.values[0])
    label: dict[str, Any] = {
        "field": "label",
        "type": "nominal",
        "title": label_title,
        "sort": None if ordered else by_value,
    }
    if not decision.horizontal:
        label["axis"] = {"labelAngle": 0 if _short_labels(rows, category) else -40}
    value = {"field": "value", "type": "quantitative", "title": _value_title(columns, decision)}
    encoding = {"y": label, "x": value} if decision.horizontal else {"x": label, "y": value}
    mark = {"type": "bar", "color": PALETTE[0]}
    if decision.kind == "grouped_bar":
        del mark["color"]
        encoding["color"] = {"field": "series", "type": "nominal", "title": None}
        offset = "yOffset" if decision.horizontal else "xOffset"
        encoding[offset] = {"field": "series", "type": "nominal"}
    height = (
        max(HEIGHT, 24 * len(rows) * max(1, len(decision.values)))
        if decision.horizontal
        else HEIGHT
    )
    return base | {
        "height": min(height, 900),
        "data": {"values": long_rows},
        "mark": mark,
        "encoding": encoding,
    }


def _sorted_rows(rows: Sequence[Sequence[Any]], label: int, value: int) -> bool:
    """Whether the rows come sorted by their label or their value (either way)."""

    def monotonic(keys: list[Any]) -> bool:
        try:
            pairs = list(itertools.pairwise(keys))
            return all(a <= b for a, b in pairs) or all(a >= b for a, b in pairs)
        except TypeError:
            return False

    labels = [str(r[label]) for r in rows if r[label] is not None]
    values = [r[value] for r in rows if _is_number(r[value])]
    return monotonic(labels) or monotonic(values)


def _short_labels(rows: Sequence[Sequence[Any]], label: int) -> bool:
    return len(rows) <= 8 and all(len(_label(r[label])) <= 8 for r in rows)


def _value_title(columns: Sequence[str], decision: Decision) -> str:
    if len(decision.values) == 1:
        return _title_case(columns[decision.values[0]])
    return "Value"


def alt_text(
    question: str, columns: Sequence[str], rows: Sequence[Sequence[Any]], decision: Decision
) -> str:
    """What the chart shows, in words, for screen readers (Slack's alt text)."""
    kind = {
        "bar": "Bar chart",
        "grouped_bar": "Grouped bar chart",
        "line": "Line chart",
        "scatter": "Scatter plot",
    }
    first = "; ".join(
        ", ".join(f"{columns[i]} {_label(r[i])}" for i in range(len(columns))) for r in rows[:5]
    )
    more = f"; and {len(rows) - 5} more rows" if len(rows) > 5 else ""
    return f"{kind[decision.kind or 'bar']} for “{question.strip()[:120]}”: {first}{more}."[:1000]


def is_vega(chart_spec: dict[str, Any]) -> bool:
    """Whether a spec is Vega (its `$schema` says so) rather than Vega-Lite."""
    return "/schema/vega/" in str(chart_spec.get("$schema", ""))


class ChartError(RuntimeError):
    """A chart could not be drawn (too slow, the drawing process died, vl-convert refused)."""


def serve_drawings() -> None:
    """The drawing process's loop: one (format, spec, scale) request at a time from stdin, one
    ("ok", drawing) or ("error", message) answer on the original stdout, until stdin closes."""
    import signal

    import vl_convert

    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C stops the bot; the bot stops us
    answers = os.dup(1)
    os.dup2(2, 1)  # anything the engine prints goes to stderr, never into the answers
    requests = Connection(0, writable=False)
    replies = Connection(answers, readable=False)
    while True:
        try:
            fmt, chart_spec, scale = requests.recv()
        except (EOFError, OSError):
            return
        answer: tuple[str, bytes | str]
        try:
            # Vega for the route pictures (bot/path_image.py), Vega-Lite for the charts.
            vega = is_vega(chart_spec)
            to_png = vl_convert.vega_to_png if vega else vl_convert.vegalite_to_png
            to_svg = vl_convert.vega_to_svg if vega else vl_convert.vegalite_to_svg
            drawn: bytes | str = (
                to_png(chart_spec, scale=scale) if fmt == "png" else to_svg(chart_spec)
            )
            answer = ("ok", drawn)
        except Exception as exc:  # vl-convert's errors come back as the answer
            answer = ("error", f"{type(exc).__name__}: {exc}")
        try:
            replies.send(answer)
        except OSError:  # the bot stopped waiting (or stopped): nobody to answer
            return


class Drawer:
    """Draws charts in a child process of its own.

    vl-convert holds the GIL while it renders (30-100 ms a chart, ~400 ms for the first, while
    its engine starts), so drawing in a thread stopped every other thread of the bot for that
    long: Slack acks, other conversations, the playground's page. The child (`python -c` running
    `serve_drawings`, so it does not depend on how the bot was started) is started on first use
    or by `warm_up`, draws one chart at a time, and is replaced when it dies or is too slow.
    """

    def __init__(self, timeout_s: float = 15.0) -> None:
        self.timeout_s = timeout_s
        self._lock = threading.Lock()
        self._process: subprocess.Popen[bytes] | None = None
        self._send: Connection | None = None
        self._receive: Connection | None = None

    def draw(self, fmt: Literal["png", "svg"], chart_spec: dict[str, Any], scale: float) -> Any:
        """The chart drawn as PNG bytes or SVG text; `ChartError` when it cannot be (the caller
        waits at most twice `timeout_s`: for the process, then for the drawing)."""
        if not self._lock.acquire(timeout=self.timeout_s):
            raise ChartError(f"other charts kept the drawing process busy for {self.timeout_s:g} s")
        try:
            status, value = self._draw_locked((fmt, chart_spec, scale))
        finally:
            self._lock.release()
        if status != "ok":
            raise ChartError(value)
        return value

    def _draw_locked(self, request: tuple[str, dict[str, Any], float]) -> tuple[str, Any]:
        # A process that died since the last chart may be noticed only here, on the pipe: then
        # the chart is tried once more in a new one. A chart that kills a new process is not
        # tried again.
        for retried in (False, True):
            send, receive, fresh = self._connections()
            try:
                send.send(request)
                if not receive.poll(self.timeout_s):
                    self._stop(kill=True)
                    raise ChartError(f"drawing took longer than {self.timeout_s:g} s")
                answer: tuple[str, Any] = receive.recv()
                return answer
            except (EOFError, OSError) as exc:
                self._stop(kill=True)
                if fresh or retried:
                    raise ChartError(
                        "the drawing process ended; the next chart starts a new one"
                    ) from exc
        raise AssertionError("unreachable")

    def warm_up(self) -> None:
        """Start the process and its engine in the background, so the first answer's chart
        does not pay for it."""

        def draw_one() -> None:
            try:
                self.draw("svg", _TINY_SPEC, 1.0)
            except ChartError:
                logger.warning("the chart engine did not start", exc_info=True)

        threading.Thread(target=draw_one, name="chart-warm-up", daemon=True).start()

    @property
    def pid(self) -> int | None:
        """The drawing process's pid while it runs."""
        process = self._process
        return process.pid if process is not None and process.poll() is None else None

    def close(self) -> None:
        with self._lock:
            self._stop()

    def _connections(self) -> tuple[Connection, Connection, bool]:
        """The pipes to the drawing process, and whether it was started just now."""
        started = self._send is None or self._receive is None or self.pid is None
        if started:
            self._stop()
            # The package's own directory first on the path: the child imports `bot` even when
            # the bot runs from a checkout that is not installed.
            root = str(Path(__file__).resolve().parents[1])
            env = os.environ | {
                "PYTHONPATH": os.pathsep.join(filter(None, [root, os.environ.get("PYTHONPATH")]))
            }
            process = subprocess.Popen(
                [sys.executable, "-c", "from bot.charts import serve_drawings; serve_drawings()"],
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                env=env,
            )
            assert process.stdin is not None and process.stdout is not None
            self._send = Connection(os.dup(process.stdin.fileno()), readable=False)
            self._receive = Connection(os.dup(process.stdout.fileno()), writable=False)
            process.stdin.close()
            process.stdout.close()
            self._process = process
        assert self._send is not None and self._receive is not None
        return self._send, self._receive, started

    def _stop(self, *, kill: bool = False) -> None:
        """End the drawing process: it ends by itself when its stdin closes; one that is stuck
        in a drawing (`kill`, or still there after a second) is killed."""
        send, receive, process = self._send, self._receive, self._process
        self._send = self._receive = self._process = None
        for conn in (send, receive):
            if conn is not None:
                conn.close()
        if process is None:
            return
        if not kill:
            try:
                process.wait(timeout=1)
                return
            except subprocess.TimeoutExpired:
                pass
        process.kill()
        process.wait(timeout=5)


_TINY_SPEC: dict[str, Any] = {
    "$schema": VEGA_LITE_SCHEMA,
    "data": {"values": [{"x": "a", "y": 1}]},
    "mark": "bar",
    "encoding": {
        "x": {"field": "x", "type": "nominal"},
        "y": {"field": "y", "type": "quantitative"},
    },
}

drawer = Drawer()
"""The process's drawer: every chart of the bot, the CLI and the benchmarks goes through it."""
atexit.register(drawer.close)


def render_png(chart_spec: dict[str, Any], *, scale: float = 2.0) -> bytes:
    """The chart as PNG (scale 2: sharp in Slack's preview and on high-density screens)."""
    png: bytes = drawer.draw("png", chart_spec, scale)
    return png


def render_svg(chart_spec: dict[str, Any]) -> str:
    svg: str = drawer.draw("svg", chart_spec, 1.0)
    return svg


@dataclass(frozen=True)
class Chart:
    """A drawn chart and what it was drawn from."""

    png: bytes
    spec: dict[str, Any]
    alt_text: str
    kind: ChartKind


def chart_for(
    question: str, columns: Sequence[str], rows: Sequence[Sequence[Any]]
) -> Chart | Decision:
    """The chart for a result, or the `Decision` saying why there is none."""
    decision = decide(columns, rows)
    if decision.kind is None:
        return decision
    chart_spec = spec(question, columns, rows, decision)
    return Chart(
        png=render_png(chart_spec),
        spec=chart_spec,
        alt_text=alt_text(question, columns, rows, decision),
        kind=decision.kind,
    )
