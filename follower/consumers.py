"""The follower's websocket at ``/ws/follow/`` (docs/spec.md, Follower rules).

Protocol, one JSON object per frame:

- client → server ``{"type": "hello", "last_event_id": int | null}`` once the socket is open:
  the id the page was rendered with (or, after a reconnect, the last id it applied), answered
  by the later event frames, then ``{"type": "ready", "last_event_id": int}``; or by
  ``{"type": "resync", "last_event_id": int}`` when some were pruned. ``null`` (a page without
  a rendered id) is answered by ``ready`` with the newest id, which the page's snapshot covers.
- client → server ``{"type": "ping"}`` at any time, answered by ``{"type": "pong",
  "last_event_id": int | null}`` (the page's heartbeat: a page that hears no pong takes the
  socket for dead and reconnects). The id is the newest event of the user this process knows
  of (``Hub.newest_id``, no database read): a page that applied less missed events (a channel
  layer outage) and says ``hello`` again with its last id to get them.
- server → client event frames ``{"type": "event", "id", "kind", "payload"}`` (see
  ``follower.events``), in id order, each once, only the signed-in user's own.
- server → client ``{"type": "error", "detail": str}`` for a bad frame (not JSON, not an
  object of a known type, nested too deep, longer than ``MAX_FRAME`` characters); nothing else
  changes and the socket stays open. Daphne refuses a frame over 1 MiB by dropping the
  connection (autobahn's ``failByDrop``; the page sees 1006 and reconnects); the page never sends
  one.

Anonymous sockets are accepted and closed at once with code 4401, so the page can tell
"signed out" from "network down"; so are sockets of a page rendered for another user than the
one signed in now (the page opens ``/ws/follow/?user=<its user's id>``), and sockets whose
sign-in ended since they connected (checked by the hub before each delivery, and at once on a
sign-out). Sockets do not read the database on their own: the process's ``follower.hub`` hears
of events and hands them over, and their replays read through the hub's own thread and
connection (``Hub.read``), never waiting behind the process's page requests.
"""

from __future__ import annotations

import asyncio
import json
from typing import Any
from urllib.parse import parse_qs

from channels.generic.websocket import AsyncWebsocketConsumer

from follower.events import Frame, Resync, current_event_id, events_after
from follower.hub import Encoded, Hub, hub

UNAUTHENTICATED = 4401
"""Close code for a socket without a signed-in user."""

MAX_FRAME = 4096
"""Characters a client frame may have; a hello or a ping takes well under 100."""

NO_LAYER = "follower.none"
"""A channel-layer alias that is not configured: sockets get no channel of their own."""


class FollowConsumer(AsyncWebsocketConsumer):
    """One page's follower socket: registered with the process's hub, which feeds it events."""

    channel_layer_alias = NO_LAYER
    user_id: int = 0
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
        self.hub = self.process_hub()
        await self.hub.join(self)

    def process_hub(self) -> Hub:
        """Return the hub this socket registers with: its event loop's (``follower.hub.hub``)."""
        return hub()

    def _page_of(self, user: Any) -> bool:
        """Return whether the page that opened the socket belongs to ``user``.

        The page names its user in the query (``?user=<id>``): a page rendered for someone
        else (who signed out; another user signed in on the same browser) is refused.
        """
        query = parse_qs(self.scope.get("query_string", b"").decode("latin-1"))
        named = query.get("user")
        return named is None or named == [str(user.pk)]

    async def disconnect(self, code: int) -> None:
        if self.user_id:
            await self.hub.leave(self)

    async def receive(self, text_data: str | None = None, bytes_data: bytes | None = None) -> None:
        """Decode a text frame; answer anything that is not a small JSON object with an error."""
        if not self.user_id or self.signed_out:
            return
        if text_data is None:
            await self._error("frames must be JSON text")
            return
        if len(text_data) > MAX_FRAME:
            await self._error(f"frames are at most {MAX_FRAME} characters")
            return
        try:
            content = json.loads(text_data)
        except RecursionError:
            await self._error("the frame is nested too deeply")
            return
        except ValueError:
            await self._error("frames must be JSON text")
            return
        await self._handle(content)

    async def _handle(self, content: Any) -> None:
        """Answer a ``ping`` with ``pong``, handle the page's ``hello``; error on anything else."""
        kind = content.get("type") if isinstance(content, dict) else None
        if kind == "ping":
            newest = [i for i in (self.hub.newest_id(self.user_id), self.cursor) if i is not None]
            await self._send_json({"type": "pong", "last_event_id": max(newest, default=None)})
            return
        if kind != "hello":
            await self._error('unknown frame: expected {"type": "hello", "last_event_id": ...}')
            return
        last = content.get("last_event_id", "missing")
        valid = last is None or (type(last) is int and last >= 0)
        if not valid:
            await self._error("last_event_id must be null or a non-negative integer")
            return
        await self._hello(last)

    async def _hello(self, last: int | None) -> None:
        async with self.lock:
            if last is None:
                self.cursor = await self.hub.read(current_event_id, self.user_id)
                caught_up = True
            else:
                # Said again on an open socket (the pong named a newer event): what this
                # socket already sent is on its way; replay only what it has not.
                start = last if self.cursor is None else max(last, self.cursor)
                caught_up = await self._catch_up(start)
            if caught_up:
                await self._send_json({"type": "ready", "last_event_id": self.cursor})

    async def push(self, frames: list[Encoded]) -> None:
        """Send the hub's encoded frames of this user, in order, once each.

        Frames at or below the cursor were sent already; a gap is filled from storage. Nothing
        is sent before the page's hello (it replays from its own id then).
        """
        async with self.lock:
            for frame_id, text in frames:
                if self.cursor is None or self.signed_out or frame_id <= self.cursor:
                    continue
                if frame_id != self.cursor + 1:
                    await self._catch_up(self.cursor)
                    continue
                await self.send(text_data=text)
                self.cursor = frame_id

    async def catch_up(self) -> None:
        """Send what storage holds after the cursor (or ``resync``), once the page said hello."""
        async with self.lock:
            if self.cursor is not None and not self.signed_out:
                await self._catch_up(self.cursor)

    async def sign_out(self) -> None:
        """The socket's sign-in ended: close it with 4401; it sends nothing more."""
        if not self.signed_out:
            self.signed_out = True
            await self.close(code=UNAUTHENTICATED)

    async def _catch_up(self, last: int) -> bool:
        """Send the stored events after ``last``; False when it had to send ``resync``."""
        result = await self.hub.read(events_after, self.user_id, last)
        if isinstance(result, Resync):
            self.cursor = result.last_event_id
            await self._send_json({"type": "resync", "last_event_id": result.last_event_id})
            return False
        self.cursor = last
        for frame in result:
            await self._send_frame(frame)
        return True

    async def _send_frame(self, frame: Frame) -> None:
        await self._send_json(frame)
        self.cursor = frame["id"]

    async def _send_json(self, content: dict[str, Any]) -> None:
        await self.send(text_data=json.dumps(content))

    async def _error(self, detail: str) -> None:
        await self._send_json({"type": "error", "detail": detail})
