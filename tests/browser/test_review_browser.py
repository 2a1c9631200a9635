"""Review before the successor starts, in headless Chromium (docs/spec.md, Review): on a desktop
and on a 390×844 phone, "Hand off now" stops at "A handoff is ready for review"; the brief is
edited (goal changed, an item added, one removed) and committed, and the successor is seeded
with the edited brief."""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from typing import Any

import pytest
from asgi_site import off_loop
from page_waits import htmx_settled
from playwright.sync_api import expect

from handoff import operations
from handoff.core.phases import Phase
from handoff.models import HandoffRecord
from host.demo import DEMO_PASSWORD, seed_demo
from host.models import Message, Session

pytestmark = [pytest.mark.browser, pytest.mark.usefixtures("immediate_tasks")]

VIEWPORTS = {"desktop": (1360, 900), "phone": (390, 844)}


@pytest.fixture(params=list(VIEWPORTS))
def review_page(
    request: Any,
    browser: Any,
    live_server: Any,
    login: Callable[..., None],
    transactional_db: None,
) -> Iterator[Any]:
    """The demo conversation, its review switched on, in a window of the param's size."""
    session = seed_demo()[0]
    operations.review_on(session.pk)
    width, height = VIEWPORTS[request.param]
    context = browser.new_context(viewport={"width": width, "height": height})
    context.set_default_timeout(15_000)
    page = context.new_page()
    login(page, live_server.url, session.owner, DEMO_PASSWORD)
    page.goto(f"{live_server.url}/s/{session.pk}/")
    page.session = session
    page.viewport_name = request.param
    yield page
    context.close()


def test_a_review_is_edited_and_committed_and_seeds_the_successor(
    review_page: Any, screenshot: Callable[[Any, str], None]
):
    page = review_page
    page.get_by_role("button", name="Hand off now").click()
    form = page.locator("#handoff-review-form")
    form.get_by_role("heading", name="A handoff is ready for review").wait_for()

    form.get_by_label("Goal").fill("Finish the weather CLI, as reviewed")
    decisions = form.locator("fieldset[data-field=decisions] textarea")
    before = decisions.count()
    form.get_by_role("button", name="Add an item to Decisions").click()
    expect(decisions).to_have_count(before + 1)
    decisions.last.fill("Decided at review: keep the output plain")
    removed = form.locator("fieldset[data-field=artifacts] .review-item").first
    removed.get_by_label("Remove").check()
    assert form.bounding_box()["width"] <= VIEWPORTS[page.viewport_name][0]
    screenshot(page, f"review-{page.viewport_name}.png")
    form.get_by_role("button", name="Commit the brief").click()

    page.locator(".banner").wait_for()
    record = HandoffRecord.objects.get(source=page.session)
    assert record.phase == Phase.STARTED
    assert record.original_brief is not None and record.brief is not None
    assert record.brief["goal"] == "Finish the weather CLI, as reviewed"
    assert record.brief["decisions"][-1] == "Decided at review: keep the output plain"
    assert record.brief["artifacts"] == record.original_brief["artifacts"][1:]
    assert record.target_id is not None
    seed = Message.objects.filter(session_id=record.target_id).earliest("seq").content
    assert "Finish the weather CLI, as reviewed" in seed
    assert page.locator("#handoff-review-form").count() == 0


def test_a_review_is_refused_after_new_input_and_its_draft_discarded(review_page: Any):
    page = review_page
    page.get_by_role("button", name="Hand off now").click()
    form = page.locator("#handoff-review-form")
    form.get_by_role("heading", name="A handoff is ready for review").wait_for()
    draft_id = HandoffRecord.objects.get(source=page.session).target_id
    assert draft_id is not None

    composer = page.get_by_role("textbox", name="Message")
    composer.fill("One more thing: keep the cache in ~/.cache/weather.")
    composer.press("Enter")
    page.locator("#timeline .msg-assistant").get_by_text("Offline agent").last.wait_for()
    htmx_settled(page)  # the panel's refresh after the post, which would replace the refusal
    form.get_by_role("button", name="Commit the brief").click()

    alert = page.locator("#handoff-panel [role=alert]")
    alert.wait_for()
    assert "the reviewed handoff failed" in alert.inner_text()
    assert page.locator("#handoff-review-form").count() == 0
    assert page.locator(".banner").count() == 0
    record = HandoffRecord.objects.get(source=page.session)
    assert record.phase == Phase.FAILED
    assert Session.objects.get(pk=draft_id).archived is True


