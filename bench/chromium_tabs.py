"""Five real Chromium tabs on a long imported log: the successor's start → every tab showing it.

Debian's Chromium (``/usr/bin/chromium``, driven
by Playwright) opens five tabs of one signed-in user on the conversation page of a long real
log (``../shared/transcripts/claude-code-2.1-auto-compact.jsonl``, 462 messages, imported with
``host.importers.import_transcript`` as ``manage.py import_transcript`` does, once per handoff
under a fresh session id), against the Procfile's processes (one Daphne worker and the task
worker ``task_worker --interval 0.5``) on the configured database and channel layer (the
embedded default: SQLite file + in-memory layer). Each handoff is asked for as "Hand off now"
and ``/handoff`` ask (``operations.act("now")``, queued for the worker).

The tabs are opened two ways, side by side in one run (``LAYOUTS``), each in a browser context
of its own signed in as the same user (one cookie jar and HTTP cache per context, as in one
person's browser):

- ``windows`` (the target): each tab is the one tab of a window of its own
  (``open_windows``), so every tab is on screen, as five windows side by side;
- ``tabs`` (reference only): Playwright's ``new_page``, which opens every page of a context as
  a tab of one window. Playwright reports each as visible, but Chromium draws only the window's
  active tab: the others are background tabs, whose first frame after the move came up to a
  second late (a stall of about 1 s after their conversation's log had scrolled; measured with
  static copies of the pages in ``docs/benchmarks.md``). Nobody sees a background tab, so this
  layout measures when Chromium gets round to painting one, not what a person waits for.

Per handoff: from the successor's start (the stamp of the event that starts it, written in the
start's transaction) to the moment the slowest tab shows it: the tab is on the successor's page
and its timeline is rendered (the first animation frame after the follower brought the page in
place, ``follower:page``, or after ``DOMContentLoaded`` of a page holding ``#timeline`` when it
was opened by navigation; stamped in the page with ``performance.timeOrigin + performance.now()``:
the same wall clock as the database's stamps on this machine). Prints, per layout, each handoff
(the slowest tab's start → shown and start → its request for the successor's page, the fastest
tab's start → shown, the requests of all five tabs, and how many of their successor pages the
server rendered: the tabs following one move share one render, ``common/caching.py``), then the
median and max of the slowest tab over the handoffs, the requests each tab sent per handoff
besides the successor's page and static files (the most of any tab, with their paths), before
it (the tab's own refreshes) and after it (loading the page), and the 1-minute load average;
last, both medians and whether the target (``windows``: median ≤ 0.3 s) holds.

``BENCH_CHROMIUM_HANDOFFS`` sets the handoffs per layout (default 5). Skipped with a notice
when Chromium or the shared transcripts are absent.
"""

from __future__ import annotations

import os
import statistics
import tempfile
import uuid
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from django.apps import apps
from django.contrib.auth.models import User
from django.db import connections

from bench.follower_site import Site, in_thread, measured, with_worker
from bench.import_memory import TRANSCRIPTS
from common.caching import FOLLOWED
from host.importers import import_transcript
from host.models import Session

CHROMIUM = Path("/usr/bin/chromium")
ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking"]
LONG_LOG = TRANSCRIPTS / "claude-code-2.1-auto-compact.jsonl"
LONG_LOG_SESSION = "258c7280-ae70-4798-800f-63464d01a85d"
"""The Claude Code session id the long log's lines carry (``sessionId``)."""
TABS = 5
PATIENCE_MS = 30_000
"""How long a tab may take to show the successor before the run fails."""
TARGET = 0.3
"""Seconds: the target for the median of the slowest tab (docs/benchmarks.md)."""
SHOWN = """
const stamp = () => requestAnimationFrame(() => {
  window.__benchShown = performance.timeOrigin + performance.now();
});
document.addEventListener("DOMContentLoaded", () => {
  if (!document.getElementById("timeline")) return;
  stamp();
  const entry = performance.getEntriesByType("navigation")[0];
  window.__benchRendered = entry === undefined || entry.transferSize > 0;
});
document.addEventListener("follower:page", (event) => {
  stamp();
  const entries = performance.getEntriesByType("resource");
  const entry = entries.findLast((e) => e.name.includes("followed=1"));
  window.__benchRendered = entry === undefined || entry.transferSize > 0;
});
"""
"""Init script of every tab: stamp (epoch ms) the first frame of a page with a timeline, loaded
or brought in place by the follower (``follower:page``), and note whether its page came from the
server (bytes received) or the browser's cache (the render another tab's request brought:
``common/caching.py``)."""
ON_SUCCESSOR = "(source) => location.pathname !== source && window.__benchShown !== undefined"


def _handoffs() -> int:
    return int(os.environ.get("BENCH_CHROMIUM_HANDOFFS", "5"))


def configuration() -> str:
    """Name the database and channel layer this process runs on (for the printed header)."""
    database = "PostgreSQL" if connections["default"].vendor == "postgresql" else "SQLite file"
    layer = "Redis" if os.environ.get("REDIS_URL") else "in-memory channel layer"
    return f"{database} + {layer}"


