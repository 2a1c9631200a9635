"""An ASGI middleware that bounds how many HTTP requests a process runs at once, on threads of
its own.

Django's ASGI handler runs each request in a thread-sensitive context of its own, so every
request in progress has a new thread for its sync view, and a further new thread joins it once
it finished. The event loop's thread starts both and waits each time until the new thread has
run, which needs the GIL that the page renders hold in 5 ms turns: 200 requests arriving at
once (every tab of a handoff fetching the successor's page) keep the loop from the follower's
hub and its websockets for as long. This middleware lets at most ``limit`` requests into Django,
each on one of ``limit`` threads kept for the purpose (a slot: the handler's context nests in
the slot's, so it starts no thread); the rest wait on the loop, in arrival order, and cost it
nothing until a slot frees (docs/design.md, "HTTP requests run a few at a time").
"""

from __future__ import annotations

import asyncio
import weakref
from collections.abc import Awaitable, Callable, MutableMapping
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from asgiref.sync import ThreadSensitiveContext

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
    away; sync code still running then delays the slot's next request, on the same thread); a
    request cancelled while waiting takes no slot. Its thread-sensitive sync code (Django's
    views and signals) runs on its slot's thread. Websockets and every other scope pass through
    unbounded. Each event loop has its own slots (an ``asyncio.Queue`` serves only the loop it
    first waited on; a server runs one, tests several), their threads started on first use.
    """

    def __init__(self, app: ASGIApp, limit: int | None) -> None:
        self.app = app
        self.limit = limit
        self._slots: weakref.WeakKeyDictionary[
            asyncio.AbstractEventLoop, asyncio.Queue[ThreadPoolExecutor]
        ] = weakref.WeakKeyDictionary()

    def slots(self) -> asyncio.Queue[ThreadPoolExecutor]:
        """The running event loop's free slots, ``limit`` of them at first. Raises
        ``RuntimeError`` outside a running loop."""
        loop = asyncio.get_running_loop()
        if loop not in self._slots:
            self._slots[loop] = asyncio.Queue()
            for _ in range(self.limit or 0):
                self._slots[loop].put_nowait(ThreadPoolExecutor(1, "http-slot"))
        return self._slots[loop]

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or not self.limit:
            await self.app(scope, receive, send)
            return
        slots = self.slots()
        slot = await slots.get()
        try:
            async with ThreadSensitiveContext(executor=slot):
                await self.app(scope, receive, send)
        finally:
            slots.put_nowait(slot)
