"""What a newcomer hits in the first ten minutes, in headless Chromium.

Each test runs at desktop size and at phone size (390×844) where the page matters. The demo
(``seed_demo``: "Build the weather CLI", signed in as the demo user) is what a newcomer opens.
"""

from __future__ import annotations

import re
import shutil
import subprocess
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from typing import Any, TypeVar

import pytest
from django.db import connections
from page_waits import htmx_settled

from handoff import operations
from handoff.models import HandoffRecord, HandoffSettings, MainState
from host.demo import DEMO_PASSWORD, seed_demo
from host.models import Session

pytestmark = [pytest.mark.browser, pytest.mark.usefixtures("immediate_tasks")]

VIEWPORTS = {"desktop": {"width": 1280, "height": 860}, "phone": {"width": 390, "height": 844}}
TIMEOUT_MS = 15_000


@pytest.fixture(params=list(VIEWPORTS))
def viewport(request: Any) -> dict[str, int]:
    return VIEWPORTS[request.param]


@pytest.fixture
def demo(transactional_db: None) -> Session:
    """The demo conversation "Build the weather CLI" (idle, past 75 % of its window)."""
    return seed_demo()[0]


@pytest.fixture
def open_page(
    browser: Any, live_server: Any, login: Callable[..., None], demo: Session
) -> Iterator[Callable[..., Any]]:
    """Return ``open_page(path, viewport)``: the demo user's page at ``path``."""
    contexts: list[Any] = []

    def open_at(path: str, viewport: dict[str, int]) -> Any:
        context = browser.new_context(viewport=viewport)
        context.set_default_timeout(TIMEOUT_MS)
        contexts.append(context)
        page = context.new_page()
        login(page, live_server.url, demo.owner, DEMO_PASSWORD)
        page.goto(f"{live_server.url}{path}")
        return page

    yield open_at
    for context in contexts:
        context.close()


T = TypeVar("T")


def off_the_page_thread(work: Callable[..., T], *args: Any) -> T:
    """Run ``work(*args)`` in a thread of its own: this one runs Playwright's event loop, where
    the follower's publishing after commit cannot run. Its database connection is closed."""

    def call() -> T:
        try:
            return work(*args)
        finally:
            connections.close_all()

    with ThreadPoolExecutor(max_workers=1) as pool:
        return pool.submit(call).result()


def stored() -> HandoffSettings:
    return HandoffSettings.objects.get_or_create(pk=1)[0]


def handed_off(demo: Session) -> Session:
    """Hand the demo off now; return its successor."""
    assert off_the_page_thread(lambda: operations.run_attempt(demo.pk, manual=True)).ok
    record = HandoffRecord.objects.select_related("target").get(source=demo)
    assert record.target is not None
    return record.target


def hold_first(page: Any, url_glob: str) -> list[Any]:
    """Hold the first request to ``url_glob`` (in flight until released); let later ones pass."""
    held: list[Any] = []
    seen: list[str] = []

    def handle(route: Any) -> None:
        seen.append(route.request.url)
        if len(seen) == 1:
            held.append(route)
        else:
            route.continue_()

    page.route(url_glob, handle)
    return held


# --- 1. Enter in a settings number field ---------------------------------------------------


def test_enter_in_a_number_field_saves_in_place(open_page: Callable[..., Any], viewport: Any):
    page = open_page("/settings/", viewport)
    field = page.locator("#id_handoff_min_turns")
    field.fill("6")
    field.press("Enter")

    page.locator("#setting-handoff_min_turns").get_by_text("Saved").wait_for()
    # nothing-happens: a native submit would have left the card by now.
    page.wait_for_timeout(300)
    assert page.url.endswith("/settings/")
    assert "Forbidden" not in page.content()
    assert stored().handoff_min_turns == 6


# --- 2. Either switch re-evaluates the idle conversation at once ---------------------------


def test_global_switch_hands_off_an_enabled_idle_conversation_at_once(
    open_page: Callable[..., Any], demo: Session, viewport: Any
):
    off_the_page_thread(operations.enable, demo.pk)  # its own switch first: nothing happens yet
    assert not HandoffRecord.objects.filter(source=demo).exists()
    page = open_page("/settings/", viewport)

    page.get_by_label("Automatic handoff").check()
    page.locator("#setting-auto_handoff").get_by_text("Saved").wait_for()

    record = HandoffRecord.objects.get(source=demo)
    assert (record.reason, record.phase) == ("context-pressure", "started")


def test_conversation_switch_hands_off_at_once_when_the_global_one_is_on(
    open_page: Callable[..., Any], demo: Session, viewport: Any
):
    HandoffSettings.objects.update_or_create(pk=1, defaults={"auto_handoff": True})
    page = open_page(f"/s/{demo.pk}/", viewport)

    page.get_by_role("switch", name="Automatic handoff").check()

    page.locator(".banner").get_by_text("This conversation continues in").wait_for()
    assert HandoffRecord.objects.get(source=demo).reason == "context-pressure"


