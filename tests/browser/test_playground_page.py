"""The playground page in headless Chromium: ask, follow up, DM, vote, switch user, offline answers."""

from __future__ import annotations

import re
from typing import Any

import pytest
from playwright.sync_api import Locator, Page, expect

from bot.playground import Playground
from bot.playground.playground import CHANNEL_ID
from tests.browser.conftest import screenshot
from tests.support.playground import FOLLOW_UP

pytestmark = pytest.mark.browser


def _send(page: Page, box: str, text: str) -> None:
    page.locator(box).fill(text)
    page.locator(box).press("Enter")


def _bot_answers(page: Page) -> Locator:
    """The bot's finished answers in the open thread (with blocks; the status is separate)."""
    return page.locator("#thread-messages article.from-bot").filter(has=page.locator(".blocks"))


def _open(page: Page, playground: Playground) -> None:
    page.goto(playground.url)
    expect(page.locator("#connection")).to_have_text(re.compile("live"))


def test_mention_shows_status_then_the_answer_and_a_follow_up(
    page: Page, playground: Playground
) -> None:
    _open(page, playground)
    expect(page.get_by_role("heading", name="#eng-questions")).to_be_visible()
    _send(page, "#composer-text", "@cypherbot Which services use Redis?")
    status = page.locator("#thread-status")
    expect(status).to_contain_text("cypherbot", timeout=10_000)
    screenshot(page, "1-status")
    answer = _bot_answers(page).first
    expect(answer.locator("pre.code").last).to_contain_text("MATCH (s:Service)-[:USES]->")
    expect(answer).to_contain_text("Found:")
    expect(answer.locator(".block.context").last).to_contain_text("React")
    expect(status).to_be_empty()
    # The channel shows the question with its thread summary; the answer is in the thread.
    expect(page.locator("#messages article").first.locator(".tool.reply")).to_contain_text(
        "1 reply"
    )
    screenshot(page, "2-answer")

    _send(page, "#thread-text", FOLLOW_UP)
    expect(_bot_answers(page)).to_have_count(2)
    expect(_bot_answers(page).nth(1).locator("pre.code").last).to_contain_text("s.tier = 1")
    _bot_answers(page).nth(1).get_by_role("button", name="Behind this answer").click()
    trace = page.locator("#trace")
    expect(trace).to_contain_text("Which services that use Redis are tier 1?")
    expect(trace).to_contain_text("1 earlier turn of this thread")
    expect(trace.locator("table.rows")).to_be_visible()
    expect(trace).to_contain_text("LLM calls (3)")
    screenshot(page, "3-behind-follow-up")


def test_a_count_per_category_shows_its_chart_and_the_spec_behind_it(
    page: Page, playground: Playground
) -> None:
    _open(page, playground)
    _send(page, "#composer-text", "@cypherbot How many incidents of each severity were there?")
    chart = page.locator("#thread-messages img.file-image")
    expect(chart).to_be_visible(timeout=30_000)
    expect(chart).to_have_attribute("alt", re.compile("^Bar chart for .*severity SEV1"))
    assert chart.evaluate("img => img.naturalWidth") >= 560, "the PNG loaded"
    chart.scroll_into_view_if_needed()
    screenshot(page, "8-chart-in-thread")
    _bot_answers(page).first.get_by_role("button", name="Behind this answer").click()
    trace = page.locator("#trace")
    expect(trace).to_contain_text("Chart (bar)")
    trace.locator("details.chart-spec summary").click()
    expect(trace.locator("details.chart-spec pre")).to_contain_text('"mark"')
    screenshot(page, "8-chart-spec")


