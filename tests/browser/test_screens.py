"""Every screen at phone, tablet and desktop size in headless Chromium.

At 390×844 and 768×1024 the conversation list is a drawer: a button opens and closes it, focus
moves into it and back, Escape and choosing a conversation close it, and the timeline and
composer have the screen. No page scrolls sideways at any size, the admin included
(``documentElement.scrollWidth <= innerWidth``), in English and in Simplified Chinese (the
browser's language). With ``HANDOFF_SCREENSHOTS=docs/screens`` the tests save what they looked at
(``docs/screens/<page>-<width>x<height>.png``, ``<page>-zh-<width>x<height>.png`` in Chinese).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, NamedTuple

import pytest
from django.urls import reverse
from playwright.sync_api import expect
from walk_sessions import followed_session, sign_in, waiting_in_terminal

from handoff import operations
from handoff.models import HandoffRecord
from host.demo import seed_demo
from host.models import Session

pytestmark = [pytest.mark.browser, pytest.mark.usefixtures("immediate_tasks")]

PHONE = {"width": 390, "height": 844}
TABLET = {"width": 768, "height": 1024}
DESKTOP = {"width": 1280, "height": 800}
SIZES = [PHONE, TABLET, DESKTOP]
NARROW = [PHONE, TABLET]
# The browser's language → the screenshots' name part.
LANGUAGES = {"en-US": "", "zh-CN": "zh-"}


def size_id(size: dict[str, int]) -> str:
    return f"{size['width']}x{size['height']}"


@pytest.fixture
def demo(transactional_db: None) -> Session:
    """The demo, with "Build the weather CLI" handed off once (a banner, a record)."""
    source = seed_demo()[0]
    assert operations.run_attempt(source.pk, manual=True).ok
    source.refresh_from_db()
    return source


class Terminals(NamedTuple):
    """The demo user's Claude Code sessions: one ``followed``, one whose brief waits for
    ``/clear`` (``terminal``)."""

    followed: Session
    terminal: Session


@pytest.fixture
def terminals(demo: Session, tmp_path: Path) -> Terminals:
    """The two Claude Code sessions of ``Terminals``, made for the demo user."""
    return Terminals(
        followed_session(demo.owner, tmp_path), waiting_in_terminal(demo.owner, tmp_path)
    )


@pytest.fixture
def sized_page(
    browser: Any, live_server: Any, demo: Session
) -> Iterator[Callable[[dict[str, int]], Any]]:
    """Return ``sized_page(viewport, locale="en-US")``: the demo user signed in, in a window of
    that size, in a browser speaking ``locale``."""
    contexts: list[Any] = []

    def open_page(viewport: dict[str, int], locale: str = "en-US") -> Any:
        context = browser.new_context(viewport=viewport, locale=locale)
        context.set_default_timeout(10_000)
        contexts.append(context)
        page = context.new_page()
        sign_in(page, live_server.url, demo.owner)
        page.base = live_server.url
        return page

    yield open_page
    for context in contexts:
        context.close()


def assert_no_sideways_scroll(page: Any) -> None:
    wide = page.evaluate("() => [document.documentElement.scrollWidth, window.innerWidth]")
    assert wide[0] <= wide[1], f"{page.url} scrolls sideways: {wide}"


def pages(demo: Session, terminals: Terminals) -> dict[str, str]:
    """Every screen a user (and staff) sees, by name: a path, ``#element`` to scroll to."""
    record = HandoffRecord.objects.get(source=demo)
    return {
        "conversation": f"/s/{demo.pk}/",
        "successor": f"/s/{record.target_id}/",
        "lineage": reverse("handoff_web:lineage", args=[record.target_id]),
        "external": f"/s/{terminals.followed.pk}/",
        "terminal-brief": f"/s/{terminals.terminal.pk}/#handoff-review-form",
        "new": "/new/",
        "settings": "/settings/",
        "settings-folders": "/settings/#followed-folders-title",
        "admin": "/admin/",
        "admin-records": "/admin/handoff/handoffrecord/",
        "admin-record": f"/admin/handoff/handoffrecord/{record.pk}/change/",
        "admin-sessions": "/admin/host/session/",
        "sign-in": "/accounts/login/",  # last: the page signs out first
    }


@pytest.mark.parametrize("locale", LANGUAGES)
@pytest.mark.parametrize("size", SIZES, ids=size_id)
def test_no_page_scrolls_sideways(sized_page, demo, terminals, screenshot, size, locale):
    page = sized_page(size, locale)
    for name, path in pages(demo, terminals).items():
        if name == "sign-in":
            page.context.clear_cookies()
        page.goto(page.base + path.split("#")[0])
        if "#" in path:
            page.locator("#" + path.split("#")[1]).scroll_into_view_if_needed()
        page.wait_for_timeout(100)
        assert_no_sideways_scroll(page)
        screenshot(page, f"{name}-{LANGUAGES[locale]}{size_id(size)}.png")


