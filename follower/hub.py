"""The process's one delivery path for follower events.

Every follower socket of a process registers with the process's ``Hub`` (one per event loop;
docs/design.md, "Delivery: one path per process, heartbeat, outages"). The hub, not each socket,
hears of events:

- through the channel layer: one channel per process joins the group ``follow.<user_id>`` of
  each user with a socket here (Redis in real mode; the in-memory layer carries the events
  this process publishes itself), and each event is encoded once and fanned out to the
  user's sockets. A message carries one or more of a user's frames (``follow.events``: the
  publishing process's sender merges a transaction's burst, ``follower.sending``). One task
  receives, another delivers: the events that came while a delivery was under way go out
  together, with one sign-in check and one push per socket (its frames leave in one write);
- on the in-memory layer only, by one process-wide reader that looks at the stored events
  every ``FOLLOWER_POLL_INTERVAL`` seconds (default 0.1; 0 turns it off), on SQLite only when
  the database's files changed: one query for all the process's users, whatever their socket
  count, so events written by another process (the task worker under ``make run``) reach the
  page too. With Redis nothing is polled.

The channel layer may forget the hub: a Redis restarted empty loses every group membership,
and a Redis that paused or went away loses the messages sent meanwhile (``follower.sending``
gives each a few seconds). Neither is an error the hub's reader sees for sure (redis-py
reconnects by itself), so every ``PROBE_INTERVAL`` seconds the hub sends a probe to a group
only its own channel is in; when the probe does not come back within ``PROBE_TIMEOUT`` seconds
the hub joins its groups again, retrying until the layer takes them, then sends every local
user's sockets what storage holds after their cursors; so it does, too, after an event came
but could not be delivered (the database was down for the sign-in check). Channels and
channels-redis offer no public notice of a new layer connection (redis-py's
``redis_connect_func`` is per pooled connection and would have to be set in
``CHANNEL_LAYERS``), and the probe also notices lost messages, so the hub checks the layer's
behaviour rather than its connections.

The hub also keeps, per local user, the newest event id this process knows of (delivered here,
or committed by a request or task of this process: ``events.event_committed``); the consumer's
``pong`` carries it, so a page behind it replays (``follower.js``), without a read of the
database per ping.

Before delivering an event the hub checks each distinct sign-in of the user's sockets here
once (not once per socket), in a thread of the hub's own (``Reads``), on a connection of its
own: never on asgiref's one shared thread, where every consumer's ``database_sync_to_async``
call of the process queues, nor behind the page requests (each on a thread of its own under
Django's handler) for the pool's connections, so a herd of page requests does not hold an
event back. A sign-out (``user_logged_out``)
reaches the hub through the layer at once. Sockets of an ended sign-in are closed with 4401 and
get nothing more. The hub runs while it has sockets and stops with the last one.
"""

from __future__ import annotations

import asyncio
import json
import logging
import uuid
import weakref
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from importlib import import_module
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

from channels.layers import BaseChannelLayer, InMemoryChannelLayer, get_channel_layer
from django.conf import settings
from django.contrib.auth import SESSION_KEY
from django.contrib.sessions.backends.base import SessionBase
from django.contrib.sessions.backends.db import SessionStore as DatabaseSessionStore
from django.db import DEFAULT_DB_ALIAS, close_old_connections, connection, connections
from django.utils import timezone

from follower import sending
from follower.conf import follower_settings
from follower.events import Frame, Resync, events_after, group_name
from follower.models import FollowerCursor

if TYPE_CHECKING:
    from follower.consumers import FollowConsumer

logger = logging.getLogger(__name__)

Encoded = tuple[int, str]
"""An event frame as its id and its JSON text (encoded once for every socket)."""

T = TypeVar("T")


