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
besides its navigation, and the load average beside. Targets (issue 17, items 4 and 6):
commit → navigation p50 ≤ 100 ms and p95 < 0.5 s, request → attempt start p95 ≤ 50 ms, at
most one request per tab per handoff.

``BENCH_PAGE_HANDOFFS`` sets the handoffs per row (default 20; 200 tabs load 200 pages).
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

from bench.follower_site import Site, in_thread, measured, percentile, with_worker
from host.models import Session

TABS = tuple(int(n) for n in os.environ.get("BENCH_PAGE_TABS", "1,50,200").split(","))
LOADING = 8
"""Pages loaded at once while the tabs open (before the handoff)."""
PATIENCE = 30.0
"""Seconds a tab waits for the successor before it counts as missed."""
GROUP = re.compile(r'class="session-group" data-workspace="([^"]*)"')
ROW_GROUP = re.compile(r'data-workspace="([^"]*)" data-shown="(true|false)"')
RENDERED = re.compile(r'data-event-id="(\d+)"')


def _handoffs() -> int:
    return int(os.environ.get("BENCH_PAGE_HANDOFFS", "20"))


@dataclass
class PageTab:
    """One tab on the source's page: its list's groups and the requests it sent."""

    source: str
    rendered: int
    groups: set[str]
    requests: int = 0
    waiting: str | None = None

    async def refetch(self, site: Site, *paths: str) -> None:
        """Fetch what the page would (the list; after a resync the log and the panel too)."""
        for path in paths:
            body = (await site.get(path)).decode()
            self.requests += 1
            self.groups |= set(GROUP.findall(body))

    async def follow(self, site: Site, socket: ClientConnection) -> float:
        """Apply events as the page does until it opens the successor; return that moment."""
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
                    return time.time()
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


async def _page_tab(site: Site, source: str, loading: asyncio.Semaphore) -> PageTab:
    """Load the source's page as a tab does; return the tab it rendered."""
    async with loading:
        html = (await site.get(f"/s/{source}/")).decode()
    rendered = RENDERED.search(html)
    if rendered is None:
        raise RuntimeError(f"the page of {source} has no rendered event id")
    return PageTab(source, int(rendered.group(1)), set(GROUP.findall(html)))


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


async def _round(site: Site, tabs: int, row: Row) -> None:
    source = await in_thread(site.conversation, f"bench {tabs} page tabs")
    source_id = str(source.pk)
    loading = asyncio.Semaphore(LOADING)
    pages = await asyncio.gather(*(_page_tab(site, source_id, loading) for _ in range(tabs)))
    sockets = []
    for page in pages:  # one at a time, as tabs opened by a person
        sockets.append(await site.open_tab(page.rendered))
    watching = [asyncio.create_task(p.follow(site, s)) for p, s in zip(pages, sockets, strict=True)]
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


async def _measure(site: Site) -> None:
    await _round(site, 1, Row())  # the worker's and the server's first requests
    print(
        f"{'tabs':>5} {'commit→nav p50':>15} {'p95':>5} {'req→attempt p50':>16} {'p95':>5} "
        f"{'req→nav p50':>12} {'p95':>5} {'requests/tab':>13} {'missed':>7} {'load':>5}"
    )
    for tabs in TABS:
        row = Row()
        for _ in range(_handoffs()):
            await _round(site, tabs, row)
        per_tab = max(row.requests) if row.requests else 0
        print(
            f"{tabs:>5} {measured(percentile(row.commit_to_navigation, 0.5)):>15}"
            f" {measured(percentile(row.commit_to_navigation, 0.95)):>5}"
            f" {measured(percentile(row.request_to_attempt, 0.5)):>16}"
            f" {measured(percentile(row.request_to_attempt, 0.95)):>5}"
            f" {measured(percentile(row.request_to_navigation, 0.5)):>12}"
            f" {measured(percentile(row.request_to_navigation, 0.95)):>5}"
            f" {per_tab:>13} {row.missed:>7} {os.getloadavg()[0]:>5.1f}"
        )


def run() -> None:
    """Print the page-mode table at 1, 50 and 200 tabs (milliseconds; requests: the most any
    tab sent in one handoff besides its navigation)."""
    print("follower, page mode: tabs like the conversation page, handoffs asked for and queued")
    with_worker("bench-pages", _measure)