@pytest.mark.parametrize("size", NARROW, ids=size_id)
def test_the_conversation_list_is_a_drawer(sized_page, demo, screenshot, size):
    page = sized_page(size)
    page.goto(f"{page.base}/s/{demo.pk}/")
    toggle = page.get_by_role("button", name="Conversations")
    drawer = page.locator("#chat-sidebar")
    assert toggle.get_attribute("aria-expanded") == "false"
    assert not drawer.is_visible()

    toggle.click()
    expect(toggle).to_have_attribute("aria-expanded", "true")
    expect(drawer).to_be_visible()
    page.wait_for_function("() => document.activeElement.closest('#chat-sidebar') !== null")
    # Slid in: the screenshot shows it in place.
    page.wait_for_function("(el) => el.getAnimations().length === 0", arg=drawer.element_handle())
    screenshot(page, f"drawer-{size_id(size)}.png")

    page.keyboard.press("Escape")
    expect(drawer).to_be_hidden()
    expect(toggle).to_be_focused()

    toggle.click()
    other = drawer.locator(".session-row:not(.is-current)").first
    href = other.get_attribute("href")
    other.click()
    page.wait_for_url(f"**{href}")
    assert not page.locator("#chat-sidebar").is_visible()


@pytest.mark.parametrize("size", NARROW, ids=size_id)
def test_the_timeline_and_composer_use_the_screen(sized_page, demo, size):
    page = sized_page(size)
    page.goto(f"{page.base}/s/{demo.pk}/")
    main = page.locator("#main").bounding_box()
    composer = page.locator("#composer").bounding_box()
    assert main["width"] >= size["width"] - 2
    assert main["height"] >= size["height"] * 0.7
    assert composer["y"] + composer["height"] <= size["height"]
    # The banner (the handoff panel) is reachable: scrolled to, it is on screen.
    banner = page.get_by_text("This conversation continues in")
    banner.scroll_into_view_if_needed()
    assert banner.is_visible()


@pytest.mark.parametrize("size", [PHONE, DESKTOP], ids=size_id)
def test_the_language_choice_shows_the_pages_in_chinese(sized_page, demo, screenshot, size):
    page = sized_page(size)
    page.goto(f"{page.base}/s/{demo.pk}/")
    page.get_by_role("button", name="中文").click()
    page.wait_for_url(f"**/s/{demo.pk}/")
    assert page.locator("html").get_attribute("lang") == "zh-hans"
    assert page.get_by_text("此会话接续在").is_visible() or size == PHONE
    assert_no_sideways_scroll(page)
    screenshot(page, f"conversation-zh-{size_id(size)}.png")
    meter = page.locator(f"#handoff-meter-{demo.pk} .meter-summary").text_content() or ""
    assert meter.strip() == "已接续到后继会话：不会再从这里开始接续。"  # the engine's sentence
    successor = HandoffRecord.objects.get(source=demo).target_id
    page.goto(f"{page.base}{reverse('handoff_web:lineage', args=[successor])}")
    record = page.locator(".hop-meta").first
    record.wait_for()
    assert "手动请求接续，当时" in (record.text_content() or "")
    inheritance = page.locator("table.inheritance").first.text_content() or ""
    assert "（源会话日志中最近一次选择的模型）" in inheritance or "（默认模型）" in inheritance
    assert_no_sideways_scroll(page)
    screenshot(page, f"lineage-zh-{size_id(size)}.png")
    page.goto(f"{page.base}/settings/")
    page.get_by_text("会话协作").first.wait_for()
    assert_no_sideways_scroll(page)
    screenshot(page, f"settings-zh-{size_id(size)}.png")


# The part of the window that shows the conversation: below the top bar and the sticky handoff
# panel (when it is stuck at the top), above the composer dock.
VISIBLE_TIMELINE = """() => {
  const main = document.querySelector('#main').getBoundingClientRect();
  const panel = document.querySelector('.handoff-panel');
  const stuck = panel && getComputedStyle(panel).position === 'sticky'
    ? panel.getBoundingClientRect().bottom : main.top;
  const dock = document.querySelector('.composer-dock').getBoundingClientRect();
  return dock.top - Math.max(main.top, stuck);
}"""


def test_handoff_status_on_a_desktop_leaves_the_conversation_in_view(sized_page, demo, screenshot):
    page = sized_page(DESKTOP)
    page.goto(f"{page.base}/s/{HandoffRecord.objects.get(source=demo).target_id}/")
    before = page.evaluate(VISIBLE_TIMELINE)
    page.locator("#composer textarea").fill("/handoff status")
    page.locator("#composer textarea").press("Enter")
    report = page.locator("#composer-feedback .status-report")
    report.wait_for()

    shown = page.evaluate(VISIBLE_TIMELINE)
    scroller = page.locator("#composer-feedback .feedback-scroll")
    overflow = scroller.evaluate("e => getComputedStyle(e).overflowY")
    screenshot(page, f"status-{size_id(DESKTOP)}.png")
    assert shown >= min(before, DESKTOP["height"] * 0.4), (before, shown)
    assert overflow == "auto"


