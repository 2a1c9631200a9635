"""The conversation page in headless Chromium: composer, commands, the handoff panel, banner.

The hand-off test also takes the README's screenshots (``conversation.png``,
``settings-card.png``) when ``HANDOFF_SCREENSHOTS`` names a folder.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from typing import Any

import pytest

from handoff.models import HandoffRecord, MainState
from host.demo import DEMO_PASSWORD, seed_demo
from host.models import Message

pytestmark = [pytest.mark.browser, pytest.mark.usefixtures("immediate_tasks")]


@pytest.fixture
def demo_page(
    browser: Any, live_server: Any, login: Callable[..., None], transactional_db: None
) -> Iterator[Any]:
    """The demo user's page on the demo conversation ("Build the weather CLI")."""
    session = seed_demo()[0]
    context = browser.new_context(viewport={"width": 1360, "height": 900})
    context.set_default_timeout(15_000)
    page = context.new_page()
    login(page, live_server.url, session.owner, DEMO_PASSWORD)
    page.goto(f"{live_server.url}/s/{session.pk}/")
    page.session = session
    yield page
    context.close()


def send(page: Any, text: str) -> None:
    composer = page.get_by_role("textbox", name="Message")
    composer.fill(text)
    composer.press("Enter")


def test_enter_sends_a_message_and_the_reply_shows(demo_page: Any):
    send(demo_page, "Please also add a --version flag.")

    timeline = demo_page.locator("#timeline")
    timeline.locator(".msg-user").get_by_text("Please also add a --version flag.").wait_for()
    timeline.locator(".msg-assistant").get_by_text("Offline agent").last.wait_for()
    assert demo_page.get_by_role("textbox", name="Message").input_value() == ""
    assert Message.objects.filter(session=demo_page.session, role="assistant").count() > 8


MOTION = """() => [
  getComputedStyle(document.querySelector("#working .spinner")).animationName,
  getComputedStyle(document.querySelector(".switch-track"), "::after").transitionDuration,
]"""


def test_the_spinner_and_the_switch_keep_still_for_a_reader_who_asks_for_less_motion(
    demo_page: Any,
):
    """``prefers-reduced-motion: reduce`` stops the page's animations and transitions (the
    working spinner, the pulsing phase, the switch, the drawer); without it they run."""
    assert demo_page.evaluate(MOTION) == ["spin", "0.15s"]
    demo_page.emulate_media(reduced_motion="reduce")
    assert demo_page.evaluate(MOTION) == ["none", "0s"]


def test_tool_calls_are_folded_until_opened(demo_page: Any):
    tool = demo_page.locator("details.msg-tool").first
    assert tool.get_attribute("open") is None
    tool.locator("summary").click()
    assert tool.get_attribute("open") is not None


def test_handoff_status_shows_the_report(demo_page: Any):
    send(demo_page, "/handoff status")

    feedback = demo_page.locator("#composer-feedback")
    feedback.get_by_text("Handoff status").wait_for()
    assert "Automatic handoff (this conversation)" in feedback.inner_text()


def connected_socket(socket: Any) -> None:
    """Stand in for the follower's websocket: answer its hello with an empty ``ready``."""
    socket.on_message(lambda _: socket.send(json.dumps({"type": "ready", "last_event_id": 0})))


def test_hand_off_now_shows_progress_the_banner_and_the_card(
    demo_page: Any, screenshot: Callable[[Any, str], None], live_server: Any
):
    demo_page.get_by_role("button", name="Hand off now").click()

    banner = demo_page.locator(".banner")
    banner.wait_for()
    record = HandoffRecord.objects.select_related("target").get(source=demo_page.session)
    successor = record.target
    assert successor is not None
    assert "This conversation continues in" in banner.inner_text()
    assert banner.locator("a").get_attribute("href") == f"/s/{successor.pk}/"
    assert demo_page.locator(".phase-done").count() == 4
    successor_row = demo_page.locator(
        f'#session-list .session-row[data-session-id="{successor.pk}"]'
    )
    successor_row.wait_for()
    assert successor_row.get_attribute("data-blank") == "false"
    screenshot(demo_page, "conversation.png")

    send(demo_page, "One more thing: add a man page.")
    demo_page.locator("#composer-feedback").get_by_text("Forwarded to").wait_for()

    demo_page.route_web_socket("**/ws/**", connected_socket)
    demo_page.goto(f"{live_server.url}/settings/")
    demo_page.locator("#status-channel").get_by_text("status channel connected").wait_for()
    activity = demo_page.locator("#handoff-activity")
    assert "Latest attempt on" in activity.inner_text()
    assert "Build the weather CLI" in activity.inner_text()
    screenshot(demo_page, "settings-card.png")

    demo_page.goto(f"{live_server.url}/s/{successor.pk}/")
    brief = demo_page.locator(".msg-plugin").first
    brief.wait_for()
    assert "Handoff brief from" in brief.inner_text()
    screenshot(demo_page, "successor.png")


def test_automatic_handoff_switch(demo_page: Any):
    switch = demo_page.get_by_role("switch", name="Automatic handoff")
    # A checkbox shows checked at once; the switch is on once its save has answered.
    with demo_page.expect_response(lambda r: r.url.endswith("/enable/")) as saved:
        switch.check()
    assert saved.value.ok
    demo_page.wait_for_function(
        "document.querySelector('#handoff-panel input[role=switch]').checked"
    )
    assert MainState.objects.get(session=demo_page.session).enabled
