"""The project's ASGI application plus the plain Channels idiom's follower, for the benches
that put the hub beside it.

``bench/follower_fanout.py`` and ``bench/hub_pieces.py`` serve this module with the same Daphne
command, settings, middleware (``follower.origin.SiteOriginValidator``, Channels'
``AuthMiddlewareStack``) and channel layer as ``config.asgi``, so the delivery paths are
measured side by side in one Daphne worker:

- the project's ``/ws/follow/`` (``follower.hub``);
- ``/ws/idiom/``, where each socket joins its user's group itself and relays what
  ``group_send`` brings, as Channels' documentation shows, and answers a ``ping`` with a
  ``pong`` naming the user's newest stored event, read per ping with
  ``database_sync_to_async``;
- ``/ws/follow-shared/``, the project's consumer and hub with the hub's reads run by Channels'
  ``database_sync_to_async`` (asgiref's one shared thread, the process's pooled connection)
  instead of the hub's own thread and connection (``follower.hub.Reads``);
- ``/ws/follow-read/``, the project's consumer answering a ``ping`` with the user's newest
  stored event read per ping through the hub's thread (``Hub.read``) instead of the hub's
  newest id per user (``Hub.newest_id``).

Nothing of the project imports this module.
"""

from __future__ import annotations

import asyncio
import json
import weakref
from collections.abc import Callable
from typing import Any, TypeVar

from config.asgi import application as project  # sets Django up first

# isort: split
from channels.auth import AuthMiddlewareStack
from channels.db import database_sync_to_async
from channels.generic.websocket import AsyncWebsocketConsumer
from channels.layers import get_channel_layer
from channels.routing import ProtocolTypeRouter, URLRouter
from django.urls import path

from follower import sending
from follower.consumers import UNAUTHENTICATED, FollowConsumer
from follower.events import current_event_id, group_name
from follower.hub import Hub
from follower.origin import SiteOriginValidator
from follower.routing import websocket_urlpatterns


class GroupConsumer(AsyncWebsocketConsumer):
    """One socket of the plain idiom: its own channel in its user's group ``follow.<user id>``.

    On connect it joins the group and sends ``{"type": "ready"}``; each ``follow.events``
    message (the frames ``follower.events`` sends after a commit) goes out frame by frame, with
    no sign-in check, no replay and no cursor; ``follow.signed_out`` of its own sign-in closes
    it with 4401. Anonymous sockets are closed with 4401.
    """

    group = ""
    user_id = 0

    async def connect(self) -> None:
        user = self.scope.get("user")
        await self.accept()
        if user is None or not user.is_authenticated:
            await self.close(code=UNAUTHENTICATED)
            return
        self.user_id = user.pk
        self.group = group_name(user.pk)
        await self.channel_layer.group_add(self.group, self.channel_name)
        await self.send(text_data=json.dumps({"type": "ready"}))

    async def disconnect(self, code: int) -> None:
        if self.group:
            await self.channel_layer.group_discard(self.group, self.channel_name)

    async def receive(self, text_data: str | None = None, bytes_data: bytes | None = None) -> None:
        """Answer ``{"type": "ping"}`` with ``{"type": "pong", "last_event_id": int | null}``,
        the user's newest stored event read now; ignore anything else."""
        if self.user_id and text_data and json.loads(text_data).get("type") == "ping":
            newest = await database_sync_to_async(current_event_id)(self.user_id)
            await self.send(text_data=json.dumps({"type": "pong", "last_event_id": newest}))

    async def follow_events(self, message: dict[str, Any]) -> None:
        for frame in message[sending.BATCH]:
            await self.send(text_data=json.dumps(frame))

    async def follow_signed_out(self, message: dict[str, Any]) -> None:
        session = self.scope.get("session")
        if session is not None and session.session_key == message["session_key"]:
            await self.close(code=UNAUTHENTICATED)


T = TypeVar("T")


class SharedThreadHub(Hub):
    """The project's hub with its reads run by ``database_sync_to_async`` (Channels' idiom)."""

    async def read(self, read: Callable[..., T], *args: Any) -> T:
        return await database_sync_to_async(read)(*args)


_shared: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, SharedThreadHub] = (
    weakref.WeakKeyDictionary()
)


class SharedThreadConsumer(FollowConsumer):
    """The project's follower socket, registered with its loop's ``SharedThreadHub``."""

    def process_hub(self) -> Hub:
        loop = asyncio.get_running_loop()
        if loop not in _shared:
            _shared[loop] = SharedThreadHub(get_channel_layer())
        return _shared[loop]


class ReadPerPingConsumer(FollowConsumer):
    """The project's follower socket whose ``pong`` names the newest stored event, read per
    ping through the process's hub."""

    async def _handle(self, content: Any) -> None:
        if isinstance(content, dict) and content.get("type") == "ping":
            newest = await self.hub.read(current_event_id, self.user_id)
            await self.send(text_data=json.dumps({"type": "pong", "last_event_id": newest}))
            return
        await super()._handle(content)


application = ProtocolTypeRouter(
    {
        "http": project,
        "websocket": SiteOriginValidator(
            AuthMiddlewareStack(
                URLRouter(
                    [
                        path("ws/idiom/", GroupConsumer.as_asgi()),
                        path("ws/follow-shared/", SharedThreadConsumer.as_asgi()),
                        path("ws/follow-read/", ReadPerPingConsumer.as_asgi()),
                        *websocket_urlpatterns,
                    ]
                )
            )
        ),
    }
)