def test_direct_message_is_answered(page: Page, playground: Playground) -> None:
    _open(page, playground)
    page.locator("#dm-list").get_by_role("button").click()
    expect(page.get_by_role("heading", name="cypherbot", exact=True)).to_be_visible()
    # The DM is the split view: the app's suggested prompts for the new thread.
    suggested = page.get_by_role("region", name="Suggested questions")
    expect(suggested.locator(".suggestions-title")).to_have_text("Suggested by cypherbot")
    expect(suggested.get_by_role("button").first).to_be_visible()
    _send(page, "#composer-text", "How many teams are there?")
    answer = _bot_answers(page).first
    expect(answer).to_contain_text("teams")
    expect(answer.locator("pre.code").last).to_contain_text("MATCH (t:Team)")
    screenshot(page, "4-dm")


def test_thumbs_up_teaches_and_another_user_votes_down(page: Page, playground: Playground) -> None:
    _open(page, playground)
    _send(page, "#composer-text", "@cypherbot Which services use Redis right now?")
    answer = _bot_answers(page).first
    expect(answer.locator(".block.context")).to_contain_text("React")
    answer.locator(".react-up").click()
    expect(answer.locator(".react-up")).to_have_attribute("aria-pressed", "true")
    expect(answer.locator(".react-up .count")).to_have_text("1")
    # The first 👍 of a person is thanked in the thread.
    expect(page.locator("#thread-messages")).to_contain_text("I'll use this query")

    page.get_by_role("tab", name="Examples").click()
    taught = page.locator("#examples .example").filter(has_text="thumbs up")
    expect(taught.first).to_contain_text("Which services use Redis right now?")
    expect(taught.first).to_contain_text("👍 1 · 👎 0")
    screenshot(page, "5-examples-after-thumbs-up")

    page.get_by_label("You are").select_option(label="sam")
    expect(page.locator("#toast")).to_contain_text("You are now sam")
    page.get_by_role("tab", name="Thread").click()
    answer = _bot_answers(page).first
    expect(answer.locator(".react-up")).to_have_attribute("aria-pressed", "false")
    answer.locator(".react-down").click()
    expect(answer.locator(".react-down")).to_have_attribute("aria-pressed", "true")
    expect(answer.locator(".react-down .count")).to_have_text("1")
    answer.get_by_role("button", name="Behind this answer").click()
    expect(page.locator("#trace .taught")).to_contain_text("👍 1 · 👎 1")
    screenshot(page, "6-sam-thumbs-down")

    # Keyboard only: the 👍 is a real button, and focus survives the live re-render.
    page.get_by_role("tab", name="Thread").click()
    up = _bot_answers(page).first.locator(".react-up")
    up.focus()
    page.keyboard.press("Enter")
    expect(up).to_have_attribute("aria-pressed", "true")
    expect(up.locator(".count")).to_have_text("2")
    expect(up).to_be_focused()


def test_without_an_llm_a_banner_explains_and_chips_answer_offline(
    page: Page, offline_playground: Playground
) -> None:
    _open(page, offline_playground)
    banner = page.get_by_role("region", name="No language model is configured")
    expect(banner).to_be_visible()
    for setting in (
        "OPENAI_API_KEY=sk-",
        "OPENAI_BASE_URL=http://localhost:11434/v1",
        "OPENAI_API_KEY=ollama",
        "LLM_MODEL=qwen2.5-coder:7b",
    ):
        expect(banner).to_contain_text(setting)
    expect(page.locator("#llm-pill")).to_have_text("No LLM configured")
    chips = page.get_by_role("region", name="Suggested questions").get_by_role("button")
    expect(chips.first).to_be_visible()
    question = chips.first.inner_text()
    chips.first.click()
    expect(page.locator("#messages")).to_contain_text(question)
    answer = _bot_answers(page).first
    expect(answer.locator(".block.context").last).to_contain_text("verified query reused")
    answer.get_by_role("button", name="Behind this answer").click()
    # The trace is fetched when asked for; the first of a cold run waited past 5 s once.
    expect(page.locator("#trace .callout")).to_contain_text("Verified query reused", timeout=15_000)
    expect(page.locator("#trace")).to_contain_text("LLM calls (0)")
    screenshot(page, "7-offline-answer")