def import_long_log(owner: User, folder: Path) -> Session:
    """Import the long log for ``owner`` under a fresh session id (an owner imports a log's
    session once, else ``AlreadyImported``); return its main session. The copy with the new id
    is written under ``folder``. Raises ``TranscriptError`` or ``OSError`` as the import does."""
    copy = folder / uuid.uuid4().hex / LONG_LOG.name
    copy.parent.mkdir()
    text = LONG_LOG.read_text(encoding="utf-8")
    copy.write_text(text.replace(LONG_LOG_SESSION, str(uuid.uuid4())), encoding="utf-8")
    return import_transcript(copy, owner)[0]


async def signed_in_context(playwright: Any, site: Site) -> tuple[Any, Any]:
    """Launch Debian's Chromium (``ARGS``) and return it with a context signed in as the
    site's user (its session cookie); the caller closes the browser."""
    browser = await playwright.chromium.launch(executable_path=str(CHROMIUM), args=ARGS)
    context = await browser.new_context(base_url=site.origin)
    name, _, value = site.cookie.partition("=")
    await context.add_cookies([{"name": name, "value": value, "url": site.origin}])
    return browser, context


class TabRequests:
    """What one tab asks the server for during a handoff: the successor's page (its first request
    marked ``?followed=1``: the follower's visit, or a navigation when the page could not come in
    place), and besides it and static files, by path, what it asked for before (its own
    refreshes) and after it (loading the page)."""

    def __init__(self) -> None:
        self.page: Any = None
        self.before: Counter[str] = Counter()
        self.loading: Counter[str] = Counter()

    def __call__(self, request: Any) -> None:
        parts = urlsplit(request.url)
        if self.page is None and f"{FOLLOWED}=1" in parts.query:
            self.page = request
        elif not parts.path.startswith("/static/"):
            (self.before if self.page is None else self.loading)[parts.path] += 1

    def asked(self) -> float:
        """When the request for the successor's page started (epoch s); inf when none was."""
        if self.page is None:
            return float("inf")
        return float(self.page.timing["startTime"]) / 1000


@dataclass
class Handoff:
    """One handoff seen by the tabs, per tab: the successor's start → its request for the page
    and → shown (s), and its requests."""

    asked: list[float]
    shown: list[float]
    requests: list[TabRequests]
    rendered: int
    """How many of the tabs' successor pages the server rendered (the rest: the browser's
    cache, one render shared by the tabs following the same move)."""


async def _handoff(site: Site, pages: list[Any], folder: Path) -> Handoff:
    """Open every page on a freshly imported long log, ask for its handoff, and wait until
    every page shows the successor. Raises ``RuntimeError`` when a tab opens another page,
    Playwright's ``TimeoutError`` when one has not shown it within ``PATIENCE_MS``."""
    source = await in_thread(import_long_log, site.user, folder)
    path = f"/s/{source.pk}/"
    for page in pages:
        await page.goto(path)
        await page.wait_for_function("() => window.follower?.state().connection === 'connected'")
        await page.evaluate("window.__benchShown = undefined")
    requests = [TabRequests() for _ in pages]
    for page, tab in zip(pages, requests, strict=True):
        page.on("request", tab)
    await in_thread(site.ask_now, source)
    shown = []
    for page in pages:
        await page.wait_for_function(ON_SUCCESSOR, arg=path, timeout=PATIENCE_MS, polling=50)
        shown.append(
            await page.evaluate("[location.pathname, window.__benchShown, window.__benchRendered]")
        )
    for page, tab in zip(pages, requests, strict=True):
        page.remove_listener("request", tab)
    started = await in_thread(site.started_at, source)
    successor = await in_thread(_successor_path, source)
    if any(tab_path != successor for tab_path, _, _ in shown):
        raise RuntimeError(f"a tab left {path} for another page than {successor}: {shown}")
    return Handoff(
        [tab.asked() - started for tab in requests],
        [stamp / 1000 - started for _, stamp, _ in shown],
        requests,
        sum(1 for _, _, rendered in shown if rendered),
    )


def _successor_path(source: Session) -> str:
    redirect = apps.get_model("handoff", "Redirect")
    return f"/s/{redirect.objects.values_list('destination', flat=True).get(source=source)}/"


def _most(handoffs: list[Handoff], part: str) -> str:
    """The most requests one tab sent in one handoff in ``part`` ("before" or "loading"), with
    every path the tabs asked for there over the run."""
    tabs = [getattr(tab, part) for handoff in handoffs for tab in handoff.requests]
    paths = sum(tabs, Counter[str]())
    which = f" ({', '.join(f'{p} ×{n}' for p, n in paths.most_common())})" if paths else ""
    return f"{max(sum(tab.values()) for tab in tabs)}{which}"


