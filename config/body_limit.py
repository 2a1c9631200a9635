"""An ASGI middleware that refuses a request body over the limit before Django reads it.

Daphne has no body limit of its own: it receives the whole body (spooled to a temporary file)
before the application runs, and Django's ``DATA_UPLOAD_MAX_MEMORY_SIZE`` applies only when a
view reads ``request.body`` (issue 9, Safe defaults). This middleware answers 413 at once when
the declared ``Content-Length`` is over the limit, and stops reading a streamed (chunked) body
the moment it passes the limit, so Django never buffers it. The proxy in front caps what Daphne
itself receives (docs/operations.md, Behind a proxy).
"""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable, MutableMapping
from typing import Any

from common.api_conventions import body_too_big

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
# Loose on purpose: servers and frameworks type scope and messages each their own way.
ASGIApp = Callable[[Any, Any, Any], Awaitable[None]]


class BodyTooBig(Exception):
    """A streamed body passed the limit (raised inside ``receive``)."""


def declared_length(scope: Scope) -> int | None:
    """The request's ``Content-Length`` in bytes, or None when absent or not a number."""
    for name, value in scope.get("headers", []):
        if name.lower() == b"content-length":
            return int(value) if value.strip().isdigit() else None
    return None


class BodyLimitMiddleware:
    """Answer HTTP requests whose body is over ``limit()`` bytes with 413 ``{"detail": ...}``.

    ``limit`` is read per request (``config.asgi`` passes ``DATA_UPLOAD_MAX_MEMORY_SIZE``, so
    tests and settings can change it; None lifts the cap); websockets and lifespan pass through.
    """

    def __init__(self, app: ASGIApp, limit: Callable[[], int | None]) -> None:
        self.app = app
        self.limit = limit

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        limit = self.limit()
        if scope["type"] != "http" or limit is None:
            await self.app(scope, receive, send)
            return
        length = declared_length(scope)
        if length is not None and length > limit:
            await self.refuse(send, limit)
            return
        received = 0
        started = False

        async def counted_receive() -> Message:
            nonlocal received
            message = await receive()
            received += len(message.get("body", b""))
            if received > limit:
                raise BodyTooBig
            return message

        async def tracked_send(message: Message) -> None:
            nonlocal started
            started = started or message["type"] == "http.response.start"
            await send(message)

        try:
            await self.app(scope, counted_receive, tracked_send)
        except BodyTooBig:
            if started:
                raise
            await self.refuse(send, limit)

    @staticmethod
    async def refuse(send: Send, limit: int) -> None:
        body = json.dumps({"detail": body_too_big(limit)}).encode()
        headers = [(b"content-type", b"application/json"), (b"connection", b"close")]
        await send({"type": "http.response.start", "status": 413, "headers": headers})
        await send({"type": "http.response.body", "body": body})