# --- 3. Every page fits a phone -------------------------------------------------------------


def fits(page: Any) -> bool:
    return bool(page.evaluate("document.documentElement.scrollWidth <= window.innerWidth"))


def test_every_page_fits_the_screen_and_sign_out_is_reachable(
    open_page: Callable[..., Any], demo: Session, viewport: Any, live_server: Any
):
    successor = handed_off(demo)
    page = open_page("/", viewport)
    paths = ["/", f"/s/{demo.pk}/", f"/s/{successor.pk}/", "/settings/", "/new/"]
    for path in paths:
        page.goto(f"{live_server.url}{path}")
        assert fits(page), path
        box = page.get_by_role("button", name="Sign out").bounding_box()
        assert box is not None and box["x"] >= 0 and box["x"] + box["width"] <= viewport["width"]
        for name in ("Conversations", "Settings", "Admin"):
            link = page.get_by_role("navigation", name="Main").get_by_role("link", name=name)
            assert link.is_visible(), (path, name)
    for path in ("/admin/", "/admin/handoff/handoffrecord/", "/api/docs"):
        page.goto(f"{live_server.url}{path}")
        assert fits(page), path
    page.goto(f"{live_server.url}/settings/")
    page.get_by_role("button", name="Sign out").click()
    page.wait_for_url(re.compile(r"/accounts/login/"))
    assert fits(page)


# --- 5. After "Disable (stops forwarding)" the page shows what is true ------------------------


def test_a_disabled_relay_says_forwarding_stopped_and_answers_here(
    open_page: Callable[..., Any], demo: Session, viewport: Any
):
    successor = handed_off(demo)
    off_the_page_thread(operations.disable, demo.pk)  # what the admin action runs
    page = open_page(f"/s/{demo.pk}/", viewport)

    note = page.locator("#handoff-panel").get_by_text("Forwarding stopped")
    note.wait_for()
    assert successor.title in note.inner_text()
    assert page.locator(".banner").count() == 0
    assert "continued in another conversation" not in page.content()
    composer = page.get_by_role("textbox", name="Message")
    composer.fill("Still here?")
    composer.press("Enter")
    page.locator("#composer-feedback").get_by_text("Sent.").wait_for()
    assert "Forwarded" not in page.locator("#composer-feedback").inner_text()


# --- 6. A tab left open after signing out ------------------------------------------------------


def test_signed_out_tab_says_so_and_keeps_the_typed_text(
    open_page: Callable[..., Any], demo: Session, viewport: Any
):
    page = open_page(f"/s/{demo.pk}/", viewport)
    elsewhere = page.context.new_page()  # signed out in another tab
    elsewhere.goto(page.url)
    elsewhere.get_by_role("button", name="Sign out").click()
    elsewhere.wait_for_url(re.compile(r"/accounts/login/"))
    elsewhere.close()
    composer = page.get_by_role("textbox", name="Message")
    composer.fill("A long thought I do not want to lose.")
    composer.press("Enter")

    notice = page.get_by_role("alert").filter(has_text="You were signed out")
    notice.wait_for()
    page.get_by_role("switch", name="Automatic handoff").click()
    htmx_settled(page)  # its post was answered by the sign-in page
    assert page.locator("#main form[action*='/accounts/login/']").count() == 0
    assert page.get_by_role("button", name="Sign in").count() == 0
    assert composer.input_value() == "A long thought I do not want to lose."

    notice.get_by_role("link", name="Sign in").click()
    page.get_by_label("Username").fill(demo.owner.get_username())
    page.get_by_label("Password").fill(DEMO_PASSWORD)
    page.get_by_role("button", name="Sign in").click()
    page.wait_for_url(re.compile(rf"/s/{demo.pk}/"))
    composer = page.get_by_role("textbox", name="Message")
    assert composer.input_value() == "A long thought I do not want to lose."


# --- 7. /api/docs offline -------------------------------------------------------------------


def test_api_docs_render_with_no_internet(
    open_page: Callable[..., Any], viewport: Any, live_server: Any
):
    page = open_page("/", viewport)
    page.route(
        "**/*",
        lambda route: (
            route.continue_()
            if route.request.url.startswith(live_server.url)
            else route.abort("internetdisconnected")
        ),
    )
    page.goto(f"{live_server.url}/api/docs")

    page.locator(".swagger-ui .opblock").first.wait_for()
    assert "/api/sessions" in page.locator(".swagger-ui").inner_text()


