"""An ASGI middleware that bounds how many HTTP requests a process runs at once.

Django's ASGI handler runs each request in a thread-sensitive context of its own, so every
request in progress has a thread of its own for its sync view, and a further thread to join it
once it finished. The event loop's thread starts both and waits each time until the new thread
holds the GIL, which the running page renders hold in 5 ms turns: 200 requests arriving at once
(every tab of a handoff fetching the successor's page) keep the loop from the follower's hub
and its websockets for as long. This middleware lets at most ``limit`` requests into Django;
the rest wait on the loop, in arrival order, and cost it nothing until a slot frees
(docs/design.md, "HTTP requests run a few at a time").
"""

from __future__ import annotations

import asyncio
import weakref
from collections.abc import Awaitable, Callable, MutableMapping
from typing import Any

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
# Loose on purpose: servers and frameworks type scope and messages each their own way.
ASGIApp = Callable[[Any, Any, Any], Awaitable[None]]


class ConcurrencyLimitMiddleware:
    """Run at most ``limit`` HTTP requests of ``app`` at once per event loop; 0 or None: no
    bound (``config.asgi`` passes ``HTTP_CONCURRENCY``, docs/operations.md).

    A request holds its slot from the moment it enters ``app`` until ``app`` returns: its
    response sent, or it raised, or it was cancelled (the server gave up on a client that went
    away); a request cancelled while waiting takes no slot. Websockets and every other scope
    pass through unbounded. The slots are one ``asyncio.Semaphore`` per event loop (a semaphore
    serves only the loop it first waited on; a server runs one, tests several).
    """

    def __init__(self, app: ASGIApp, limit: int | None) -> None:
        self.app = app
        self.limit = limit
        self._slots: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, asyncio.Semaphore] = (
            weakref.WeakKeyDictionary()
        )

    def slots(self) -> asyncio.Semaphore:
        """The running event loop's slots (``limit`` of them). Raises ``RuntimeError`` outside
        a running loop."""
        loop = asyncio.get_running_loop()
        if loop not in self._slots:
            self._slots[loop] = asyncio.Semaphore(self.limit or 0)
        return self._slots[loop]

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or not self.limit:
            await self.app(scope, receive, send)
            return
        async with self.slots():
            await self.app(scope, receive, send)
