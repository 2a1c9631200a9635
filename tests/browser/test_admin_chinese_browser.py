"""The conversations' admin in Simplified Chinese at phone and desktop size (host/admin.py,
host/static/host/admin.css): a short column keeps its words on one line, and the page does not
scroll sideways."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from host.models import LanguagePreference, Message, Session, Workspace

pytestmark = pytest.mark.browser

SIZES = [{"width": 390, "height": 844}, {"width": 1280, "height": 800}]
# Short cells of the changelist and of the log inline: (selector, the text it shows).
SHORT_CELLS = [
    ("#result_list td.field-status", "运行中"),
    (".inline-group td.field-role", "助手"),
    (".inline-group td.field-source_kind", "助手"),
]
# How many lines a cell's text takes.
LINES = """cell => {
    const walker = document.createTreeWalker(cell, NodeFilter.SHOW_TEXT);
    const tops = new Set();
    for (let node = walker.nextNode(); node; node = walker.nextNode()) {
        const range = document.createRange();
        range.selectNodeContents(node);
        for (const rect of range.getClientRects()) tops.add(Math.round(rect.top));
    }
    return tops.size;
}"""


@pytest.mark.parametrize("size", SIZES, ids=lambda size: f"{size['width']}x{size['height']}")
def test_short_columns_read_on_one_line_in_chinese(
    browser: Any,
    live_server: Any,
    login: Callable[..., None],
    make_user: Callable[..., Any],
    size: dict[str, int],
):
    root = make_user("root", staff=True)
    root.is_superuser = True
    root.save()
    LanguagePreference.objects.create(user=root, language="zh-hans")
    workspace = Workspace.objects.create(owner=root, path="/work/weather", name="weather")
    session = Session.objects.create(
        owner=root, title="Build the weather CLI", workspace=workspace, status="running"
    )
    Message.objects.create(
        session=session, seq=1, role="assistant", source_kind="assistant", content="Done. " * 40
    )
    context = browser.new_context(viewport=size)
    page = context.new_page()
    try:
        login(page, live_server.url, root)
        found = {}
        for url in ("/admin/host/session/", f"/admin/host/session/{session.pk}/change/"):
            page.goto(live_server.url + url)
            page.wait_for_timeout(100)
            assert page.evaluate("document.documentElement.scrollWidth") <= size["width"], url
            for selector, text in SHORT_CELLS:
                cell = page.locator(selector)
                if cell.count():
                    assert cell.first.inner_text().strip() == text
                    found[selector] = cell.first.evaluate(LINES)
    finally:
        context.close()
    assert found == {selector: 1 for selector, _text in SHORT_CELLS}