async def open_windows(browser: Any, context: Any, count: int) -> list[Any]:
    """Open ``count`` pages of ``context``, each the one tab of a window of its own (Chrome
    DevTools Protocol ``Target.createTarget`` with ``newWindow``; Playwright's ``new_page``
    opens every page of a context as a tab of one window, where all but the active tab are
    background tabs, which Chromium draws late). One context: the tabs share the signed-in
    cookie and the HTTP cache, as a person's windows do. Raises Playwright's ``Error`` when
    the browser refuses a window."""
    pages = [await context.new_page()]
    first = await context.new_cdp_session(pages[0])
    context_id = (await first.send("Target.getTargetInfo"))["targetInfo"]["browserContextId"]
    await first.detach()
    protocol = await browser.new_browser_cdp_session()
    for _ in range(count - 1):
        async with context.expect_page() as opened:
            await protocol.send(
                "Target.createTarget",
                {"url": "about:blank", "browserContextId": context_id, "newWindow": True},
            )
        pages.append(await opened.value)
    await protocol.detach()
    return pages


LAYOUTS = {
    "windows": "each tab the one tab of its own window (every tab on screen; the target)",
    "tabs": "five tabs of one window (four are background tabs, drawn late: reference only)",
}
"""The two ways the tabs are opened, side by side in one run."""


async def _open(browser: Any, context: Any, layout: str) -> list[Any]:
    if layout == "windows":
        return await open_windows(browser, context, TABS)
    return [await context.new_page() for _ in range(TABS)]


async def _measure_layout(site: Site, playwright: Any, layout: str, folder: Path) -> list[float]:
    """Run the handoffs on tabs opened as ``layout`` says, print a row per handoff, and
    return the slowest tab's start → shown (s) of each."""
    print(f"{layout}: {LAYOUTS[layout]}")
    print(
        f"{'handoff':>8} {'start→all shown ms':>19} {'start→last ask ms':>18}"
        f" {'fastest shown ms':>17} {'requests before it':>20} {'loading the page':>17}"
        f" {'pages rendered':>15}"
    )
    browser, context = await signed_in_context(playwright, site)
    await context.add_init_script(SHOWN)
    pages = await _open(browser, context, layout)
    handoffs: list[Handoff] = []
    for number in range(1, _handoffs() + 1):
        handoff = await _handoff(site, pages, folder)
        handoffs.append(handoff)
        print(
            f"{number:>8} {measured(max(handoff.shown)):>19}"
            f" {measured(max(handoff.asked)):>18}"
            f" {measured(min(handoff.shown)):>17}"
            f" {sum(sum(tab.before.values()) for tab in handoff.requests):>20}"
            f" {sum(sum(tab.loading.values()) for tab in handoff.requests):>17}"
            f" {handoff.rendered:>15}"
        )
    await browser.close()
    return _summarize(handoffs)


def _summarize(handoffs: list[Handoff]) -> list[float]:
    """Print the slowest tab's median and max, the requests and the load; return the slowest
    tab's start → shown (s) of each handoff."""
    slowest = [max(handoff.shown) for handoff in handoffs]
    asked = [max(handoff.asked) for handoff in handoffs]
    print(
        f"slowest tab, start → shown: median {measured(statistics.median(slowest))} ms, max"
        f" {measured(max(slowest))} ms over {len(slowest)} handoff(s); start → its request for"
        f" the page: median {measured(statistics.median(asked))} ms, max"
        f" {measured(max(asked))} ms"
    )
    print(
        f"requests per tab per handoff besides the successor's page and static files: at most"
        f" {_most(handoffs, 'before')} before it, at most {_most(handoffs, 'loading')}"
        f" loading the successor's page; load average {os.getloadavg()[0]:.1f}"
    )
    return slowest


async def _measure(site: Site) -> None:
    from playwright.async_api import async_playwright

    medians = {}
    with tempfile.TemporaryDirectory(prefix="bench-chromium-") as folder:
        async with async_playwright() as playwright:
            for layout in LAYOUTS:
                slowest = await _measure_layout(site, playwright, layout, Path(folder))
                medians[layout] = statistics.median(slowest)
    held = "holds" if medians["windows"] <= TARGET else "does not hold"
    print(
        f"median of the slowest tab: windows {measured(medians['windows'])} ms, one window's"
        f" tabs {measured(medians['tabs'])} ms; target (windows: median ≤"
        f" {TARGET * 1000:.0f} ms) {held}"
    )


def run() -> None:
    """Print, per layout (``LAYOUTS``), the table: per handoff the slowest and fastest of five
    Chromium tabs (start → shown, ms) and the requests the tabs sent, then the median and max
    over handoffs; last, both medians against the target."""
    print(
        f"follower, {TABS} Chromium tabs on a long imported log ({LONG_LOG.stem}), start → every"
        f" tab showing the successor, {configuration()}"
    )
    for needed in (CHROMIUM, LONG_LOG):
        if not needed.exists():
            print(f"  skipped: {needed} is missing")
            return
    with_worker("bench-chromium", _measure)