class Reads:
    """The hub's database reads, one at a time in a thread of its own, on a connection of its
    own.

    ``channels.db.database_sync_to_async`` runs them on asgiref's one shared thread, behind
    every other consumer's call, and on the process's pooled connections, which a herd of
    page requests holds (each request runs on a thread of its own under Django's handler).
    When the database hands out connections from a pool (PostgreSQL: ``OPTIONS["pool"]``,
    shared by the process's page requests), the thread opens one persistent connection
    outside it (``own_connection``), so a delivery never waits for a connection that page
    renders hold. Old connections are closed around each read, as ``database_sync_to_async``
    does (a persistent one stays open, checked
    before its next use). ``close`` ends the thread (and its connection) when the hub stops.
    """

    def __init__(self) -> None:
        self.executor = ThreadPoolExecutor(
            1, thread_name_prefix="follower-hub-reads", initializer=own_connection
        )

    async def __call__(self, read: Callable[..., T], *args: Any) -> T:
        """Run ``read(*args)`` in the hub's thread and return its result (or raise its error)."""
        loop = asyncio.get_running_loop()
        return await loop.run_in_executor(self.executor, _fresh, read, args)

    def close(self) -> None:
        self.executor.submit(connection.close)
        self.executor.shutdown(wait=False)


def own_connection() -> None:
    """Give the calling thread a connection to the default database outside the process's
    pool, kept open across reads (``CONN_MAX_AGE`` None, health-checked before reuse); nothing
    changes when the database uses no pool (each thread has a connection of its own then).

    The connection is the thread's alone (Django's connections are per thread): the rest of
    the process keeps the pool.
    """
    pooled = connections[DEFAULT_DB_ALIAS]
    options = pooled.settings_dict.get("OPTIONS", {})
    if "pool" not in options:
        return
    own = pooled.settings_dict | {
        "OPTIONS": {key: value for key, value in options.items() if key != "pool"},
        "CONN_MAX_AGE": None,
        "CONN_HEALTH_CHECKS": True,
    }
    connections[DEFAULT_DB_ALIAS] = type(pooled)(own, DEFAULT_DB_ALIAS)


def _fresh(read: Callable[..., T], args: tuple[Any, ...]) -> T:
    close_old_connections()
    try:
        return read(*args)
    finally:
        close_old_connections()


PROBE_INTERVAL = 1.0
"""Seconds between the hub's probes of its layer memberships (none on the in-memory layer)."""

PROBE_TIMEOUT = 2.0
"""Seconds a probe (or a group join) may take before the memberships count as lost."""


