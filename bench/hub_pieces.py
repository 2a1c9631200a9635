"""The hub's private pieces beside Channels' idiom, side by side in one run.

``python -m bench pieces`` (``--both`` for both configurations; about five minutes each). One Daphne
worker serves ``bench/idiom_asgi.py`` (the project's application plus the idiom's routes) on
the benchmark's database and channel layer; one user, tabs as websocket clients in this process
on loopback. docs/design.md ("Why the hub, not one group per consumer") names each piece;
printed, each row with the load average after it and the idiom's figure over the hub's:

- reads (``follower.hub.Reads``): one event to ``TABS`` sockets (p50/p95 ms over ``ROUNDS``
  events) while ``TABS`` page requests (a conversation page each, as the page mode's tabs
  navigate at once) are under way, through the hub (``/ws/follow/``: its own read thread and
  connection) and through the same hub with its reads run by ``database_sync_to_async``
  (``/ws/follow-shared/``: asgiref's one shared thread, where the page requests render);
- pong (``Hub.newest``): every one of ``TABS`` sockets pings at once, ``ROUNDS`` times, quiet
  and under the same page requests: ping → pong p50/p95 ms through the hub (the newest id it
  knows), the hub with a read per ping (``/ws/follow-read/``: through its own thread) and the
  idiom (``/ws/idiom/``: one read per ping with ``database_sync_to_async``), and the database
  transactions per ping (PostgreSQL's statistics; n/a on SQLite); then one event to ``TABS``
  and to ``SOCKETS`` sockets alone and right after all of them pinged (a read per ping queues
  on the thread the deliveries read on), through the hub and the hub with a read per ping,
  ``ROUNDS`` times each (p50/p95 ms; ratio: the read per ping's p95 after the pings over the
  hub's);
- outage (``Hub._watch``, ``_probe``, ``_rejoin``): ``OUTAGE_TABS`` tabs of each path on a
  private Redis (``PIECES_REDIS_PORT``, default 6397; never the shared one), restarted empty,
  then (new tabs) paused for ``PAUSE`` s; after each cut an event every ``EVERY`` s, ``EVENTS``
  times, and ``SETTLE`` s to arrive. Per path: tabs silent (none of those events), events lost
  (summed over tabs), seconds from the cut to each tab's first event after it (p50/p95),
  sockets closed by the server. A closed tab opens again, as the page does (the hub's with
  ``hello`` and its last id; the idiom's replays nothing). The tabs do not ping;
- sender (``follower.sending``): from a plain thread (as the task worker sends), ``SENDS``
  sends to the private Redis through ``sending.group_send`` and through
  ``async_to_sync(layer.group_send)``: how long the caller waits (p50/p95 ms), with Redis
  answering and, ``PAUSED_SENDS`` times, paused (SIGSTOP; a wait over ``PAUSE_BOUND`` s is shown
  as such, the caller still waiting).
"""

from __future__ import annotations

import asyncio
import json
import os
import threading
import time
from collections.abc import Awaitable, Callable

from asgiref.sync import async_to_sync
from channels.layers import get_channel_layer
from django.db import connection
from django.test import override_settings
from websockets.asyncio.client import ClientConnection
from websockets.exceptions import ConnectionClosed

from bench.follower_fanout import IDIOM, Opener, idiom_tab, one_event_to_all, open_sockets
from bench.follower_site import Site, in_thread, measured, percentile
from bench.outages import PrivateRedis
from follower import sending
from follower.events import publish
from handoff.web.follow import Kind as HandoffKind

TABS = 200
"""The page mode's largest tab count (``bench/follower_pages.py``)."""
SOCKETS = 1_000
"""The fan-out target's socket count (``bench/follower_fanout.py``)."""
ROUNDS = 5
DELIVERY_BOUND = 30.0
"""Seconds after which an event not at every socket counts as not delivered."""
OUTAGE_TABS = 50
EVENTS = 10
EVERY = 0.5
SETTLE = 10.0
PAUSE = 8.0
"""Seconds the second outage pauses Redis: longer than ``sending.SEND_TIMEOUT``, so the sends
of the events published early in it are given up (the soak's outages last as long)."""
SENDS = 200
PAUSED_SENDS = 3
PAUSE_BOUND = 3.0
"""Seconds a caller is waited for while Redis is paused."""


def _path_tab(path: str) -> Opener:
    """An opener of the project's consumer at ``path`` (as ``Site.open_tab``; ready after
    ``hello``)."""

    async def open_(site: Site, rendered: int) -> ClientConnection:
        return await site.open_tab(rendered, path=path)

    return open_