def test_block_kit_renders_readably_and_safely(page: Page, playground: Playground) -> None:
    client = playground.bot.app.client
    tour: list[dict[str, Any]] = [
        {"type": "header", "text": {"type": "plain_text", "text": "Block Kit tour"}},
        {
            "type": "section",
            "text": {
                "type": "mrkdwn",
                "text": "*bold* _italic_ ~gone~ `code` <https://example.org|a link> <@U0SAM> "
                "&lt;script&gt;alert(1)&lt;/script&gt;",
            },
        },
        {"type": "section", "text": {"type": "mrkdwn", "text": "```MATCH (n) RETURN n```"}},
        {"type": "divider"},
        {
            "type": "actions",
            "elements": [
                {
                    "type": "button",
                    "text": {"type": "plain_text", "text": "Show query"},
                    "action_id": "show",
                }
            ],
        },
        {"type": "context", "elements": [{"type": "mrkdwn", "text": "1 attempt · :+1:"}]},
    ]
    posted = client.chat_postMessage(channel=CHANNEL_ID, text="tour", blocks=tour)
    client.files_upload_v2(
        channel=CHANNEL_ID,
        thread_ts=posted["ts"],
        content="service,tier\ncheckout-service,1\n",
        filename="result.csv",
        title="Full result",
    )
    _open(page, playground)
    message = page.locator(f'#messages article[data-ts="{posted["ts"]}"]')
    expect(message.locator("h3.header")).to_have_text("Block Kit tour")
    expect(message.locator(".section-text strong")).to_have_text("bold")
    expect(message.locator("em")).to_have_text("italic")
    expect(message.locator("s")).to_have_text("gone")
    expect(message.locator("p code")).to_have_text("code")
    link = message.get_by_role("link", name="a link")
    expect(link).to_have_attribute("href", "https://example.org")
    expect(message.locator(".mention")).to_have_text("@sam")
    # Escaped text stays text: no element was made from it.
    expect(message).to_contain_text("<script>alert(1)</script>")
    assert page.locator("#messages script").count() == 0
    expect(message.locator("pre.code")).to_have_text("MATCH (n) RETURN n")
    expect(message.locator(".block.context")).to_contain_text("👍")
    message.get_by_role("button", name="Show query").click()
    expect(page.locator("#toast")).to_contain_text("this one has no action")
    message.locator(".tool.reply").click()
    download = page.locator("#thread-messages a.file")
    expect(download).to_contain_text("Full result")
    screenshot(page, "8-block-kit")
    with page.expect_download() as info:
        download.click()
    saved = info.value.path()
    assert saved.read_text().startswith("service,tier")


def test_the_good_answer_button_teaches_like_a_thumbs_up(
    page: Page, playground: Playground
) -> None:
    _open(page, playground)
    _send(page, "#composer-text", "@cypherbot Which services use Redis, please?")
    answer = _bot_answers(page).first
    good = answer.get_by_role("button", name="Mark this answer right: its query is reused")
    expect(good).to_contain_text("Good answer")
    expect(answer.get_by_role("button", name="Mark this answer wrong")).to_be_visible()
    screenshot(page, "9-feedback-buttons")
    good.click()
    expect(page.locator("#toast")).to_contain_text("teaches")
    page.get_by_role("tab", name="Examples").click()
    taught = page.locator("#examples .example").filter(has_text="thumbs up")
    expect(taught.first).to_contain_text("Which services use Redis, please?")


def test_the_app_home_tab_shows_what_the_app_publishes(page: Page, playground: Playground) -> None:
    _open(page, playground)
    page.get_by_role("button", name="App Home").click()
    home = page.locator("#home")
    expect(home.locator("h2")).to_have_text("App Home")
    expect(home.locator(".blocks")).to_contain_text("Questions to try")
    screenshot(page, "10-app-home")
