"""config.body_limit: a body over the limit is refused before Django reads it."""

from __future__ import annotations

import json
from typing import Any

import pytest
from asgiref.testing import ApplicationCommunicator

from config.body_limit import BodyLimitMiddleware

HUNDRED_MB = 100 * 1024 * 1024


def http_scope(path: str, headers: list[tuple[bytes, bytes]]) -> dict[str, Any]:
    return {
        "type": "http",
        "asgi": {"version": "3.0"},
        "http_version": "1.1",
        "method": "POST",
        "scheme": "http",
        "path": path,
        "raw_path": path.encode(),
        "query_string": b"",
        "root_path": "",
        "headers": [(b"host", b"localhost"), *headers],
        "client": ("127.0.0.1", 50000),
        "server": ("127.0.0.1", 8000),
    }


class EchoLength:
    """An app that reads the whole body and answers its length; remembers it was called."""

    def __init__(self) -> None:
        self.called = False

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        self.called = True
        size, more = 0, True
        while more:
            message = await receive()
            size += len(message.get("body", b""))
            more = message.get("more_body", False)
        await send({"type": "http.response.start", "status": 200, "headers": []})
        await send({"type": "http.response.body", "body": str(size).encode()})


async def answer(communicator: ApplicationCommunicator) -> tuple[int, bytes]:
    start = await communicator.receive_output(5)
    body = await communicator.receive_output(5)
    return start["status"], body["body"]


async def test_a_declared_100_mb_anonymous_body_is_413_before_django_reads_it():
    # Imported here, not at collection: the websocket origin check reads ALLOWED_HOSTS when the
    # application is built, after pytest-django has added the test host.
    from config.asgi import application

    scope = http_scope(
        "/api/sessions/00000000-0000-4000-8000-000000000000/messages",
        [(b"content-type", b"application/json"), (b"content-length", str(HUNDRED_MB).encode())],
    )
    communicator = ApplicationCommunicator(application, scope)
    # Only the first chunk arrives: the answer must not wait for the other 100 MB.
    await communicator.send_input({"type": "http.request", "body": b"{", "more_body": True})

    status, body = await answer(communicator)

    assert status == 413
    assert "2621440 bytes" in json.loads(body)["detail"]
    await communicator.wait(5)


async def test_a_streamed_body_is_cut_off_once_it_passes_the_limit():
    app = EchoLength()
    communicator = ApplicationCommunicator(
        BodyLimitMiddleware(app, lambda: 10), http_scope("/", [])
    )
    await communicator.send_input({"type": "http.request", "body": b"x" * 8, "more_body": True})
    await communicator.send_input({"type": "http.request", "body": b"x" * 8, "more_body": True})

    status, body = await answer(communicator)

    assert app.called
    assert status == 413
    assert json.loads(body)["detail"].startswith("The request body is larger than 10 bytes")
    await communicator.wait(5)


@pytest.mark.parametrize("limit", [16, None])
async def test_a_body_within_the_limit_reaches_the_app(limit: int | None):
    app = EchoLength()
    scope = http_scope("/", [(b"content-length", b"16")])
    communicator = ApplicationCommunicator(BodyLimitMiddleware(app, lambda: limit), scope)
    await communicator.send_input({"type": "http.request", "body": b"x" * 16})

    assert await answer(communicator) == (200, b"16")
    await communicator.wait(5)