HUB = ("hub (/ws/follow/)", _path_tab("/ws/follow/"))
SHARED = ("database_sync_to_async", _path_tab("/ws/follow-shared/"))
READ_PER_PING = ("read per ping (hub thread)", _path_tab("/ws/follow-read/"))
IDIOM_PATH = ("plain idiom (/ws/idiom/)", idiom_tab)


def _header(*columns: str) -> None:
    print(f"{'path':<28} {' '.join(f'{c:>9}' for c in columns)} {'load':>5}")


def _row(label: str, *figures: str) -> None:
    print(f"{label:<28} {' '.join(f'{f:>9}' for f in figures)} {os.getloadavg()[0]:>5.1f}")


def _ms(times: list[float]) -> tuple[str, str]:
    return measured(percentile(times, 0.5)), measured(percentile(times, 0.95))


def _ratio(idiom: list[float], hub: list[float]) -> str:
    """The idiom's p95 over the hub's (``×``)."""
    over, under = percentile(idiom, 0.95), percentile(hub, 0.95)
    if over == float("inf"):
        return "—"
    return f"{over / under:.1f}×" if under else "∞"


def _herd(site: Site, page: str) -> list[asyncio.Task[bytes]]:
    """Start ``TABS`` requests of ``page`` at once (the page mode's tabs navigating); a
    loaded worker may reset some (awaited with ``return_exceptions``)."""
    return [asyncio.create_task(site.get(page)) for _ in range(TABS)]


async def _reads(site: Site, page: str) -> None:
    """Print the fan-out to ``TABS`` sockets under a herd of page requests, hub vs idiom."""
    print(f"reads: one event to {TABS} sockets while {TABS} page requests run")
    _header("p50 ms", "p95 ms", "events", "ratio")
    results: dict[str, list[float]] = {}
    for label, opener in (HUB, SHARED):
        sockets, _ = await open_sockets(site, TABS, opener)
        times = []
        for _ in range(ROUNDS):
            herd = _herd(site, page)
            await asyncio.sleep(0.05)  # the requests reach the worker first
            times.append(await one_event_to_all(site, sockets, DELIVERY_BOUND))
            await asyncio.gather(*herd, return_exceptions=True)  # some reset under load
        results[label] = times
        ratio = _ratio(times, results[HUB[0]]) if label != HUB[0] else ""
        _row(label, *_ms(times), str(len(times)), ratio)
        await asyncio.gather(*(s.close() for s in sockets))


async def _pong(socket_: ClientConnection) -> float:
    sent = time.monotonic()
    await socket_.send(json.dumps({"type": "ping"}))
    while json.loads(await socket_.recv())["type"] != "pong":
        pass
    return time.monotonic() - sent


def _transactions() -> int | None:
    """PostgreSQL's count of the database's transactions so far (None on SQLite)."""
    if connection.vendor != "postgresql":
        return None
    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_stat_clear_snapshot()")
        cursor.execute(
            "SELECT xact_commit + xact_rollback FROM pg_stat_database"
            " WHERE datname = current_database()"
        )
        count: int = cursor.fetchone()[0]
        return count


async def _pongs(site: Site, page: str) -> None:
    """Print ping → pong for ``TABS`` sockets pinging at once, hub vs idiom, quiet and under a
    herd of page requests, and the transactions per ping."""
    print(f"pong: {TABS} sockets ping at once, quiet and while {TABS} page requests run")
    _header("p50 ms", "p95 ms", "herd p50", "herd p95", "xact/ping", "ratio")
    hub: list[float] = []
    for label, opener in (HUB, READ_PER_PING, IDIOM_PATH):
        sockets, _ = await open_sockets(site, TABS, opener)
        quiet: list[float] = []
        before = await in_thread(_transactions)
        for _ in range(ROUNDS):
            quiet += await asyncio.gather(*(_pong(s) for s in sockets))
        after = await in_thread(_transactions)
        # Our own two statistics reads count as transactions too.
        per_ping = "n/a"
        if before is not None and after is not None:
            per_ping = f"{max(0, after - before - 2) / (ROUNDS * TABS):.2f}"
        herded: list[float] = []
        for _ in range(ROUNDS):
            herd = _herd(site, page)
            await asyncio.sleep(0.05)
            herded += await asyncio.gather(*(_pong(s) for s in sockets))
            await asyncio.gather(*herd, return_exceptions=True)  # some reset under load
        hub = hub or herded
        ratio = _ratio(herded, hub) if label != HUB[0] else ""
        _row(label, *_ms(quiet), *_ms(herded), per_ping, ratio)
        await asyncio.gather(*(s.close() for s in sockets))


