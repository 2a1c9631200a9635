"""A review on open tabs and across a server restart, in headless Chromium against Daphne
(docs/spec.md, Review): the tab shows "A handoff is ready for review" as soon as the attempt waits
(the follower's ``handoff.phase`` event carries the panel), the review survives a restart of the
server and a recovery pass, and committing it moves the tab to the successor.

The server and page fixtures are the browser tests' (``asgi_server``, ``open_page``: conftest).
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import timedelta
from io import StringIO
from typing import Any

import pytest
from asgi_site import AsgiServer, conversation, off_loop
from django.core.management import call_command
from django.utils import timezone
from playwright.sync_api import expect

from handoff import operations, recovery
from handoff.core.phases import Phase
from handoff.models import HandoffRecord

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def test_a_review_shows_live_survives_a_restart_and_commits(
    make_user: Callable[..., Any], open_page: Callable[..., Any], asgi_server: AsgiServer
):
    ada = make_user("ada")
    source = conversation(ada, "Weather CLI")
    off_loop(lambda: operations.review_on(source.pk))
    page = open_page(ada, source)
    other_tab = open_page(ada, source)

    off_loop(lambda: operations.run_attempt(source.pk, manual=True))
    for tab in (page, other_tab):
        tab.get_by_role("heading", name="A handoff is ready for review").wait_for()

    asgi_server.stop()
    later = timezone.now() + timedelta(hours=1)
    assert off_loop(lambda: recovery.recover(later)) == []
    off_loop(lambda: call_command("recover_handoffs", stdout=StringIO()))
    asgi_server.start()

    page.reload()
    form = page.locator("#handoff-review-form")
    form.get_by_label("Goal").fill("Finish the weather CLI after the restart")
    form.get_by_role("button", name="Commit the brief").click()

    record = HandoffRecord.objects.get(source=source)
    page.wait_for_url(f"**/s/{record.target_id}/")
    other_tab.wait_for_url(f"**/s/{record.target_id}/")
    record.refresh_from_db()
    assert record.phase == Phase.STARTED
    assert record.brief is not None
    assert record.brief["goal"] == "Finish the weather CLI after the restart"


def test_discarding_a_review_on_a_live_tab_says_so_without_a_script_error(
    make_user: Callable[..., Any], open_page: Callable[..., Any]
):
    ada = make_user("ada")
    source = conversation(ada, "Weather CLI")
    off_loop(lambda: operations.review_on(source.pk))
    page = open_page(ada, source)
    composer = page.get_by_role("textbox", name="Message")
    composer.fill("/handoff now")
    composer.press("Enter")
    feedback = page.locator("#composer-feedback")
    feedback.get_by_text("Handoff requested").wait_for()
    off_loop(lambda: operations.run_attempt(source.pk, manual=True))
    form = page.locator("#handoff-review-form")
    form.get_by_role("heading", name="A handoff is ready for review").wait_for()
    # The brief waits, written: the request's answer does not say it is being written.
    assert "being written" not in feedback.inner_text()

    form.get_by_role("button", name="Discard").click()

    feedback.get_by_text("Discarded at review").wait_for()
    # The discard's live panel comes after the answer or before it: either way it is in.
    page.wait_for_function(
        "() => window.__events.some((e) => e.kind === 'handoff.phase'"
        " && e.payload.phase === 'failed')"
    )
    assert form.count() == 0
    assert "Handoff requested" not in feedback.inner_text()
    assert [p for p in page.problems if "re-target" in p or "targetError" in p] == []


def test_a_panel_answer_that_comes_after_the_live_panel_keeps_the_review_form(
    make_user: Callable[..., Any], open_page: Callable[..., Any]
):
    """The tab that asked for the handoff polls its panel until the first event (panel.html);
    a poll still out when the events' live panel, with the review form, replaced it is answered
    after that: the answer belongs to a panel no longer in the page, and the form stays."""
    ada = make_user("ada")
    source = conversation(ada, "Weather CLI")
    off_loop(lambda: operations.review_on(source.pk))
    page = open_page(ada, source)
    composer = page.get_by_role("textbox", name="Message")
    composer.fill("/handoff now")
    composer.press("Enter")
    page.locator("#handoff-panel").get_by_text("waiting for the attempt to start").wait_for()
    held: list[Any] = []
    page.route("**/panel/**", lambda route: route.continue_() if held else held.append(route))
    with page.expect_request("**/panel/**"):
        polling = page.locator("#handoff-panel").element_handle()  # the poll's own panel

    off_loop(lambda: operations.run_attempt(source.pk, manual=True))
    form = page.locator("#handoff-review-form")
    form.get_by_role("heading", name="A handoff is ready for review").wait_for()
    held[0].continue_()  # answered now, with the review form too

    page.wait_for_function("(panel) => !panel.classList.contains('htmx-request')", arg=polling)
    assert form.get_by_role("heading", name="A handoff is ready for review").is_visible()
    assert page.problems == []


def test_a_commit_answered_after_the_tab_moved_leaves_the_successors_panel(
    make_user: Callable[..., Any], open_page: Callable[..., Any]
):
    """The commit's answer (the source's panel, out of band) comes after the follower already
    moved the tab to the successor: the successor's page keeps its own panel, not the source's
    "This conversation continues in …" banner pointing at itself."""
    ada = make_user("ada")
    source = conversation(ada, "Weather CLI")
    off_loop(lambda: operations.review_on(source.pk))
    off_loop(lambda: operations.run_attempt(source.pk, manual=True))
    page = open_page(ada, source)
    held: list[tuple[Any, Any]] = []

    def answer_later(route: Any) -> None:
        if route.request.method != "POST":
            route.continue_()
            return
        held.append((route, route.fetch()))  # the server committed; the answer waits

    page.route("**/review/", answer_later)
    form = page.locator("#handoff-review-form")
    form.get_by_role("button", name="Commit the brief").click()
    page.wait_for_url(lambda url: str(source.pk) not in url)
    page.get_by_text("Moved here from").wait_for()
    with page.expect_event("requestfinished"):
        route, response = held[0]
        route.fulfill(response=response)

    page.wait_for_timeout(300)  # nothing-happens: the late answer swaps nothing in
    assert page.locator("#handoff-panel .banner").count() == 0
    expect(page.locator("#handoff-panel")).not_to_contain_text("This conversation continues in")
    assert page.problems == []


def test_committing_with_the_composers_command_moves_the_tab_to_the_successor(
    make_user: Callable[..., Any], open_page: Callable[..., Any]
):
    """``/handoff commit`` is sent, not unsent text: the route it installs (before its answer
    comes back) moves the tab, with no "Your unsent text stays here" banner."""
    ada = make_user("ada")
    source = conversation(ada, "Weather CLI")
    off_loop(lambda: operations.review_on(source.pk))
    off_loop(lambda: operations.run_attempt(source.pk, manual=True))
    page = open_page(ada, source)
    composer = page.get_by_role("textbox", name="Message")
    composer.fill("/handoff commit")
    composer.press("Enter")

    record = HandoffRecord.objects.get(source=source)
    page.wait_for_url(f"**/s/{record.target_id}/")
    page.get_by_text("Moved here from").wait_for()
    assert page.locator("#follow-held").count() == 0
    assert page.problems == []
