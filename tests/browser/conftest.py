"""Browser fixtures: Debian's headless Chromium driven by Playwright, the playground on the demo graph."""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any, NoReturn

import pytest

from bot.playground import Playground
from graph_agent.graphdb import GraphDB
from tests.support.playground import running_playground, scripted_model

if TYPE_CHECKING:
    from playwright.sync_api import Browser, Page

CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
ARTIFACTS = Path(__file__).resolve().parents[2] / "test-artifacts"
VIEWPORT = {"width": 1440, "height": 900}


def _skip(reason: str) -> NoReturn:
    print(f"\nbrowser tests skipped: {reason}")
    pytest.skip(reason)


@pytest.fixture(scope="module")
def browser() -> Iterator[Browser]:
    """Headless Chromium, or a skip saying why there is none.

    Module-scoped on purpose: Playwright's sync API runs an event loop on the main thread
    until it stops, and every later test that calls asyncio.run() would fail while it runs.
    """
    try:
        from playwright.sync_api import Error, sync_playwright
    except ImportError:
        _skip("the playwright package is not installed (pip install -e '.[dev]')")
    chromium = shutil.which("chromium") or (CHROMIUM if Path(CHROMIUM).exists() else None)
    if chromium is None:
        _skip("no Chromium: install Debian's `chromium` package (apt-get install -y chromium)")
    with sync_playwright() as playwright:
        try:
            launched = playwright.chromium.launch(
                executable_path=chromium, args=CHROMIUM_ARGS, headless=True
            )
        except Error as exc:
            _skip(f"Chromium at {chromium} did not start: {str(exc).splitlines()[0]}")
        yield launched
        launched.close()


@pytest.fixture
def page(browser: Browser) -> Iterator[Page]:
    context = browser.new_context(viewport=VIEWPORT)  # type: ignore[arg-type]
    context.set_default_timeout(30_000)
    opened = context.new_page()
    yield opened
    context.close()


@pytest.fixture(scope="module")
def playground(demo_db: GraphDB, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Playground]:
    """The playground with the scripted LLM, slowed a little so the live status can be seen."""
    model = scripted_model(delay_s=0.4)
    with running_playground(tmp_path_factory.mktemp("browser"), demo_db, model) as running:
        yield running


@pytest.fixture(scope="module")
def offline_playground(
    demo_db: GraphDB, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Playground]:
    """The playground with no LLM configured."""
    with running_playground(tmp_path_factory.mktemp("offline"), demo_db, None) as running:
        yield running


def screenshot(page: Page, name: str, **options: Any) -> Path:
    """Save a screenshot under test-artifacts/ (gitignored) and return its path."""
    ARTIFACTS.mkdir(exist_ok=True)
    path = ARTIFACTS / f"playground-{name}.png"
    page.screenshot(path=str(path), **options)
    return path
