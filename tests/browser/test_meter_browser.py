"""The context meter in headless Chromium (docs/design.md, The context meter): it moves after a turn
on every open tab of the conversation, on a desktop and on a 390×844 phone, carried by the
follower's events.

The tabs need the follower's websocket, so they run on Daphne (``open_page``, ``asgi_site``).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from asgi_site import answer, conversation, off_loop

from handoff import operations, services

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

PHONE = {"width": 390, "height": 844}


def figures(page: Any, session_id: Any) -> tuple[int, int]:
    """The meter's ``(tokens, turns)`` as the page shows them."""
    meter = page.locator(f"#handoff-meter-{session_id}")
    return int(meter.get_attribute("data-tokens")), int(meter.get_attribute("data-turns"))


def test_the_meter_moves_after_a_turn_on_every_tab(
    make_user: Callable[..., Any], open_page: Callable[..., Any]
) -> None:
    ada = make_user("ada")
    session = conversation(ada, "Refactor the parser")
    # Automatic handoff on (globally and for it): the meter then counts down to its point.
    off_loop(lambda: services.settings_store().save(auto_handoff=True))
    off_loop(lambda: operations.act("enable", session.pk))
    desktop, phone = open_page(ada, session), open_page(ada, session)
    phone.set_viewport_size(PHONE)
    tokens, turns = figures(desktop, session.pk)
    assert figures(phone, session.pk) == (tokens, turns)

    composer = desktop.get_by_role("textbox", name="Message")
    composer.fill("Now stream the tokenizer too.")
    # The composer's answer refreshes its own tab's panel once (host.views.compose), at once.
    with desktop.expect_response(lambda r: "/panel/" in r.url):
        composer.press("Enter")
    desktop.locator("#timeline .msg-user", has_text="Now stream the tokenizer too.").wait_for()
    fetched: list[str] = []
    for page in (desktop, phone):
        page.on("request", lambda r: fetched.append(r.url) if "/panel/" in r.url else None)
    answer(session)

    for page in (desktop, phone):
        page.wait_for_function(
            "([id, turns]) => Number(document.querySelector(`#handoff-meter-${id}`)"
            "?.dataset.turns) > turns",
            arg=[str(session.pk), turns],
        )
        summary = page.locator(f"#handoff-meter-{session.pk} .meter-summary")
        assert summary.is_visible()
        # Figures and sentence read from one rendering of the meter: the turn's answer may
        # move it again (more tokens) between two separate reads.
        moved_tokens, moved_turns, sentence = page.evaluate(
            "(id) => { const m = document.querySelector(`#handoff-meter-${id}`);"
            " return [Number(m.dataset.tokens), Number(m.dataset.turns),"
            " m.querySelector('.meter-summary').innerText]; }",
            str(session.pk),
        )
        assert moved_turns == turns + 1 and moved_tokens > tokens
        # No known window: the ceiling (120 000) is the trigger point.
        assert f"{120_000 - moved_tokens:,} to go" in sentence
    assert fetched == []  # the events carried the meter: no tab fetched its panel