# --- 9. The last user action wins --------------------------------------------------------------


def test_two_quick_clicks_on_the_global_switch_leave_it_off(
    open_page: Callable[..., Any], viewport: Any
):
    page = open_page("/settings/", viewport)
    held = hold_first(page, "**/settings/field/auto_handoff/")
    switch = page.get_by_label("Automatic handoff")

    switch.click()  # on: its save is in flight
    switch.click()  # off again before the answer
    assert len(held) == 1
    held.pop().continue_()

    page.locator("#setting-auto_handoff").get_by_text(re.compile("Saved")).wait_for()
    page.wait_for_function("!document.querySelector('#id_auto_handoff').checked")
    htmx_settled(page)  # the queued second save too
    assert stored().auto_handoff is False
    assert not switch.is_checked()


def test_two_quick_edits_keep_the_second(open_page: Callable[..., Any], viewport: Any):
    page = open_page("/settings/", viewport)
    held = hold_first(page, "**/settings/field/handoff_ratio/")
    field = page.locator("#id_handoff_ratio")

    field.fill("0.5")
    field.dispatch_event("change")
    field.fill("0.6")
    field.dispatch_event("change")
    held.pop().continue_()

    page.locator("#setting-handoff_ratio").get_by_text("Saved").wait_for()
    htmx_settled(page)  # the queued second save too
    assert stored().handoff_ratio == 0.6
    assert page.locator("#id_handoff_ratio").input_value() == "0.6"


def test_two_quick_clicks_on_the_conversation_switch_leave_it_off(
    open_page: Callable[..., Any], demo: Session, viewport: Any
):
    page = open_page(f"/s/{demo.pk}/", viewport)
    held = hold_first(page, "**/sessions/*/enable/")
    switch = page.get_by_role("switch", name="Automatic handoff")

    switch.click()
    switch.click()
    # The second save, queued behind the first, disables: wait until it is answered.
    with page.expect_response(lambda r: r.request.method == "POST" and "/disable/" in r.url):
        held.pop().continue_()

    page.wait_for_function("!document.querySelector('#handoff-panel [role=switch]').checked")
    htmx_settled(page)
    assert MainState.objects.get(session=demo).enabled is False
    assert not page.get_by_role("switch", name="Automatic handoff").is_checked()


# --- 11. Space on the conversation's switch keeps focus on it -----------------------------


def test_space_on_the_conversation_switch_keeps_the_focus(
    open_page: Callable[..., Any], demo: Session, viewport: Any
):
    page = open_page(f"/s/{demo.pk}/", viewport)
    switch = page.get_by_role("switch", name="Automatic handoff")
    switch.focus()
    switch.press("Space")

    page.wait_for_function("document.querySelector('#handoff-panel [role=switch]').checked")
    htmx_settled(page)  # the switch turns on at once; its save is answered now
    assert MainState.objects.get(session=demo).enabled
    assert page.evaluate("document.activeElement.getAttribute('role')") == "switch"
    switch.press("Space")
    page.wait_for_function("!document.querySelector('#handoff-panel [role=switch]').checked")
    assert page.evaluate("document.activeElement.getAttribute('role')") == "switch"
    htmx_settled(page)  # the save is answered before the test ends
    assert not MainState.objects.get(session=demo).enabled


# --- 12. Back after a follow shows the page as it is now -------------------------------------


@pytest.fixture
def bfcache_browser(browser: Any) -> Iterator[Any]:
    """Chromium with the back-forward cache on (Playwright turns it off by default)."""
    chromium = browser.browser_type.launch(
        executable_path="/usr/bin/chromium",  # as in conftest.py, which skips when it is missing
        args=["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking"],
        ignore_default_args=["--disable-back-forward-cache"],
    )
    yield chromium
    chromium.close()


def test_back_shows_the_handoff_that_happened_meanwhile(
    bfcache_browser: Any, live_server: Any, login: Callable[..., None], demo: Session
):
    for viewport in VIEWPORTS.values():
        context = bfcache_browser.new_context(viewport=viewport)
        context.set_default_timeout(TIMEOUT_MS)
        try:
            page = context.new_page()
            login(page, live_server.url, demo.owner, DEMO_PASSWORD)
            page.goto(f"{live_server.url}/s/{demo.pk}/")
            page.get_by_role("link", name="Settings").click()
            page.wait_for_url(re.compile("/settings/"))
            if not HandoffRecord.objects.filter(source=demo).exists():
                handed_off(demo)
            page.go_back()

            page.locator(".banner").get_by_text("This conversation continues in").wait_for()
            assert "接续" in page.locator("h1.conv-title").inner_text()
        finally:
            context.close()


# --- 13. Number fields say what is wrong --------------------------------------------------------


