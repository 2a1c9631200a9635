"""The Conversation Collaboration card in headless Chromium (docs/spec.md, Switches; Degradation).

Named apart from tests/test_settings_card.py (the Django-client tests of the same card).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from handoff.models import HandoffSettings

pytestmark = pytest.mark.browser


def stored() -> HandoffSettings:
    return HandoffSettings.objects.get_or_create(pk=1)[0]


def change(page: Any, name: str, value: str) -> Any:
    """Type ``value`` into the setting and leave the field (the browser's change event)."""
    field = page.locator(f"#id_{name}")
    field.fill(value)
    field.press("Tab")
    return page.locator(f"#setting-{name}")


@pytest.fixture
def card(make_user: Callable[..., Any], user_page: Callable[[Any], Any], live_server: Any) -> Any:
    """A staff user's page on the card."""
    page = user_page(make_user("root", staff=True))
    page.goto(f"{live_server.url}/settings/")
    return page


def test_ratio_is_saved_and_survives_a_reload(card: Any):
    setting = change(card, "handoff_ratio", "0.5")

    setting.get_by_text("Saved").wait_for()
    assert stored().handoff_ratio == 0.5
    card.reload()
    assert card.locator("#id_handoff_ratio").input_value() == "0.5"


def test_out_of_range_ratio_shows_an_error_and_keeps_the_stored_value(card: Any):
    setting = change(card, "handoff_ratio", "0.99")

    error = setting.locator(".field-error")
    error.wait_for()
    assert "0.95" in error.inner_text()
    assert card.locator("#id_handoff_ratio").get_attribute("aria-invalid") == "true"
    assert stored().handoff_ratio == 0.75
    card.reload()
    assert card.locator("#id_handoff_ratio").input_value() == "0.75"


def test_switch_saves_on_click(card: Any):
    card.get_by_label("Automatic handoff").check()
    card.locator("#setting-auto_handoff").get_by_text("Saved").wait_for()
    assert stored().auto_handoff is True


def test_refused_websocket_says_unavailable_and_the_card_still_saves(
    make_user: Callable[..., Any], user_page: Callable[[Any], Any], live_server: Any
):
    page = user_page(make_user("root", staff=True))
    page.route_web_socket("**/ws/**", lambda socket: socket.close(code=1011, reason="refused"))
    page.goto(f"{live_server.url}/settings/")

    channel = page.locator("#status-channel")
    channel.get_by_text("status channel unavailable").wait_for()
    assert channel.get_attribute("data-state") == "unavailable"

    change(page, "handoff_min_turns", "6").get_by_text("Saved").wait_for()
    assert stored().handoff_min_turns == 6
