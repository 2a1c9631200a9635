"""Page mode: tabs that behave like the conversation page, a handoff asked for as a user does.

Each simulated tab loads the source's conversation page (``GET /s/<id>/``: the id it was
rendered with, the session list's groups), opens the follower socket and then does what
``follower.js`` does with each event: a row whose workspace group the list lacks, or
a ``resync``, makes it fetch (the session list; after a resync also the log and the panel),
everything else is applied from the event, with no request. It opens the successor as the
page does: at the ``redirect.committed`` carrying it started, else at the event that starts it.

The handoff is asked for as ``/handoff`` or "Hand off now" asks (``operations.act("now")``,
which queues the attempt) and run by a task worker process (``manage.py task_worker
--interval 0.5``, as the Procfile runs it), so the table shows the whole path: request →
attempt start (the record's creation), commit → navigation (the decision to open,
``location.assign``) and request → navigation, with the requests each tab sent per handoff
besides its navigation, and the load average beside. Targets:
commit → navigation p50 ≤ 100 ms and p95 < 0.5 s, request → attempt start p95 ≤ 50 ms, at
most one request per tab per handoff.

Once it decided to open the successor, a tab fetches the successor's page as ``follower.js``
does (``?followed=1``), without waiting for it: the next handoff starts at once (handoffs back
to back), while those pages render. ``--browsers`` (``BENCH_PAGE_BROWSERS``) says whose tabs
they are (``BROWSERS``): ``shared``, every tab in one browser of the user (one sign-in; the
tabs following a move share one render of the successor's page, ``common/caching.py``), or
``many``, every tab in a browser of its own (a sign-in each, as across devices and users of one
account: each tab's successor page is rendered for it, and the follower checks every sign-in
before each delivery). Targets with ``many`` on PostgreSQL + Redis: commit → navigation p50
≤ 100 ms and p95 < 0.5 s at 1, 50 and 200 tabs.

``BENCH_PAGE_HANDOFFS`` sets the handoffs per row (default 20; 200 tabs load 200 pages).
``--concurrency`` (``BENCH_PAGE_CONCURRENCY``, e.g. ``4,0``) runs each row on one Daphne
process per value of ``DJANGO_HTTP_CONCURRENCY`` (the HTTP requests a process runs at once; 0:
no bound), one right after the other, each row named by its server's bound; without it one
process with the settings' own bound (``default``).
"""

from __future__ import annotations

import asyncio
import json
import os
import re
import time
from dataclasses import dataclass, field

from django.apps import apps
from websockets.asyncio.client import ClientConnection

from bench.follower_site import Site, in_thread, measured, percentile, with_sites
from common.caching import FOLLOWED
from host.models import Session

TABS = tuple(int(n) for n in os.environ.get("BENCH_PAGE_TABS", "1,50,200").split(","))
LOADING = 8
"""Pages loaded at once while the tabs open (before the handoff)."""
BROWSERS = {
    "shared": "every tab in one browser (one sign-in; a move's page rendered once for all)",
    "many": "every tab in a browser of its own (a sign-in and a render of the page each)",
}
"""The layouts of ``--browsers`` (``BENCH_PAGE_BROWSERS``, default ``shared``)."""
PATIENCE = 30.0
"""Seconds a tab waits for the successor before it counts as missed."""
GROUP = re.compile(r'class="session-group" data-workspace="([^"]*)"')
ROW_GROUP = re.compile(r'data-workspace="([^"]*)" data-shown="(true|false)"')
RENDERED = re.compile(r'data-event-id="(\d+)"')


def _handoffs() -> int:
    return int(os.environ.get("BENCH_PAGE_HANDOFFS", "20"))


def servers() -> list[tuple[str, dict[str, str]]]:
    """The Daphne processes asked for, in order: each one's label and the environment it
    adds (``DJANGO_HTTP_CONCURRENCY``; a value given twice runs twice). Raises ``SystemExit``
    for a value of ``BENCH_PAGE_CONCURRENCY`` that is not a whole number of at least 0."""
    values = [v.strip() for v in os.environ.get("BENCH_PAGE_CONCURRENCY", "").split(",")]
    if values == [""]:
        return [("default", {})]
    if not all(value.isdigit() for value in values):
        raise SystemExit(f"BENCH_PAGE_CONCURRENCY must be whole numbers ≥ 0: {values!r}")
    return [
        (f"limit {value}" if int(value) else "no limit", {"DJANGO_HTTP_CONCURRENCY": value})
        for value in values
    ]