class Hub:
    """The sockets of one process (one event loop) and the one path their events take."""

    def __init__(self, layer: BaseChannelLayer | None) -> None:
        self.layer = layer
        self.sockets: dict[int, set[FollowConsumer]] = {}
        self.channel: str | None = None
        self.tasks: list[asyncio.Task[None]] = []
        self.membership = asyncio.Lock()
        """Held while sockets join or leave (they await the layer meanwhile)."""
        self.newest: dict[int, int] = {}
        """The newest event id this process knows of, per local user."""
        self.probe_group = f"follow.hub.{uuid.uuid4().hex}"
        self.probed = asyncio.Event()
        """Set when the probe came back through the layer."""
        self.missed = False
        """A message came but was not delivered (the database was down): catch up."""
        self.reads: Reads | None = None
        self.inbox: asyncio.Queue[dict[str, Any]] = asyncio.Queue()
        """Channel-layer messages received and not yet handled (``_deliver_received``)."""

    async def join(self, socket: FollowConsumer) -> None:
        """Register a socket of ``socket.user_id`` and (re)join the user's group.

        Joining again for each socket renews the membership, which Redis forgets after the
        layer's ``group_expiry`` (a day).
        """
        async with self.membership:
            if not self.tasks:
                await self._start()
            if self.layer is not None and self.channel is not None:
                await self.layer.group_add(group_name(socket.user_id), self.channel)
            self.sockets.setdefault(socket.user_id, set()).add(socket)

    async def leave(self, socket: FollowConsumer) -> None:
        """Forget a socket; the last of a user leaves the group, the last of all stops the hub."""
        async with self.membership:
            user_sockets = self.sockets.get(socket.user_id, set())
            user_sockets.discard(socket)
            if user_sockets:
                return
            self.sockets.pop(socket.user_id, None)
            self.newest.pop(socket.user_id, None)
            if self.layer is not None and self.channel is not None:
                await self.layer.group_discard(group_name(socket.user_id), self.channel)
            if not self.sockets:
                self._stop()

    def saw(self, user_id: int, event_id: int) -> None:
        """Note that ``user_id``'s events go up to ``event_id`` at least (kept for local users)."""
        if user_id in self.sockets:
            self.newest[user_id] = max(self.newest.get(user_id, 0), event_id)

    def newest_id(self, user_id: int) -> int | None:
        """Return the newest event id of ``user_id`` this process knows of (None: none yet)."""
        return self.newest.get(user_id)

    async def _start(self) -> None:
        self.reads = Reads()
        if self.layer is not None:
            self.channel = await self.layer.new_channel()
            self.tasks.append(asyncio.create_task(self._listen()))
            self.tasks.append(asyncio.create_task(self._deliver_received()))
        if self.layer is not None and not isinstance(self.layer, InMemoryChannelLayer):
            await self.layer.group_add(self.probe_group, self.channel)
            self.tasks.append(asyncio.create_task(self._watch()))
        if isinstance(self.layer, InMemoryChannelLayer):
            sending.receiving(self.layer, asyncio.get_running_loop())
        if isinstance(self.layer, InMemoryChannelLayer) and _poll_interval() > 0:
            self.tasks.append(asyncio.create_task(self._poll()))

    def _stop(self) -> None:
        for task in self.tasks:
            task.cancel()
        self.tasks = []
        self.channel = None
        self.inbox = asyncio.Queue()
        if self.reads is not None:
            self.reads.close()
            self.reads = None

    async def read(self, read: Callable[..., T], *args: Any) -> T:
        """Run one database read of the hub or its sockets, ``read(*args)``, off the shared
        thread and the page requests' pool (``Reads``); return its result or raise its error."""
        if self.reads is None:
            self.reads = Reads()
        return await self.reads(read, *args)

    async def _listen(self) -> None:
        """Receive the group messages of every local user on the process's one channel into
        ``inbox``, without waiting for their delivery (``_deliver_received``)."""
        assert self.layer is not None and self.channel is not None
        while True:
            try:
                self.inbox.put_nowait(await self.layer.receive(self.channel))
            except asyncio.CancelledError:
                raise
            except Exception:
                logger.exception("follower hub: receiving from the channel layer failed")
                self.missed = True
                await asyncio.sleep(1)

    async def _deliver_received(self) -> None:
        """Handle the received messages in order; those that arrived while a delivery was under
        way go out together (``take``): one sign-in check and one push per socket per user."""
        while True:
            received = [await self.inbox.get()]
            while not self.inbox.empty():
                received.append(self.inbox.get_nowait())
            try:
                await self.take(received)
            except asyncio.CancelledError:
                raise
            except Exception:
                logger.exception("follower hub: a channel-layer message was not delivered")
                self.missed = True

    async def take(self, messages: list[dict[str, Any]]) -> None:
        """Handle channel-layer messages in the order they came: each run of consecutive
        ``follow.events`` messages (a user's frames under ``sending.BATCH``, several when the
        sender merged a burst) is delivered per user (``deliver``, frames in arrival order); a
        sign-out closes its sockets; a probe sets ``probed``."""
        frames: dict[int, list[Frame]] = {}
        for message in messages:
            if message.get("type") == "follow.events":
                frames.setdefault(int(message["user"]), []).extend(message[sending.BATCH])
                continue
            await self._deliver_all(frames)
            if message.get("type") == "follow.signed_out":
                await self._close_sign_in(message["session_key"])
            elif message.get("type") == "follow.probe":
                self.probed.set()
        await self._deliver_all(frames)

    async def _deliver_all(self, frames: dict[int, list[Frame]]) -> None:
        """Deliver each user's frames, then forget them."""
        for user_id, user_frames in frames.items():
            await self.deliver(user_id, user_frames)
        frames.clear()

    async def _watch(self) -> None:
        """Probe the layer every ``PROBE_INTERVAL`` seconds; re-join when it forgot the hub."""
        while True:
            await asyncio.sleep(PROBE_INTERVAL)
            if self.missed or not await self._probe():
                await self._rejoin()

    async def _probe(self) -> bool:
        """Return whether a message to the probe group came back within ``PROBE_TIMEOUT``."""
        assert self.layer is not None
        self.probed.clear()
        try:
            async with asyncio.timeout(PROBE_TIMEOUT):
                await self.layer.group_send(self.probe_group, {"type": "follow.probe"})
                await self.probed.wait()
        except Exception:
            return False
        return True

    async def _rejoin(self) -> None:
        """Join the probe group and every local user's group again, then send each user's
        sockets what storage holds after their cursors; retried until both succeed.

        Until then the sockets may miss events; a crash half-way leaves at worst some groups
        joined twice (a join is idempotent) and the catch-up to do again.
        """
        assert self.layer is not None and self.channel is not None
        while True:
            self.missed = False
            try:
                async with self.membership:
                    for group in [self.probe_group, *map(group_name, self.sockets)]:
                        async with asyncio.timeout(PROBE_TIMEOUT):
                            await self.layer.group_add(group, self.channel)
                for user_id, sockets in list(self.sockets.items()):
                    cursor = _lowest_cursor(sockets)
                    if cursor is not None:
                        await self._catch_up(user_id, cursor)
                return
            except Exception as error:
                logger.warning("follower hub: re-joining the channel layer failed: %r", error)
                await asyncio.sleep(PROBE_INTERVAL)

    async def _poll(self) -> None:
        """Read the stored events of every local user now and then (one query for all).

        On SQLite the database's files tell when another process committed: they are looked
        at every ``CHANGE_TICK`` seconds and read only when they changed (or once every
        ``FOLLOWER_POLL_INTERVAL`` × 10 seconds), so an idle process reads almost nothing.
        """
        marker = _change_marker()
        seen, quiet = marker(), 0.0
        while True:
            if seen is None:
                await asyncio.sleep(_poll_interval())
            else:
                await asyncio.sleep(CHANGE_TICK)
                quiet += CHANGE_TICK
                now = marker()
                if now == seen and quiet < _poll_interval() * 10:
                    continue
                seen, quiet = now, 0.0
            try:
                cursors = {u: _lowest_cursor(s) for u, s in self.sockets.items()}
                behind = {u: c for u, c in cursors.items() if c is not None}
                newest = await self.read(_newest_ids, list(behind))
                for user_id, last_seq in newest.items():
                    if last_seq > behind.get(user_id, last_seq):
                        await self._catch_up(user_id, behind[user_id])
            except asyncio.CancelledError:
                raise
            except Exception:
                logger.exception("follower hub: reading stored events failed")

    async def _catch_up(self, user_id: int, after: int) -> None:
        result = await self.read(events_after, user_id, after)
        if isinstance(result, Resync):
            for socket in list(self.sockets.get(user_id, ())):
                await socket.catch_up()
            return
        await self.deliver(user_id, result)

    async def deliver(self, user_id: int, frames: list[Frame]) -> None:
        """Send ``frames`` (one user's, in id order) to that user's sockets here, each once."""
        sockets = list(self.sockets.get(user_id, ()))
        if not sockets or not frames:
            return
        self.saw(user_id, int(frames[-1]["id"]))
        keys = {s.session_key for s in sockets if s.session_key is not None}
        signed_in = await self.read(_still_signed_in, user_id, keys)
        encoded = [(int(f["id"]), json.dumps(f)) for f in frames]
        for socket in sockets:
            if socket.session_key is None or socket.session_key in signed_in:
                await socket.push(encoded)
            else:
                await socket.sign_out()

    async def _close_sign_in(self, session_key: str) -> None:
        for user_sockets in list(self.sockets.values()):
            for socket in list(user_sockets):
                if socket.session_key == session_key:
                    await socket.sign_out()


