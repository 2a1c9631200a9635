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
besides its navigation, and the load average beside. ``page`` is the successor's page as the
tab gets it: from its decision to open it until the whole page came (all of a row's pages).
``start`` is the handoff's own share of commit → navigation (the median over the row's
handoffs of commit → the stamp of the successor's start event): the rest is the event's way
to the tabs. Targets:
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

The tabs run in ``BENCH_PAGE_CLIENTS`` client processes (default 4, at most one per tab; tab
``i`` in process ``i`` modulo their count, ``bench/page_tabs.py``), as browsers receive their
frames each on its own: one process playing 200 tabs took each frame in turn, and its own
garbage collection held them all.

``BENCH_PAGE_OVERLAP`` (default 0) has that many of the tabs' browsers load the source's page
once more just before each handoff is asked for (50 ms before), so that many renders are in
flight while its events fan out, as when the successor pages of the handoff before still
render.

``BENCH_PAGE_HANDOFFS`` sets the handoffs per row (default 20; 200 tabs load 200 pages).
``--concurrency`` (``BENCH_PAGE_CONCURRENCY``, e.g. ``4,0``) runs each row on one Daphne
process per value of ``DJANGO_HTTP_CONCURRENCY`` (the HTTP requests a process runs at once; 0:
no bound), one right after the other, each row named by its server's bound; without it one
process with the settings' own bound (``default``).
"""

from __future__ import annotations

import asyncio
import os
from dataclasses import dataclass, field

from django.apps import apps

from bench.follower_site import ROOT, Site, in_thread, measured, percentile, with_sites
from bench.page_tabs import Clients
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
class Row:
    """One row of the table: its samples (seconds; ``commit_to_start`` one per handoff) and the
    requests per tab per handoff."""

    commit_to_navigation: list[float] = field(default_factory=list)
    request_to_attempt: list[float] = field(default_factory=list)
    request_to_navigation: list[float] = field(default_factory=list)
    commit_to_start: list[float] = field(default_factory=list)
    page_loads: list[float] = field(default_factory=list)
    requests: list[int] = field(default_factory=list)
    missed: int = 0


def _attempt_started(source: Session) -> float:
    record = apps.get_model("handoff", "HandoffRecord")
    created = record.objects.filter(source=source).values_list("created", flat=True).get()
    return float(created.timestamp())


def _clients() -> int:
    return int(os.environ.get("BENCH_PAGE_CLIENTS", "4"))


@dataclass
class Browsers:
    """The sign-ins of the tabs (``cookies[i]`` for tab ``i``; None: the site's own) and the
    client processes that play them (``bench.page_tabs.Clients``)."""

    cookies: list[str | None]
    clients: Clients

    def tab(self, index: int) -> list[str | bool | None]:
        """Tab ``index``'s ``[cookie, whether it fetches the successor's page itself]``."""
        cookie = self.cookies[index]
        return [cookie, cookie is not None or index == 0]


async def _round(site: Site, tabs: int, row: Row, browsers: Browsers) -> None:
    source = await in_thread(site.conversation, f"bench {tabs} page tabs")
    await browsers.clients.open(str(source.pk), [browsers.tab(i) for i in range(tabs)], LOADING)
    renders = [  # BENCH_PAGE_OVERLAP: renders in flight during the fan-out
        asyncio.create_task(site.get(f"/s/{source.pk}/", cookie))
        for cookie in browsers.cookies[: int(os.environ.get("BENCH_PAGE_OVERLAP", "0"))]
    ]
    await asyncio.sleep(0.05 if renders else 0)  # the requests reach the server first
    asked = await in_thread(site.ask_now, source)
    results = await browsers.clients.wait(PATIENCE)
    await asyncio.gather(*renders)
    committed = await in_thread(site.committed_at, source)
    started = await in_thread(_attempt_started, source)
    failed = {error for _, _, error in results if error}
    if failed:
        print(f"  tabs failed: {', '.join(sorted(failed))[:300]}")
    opened = [moment for moment, _, _ in results if moment is not None]
    row.commit_to_navigation += [moment - committed for moment in opened]
    row.request_to_navigation += [moment - asked for moment in opened]
    row.request_to_attempt.append(started - asked)
    row.commit_to_start.append(await in_thread(site.started_after_commit, source))
    row.requests += [requests for _, requests, _ in results]
    row.missed += tabs - len(opened)


async def _browsers(site: Site, layout: str) -> Browsers:
    """The tabs' sign-ins on ``site`` for ``layout`` and their client processes
    (``BENCH_PAGE_CLIENTS``, at most one per tab), after one warm-up handoff (the worker's and
    the server's first requests)."""
    cookies: list[str | None] = [None] * max(TABS)
    if layout == "many":
        cookies = [await in_thread(site.sign_in) for _ in cookies]
    clients = await Clients.start(site, min(_clients(), max(TABS)), str(ROOT))
    browsers = Browsers(cookies, clients)
    await _round(site, 1, Row(), browsers)
    return browsers


async def _row(site: Site, tabs: int, browsers: Browsers) -> Row:
    """``_handoffs()`` handoffs back to back with ``tabs`` tabs, then the successor pages still
    loading, so the next row starts on a server at rest."""
    row = Row()
    for _ in range(_handoffs()):
        await _round(site, tabs, row, browsers)
    row.page_loads = await browsers.clients.drain()
    return row


async def _measure(sites: list[Site]) -> None:
    chosen = layout()
    print(
        f"browsers: {chosen}, {BROWSERS[chosen]}; "
        f"tabs spread over {min(_clients(), max(TABS))} client processes"
    )
    labels = [label for label, _ in servers()]
    browsers: list[Browsers] = []
    try:
        for site in sites:
            browsers.append(await _browsers(site, chosen))
        await _table(sites, labels, browsers)
    finally:
        for signed_in in browsers:
            await signed_in.clients.close()


async def _table(sites: list[Site], labels: list[str], browsers: list[Browsers]) -> None:
    print(
        f"{'tabs':>5} {'commit→nav p50':>15} {'p95':>5} {'start':>6} "
        f"{'req→attempt p50':>16} {'p95':>5} "
        f"{'req→nav p50':>12} {'p95':>5} {'page p50':>9} {'p95':>5} "
        f"{'requests/tab':>13} {'missed':>7} {'load':>5}  server"
    )
    for tabs in TABS:
        for site, label, signed_in in zip(sites, labels, browsers, strict=True):
            row = await _row(site, tabs, signed_in)
            per_tab = max(row.requests) if row.requests else 0
            print(
                f"{tabs:>5} {measured(percentile(row.commit_to_navigation, 0.5)):>15}"
                f" {measured(percentile(row.commit_to_navigation, 0.95)):>5}"
                f" {measured(percentile(row.commit_to_start, 0.5)):>6}"
                f" {measured(percentile(row.request_to_attempt, 0.5)):>16}"
                f" {measured(percentile(row.request_to_attempt, 0.95)):>5}"
                f" {measured(percentile(row.request_to_navigation, 0.5)):>12}"
                f" {measured(percentile(row.request_to_navigation, 0.95)):>5}"
                f" {measured(percentile(row.page_loads, 0.5)):>9}"
                f" {measured(percentile(row.page_loads, 0.95)):>5}"
                f" {per_tab:>13} {row.missed:>7} {os.getloadavg()[0]:>5.1f}  {label}",
                flush=True,
            )


def run() -> None:
    """Print the page-mode table at 1, 50 and 200 tabs (milliseconds; requests: the most any
    tab sent in one handoff besides its navigation), a row per server of ``servers()``."""
    print("follower, page mode: tabs like the conversation page, handoffs asked for and queued")
    with_sites("bench-pages", [env for _, env in servers()], _measure)
