"""A session belongs to its owner, in the browser too."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from handoff_support import talked

pytestmark = pytest.mark.browser


def test_second_user_cannot_open_the_first_users_session(
    make_user: Callable[..., Any], user_page: Callable[[Any], Any], live_server: Any
):
    alice, bob = make_user("alice"), make_user("bob")
    private = talked(alice, "Alice's private plan", content="secret plan")
    talked(bob, "Bob's own", content="secret plan")

    page = user_page(bob)
    response = page.goto(f"{live_server.url}/s/{private.pk}/")

    assert response is not None and response.status == 404
    assert "secret plan" not in page.content()
    page.goto(f"{live_server.url}/")
    assert page.locator(".session-row").all_inner_texts()[0].startswith("Bob's own")
    assert "Alice's private plan" not in page.locator("#session-list").inner_text()


def test_anonymous_visitor_lands_on_the_login_page(browser: Any, live_server: Any):
    context = browser.new_context()
    try:
        page = context.new_page()
        page.goto(f"{live_server.url}/settings/")
        assert "/accounts/login/" in page.url
        assert page.get_by_role("button", name="Sign in").is_visible()
    finally:
        context.close()