_hubs: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, Hub] = weakref.WeakKeyDictionary()
"""One hub per event loop (Daphne runs one loop per process; tests run one per test)."""


def hub() -> Hub:
    """Return this event loop's hub, made anew when the channel layer was reconfigured."""
    loop = asyncio.get_running_loop()
    layer = get_channel_layer()
    current = _hubs.get(loop)
    if current is None or (current.layer is not layer and not current.sockets):
        current = _hubs[loop] = Hub(layer)
    return current


def committed(sender: Any, user_id: int, event_id: int, **kwargs: Any) -> None:
    """``events.event_committed`` receiver: tell this process's hubs the user's newest id."""
    for loop, current in list(_hubs.items()):
        if not loop.is_closed():
            loop.call_soon_threadsafe(current.saw, user_id, event_id)


def signed_out(sender: Any, request: Any, user: Any, **kwargs: Any) -> None:
    """``user_logged_out`` receiver: close that sign-in's sockets in every process (4401)."""
    layer = get_channel_layer()
    session_key = getattr(getattr(request, "session", None), "session_key", None)
    if layer is None or user is None or session_key is None:
        return
    message = {"type": "follow.signed_out", "session_key": session_key}
    try:
        sending.group_send(layer, group_name(user.pk), message)
    except Exception:
        logger.exception("follower: the sign-out of user %s was not sent", user.pk)


