"""The project's ASGI application plus the plain Channels idiom's follower, for the fan-out bench.

``bench/follower_fanout.py`` serves this module with the same Daphne command, settings,
middleware (``follower.origin.SiteOriginValidator``, Channels' ``AuthMiddlewareStack``) and
channel layer as ``config.asgi``, so the two delivery paths are measured side by side in one
Daphne worker: the project's ``/ws/follow/`` (``follower.hub``) and ``/ws/idiom/``, where each
socket joins its user's group itself and relays what ``group_send`` brings, as Channels'
documentation shows. Nothing of the project imports this module.
"""

from __future__ import annotations

import json
from typing import Any

from config.asgi import application as project  # sets Django up first

# isort: split
from channels.auth import AuthMiddlewareStack
from channels.generic.websocket import AsyncWebsocketConsumer
from channels.routing import ProtocolTypeRouter, URLRouter
from django.urls import path

from follower import sending
from follower.consumers import UNAUTHENTICATED
from follower.events import group_name
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

    async def connect(self) -> None:
        user = self.scope.get("user")
        await self.accept()
        if user is None or not user.is_authenticated:
            await self.close(code=UNAUTHENTICATED)
            return
        self.group = group_name(user.pk)
        await self.channel_layer.group_add(self.group, self.channel_name)
        await self.send(text_data=json.dumps({"type": "ready"}))

    async def disconnect(self, code: int) -> None:
        if self.group:
            await self.channel_layer.group_discard(self.group, self.channel_name)

    async def follow_events(self, message: dict[str, Any]) -> None:
        for frame in message[sending.BATCH]:
            await self.send(text_data=json.dumps(frame))

    async def follow_signed_out(self, message: dict[str, Any]) -> None:
        session = self.scope.get("session")
        if session is not None and session.session_key == message["session_key"]:
            await self.close(code=UNAUTHENTICATED)


application = ProtocolTypeRouter(
    {
        "http": project,
        "websocket": SiteOriginValidator(
            AuthMiddlewareStack(
                URLRouter([path("ws/idiom/", GroupConsumer.as_asgi()), *websocket_urlpatterns])
            )
        ),
    }
)
