"""The handoff's page side on the plain host (``tests/plain_host``): its panel and its settings
card, live updates included, with nothing of the reference host's scripts
or styles (the handoff's templates bring their own: handoff/static/handoff/,
handoff_settings/static/handoff_settings/).

Run in the plain host's pytest process (``pytest tests/plain_host
--ds=tests.plain_host.settings``, and ``int_settings`` for integer keys): Daphne serves
``tests/plain_host/asgi.py`` on the test database (a file) in a process of its own, Debian's
Chromium drives it through Playwright.
"""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from django.contrib.auth import get_user_model
from django.db import connections
from django.test import Client
from playwright.sync_api import expect, sync_playwright

from tests.plain_host import chat
from tests.plain_host.models import Conversation

pytestmark = pytest.mark.browser

ROOT = Path(__file__).resolve().parents[2]
CHROMIUM = Path("/usr/bin/chromium")
TIMEOUT_MS = 15_000


def listening(port: int) -> bool:
    try:
        socket.create_connection(("127.0.0.1", port), timeout=0.5).close()
    except OSError:
        return False
    return True


@pytest.fixture
def server(transactional_db: None) -> Iterator[str]:
    """Daphne on the plain host and its test database; its base URL."""
    if not CHROMIUM.exists():
        pytest.skip(f"{CHROMIUM} is missing: install Debian's chromium (scripts/ensure-chromium)")
    with socket.socket() as probe:  # a free port
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    env = {
        **os.environ,
        # The settings this run has (UUID or integer keys): the database was made by them.
        "DJANGO_SETTINGS_MODULE": os.environ["DJANGO_SETTINGS_MODULE"],
        "PLAIN_HOST_DATABASE": str(connections["default"].settings_dict["NAME"]),
    }
    command = [sys.executable, "-m", "daphne", "-b", "127.0.0.1", "-p", str(port)]
    process = subprocess.Popen(
        [*command, "tests.plain_host.asgi:application"],
        cwd=ROOT,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        deadline = time.monotonic() + 30
        while not listening(port):
            assert process.poll() is None, "daphne exited"
            assert time.monotonic() < deadline, "daphne did not listen within 30 s"
            time.sleep(0.1)
        yield f"http://127.0.0.1:{port}"
    finally:
        process.terminate()
        process.wait(timeout=10)


def following(page: Any) -> None:
    """Wait until the page's follower is connected."""
    page.wait_for_function("() => window.follower?.state().connection === 'connected'")


@pytest.fixture
def tab(server: str) -> Iterator[Any]:
    """``tab(user, path)``: a page of ``user`` (one browser context each) at ``path``, its
    follower connected."""
    previous = os.environ.get("DJANGO_ALLOW_ASYNC_UNSAFE")
    os.environ["DJANGO_ALLOW_ASYNC_UNSAFE"] = "true"
    contexts: dict[int, Any] = {}
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(
            executable_path=str(CHROMIUM), args=["--headless", "--no-sandbox", "--disable-gpu"]
        )

        def open_tab(user: Any, path: str) -> Any:
            if user.pk not in contexts:
                client = Client()
                client.force_login(user)
                context = browser.new_context(base_url=server)
                context.set_default_timeout(TIMEOUT_MS)
                cookie = client.cookies["sessionid"].value
                context.add_cookies([{"name": "sessionid", "value": cookie, "url": server}])
                contexts[user.pk] = context
            page = contexts[user.pk].new_page()
            page.problems = []
            page.on("pageerror", lambda error: page.problems.append(str(error)))
            page.goto(path)
            following(page)
            return page

        try:
            yield open_tab
        finally:
            browser.close()
            if previous is None:
                os.environ.pop("DJANGO_ALLOW_ASYNC_UNSAFE", None)
            else:
                os.environ["DJANGO_ALLOW_ASYNC_UNSAFE"] = previous


@pytest.fixture
def ada(transactional_db: None) -> Any:
    """A staff user (the card's fields are hers to change), made before the browser starts
    (its loop in this thread would stop the follower's sends from here)."""
    return get_user_model().objects.create_user("ada", is_staff=True)


@pytest.fixture
def conversation(ada: Any) -> Conversation:
    """A conversation of ``ada`` with five turns."""
    conversation = Conversation.objects.create(owner=ada, title="Refactor the parser", cwd="/w")
    for i in range(5):
        chat.append(conversation, "user", f"Please refactor /w/src/parser_{i}.py.")
        chat.answer(conversation, tokens=1000)
    return conversation


def test_the_panel_and_the_card_work_on_the_plain_host(
    ada: Any, conversation: Conversation, tab: Any
) -> None:
    page = tab(ada, f"/c/{conversation.pk}/")
    card, other_card = tab(ada, "/settings/"), tab(ada, "/settings/")

    # The panel, styled by the handoff's own stylesheet; its switch saves through the handoff's
    # script (handoff/last-wins.js posts to the action for the state it was left in).
    panel = page.locator("#handoff-panel")
    assert panel.evaluate("(e) => getComputedStyle(e).position") == "sticky"
    review = panel.get_by_label("Review before the successor starts")
    with page.expect_response(lambda response: "/review-on/" in response.url):
        review.check()
    page.reload()
    following(page)
    panel = page.locator("#handoff-panel")
    expect(panel.get_by_label("Review before the successor starts")).to_be_checked()

    # With review on, "Hand off now" stops at prepared: the panel shows the review form.
    panel.get_by_role("button", name="Hand off now").click()
    form = page.locator("#handoff-review-form")
    expect(form.get_by_role("button", name="Commit the brief")).to_be_visible()
    expect(page.locator("#handoff-panel")).to_have_attribute("data-phase", "prepared")

    # The card, styled by its own stylesheet; a change in one tab shows in the other at once,
    # and the conversation's panel reloads.
    field = card.locator("#setting-auto_handoff")
    assert field.evaluate("(e) => getComputedStyle(e).display") == "grid"
    switch = other_card.locator("#setting-auto_handoff input[role=switch]")
    assert not switch.is_checked()
    with page.expect_request(lambda request: "/panel" in request.url):
        card.locator("#setting-auto_handoff input[role=switch]").check()
    expect(switch).to_be_checked()
    # No status channel service on this host: the badge says so, whatever the socket does.
    assert card.locator("#status-channel").get_attribute("data-state") == "unavailable"
    assert page.problems == [] and card.problems == [] and other_card.problems == []