def _lowest_cursor(sockets: set[FollowConsumer]) -> int | None:
    """The lowest cursor among a user's sockets (None while none said hello)."""
    cursors = [s.cursor for s in sockets if s.cursor is not None]
    return min(cursors) if cursors else None


def _newest_ids(user_ids: list[int]) -> dict[int, int]:
    """Return ``{user_id: newest event id}`` for the users given (one query)."""
    rows = FollowerCursor.objects.filter(user_id__in=user_ids).values_list("user_id", "last_seq")
    return {user_id: last_seq for user_id, last_seq in rows}


def _still_signed_in(user_id: int, session_keys: set[str]) -> set[str]:
    """Return the keys among ``session_keys`` still signed in as ``user_id``.

    Sessions kept in the database (Django's ``db`` engine and those built on it) are read in
    one query for all the keys, whatever the number of browsers the user follows from; other
    engines are asked once per key.
    """
    engine = import_module(settings.SESSION_ENGINE)
    store: type[SessionBase] = engine.SessionStore
    if not issubclass(store, DatabaseSessionStore):
        return {key for key in session_keys if store(key).get(SESSION_KEY) == str(user_id)}
    rows = store.get_model_class().objects.filter(
        session_key__in=session_keys, expire_date__gt=timezone.now()
    )
    stored = rows.values_list("session_key", "session_data")
    return {key for key, data in stored if store().decode(data).get(SESSION_KEY) == str(user_id)}


CHANGE_TICK = 0.02
"""Seconds between looks at the SQLite files for a commit of another process."""


def _change_marker() -> Callable[[], tuple[int, ...] | None]:
    """Return a function whose answer changes when another process may have committed.

    SQLite: the size and modification time of the database file and its write-ahead log (a
    commit appends to the log). Other databases: always None (read at every interval).
    """
    if connection.vendor != "sqlite":
        return lambda: None
    files = [Path(str(connection.settings_dict["NAME"]))]
    files.append(files[0].with_name(files[0].name + "-wal"))

    def marker() -> tuple[int, ...] | None:
        stamp: list[int] = []
        for path in files:
            try:
                stat = path.stat()
            except OSError:
                stamp += [0, 0]
                continue
            stamp += [stat.st_mtime_ns, stat.st_size]
        return tuple(stamp)

    return marker


def _poll_interval() -> float:
    return follower_settings().poll_interval
