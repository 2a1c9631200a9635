"""Shared browser fixtures: headless Debian Chromium driven by Playwright against ``live_server``.

- ``browser`` (module scope): one Chromium per test module; every test using it is skipped,
  with the reason, when ``/usr/bin/chromium`` is missing (``scripts/ensure-chromium``). Module
  scope, not session: Playwright's sync API keeps an event loop running in this thread while it
  lives, which would break the async tests that run after the browser tests.
- ``make_user(username, *, staff=False)``: a user with the password ``PASSWORD``.
- ``login``: the function ``login(page, live_server_url, user, password=PASSWORD)`` signing
  ``page`` in through the login form.
- ``user_page(user)``: a fresh browser context (own cookies) signed in as ``user``, at the
  index; contexts are closed at teardown.
- ``asgi_server`` (module scope): Daphne on the test database, for the follower's websocket
  (``asgi_site``); ``open_page(user, session=None, …)``: a signed-in tab on it.
- ``screenshot(page, name)``: saves ``name`` (a PNG) into the folder ``HANDOFF_SCREENSHOTS``
  names, when set (``HANDOFF_SCREENSHOTS=docs pytest tests/browser`` refreshes the README's
  screenshots); does nothing otherwise.

Mark browser tests ``pytestmark = pytest.mark.browser`` (``-m "not browser"`` leaves them out).
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from asgi_site import (
    FAST,
    PAGE_TIMEOUT_MS,
    RECORD_EVENTS,
    AsgiServer,
    database_url,
    wait_following,
)
from django.test import Client

from bench import follower_site
from host.models import Session

CHROMIUM = Path("/usr/bin/chromium")
LAUNCH_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking"]
PASSWORD = "correct horse battery staple"
TIMEOUT_MS = 10_000


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    """One headless Chromium (Debian's) for the module.

    Playwright's sync API runs an event loop in this thread; Django's ORM refuses to run in a
    thread with a running loop unless told it is safe, so that is allowed while it lives (the
    test owns the thread) and restored afterwards.
    """
    if not CHROMIUM.exists():
        pytest.skip(f"{CHROMIUM} is missing: install Debian's chromium (scripts/ensure-chromium)")
    from playwright.sync_api import sync_playwright

    previous = os.environ.get("DJANGO_ALLOW_ASYNC_UNSAFE")
    os.environ["DJANGO_ALLOW_ASYNC_UNSAFE"] = "true"
    try:
        with sync_playwright() as playwright:
            chromium = playwright.chromium.launch(executable_path=str(CHROMIUM), args=LAUNCH_ARGS)
            yield chromium
            chromium.close()
    finally:
        if previous is None:
            os.environ.pop("DJANGO_ALLOW_ASYNC_UNSAFE", None)
        else:
            os.environ["DJANGO_ALLOW_ASYNC_UNSAFE"] = previous


@pytest.fixture
def make_user(transactional_db: None) -> Callable[..., Any]:
    """Return ``make_user(username, *, staff=False)`` creating a user with ``PASSWORD``."""
    from django.contrib.auth import get_user_model

    def make(username: str, *, staff: bool = False) -> Any:
        return get_user_model().objects.create_user(
            username=username, password=PASSWORD, is_staff=staff
        )

    return make


def sign_in(page: Any, live_server_url: str, user: Any, password: str = PASSWORD) -> None:
    """Sign ``page`` in as ``user`` through the login form; wait until it has left the form."""
    page.goto(f"{live_server_url}/accounts/login/")
    page.get_by_label("Username").fill(user.get_username())
    page.get_by_label("Password").fill(password)
    page.get_by_role("button", name="Sign in").click()
    page.wait_for_url(lambda url: "/accounts/login/" not in url, timeout=TIMEOUT_MS)


@pytest.fixture
def login() -> Callable[..., None]:
    """Return ``login(page, live_server_url, user, password=PASSWORD)``."""
    return sign_in


@pytest.fixture
def user_page(browser: Any, live_server: Any) -> Iterator[Callable[[Any], Any]]:
    """Return ``user_page(user)``: a page in its own context, signed in as ``user``."""
    contexts: list[Any] = []

    def open_page(user: Any) -> Any:
        context = browser.new_context(viewport={"width": 1280, "height": 860})
        context.set_default_timeout(TIMEOUT_MS)
        contexts.append(context)
        page = context.new_page()
        sign_in(page, live_server.url, user)
        return page

    yield open_page
    for context in contexts:
        context.close()


@pytest.fixture
def screenshot() -> Callable[[Any, str], None]:
    """Return ``screenshot(page, name)`` (see the module docstring)."""

    def save(page: Any, name: str) -> None:
        folder = os.environ.get("HANDOFF_SCREENSHOTS")
        if folder:
            Path(folder).mkdir(parents=True, exist_ok=True)
            page.screenshot(path=str(Path(folder) / name))

    return save


@pytest.fixture(scope="module")
def asgi_server(
    browser: Any, django_db_setup: None, django_db_blocker: Any
) -> Iterator[AsgiServer]:
    with django_db_blocker.unblock():
        server = AsgiServer(database_url(), follower_site.free_port())
    server.start()
    yield server
    server.stop()


@pytest.fixture
def open_page(browser: Any, asgi_server: AsgiServer) -> Iterator[Callable[..., Any]]:
    """Return ``open_page(user, session=None, *, path=None, server=asgi_server, wait=True,
    config=None, setup=None, options=None)``: a signed-in page on a conversation (or ``path``,
    or the index).

    Each user gets one browser context (one cookie jar) per server: two pages of one user are
    two tabs. ``config`` is merged into ``FAST``; ``wait=False`` does not wait for the follower;
    ``setup(page)`` runs before the page loads (to route requests); ``options`` (Playwright's
    ``new_context`` arguments: ``viewport``, ``locale``…) make the user's context, so they
    count on that user's first page only.
    ``page.problems`` collects the page's console errors and uncaught exceptions.
    """
    contexts: dict[tuple[int, int], Any] = {}
    if asgi_server.process is None:  # a test that failed with the server stopped
        asgi_server.start()

    def context_of(user: Any, server: AsgiServer, options: dict[str, Any]) -> Any:
        if (user.pk, server.port) not in contexts:
            client = Client()
            client.force_login(user)
            context = browser.new_context(base_url=server.url, **options)
            context.set_default_timeout(PAGE_TIMEOUT_MS)
            cookie = client.cookies["sessionid"].value
            context.add_cookies([{"name": "sessionid", "value": cookie, "url": server.url}])
            context.add_init_script(RECORD_EVENTS)
            contexts[user.pk, server.port] = context
        return contexts[user.pk, server.port]

    def open_(
        user: Any,
        session: Session | None = None,
        *,
        path: str | None = None,
        server: AsgiServer = asgi_server,
        wait: bool = True,
        config: dict[str, Any] | None = None,
        setup: Callable[[Any], None] | None = None,
        options: dict[str, Any] | None = None,
    ) -> Any:
        page = context_of(user, server, options or {}).new_page()
        if setup is not None:
            setup(page)
        page.problems = []
        page.on(
            "console",
            lambda message: page.problems.append(message.text) if message.type == "error" else None,
        )
        page.on("pageerror", lambda error: page.problems.append(str(error)))
        page.add_init_script(f"window.__followerConfig = {json.dumps(FAST | (config or {}))};")
        page.goto(path or (f"/s/{session.pk}/" if session else "/"))
        if wait:
            wait_following(page, session)
        return page

    yield open_
    for context in contexts.values():
        context.close()
