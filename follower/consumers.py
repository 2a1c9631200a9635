"""The follower's websocket at ``/ws/follow/`` (seed 003 §6.5; DESIGN.md invariants 9–10).

Protocol, one JSON object per frame:

- client → server ``{"type": "hello", "last_event_id": int | null}`` once the socket is open:
  ``null`` on a fresh page (answered by ``{"type": "ready", "last_event_id": int}``, the newest
  id the page's snapshot must cover), or the last id the page applied after a reconnect
  (answered by the missed event frames, then ``ready``; or by
  ``{"type": "resync", "last_event_id": int}`` when some were pruned).
- server → client event frames ``{"type": "event", "id", "kind", "payload"}`` (see
  ``follower.events``), in id order, each once, only the signed-in user's own.
- server → client ``{"type": "error", "detail": str}`` for a bad frame; nothing else changes.

Anonymous sockets are accepted and closed at once with code 4401, so the page can tell
"signed out" from "network down"; so are sockets of a page rendered for another user than the
one signed in now (the page opens ``/ws/follow/?user=<its user's id>``). A socket whose sign-in
ended since it connected (signed out, perhaps another user signed in on the same browser) is
closed with 4401 too before it sends anything more: the sign-in is checked before each delivery
and on each poll. Besides the group messages the consumer looks for stored events every
``FOLLOWER_POLL_INTERVAL`` seconds (default 1; 0 turns it off): events published by another
process reach the page even on the in-memory channel layer.
"""

from __future__ import annotations

import asyncio
import json
import logging
from importlib import import_module
from typing import Any
from urllib.parse import parse_qs

from channels.db import database_sync_to_async
from channels.generic.websocket import AsyncJsonWebsocketConsumer
from django.conf import settings
from django.contrib.auth import SESSION_KEY

from follower.events import Frame, Resync, current_event_id, events_after, group_name

logger = logging.getLogger(__name__)

UNAUTHENTICATED = 4401
"""Close code for a socket without a signed-in user."""


class FollowConsumer(AsyncJsonWebsocketConsumer):
    """One page's follower socket: joins ``follow.<user_id>`` and relays that user's events."""

    user_id: int | None = None
    cursor: int | None = None
    """Id of the newest event this socket delivered (None until the page's hello)."""
    session_key: str | None = None
    """The key of the sign-in the socket connected with (None without a session store)."""
    signed_out = False
    """The sign-in ended: the socket was closed with 4401 and sends nothing more."""

    async def connect(self) -> None:
        user = self.scope.get("user")
        await self.accept()
        if user is None or not user.is_authenticated or not self._page_of(user):
            await self.close(code=UNAUTHENTICATED)
            return
        self.user_id = user.pk
        session = self.scope.get("session")
        self.session_key = session.session_key if session is not None else None
        self.lock = asyncio.Lock()
        self.poller: asyncio.Task[None] | None = None
        await self.channel_layer.group_add(group_name(user.pk), self.channel_name)

    def _page_of(self, user: Any) -> bool:
        """Return whether the page that opened the socket belongs to ``user``.

        The page names its user in the query (``?user=<id>``): a page rendered for someone
        else (who signed out; another user signed in on the same browser) is refused.
        """
        query = parse_qs(self.scope.get("query_string", b"").decode("latin-1"))
        named = query.get("user")
        return named is None or named == [str(user.pk)]

    async def disconnect(self, code: int) -> None:
        if self.user_id is None:
            return
        if self.poller is not None:
            self.poller.cancel()
        await self.channel_layer.group_discard(group_name(self.user_id), self.channel_name)

    async def receive(self, text_data: str | None = None, bytes_data: bytes | None = None) -> None:
        """Decode a text frame; answer anything that is not JSON with an error frame."""
        if self.user_id is None:
            return
        try:
            content = json.loads(text_data) if text_data is not None else None
        except ValueError:
            content = None
        if content is None:
            await self._error("frames must be JSON text")
            return
        await self.receive_json(content)

    async def receive_json(self, content: Any, **kwargs: Any) -> None:
        """Handle the page's ``hello``; anything else gets an error frame."""
        if not isinstance(content, dict) or content.get("type") != "hello":
            await self._error('unknown frame: expected {"type": "hello", "last_event_id": ...}')
            return
        last = content.get("last_event_id", "missing")
        valid = last is None or (type(last) is int and last >= 0)
        if not valid:
            await self._error("last_event_id must be null or a non-negative integer")
            return
        await self._hello(last)

    async def follow_event(self, message: dict[str, Any]) -> None:
        """Relay one event from the user's group (``follow.event``), in order, once."""
        frame: Frame = message["event"]
        async with self.lock:
            if self.cursor is None or frame["id"] <= self.cursor:
                return
            if frame["id"] == self.cursor + 1:
                await self._deliver([frame])
            else:
                await self._catch_up(self.cursor)

    async def _hello(self, last: int | None) -> None:
        async with self.lock:
            if last is None:
                self.cursor = await database_sync_to_async(current_event_id)(self.user_id)
                caught_up = True
            else:
                caught_up = await self._catch_up(last)
            if caught_up:
                await self.send_json({"type": "ready", "last_event_id": self.cursor})
        # After a resync too: the page follows on from the cursor the resync gave it.
        if self.poller is None and self._poll_interval() > 0:
            self.poller = asyncio.create_task(self._poll())

    async def _catch_up(self, last: int) -> bool:
        """Send the stored events after ``last``; False when it had to send ``resync``."""
        result = await database_sync_to_async(events_after)(self.user_id, last)
        if isinstance(result, Resync):
            self.cursor = result.last_event_id
            await self.send_json({"type": "resync", "last_event_id": result.last_event_id})
            return False
        self.cursor = last
        await self._deliver(result)
        return True

    async def _deliver(self, frames: list[Frame]) -> None:
        if frames and not await self._still_signed_in():
            return
        for frame in frames:
            await self.send_json(frame)
            self.cursor = frame["id"]

    async def _poll(self) -> None:
        """Catch up from the stored events now and then (events from other processes)."""
        while True:
            await asyncio.sleep(self._poll_interval())
            try:
                if not await self._still_signed_in():
                    return
                newest = await database_sync_to_async(current_event_id)(self.user_id)
                async with self.lock:
                    if self.cursor is not None and newest > self.cursor:
                        await self._catch_up(self.cursor)
            except Exception:
                logger.exception("follower catch-up failed for user %s", self.user_id)

    async def _still_signed_in(self) -> bool:
        """Return whether the socket's sign-in still holds; close it with 4401 when not."""
        if self.signed_out:
            return False
        if self.session_key is None:
            return True
        signed_in = await database_sync_to_async(_session_user)(self.session_key)
        if signed_in == str(self.user_id):
            return True
        self.signed_out = True
        await self.close(code=UNAUTHENTICATED)
        return False

    async def _error(self, detail: str) -> None:
        await self.send_json({"type": "error", "detail": detail})

    @staticmethod
    def _poll_interval() -> float:
        return float(getattr(settings, "FOLLOWER_POLL_INTERVAL", 1.0))


def _session_user(session_key: str) -> str | None:
    """Return the user id (as stored) the session ``session_key`` is signed in as, now."""
    store = import_module(settings.SESSION_ENGINE).SessionStore(session_key)
    user_id: str | None = store.get(SESSION_KEY)
    return user_id