def layout() -> str:
    """The layout asked for (``BROWSERS``). Raises ``SystemExit`` naming the choices for
    another."""
    layout = os.environ.get("BENCH_PAGE_BROWSERS", "shared")
    if layout not in BROWSERS:
        raise SystemExit(f"BENCH_PAGE_BROWSERS must be one of {', '.join(BROWSERS)}: {layout!r}")
    return layout


@dataclass
class PageTab:
    """One tab on the source's page: its list's groups, the requests it sent, its browser's
    sign-in (``cookie``; None: the site's own) and whether it fetches the successor's page
    itself (``loads``: not when another tab of its browser brings the shared render)."""

    source: str
    rendered: int
    groups: set[str]
    cookie: str | None
    loads: bool
    requests: int = 0
    waiting: str | None = None

    async def refetch(self, site: Site, *paths: str) -> None:
        """Fetch what the page would (the list; after a resync the log and the panel too)."""
        for path in paths:
            body = (await site.get(path, self.cookie)).decode()
            self.requests += 1
            self.groups |= set(GROUP.findall(body))

    async def follow(
        self, site: Site, socket: ClientConnection, loading: set[asyncio.Task[bytes]]
    ) -> float:
        """Apply events as the page does until it opens the successor; return that moment.
        The successor's page it then fetches (``loads``) is added to ``loading``."""
        try:
            while True:
                frame = json.loads(await socket.recv())
                if frame["type"] == "resync":
                    await self.refetch(
                        site,
                        f"/sidebar/?current={self.source}",
                        f"/s/{self.source}/messages/",
                        f"/handoff/sessions/{self.source}/panel/",
                    )
                if frame["type"] == "event" and await self.apply(site, frame):
                    moment = time.time()
                    if self.loads:
                        page = f"/s/{self.waiting}/?{FOLLOWED}=1"
                        loading.add(asyncio.create_task(site.get(page, self.cookie)))
                    return moment
        finally:
            await socket.close()

    async def apply(self, site: Site, frame: dict[str, object]) -> bool:
        """Apply one event; True when the page opens the successor now."""
        kind, payload = frame["kind"], frame["payload"]
        assert isinstance(payload, dict)
        placed = ROW_GROUP.search(str(payload.get("row_html", "")))
        if placed and placed.group(2) == "true" and placed.group(1) not in self.groups:
            await self.refetch(site, f"/sidebar/?current={self.source}")
        if kind == "redirect.committed" and payload["source"] == self.source:
            self.waiting = str(payload["destination"])
        elif kind not in ("session.updated", "session.added"):
            return False
        row = payload["session"]
        return bool(self.waiting and row["id"] == self.waiting and not row["blank"])


async def _page_tab(
    site: Site, source: str, loading: asyncio.Semaphore, cookie: str | None, loads: bool
) -> PageTab:
    """Load the source's page as a tab of the browser signed in with ``cookie`` does; return
    the tab it rendered."""
    async with loading:
        html = (await site.get(f"/s/{source}/", cookie)).decode()
    rendered = RENDERED.search(html)
    if rendered is None:
        raise RuntimeError(f"the page of {source} has no rendered event id")
    return PageTab(source, int(rendered.group(1)), set(GROUP.findall(html)), cookie, loads)


@dataclass
class Row:
    """One row of the table: its samples (seconds) and the requests per tab per handoff."""

    commit_to_navigation: list[float] = field(default_factory=list)
    request_to_attempt: list[float] = field(default_factory=list)
    request_to_navigation: list[float] = field(default_factory=list)
    requests: list[int] = field(default_factory=list)
    missed: int = 0


def _attempt_started(source: Session) -> float:
    record = apps.get_model("handoff", "HandoffRecord")
    created = record.objects.filter(source=source).values_list("created", flat=True).get()
    return float(created.timestamp())


@dataclass
class Browsers:
    """The sign-ins of the tabs (``cookies[i]`` for tab ``i``; None: the site's own) and the
    successor pages being fetched (awaited at the end of the run)."""

    cookies: list[str | None]
    loading: set[asyncio.Task[bytes]] = field(default_factory=set)

    def tab(self, index: int) -> tuple[str | None, bool]:
        """Tab ``index``'s cookie and whether it fetches the successor's page itself."""
        cookie = self.cookies[index]
        return cookie, cookie is not None or index == 0