@pytest.mark.parametrize(
    ("typed", "message"),
    [
        ("abc", "“abc” is not a whole number."),
        ("1e5", "“1e5” is not written in digits: enter 100000."),
        ("", "Enter a whole number: the field is empty."),
    ],
)
def test_a_bad_number_says_what_is_wrong(
    open_page: Callable[..., Any], viewport: Any, typed: str, message: str
):
    page = open_page("/settings/", viewport)
    field = page.locator("#id_handoff_min_turns")
    field.fill(typed)
    field.press("Tab")

    error = page.locator("#setting-handoff_min_turns .field-error")
    error.wait_for()
    assert message in error.inner_text()
    assert page.locator("#id_handoff_min_turns").input_value() == typed
    assert stored().handoff_min_turns == 4


# --- 14. The admin record list and the brief fit at 1280 px -----------------------------------


def test_admin_records_show_every_column_and_the_brief_wraps(
    open_page: Callable[..., Any], demo: Session, live_server: Any
):
    record = off_the_page_thread(
        lambda: HandoffRecord.objects.create(
            source=demo,
            phase="committed-start-pending",
            reason="repeated-compaction",
            source_revision=3,
            metrics={"tokens": 250_000},
            brief={"goal": "A goal long enough to need wrapping. " * 12},
        )
    )
    page = open_page("/admin/handoff/handoffrecord/", VIEWPORTS["desktop"])

    results = page.locator("#changelist-form .results")
    assert results.evaluate("e => e.scrollWidth <= e.clientWidth")
    right = results.evaluate("e => e.getBoundingClientRect().right")
    headers = page.locator("#result_list thead th").evaluate_all(
        "ths => ths.map(th => [th.textContent.trim(), th.getBoundingClientRect().right])"
    )
    assert {"tokens", "created"} <= {text.lower() for text, _ in headers}
    assert all(edge <= right + 1 for _, edge in headers), headers
    assert "250,000" in page.locator("#result_list").inner_text()

    page.goto(f"{live_server.url}/admin/handoff/handoffrecord/{record.pk}/change/")
    brief = page.locator(".field-brief_view .brief")
    assert brief.evaluate("e => e.scrollWidth <= e.clientWidth")
    assert fits(page)


# --- 15. "接续" renders with a CJK font ---------------------------------------------------------


CJK_FAMILIES = ("WenQuanYi", "Noto Sans CJK", "Source Han", "Droid Sans Fallback", "PingFang")


def cjk_font_installed() -> bool:
    """Whether fontconfig knows a font for Chinese (what scripts/ensure-chromium checks)."""
    fc_list = shutil.which("fc-list")
    if fc_list is None:
        return False
    found = subprocess.run([fc_list, ":lang=zh", "family"], capture_output=True, text=True)
    return bool(found.stdout.strip())


def test_the_continued_suffix_renders_in_a_cjk_font(
    open_page: Callable[..., Any], demo: Session, viewport: Any
):
    handed_off(demo)
    page = open_page(f"/s/{demo.pk}/", viewport)
    title = page.locator("h1.conv-title")
    assert "接续" in title.inner_text()

    stack = title.evaluate("e => getComputedStyle(e).fontFamily")
    assert any(family in stack for family in CJK_FAMILIES), stack
    if not cjk_font_installed():
        pytest.skip("no CJK font on this machine: scripts/ensure-chromium installs one as root")
    cdp = page.context.new_cdp_session(page)
    cdp.send("DOM.enable")
    cdp.send("CSS.enable")
    root = cdp.send("DOM.getDocument")["root"]["nodeId"]
    node = cdp.send("DOM.querySelector", {"nodeId": root, "selector": "h1.conv-title"})["nodeId"]
    fonts = cdp.send("CSS.getPlatformFontsForNode", {"nodeId": node})["fonts"]
    assert any(font["familyName"].startswith(CJK_FAMILIES) for font in fonts), fonts


# --- The composer stays on top of the conversation's panel -----------------------------------


def test_the_composer_is_never_under_the_handoff_panel(
    open_page: Callable[..., Any], demo: Session, viewport: Any
):
    short = Session.objects.get(owner=demo.owner, title="Release notes draft")
    page = open_page(f"/s/{short.pk}/", viewport)
    page.add_style_tag(content=".sidebar { min-height: 40vh }")  # a user with many rows
    page.evaluate("document.querySelector('.main').scrollTop = 0")
    page.wait_for_timeout(100)
    on_top = page.evaluate(
        """() => {
        const box = document.querySelector('.composer-dock textarea').getBoundingClientRect();
        const hit = document.elementFromPoint(box.x + box.width / 2, box.y + 6);
        return hit !== null && hit.closest('.composer-dock') !== null;
    }"""
    )
    assert on_top