async def _next_event(socket_: ClientConnection) -> None:
    """Return once ``socket_`` received an event frame (pongs and the rest are skipped)."""
    while json.loads(await socket_.recv())["type"] != "event":
        pass


async def _event_amid_pings(site: Site, sockets: list[ClientConnection]) -> float:
    """Seconds from publishing one event, right after every socket sent a ping, until every
    socket has it (inf: not within ``DELIVERY_BOUND``)."""
    await asyncio.gather(*(s.send(json.dumps({"type": "ping"})) for s in sockets))
    waiting = [asyncio.create_task(_next_event(s)) for s in sockets]
    start = time.monotonic()
    await in_thread(publish, site.user.pk, HandoffKind.HANDOFF_PHASE, {"bench": True})
    try:
        await asyncio.wait_for(asyncio.gather(*waiting), DELIVERY_BOUND)
    except TimeoutError:
        return float("inf")
    return time.monotonic() - start


async def _rounds(
    measure: Callable[[Site, list[ClientConnection]], Awaitable[float]],
    site: Site,
    sockets: list[ClientConnection],
) -> list[float]:
    """``ROUNDS`` results of ``measure(site, sockets)``, stopping at the first not delivered
    (inf: the idiom on the in-memory layer, which hears nothing this process sends)."""
    times: list[float] = []
    while len(times) < ROUNDS and float("inf") not in times:
        times.append(await measure(site, sockets))
    return times


async def _pings_and_events(site: Site) -> None:
    """Print the fan-out to ``TABS`` and ``SOCKETS`` sockets alone and right after all of them
    pinged, through the hub (its newest id) and through the hub with a read per ping."""
    print("pings: one event to every socket alone, and right after all of them pinged")
    _header("sockets", "p50 ms", "p95 ms", "ping p50", "ping p95", "ratio")
    for count in (TABS, SOCKETS):
        hub: list[float] = []
        for label, opener in (HUB, READ_PER_PING):
            sockets, _ = await open_sockets(site, count, opener)
            alone = await _rounds(one_event_to_all, site, sockets)
            amid = await _rounds(_event_amid_pings, site, sockets)
            hub = hub or amid
            ratio = _ratio(amid, hub) if label != HUB[0] else ""
            _row(label, str(count), *_ms(alone), *_ms(amid), ratio)
            await asyncio.gather(*(s.close() for s in sockets))


class Tab:
    """One tab of a path through the outage: the events it got and when (reopened on close)."""

    def __init__(self, site: Site, path: str, opener: Opener) -> None:
        self.site, self.path, self.opener = site, path, opener
        self.got: dict[int, float] = {}
        self.closed = 0
        self.socket: ClientConnection | None = None

    async def follow(self, rendered: int) -> None:
        last = rendered
        while True:
            try:
                self.socket = socket_ = await self.opener(self.site, last)
                async for text in socket_:
                    frame = json.loads(text)
                    if frame.get("type") == "event":
                        self.got.setdefault(frame["id"], time.monotonic())
                        last = max(last, frame["id"])
            except (ConnectionClosed, OSError):
                pass
            self.closed += 1
            await asyncio.sleep(0.5)


async def _outage(site: Site, name: str, cut: Callable[[], None]) -> None:
    """Print what each path's tabs got of the events published after ``cut`` (the outage)."""
    print(f"outage: {OUTAGE_TABS} tabs per path, Redis {name}, then {EVENTS} events")
    _header("silent", "lost", "first p50", "first p95", "closed")
    rendered = await in_thread(site.event_id)
    tabs = [Tab(site, *path) for path in (HUB, IDIOM_PATH) for _ in range(OUTAGE_TABS)]
    tasks = [asyncio.create_task(tab.follow(rendered)) for tab in tabs]
    await asyncio.sleep(2)
    closed_before = [tab.closed for tab in tabs]
    cut_at = time.monotonic()
    await asyncio.to_thread(cut)
    ids = []
    for _ in range(EVENTS):
        await in_thread(publish, site.user.pk, HandoffKind.HANDOFF_PHASE, {"bench": True})
        ids.append(await in_thread(site.event_id))
        await asyncio.sleep(EVERY)
    await asyncio.sleep(SETTLE)
    for task in tasks:
        task.cancel()
    await asyncio.gather(*(tab.socket.close() for tab in tabs if tab.socket is not None))
    for label, _ in (HUB, IDIOM_PATH):
        mine = [(t, c) for t, c in zip(tabs, closed_before, strict=True) if t.path == label]
        got = [[t.got[i] - cut_at for i in ids if i in t.got] for t, _ in mine]
        silent = sum(1 for times in got if not times)
        lost = sum(len(ids) - len(times) for times in got)
        first = [min(times) if times else float("inf") for times in got]
        first_s = [f"{percentile(first, q):.1f} s" for q in (0.5, 0.95)]
        closed = sum(t.closed - c for t, c in mine)
        _row(label, str(silent), str(lost), *first_s, str(closed))