def test_a_phone_leaves_most_of_the_screen_to_the_conversation(sized_page, demo, screenshot):
    page = sized_page(PHONE)
    page.goto(f"{page.base}/s/{HandoffRecord.objects.get(source=demo).target_id}/")
    composer = page.locator("#composer textarea")
    heights = page.evaluate(
        "() => ['.topbar', '.drawer-bar', '.composer-dock'].map("
        "s => document.querySelector(s).getBoundingClientRect().height)"
    )
    screenshot(page, f"conversation-room-{size_id(PHONE)}.png")

    assert heights[0] <= 56, f"the top bar takes {heights[0]} px: one row"
    nav = page.locator(".topnav").evaluate("e => [e.scrollWidth, e.clientWidth]")
    assert nav[0] <= nav[1], f"the navigation is cut: {nav}"
    assert page.evaluate(VISIBLE_TIMELINE) >= PHONE["height"] * 0.7, heights
    idle = composer.bounding_box()["height"]
    composer.fill("one\ntwo\nthree\nfour")
    expect(page.locator(".composer-bar .hint")).to_be_visible()
    assert composer.bounding_box()["height"] > idle + 40  # it grew with the four lines
    assert composer.evaluate("e => e.scrollHeight <= e.clientHeight + 1")


def test_the_review_forms_items_show_whole_lines_in_boxes_of_their_own(
    sized_page, demo, screenshot
):
    successor = HandoffRecord.objects.get(source=demo).target
    assert successor is not None
    operations.review_on(successor.pk)
    operations.run_attempt(successor.pk, manual=True)
    page = sized_page(PHONE)
    page.goto(f"{page.base}/s/{successor.pk}/")
    items = page.locator(".review-item")
    expect(items.first).to_be_visible()
    screenshot(page, f"review-{size_id(PHONE)}.png")

    texts = items.locator("textarea")
    assert texts.count() >= 3
    for index in range(texts.count()):
        assert texts.nth(index).evaluate("e => e.scrollHeight <= e.clientHeight + 1"), index
    for index in range(items.count() - 1):
        own, after = items.nth(index).bounding_box(), items.nth(index + 1).bounding_box()
        remove = items.nth(index).locator(".review-delete").bounding_box()
        assert (
            own["y"] <= remove["y"] and remove["y"] + remove["height"] <= own["y"] + own["height"]
        )
        assert after["y"] - (own["y"] + own["height"]) >= 8  # a gap between two items' boxes
        border = items.nth(index).evaluate("e => getComputedStyle(e).borderTopWidth")
        assert border != "0px"


# The words of the inheritance tables' Setting and Outcome cells that a line break cut in two.
CUT_WORDS = """() => [...document.querySelectorAll('.inheritance td:not(:last-child)')]
.flatMap(td => {
  const text = td.firstChild;
  if (!text || text.nodeType !== Node.TEXT_NODE) return [];
  return [...text.data.matchAll(/\\S+/g)].filter(word => {
    const range = document.createRange();
    range.setStart(text, word.index);
    range.setEnd(text, word.index + word[0].length);
    return new Set([...range.getClientRects()].map(r => Math.round(r.top))).size > 1;
  }).map(word => word[0]);
})"""


def test_a_phone_shows_the_inheritance_tables_whole(sized_page, demo, screenshot):
    page = sized_page(PHONE)
    target = HandoffRecord.objects.get(source=demo).target_id
    for name, path in (
        ("lineage", reverse("handoff_web:lineage", args=[target])),
        ("settings", "/settings/"),
    ):
        page.goto(page.base + path)
        regions = page.locator(".table-scroll")
        expect(regions.first).to_be_visible()
        for index in range(regions.count()):
            region = regions.nth(index)
            box = region.bounding_box()
            fits = region.evaluate("e => e.scrollWidth <= e.clientWidth")
            assert box["x"] >= 0 and box["x"] + box["width"] <= PHONE["width"], (name, box)
            assert fits, f"the {name} page's table is wider than its box"
            assert (
                region.get_attribute("tabindex") == "0" and region.get_attribute("role") == "region"
            )
            assert region.get_attribute("aria-label")
        assert page.evaluate(CUT_WORDS) == [], name
        region.focus()
        assert page.evaluate("() => document.activeElement.classList.contains('table-scroll')")
        screenshot(page, f"inheritance-{name}-{size_id(PHONE)}.png")


@pytest.mark.parametrize("locale", LANGUAGES)
@pytest.mark.parametrize("size", [PHONE, DESKTOP], ids=size_id)
def test_a_terminal_sessions_waiting_brief_shows_its_command_whole(
    sized_page, terminals, size, locale
):
    """The review form of a terminal session: ``/clear`` and the new-terminal command, none of
    its lines wider than the handoff panel that holds it."""
    page = sized_page(size, locale)
    page.goto(f"{page.base}/s/{terminals.terminal.pk}/")
    command = page.locator(".terminal-command")
    expect(command).to_contain_text("claude --session-id")
    panel = page.locator(".handoff-panel").bounding_box()
    for part in ("#handoff-review-form > p.muted", ".terminal-command"):
        box = page.locator(part).bounding_box()
        assert box["x"] + box["width"] <= panel["x"] + panel["width"], (part, box, panel)
    assert command.evaluate("e => e.scrollWidth <= e.clientWidth")
