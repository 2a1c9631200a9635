"""The pages that follow a handoff speak Simplified Chinese, with the language taken from the
browser (``zh-CN``, no choice made) and from the 中文 choice, on a phone and a desktop: the
successor the tab followed to, the row of the successor pushed live into another tab's list,
and the successor's Lineage. No English is left in their visible text
(``chinese_text.english_words``)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from asgi_site import conversation, off_loop, wait_following
from chinese_text import english_words
from django.urls import reverse
from walk_sessions import send

from handoff.models import HandoffRecord
from handoff.tasks import attempt_task

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

VIEWPORTS = {"phone": {"width": 390, "height": 844}, "desktop": {"width": 1280, "height": 800}}
# How the language is chosen → the browser's language.
LOCALES = {"browser": "zh-CN", "choice": "en-US"}


def chosen(page: Any, how: str) -> None:
    """Click 中文 when the language is chosen (the page reloads in Chinese)."""
    if how == "choice":
        page.get_by_role("button", name="中文").click()
        page.wait_for_function("() => document.documentElement.lang === 'zh-hans'")
        page.locator("#composer textarea").wait_for()


@pytest.mark.parametrize("viewport", VIEWPORTS)
@pytest.mark.parametrize("how", LOCALES)
def test_the_pages_that_follow_a_handoff_stay_chinese(
    make_user: Callable[..., Any], open_page: Callable[..., Any], how: str, viewport: str
) -> None:
    ada = make_user("ada")
    source = conversation(ada, "Weather CLI")
    other = conversation(ada, "Tide chart")
    options = {"viewport": VIEWPORTS[viewport], "locale": LOCALES[how]}
    page = open_page(ada, source, options=options)
    chosen(page, how)
    wait_following(page, source)
    tab = open_page(ada, other)  # the same browser: another tab, in the same language
    assert tab.locator("html").get_attribute("lang") == "zh-hans"

    send(page, "/handoff")
    page.locator("#composer-feedback .feedback").first.wait_for()
    off_loop(lambda: attempt_task.call(str(source.pk), True))  # the task worker's job
    successor = HandoffRecord.objects.select_related("target").get(source=source).target
    assert successor is not None
    page.wait_for_url(f"**/s/{successor.pk}/")
    page.locator(".msg-plugin").first.wait_for()
    wait_following(page, successor)
    tab.locator(f'#chat-sidebar a[href$="/s/{successor.pk}/"]').first.wait_for(state="attached")

    assert page.locator("html").get_attribute("lang") == "zh-hans"
    assert english_words(page.content()) == [], "the successor the tab followed to"
    assert english_words(tab.content()) == [], "a tab whose list the successor's row joined"
    page.goto(reverse("handoff_web:lineage", args=[successor.pk]))
    page.locator("table.inheritance").first.wait_for()
    assert english_words(page.content()) == [], "the successor's Lineage"
