"""Evidence links in headless Chromium (the newcomer's walk): "(log #N)" in the
successor's brief opens the source's whole log at entry N, and the entry lands in view — not
under the sticky handoff panel (desktop) nor behind the composer (390×844 phone)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from playwright.sync_api import expect

from handoff import operations
from host.demo import DEMO_PASSWORD, seed_demo
from host.models import LanguagePreference

pytestmark = [pytest.mark.browser, pytest.mark.usefixtures("immediate_tasks")]

VIEWPORTS = {"desktop": (1360, 900), "phone": (390, 844)}

# Is the entry's top line in the upper half of the window, the topmost element where it is
# drawn (nothing sticky over it)?
UNCOVERED = """(el) => {
  const box = el.getBoundingClientRect();
  const x = box.left + Math.min(box.width / 2, 40), y = box.top + 8;
  const top = document.elementFromPoint(x, y);
  return y >= 0 && y <= innerHeight / 2 && top !== null && el.contains(top);
}"""


@pytest.mark.parametrize("viewport", list(VIEWPORTS))
def test_a_log_link_lands_on_its_entry_in_view(
    viewport: str,
    browser: Any,
    live_server: Any,
    login: Callable[..., None],
    transactional_db: None,
):
    source = seed_demo()[0]
    record = operations.run_attempt(source.pk, manual=True).record
    assert record is not None
    width, height = VIEWPORTS[viewport]
    context = browser.new_context(viewport={"width": width, "height": height})
    context.set_default_timeout(15_000)
    page = context.new_page()
    login(page, live_server.url, source.owner, DEMO_PASSWORD)
    page.goto(f"{live_server.url}/s/{record.target_id}/")
    link = page.locator("#timeline a", has_text="log #").first
    entry_id = "entry-" + link.inner_text().removeprefix("log #")

    link.click()
    page.wait_for_url(f"**#{entry_id}")
    entry = page.locator(f"#{entry_id}").element_handle()
    page.wait_for_function(UNCOVERED, arg=entry)

    assert page.evaluate(UNCOVERED, entry)
    context.close()


def test_no_citation_wraps_inside_itself_on_a_chinese_phone(
    browser: Any, live_server: Any, login: Callable[..., None], transactional_db: None
):
    source = seed_demo()[0]
    record = operations.run_attempt(source.pk, manual=True).record
    assert record is not None
    LanguagePreference.objects.create(user=source.owner, language="zh-hans")
    context = browser.new_context(viewport={"width": 390, "height": 844})
    context.set_default_timeout(15_000)
    page = context.new_page()
    login(page, live_server.url, source.owner, DEMO_PASSWORD)
    page.goto(f"{live_server.url}/s/{record.target_id}/")
    citations = page.locator("#timeline .log-cite")
    expect(citations.first).to_contain_text("日志 #")

    lines = citations.evaluate_all("(els) => els.map((el) => el.getClientRects().length)")

    assert len(lines) > 3 and set(lines) == {1}, lines
    context.close()