async def _round(site: Site, tabs: int, row: Row, browsers: Browsers) -> None:
    source = await in_thread(site.conversation, f"bench {tabs} page tabs")
    source_id = str(source.pk)
    loading = asyncio.Semaphore(LOADING)
    pages = await asyncio.gather(
        *(_page_tab(site, source_id, loading, *browsers.tab(i)) for i in range(tabs))
    )
    sockets = []
    for page in pages:  # one at a time, as tabs opened by a person
        sockets.append(await site.open_tab(page.rendered, page.cookie))
    watching = [
        asyncio.create_task(p.follow(site, s, browsers.loading))
        for p, s in zip(pages, sockets, strict=True)
    ]
    asked = await in_thread(site.ask_now, source)
    done, late = await asyncio.wait(watching, timeout=PATIENCE)
    for task in late:
        task.cancel()
    committed = await in_thread(site.committed_at, source)
    started = await in_thread(_attempt_started, source)
    failed = {repr(task.exception()) for task in done if task.exception()}
    if failed:
        print(f"  tabs failed: {', '.join(sorted(failed))[:300]}")
    opened = [task.result() for task in done if not task.exception()]
    row.commit_to_navigation += [moment - committed for moment in opened]
    row.request_to_navigation += [moment - asked for moment in opened]
    row.request_to_attempt.append(started - asked)
    row.requests += [page.requests for page in pages]
    row.missed += tabs - len(opened)


async def _browsers(site: Site, layout: str) -> Browsers:
    """The tabs' sign-ins on ``site`` for ``layout``, after one warm-up handoff (the worker's and
    the server's first requests)."""
    cookies: list[str | None] = [None] * max(TABS)
    if layout == "many":
        cookies = [await in_thread(site.sign_in) for _ in cookies]
    browsers = Browsers(cookies)
    await _round(site, 1, Row(), browsers)
    return browsers


async def _row(site: Site, tabs: int, browsers: Browsers) -> Row:
    """``_handoffs()`` handoffs back to back with ``tabs`` tabs, then the successor pages still
    loading, so the next row starts on a server at rest."""
    row = Row()
    for _ in range(_handoffs()):
        await _round(site, tabs, row, browsers)
    await asyncio.gather(*browsers.loading)
    browsers.loading.clear()
    return row


async def _measure(sites: list[Site]) -> None:
    chosen = layout()
    print(f"browsers: {chosen}, {BROWSERS[chosen]}")
    labels = [label for label, _ in servers()]
    browsers = [await _browsers(site, chosen) for site in sites]
    print(
        f"{'tabs':>5} {'commit→nav p50':>15} {'p95':>5} {'req→attempt p50':>16} {'p95':>5} "
        f"{'req→nav p50':>12} {'p95':>5} {'requests/tab':>13} {'missed':>7} {'load':>5}  server"
    )
    for tabs in TABS:
        for site, label, signed_in in zip(sites, labels, browsers, strict=True):
            row = await _row(site, tabs, signed_in)
            per_tab = max(row.requests) if row.requests else 0
            print(
                f"{tabs:>5} {measured(percentile(row.commit_to_navigation, 0.5)):>15}"
                f" {measured(percentile(row.commit_to_navigation, 0.95)):>5}"
                f" {measured(percentile(row.request_to_attempt, 0.5)):>16}"
                f" {measured(percentile(row.request_to_attempt, 0.95)):>5}"
                f" {measured(percentile(row.request_to_navigation, 0.5)):>12}"
                f" {measured(percentile(row.request_to_navigation, 0.95)):>5}"
                f" {per_tab:>13} {row.missed:>7} {os.getloadavg()[0]:>5.1f}  {label}",
                flush=True,
            )


def run() -> None:
    """Print the page-mode table at 1, 50 and 200 tabs (milliseconds; requests: the most any
    tab sent in one handoff besides its navigation), a row per server of ``servers()``."""
    print("follower, page mode: tabs like the conversation page, handoffs asked for and queued")
    with_sites("bench-pages", [env for _, env in servers()], _measure)