def _pause(redis: PrivateRedis) -> None:
    """Pause ``redis`` for ``PAUSE`` seconds (SIGSTOP, then SIGCONT)."""
    redis.pause()
    time.sleep(PAUSE)
    redis.resume()


def _waits(send: Callable[[], None], count: int, bound: float) -> list[float]:
    """Seconds the caller of ``send`` waited, ``count`` times, each in a plain thread; a call
    not back within ``bound`` seconds counts as inf (its thread goes on waiting)."""
    waits = []
    for _ in range(count):
        done = threading.Event()
        start = time.monotonic()
        threading.Thread(target=_call, args=(send, done), daemon=True).start()
        waits.append(time.monotonic() - start if done.wait(bound) else float("inf"))
    return waits


def _call(send: Callable[[], None], done: threading.Event) -> None:
    try:
        send()
    except Exception:
        return  # not done: Redis did not answer within the layer's socket_timeout
    done.set()


def _sender(redis: PrivateRedis) -> None:
    """Print how long sync code waits to send, through the sender and ``async_to_sync``."""
    print(f"sender: {SENDS} sends from a plain thread, then {PAUSED_SENDS} with Redis paused")
    _header("p50 ms", "p95 ms", "paused", "ratio")
    layer = get_channel_layer()
    assert layer is not None
    message = {"type": "follow.bench", sending.BATCH: [{"bench": True}]}
    paths: list[tuple[str, Callable[[], None]]] = [
        ("sending.group_send", lambda: sending.group_send(layer, "follow.bench", message)),
        (
            "async_to_sync(group_send)",
            lambda: async_to_sync(layer.group_send)("follow.bench", message),
        ),
    ]
    hub: list[float] = []
    for label, send in paths:
        answering = _waits(send, SENDS, DELIVERY_BOUND)
        sending.flush()
        redis.pause()
        try:
            paused = _waits(send, PAUSED_SENDS, PAUSE_BOUND)
        finally:
            redis.resume()
        sending.flush()
        shown = f"> {PAUSE_BOUND:.0f} s" if float("inf") in paused else measured(max(paused))
        hub = hub or answering
        ratio = _ratio(answering, hub) if hub is not answering else ""
        _row(label, *_ms(answering), shown, ratio)


async def _layer_pieces(site: Site, redis: PrivateRedis) -> None:
    await _outage(site, "restarted empty", redis.restart)
    await _outage(site, f"paused for {PAUSE:.0f} s", lambda: _pause(redis))
    await asyncio.to_thread(_sender, redis)


def run() -> None:
    """Print the four comparisons (see the module docstring)."""
    site = Site("bench-pieces", application=IDIOM)
    try:
        page = f"/s/{site.conversation('pieces').pk}/"
        asyncio.run(_reads(site, page))
        asyncio.run(_pongs(site, page))
        asyncio.run(_pings_and_events(site))
    finally:
        site.close()
    redis = PrivateRedis(int(os.environ.get("PIECES_REDIS_PORT", "6397")))
    host = {"address": redis.url, "socket_timeout": 15}
    layers = {
        "default": {"BACKEND": "channels_redis.core.RedisChannelLayer", "CONFIG": {"hosts": [host]}}
    }
    saved = os.environ.get("REDIS_URL")
    os.environ["REDIS_URL"] = redis.url
    try:
        with override_settings(CHANNEL_LAYERS=layers):
            site = Site("bench-pieces-outage", application=IDIOM)
            try:
                asyncio.run(_layer_pieces(site, redis))
            finally:
                site.close()
    finally:
        os.environ.pop("REDIS_URL")
        if saved is not None:
            os.environ["REDIS_URL"] = saved
        redis.close()