def test_a_waiting_review_is_announced_by_the_composer_and_its_link_shows_the_form(
    review_page: Any,
):
    page = review_page
    notice = page.locator("#review-notice")
    assert notice.is_hidden()
    page.get_by_role("button", name="Hand off now").click()
    form = page.locator("#handoff-review-form")
    heading = form.get_by_role("heading", name="A handoff is ready for review")
    heading.wait_for(state="attached")
    # The list's refresh after the action settles by scrolling the log to its end: let it
    # before the link scrolls to the form.
    htmx_settled(page)

    expect(notice).to_be_in_viewport()
    assert "A handoff is ready for review" in notice.inner_text()
    notice.get_by_role("link").click()

    expect(heading).to_be_in_viewport()
    expect(page.locator(".topbar")).to_be_in_viewport(ratio=1)
    expect(form.get_by_label("Goal")).to_be_focused()
    form.get_by_role("button", name="Discard").click()
    expect(notice).to_be_hidden()


SWAP_PANEL_AS_AN_EVENT_WOULD = """async (url) => {
  const html = (await (await fetch(url)).text())
    .replace('<section id="handoff-panel"', '<section hx-swap-oob="true" id="handoff-panel"');
  window.htmx.swap(document.body, html, { swapStyle: "none" });
}"""


def test_a_live_panel_update_keeps_the_edits_in_the_review_form(review_page: Any):
    page = review_page
    page.get_by_role("button", name="Hand off now").click()
    form = page.locator("#handoff-review-form")
    form.get_by_label("Goal").fill("Edited before the panel was updated")

    page.evaluate(SWAP_PANEL_AS_AN_EVENT_WOULD, f"/handoff/sessions/{page.session.pk}/panel/")

    assert form.get_by_label("Goal").input_value() == "Edited before the panel was updated"


def test_two_tabs_pressing_discard_at_once_discard_once_and_the_other_says_why(
    browser: Any,
    live_server: Any,
    login: Callable[..., None],
    transactional_db: None,
    monkeypatch: pytest.MonkeyPatch,
):
    session = off_loop(lambda: seed_demo()[0])
    off_loop(lambda: operations.review_on(session.pk))
    off_loop(lambda: operations.run_attempt(session.pk, manual=True))
    context = browser.new_context(viewport={"width": 1280, "height": 860})
    context.set_default_timeout(15_000)
    tabs = [context.new_page(), context.new_page()]
    login(tabs[0], live_server.url, session.owner, DEMO_PASSWORD)
    for tab in tabs:
        tab.goto(f"{live_server.url}/s/{session.pk}/")
        tab.get_by_role("heading", name="A handoff is ready for review").wait_for()
    both_found_it_waiting = threading.Barrier(2, timeout=10)
    discard = operations.discard_review

    def together(session_id: Any) -> Any:
        both_found_it_waiting.wait()
        return discard(session_id)

    monkeypatch.setattr(operations, "discard_review", together)

    for tab in tabs:
        tab.locator("#handoff-review-form").get_by_role("button", name="Discard").click()

    discarded = [
        tab.locator("#composer-feedback").get_by_text("Discarded at review") for tab in tabs
    ]
    refused = [
        tab.locator("#handoff-panel [role=alert]").get_by_text(
            "No handoff of this conversation is waiting for review."
        )
        for tab in tabs
    ]
    for tab, done, said in zip(tabs, discarded, refused, strict=True):
        expect(done.or_(said)).to_be_visible()
        expect(tab.locator("#handoff-review-form")).to_have_count(0)
    assert sorted([done.count() for done in discarded]) == [0, 1]
    assert sorted([said.count() for said in refused]) == [0, 1]
    record = HandoffRecord.objects.get(source=session)
    assert record.phase == Phase.FAILED
    context.close()


def test_discard_works_with_the_goal_emptied(review_page: Any):
    """Discarding does not need a valid brief: an emptied goal must not block the Discard button
    with the browser's "fill out this field"."""
    page = review_page
    page.get_by_role("button", name="Hand off now").click()
    form = page.locator("#handoff-review-form")
    form.get_by_role("heading", name="A handoff is ready for review").wait_for()

    form.get_by_label("Goal").fill("")
    form.get_by_role("button", name="Discard").click()

    expect(page.locator("#handoff-review-form")).to_have_count(0)
    record = HandoffRecord.objects.get(source=page.session)
    assert record.phase == Phase.FAILED


def test_an_item_is_added_while_the_goal_is_empty(review_page: Any):
    """Adding an item is not committing: an emptied goal must not block "Add an item"."""
    page = review_page
    page.get_by_role("button", name="Hand off now").click()
    form = page.locator("#handoff-review-form")
    form.get_by_role("heading", name="A handoff is ready for review").wait_for()
    decisions = form.locator("fieldset[data-field=decisions] textarea")
    before = decisions.count()

    form.get_by_label("Goal").fill("")
    form.get_by_role("button", name="Add an item to Decisions").click()

    expect(decisions).to_have_count(before + 1)
