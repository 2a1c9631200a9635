"""1 000 follower sockets on one worker: one event to all, memory, idle database cost.

One Daphne worker and 1 000 open tabs of one user (websocket clients in this process, on
loopback). Printed, side by side with 10 tabs where it matters:

- one event, published from this process (as the task worker would), until every socket has
  it: the median of three events, and the same through a bare ``websockets`` broadcast server
  (the floor a Python server sets) with the ratio;
- the server's resident memory per socket;
- while idle, the server's database connections and transactions per second (read from
  PostgreSQL's statistics; on SQLite there is no server to ask, and the table says so).
"""

from __future__ import annotations

import asyncio
import logging
import statistics
import time
from typing import Any

from django.db import connection
from websockets.asyncio.client import ClientConnection, connect
from websockets.asyncio.server import broadcast, serve

from bench.follower_site import Site, in_thread, measured
from follower.events import publish
from handoff.web.follow import Kind as HandoffKind

SOCKETS = 1_000
FEW = 10
BATCH = 100
"""Sockets opened at once."""
EVENTS = 3
IDLE_SECONDS = 5.0


async def _open(site: Site, count: int) -> list[ClientConnection]:
    rendered = await in_thread(site.event_id)
    sockets: list[ClientConnection] = []
    for start in range(0, count, BATCH):
        batch = min(BATCH, count - start)
        sockets += await asyncio.gather(*(site.open_tab(rendered) for _ in range(batch)))
    return sockets


async def _one_event_to_all(site: Site, sockets: list[ClientConnection]) -> float:
    """Seconds from publishing one event until the last socket received it."""
    waiting = [asyncio.create_task(s.recv()) for s in sockets]
    start = time.monotonic()
    await in_thread(publish, site.user.pk, HandoffKind.HANDOFF_PHASE, {"bench": True})
    await asyncio.wait_for(asyncio.gather(*waiting), timeout=30)
    return time.monotonic() - start


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


async def _measure(site: Site) -> None:
    base = site.rss_kib()
    few = await _open(site, FEW)
    few_idle = await in_thread(_idle_database)
    many = few + await _open(site, SOCKETS - FEW)
    await asyncio.sleep(1)
    per_socket = (site.rss_kib() - base) / SOCKETS
    many_idle = await in_thread(_idle_database)
    times = [await _one_event_to_all(site, many) for _ in range(EVENTS)]
    ours = statistics.median(times)
    await asyncio.gather(*(s.close() for s in many))
    bare = await _bare_broadcast(SOCKETS)
    print(f"{'sockets':>8} {'idle DB connections':>20} {'idle transactions/s':>20}")
    print(f"{FEW:>8} {few_idle[0]:>20} {few_idle[1]:>20}")
    print(f"{SOCKETS:>8} {many_idle[0]:>20} {many_idle[1]:>20}")
    print(
        f"one event to {SOCKETS} sockets: {measured(ours)} ms (each of {EVENTS}: "
        f"{', '.join(measured(t) for t in times)} ms); bare websockets broadcast "
        f"{measured(bare)} ms; ours/bare {ours / bare:.1f}"
    )
    print(f"server memory per socket: {per_socket:.0f} KiB")


def run() -> None:
    """Print the 1 000-socket figures (see the module docstring)."""
    print(f"follower: {SOCKETS} sockets on one Daphne worker")
    site = Site("bench-fanout")
    try:
        asyncio.run(_measure(site))
    finally:
        site.close()
