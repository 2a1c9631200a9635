"""1 000 follower sockets on one worker: one event to all, memory, idle database cost.

One Daphne worker and 1 000 open tabs of one user (websocket clients in this process, on
loopback). Printed, side by side with 10 tabs where it matters:

- one event, published from this process (as the task worker would: stored, committed, then
  sent), until every socket has it, ``EVENTS`` times at 10, 200 and 1 000 sockets (p50/p95 ms,
  with the load average after each row), through three paths in one run: the project's
  (``/ws/follow/``, ``follower.hub``), the plain Channels idiom served by the same Daphne worker
  on the same channel layer (``/ws/idiom/``, ``bench/idiom_asgi.py``: each socket in its user's
  group), and a bare ``websockets`` broadcast server (the floor a Python server sets; one
  event). A path that has not delivered within ``NOT_DELIVERED`` seconds is shown as such (the
  idiom on the in-memory layer: another process's ``group_send`` never reaches it);
- the server's resident memory per socket;
- while idle, the server's database connections and transactions per second (read from
  PostgreSQL's statistics; on SQLite there is no server to ask, and the table says so).
"""

from __future__ import annotations

import asyncio
import logging
import os
import time
from collections.abc import Awaitable, Callable
from typing import Any

from django.db import connection
from websockets.asyncio.client import ClientConnection, connect
from websockets.asyncio.server import broadcast, serve
from websockets.exceptions import ConnectionClosed

from bench.follower_site import Site, in_thread, measured, percentile
from follower.events import publish
from handoff.web.follow import Kind as HandoffKind

SOCKETS = 1_000
FEW = 10
TABS = 200
"""The page mode's largest tab count (``bench/follower_pages.py``), measured here as sockets."""
BATCH = 100
"""Sockets opened at once."""
EVENTS = 20
"""Events published per path and socket count."""
NOT_DELIVERED = 5.0
"""Seconds after which an event that has not reached every socket counts as not delivered."""
IDLE_SECONDS = 5.0
IDIOM = "bench.idiom_asgi:application"
HUB_PATH = "hub (/ws/follow/)"
IDIOM_PATH = "plain idiom (/ws/idiom/)"

Opener = Callable[[Site, int], Awaitable[ClientConnection]]
"""Opens one socket of a path for a page rendered at the given event id; returns when ready."""


async def _hub_tab(site: Site, rendered: int) -> ClientConnection:
    return await site.open_tab(rendered)


async def idiom_tab(site: Site, rendered: int) -> ClientConnection:
    """Open a socket of the plain idiom (``bench/idiom_asgi.py``); return once it joined."""
    return await site.open_socket("/ws/idiom/")


async def open_sockets(
    site: Site, count: int, opener: Opener = _hub_tab
) -> tuple[list[ClientConnection], int]:
    """Open ``count`` sockets, ``BATCH`` at a time, opening again those the server refused
    (closed before ready: the idiom's 1011 when its ``group_add`` finds channels-redis' pool of
    connections empty); return them and the number of refusals.

    Raises ``RuntimeError`` when more than ``count`` were refused.
    """
    rendered = await in_thread(site.event_id)
    sockets: list[ClientConnection] = []
    refused = 0
    while len(sockets) < count:
        batch = min(BATCH, count - len(sockets))
        opened = await asyncio.gather(
            *(opener(site, rendered) for _ in range(batch)), return_exceptions=True
        )
        for socket_ in opened:
            if isinstance(socket_, ConnectionClosed):
                refused += 1
            elif isinstance(socket_, BaseException):
                raise socket_
            else:
                sockets.append(socket_)
        if refused > count:
            raise RuntimeError(f"{refused} sockets refused while opening {count}")
    return sockets, refused


async def one_event_to_all(
    site: Site, sockets: list[ClientConnection], bound: float = NOT_DELIVERED
) -> float:
    """Seconds from publishing one event until the last socket received it (inf: not within
    ``bound`` seconds)."""
    waiting = [asyncio.create_task(s.recv()) for s in sockets]
    start = time.monotonic()
    await in_thread(publish, site.user.pk, HandoffKind.HANDOFF_PHASE, {"bench": True})
    try:
        await asyncio.wait_for(asyncio.gather(*waiting), timeout=bound)
    except TimeoutError:
        return float("inf")
    return time.monotonic() - start


async def _fan_out(site: Site, path: str, sockets: list[ClientConnection], refused: int) -> None:
    """Publish ``EVENTS`` events one after the other (stopping at the first not delivered) and
    print the path's row: sockets, p50 and p95 ms, events, sockets refused while opening them,
    load average after."""
    times: list[float] = []
    while len(times) < EVENTS and (not times or times[-1] != float("inf")):
        times.append(await one_event_to_all(site, sockets))
    _row(path, len(sockets), times, refused)


