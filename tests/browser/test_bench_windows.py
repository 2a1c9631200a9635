"""The Chromium benchmark's premise (``bench/chromium_tabs.py``): its target layout
opens each tab in a window of its own, all in one browser context (one cookie jar and HTTP
cache: one signed-in person), while Playwright's ``new_page`` puts every page of a context in
one window, where only the active tab is drawn. Nothing is timed here."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from bench.chromium_tabs import ARGS, CHROMIUM, open_windows

pytestmark = pytest.mark.skipif(not CHROMIUM.exists(), reason=f"{CHROMIUM} is not installed")


async def _window_of(context: Any, page: Any) -> int:
    protocol = await context.new_cdp_session(page)
    window: int = (await protocol.send("Browser.getWindowForTarget"))["windowId"]
    await protocol.detach()
    return window


async def _windows(layout: str) -> list[int]:
    """Open three pages as ``layout`` says ("windows": ``open_windows``, else ``new_page``),
    check they belong to the one context, and return each page's window id."""
    from playwright.async_api import async_playwright

    async with async_playwright() as playwright:
        browser = await playwright.chromium.launch(executable_path=str(CHROMIUM), args=ARGS)
        context = await browser.new_context()
        if layout == "windows":
            pages = await open_windows(browser, context, 3)
        else:
            pages = [await context.new_page() for _ in range(3)]
        windows = [await _window_of(context, page) for page in pages]
        assert all(page.context is context for page in pages)
        await browser.close()
    return windows


def test_the_target_layout_gives_every_tab_a_window_of_its_own_in_one_context() -> None:
    assert len(set(asyncio.run(_windows("windows")))) == 3


def test_playwright_pages_of_one_context_share_one_window() -> None:
    assert len(set(asyncio.run(_windows("tabs")))) == 1