def _row(path: str, sockets: int, times: list[float], refused: int = 0) -> None:
    figures = f"{measured(percentile(times, 0.5)):>7} {measured(percentile(times, 0.95)):>7}"
    if times[-1] == float("inf"):
        figures = f"{f'none in {NOT_DELIVERED:.0f} s':>15}"
    figures += f" {len(times):>7} {refused:>7}"
    print(f"{path:<28} {sockets:>7} {figures} {os.getloadavg()[0]:>5.1f}", flush=True)


async def _bare_broadcast(count: int) -> float:
    """The same fan-out through a bare ``websockets`` server (no Django, no database)."""
    clients: set[Any] = set()

    async def register(client: Any) -> None:
        clients.add(client)
        await client.wait_closed()

    quiet = logging.getLogger("bench.bare")
    quiet.setLevel(logging.WARNING)
    async with serve(register, "127.0.0.1", 0, compression=None, logger=quiet) as server:
        port = server.sockets[0].getsockname()[1]
        sockets = []
        for start in range(0, count, BATCH):
            batch = min(BATCH, count - start)
            sockets += await asyncio.gather(
                *(connect(f"ws://127.0.0.1:{port}/", compression=None) for _ in range(batch))
            )
        while len(clients) < count:
            await asyncio.sleep(0.01)
        waiting = [asyncio.create_task(s.recv()) for s in sockets]
        sent = time.monotonic()
        broadcast(clients, '{"type": "event"}')
        await asyncio.gather(*waiting)
        elapsed = time.monotonic() - sent
        await asyncio.gather(*(s.close() for s in sockets))
    return elapsed


def _idle_database() -> tuple[str, str]:
    """Return (connections, transactions per second) of everyone but us while idle."""
    if connection.vendor != "postgresql":
        return "n/a", "n/a"
    query = (
        "SELECT (SELECT count(*) FROM pg_stat_activity WHERE datname = current_database()"
        " AND pid <> pg_backend_pid()), xact_commit + xact_rollback FROM pg_stat_database"
        " WHERE datname = current_database()"
    )
    with connection.cursor() as cursor:
        cursor.execute(query)
        _, before = cursor.fetchone()
    time.sleep(IDLE_SECONDS)
    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_stat_clear_snapshot()")
        cursor.execute(query)
        connections, after = cursor.fetchone()
    # Our own two statements count as transactions too.
    return str(connections), f"{max(0, after - before - 2) / IDLE_SECONDS:.1f}"


async def _grow(
    site: Site, sockets: list[ClientConnection], refused: int, count: int, opener: Opener
) -> tuple[list[ClientConnection], int]:
    """Open sockets of ``opener``'s path until there are ``count``; return them all and the
    refusals so far (``open_sockets``)."""
    more, more_refused = await open_sockets(site, count - len(sockets), opener)
    return sockets + more, refused + more_refused


async def _measure(site: Site) -> None:
    base = site.rss_kib()
    columns = ("sockets", "p50 ms", "p95 ms", "events", "refused")
    print(f"{'path':<28} {' '.join(f'{c:>7}' for c in columns)} {'load':>5}")
    hub, refused = await open_sockets(site, FEW)
    few_idle = await in_thread(_idle_database)
    await _fan_out(site, HUB_PATH, hub, refused)
    hub, refused = await _grow(site, hub, refused, TABS, _hub_tab)
    await _fan_out(site, HUB_PATH, hub, refused)
    hub, refused = await _grow(site, hub, refused, SOCKETS, _hub_tab)
    await asyncio.sleep(1)
    per_socket = (site.rss_kib() - base) / SOCKETS
    many_idle = await in_thread(_idle_database)
    await _fan_out(site, HUB_PATH, hub, refused)
    await asyncio.gather(*(s.close() for s in hub))
    idiom: list[ClientConnection] = []
    refused = 0
    for count in (FEW, TABS, SOCKETS):
        idiom, refused = await _grow(site, idiom, refused, count, idiom_tab)
        await _fan_out(site, IDIOM_PATH, idiom, refused)
    await asyncio.gather(*(s.close() for s in idiom))
    _row("bare websockets broadcast", SOCKETS, [await _bare_broadcast(SOCKETS)])
    print(f"{'sockets':>8} {'idle DB connections':>20} {'idle transactions/s':>20}")
    print(f"{FEW:>8} {few_idle[0]:>20} {few_idle[1]:>20}")
    print(f"{SOCKETS:>8} {many_idle[0]:>20} {many_idle[1]:>20}")
    print(f"server memory per socket: {per_socket:.0f} KiB")


def run() -> None:
    """Print the 1 000-socket figures (see the module docstring)."""
    print(f"follower: {SOCKETS} sockets on one Daphne worker")
    site = Site("bench-fanout", application=IDIOM)
    try:
        asyncio.run(_measure(site))
    finally:
        site.close()
