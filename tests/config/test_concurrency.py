"""config.concurrency: HTTP requests past the bound wait for a slot, in arrival order; a request
that ends in any way frees its slot; websockets are not bounded."""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
import threading
from collections import defaultdict
from typing import Any

import pytest
from asgiref.sync import ThreadSensitiveContext, sync_to_async
from asgiref.testing import ApplicationCommunicator
from shared_files import ROOT

from config.concurrency import ConcurrencyLimitMiddleware


class Gate:
    """An app that, per request (named by its path), notes that it came in and starts its
    response at once, then waits for its own gate to open (or for the client to go away, as
    Django's handler does) before it finishes: raising when its path starts with ``/raise``,
    else sending the body. A websocket is accepted at once."""

    def __init__(self) -> None:
        self.log: list[str] = []
        self.gates: defaultdict[str, asyncio.Event] = defaultdict(asyncio.Event)

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        name = scope["path"]
        self.log.append(f"{name} in")
        if scope["type"] == "websocket":
            await send({"type": "websocket.accept"})
            return
        await send({"type": "http.response.start", "status": 200, "headers": []})
        opened = asyncio.ensure_future(self.gates[name].wait())
        gone = asyncio.ensure_future(self._disconnect(receive))
        try:
            await asyncio.wait([opened, gone], return_when=asyncio.FIRST_COMPLETED)
        finally:
            opened.cancel()
            gone.cancel()
        if gone.done():
            self.log.append(f"{name} gone")
            return
        if name.startswith("/raise"):
            raise RuntimeError(name)
        await send({"type": "http.response.body", "body": name.encode()})
        self.log.append(f"{name} out")

    @staticmethod
    async def _disconnect(receive: Any) -> None:
        while (await receive())["type"] != "http.disconnect":
            pass

    def open(self, name: str) -> None:
        self.gates[name].set()


def scope(path: str, kind: str = "http") -> dict[str, Any]:
    return {"type": kind, "path": path, "headers": [], "query_string": b""}


def request(app: Any, path: str) -> ApplicationCommunicator:
    """A request to ``path`` (started on the running loop), its body sent."""
    communicator = ApplicationCommunicator(app, scope(path))
    communicator.input_queue.put_nowait({"type": "http.request", "body": b""})
    return communicator


async def reached(communicator: ApplicationCommunicator) -> bool:
    """Whether the request reached the app: its response started (False: nothing came)."""
    if await communicator.receive_nothing():
        return False
    return bool((await communicator.receive_output())["type"] == "http.response.start")


async def test_with_a_bound_of_one_the_second_request_waits_until_the_first_finished():
    gate = Gate()
    app = ConcurrencyLimitMiddleware(gate, limit=1)
    first, second = request(app, "/a"), request(app, "/b")

    assert await reached(first)
    assert not await reached(second)
    assert gate.log == ["/a in"]

    gate.open("/b")
    gate.open("/a")
    assert (await first.receive_output(1))["body"] == b"/a"
    assert (await second.receive_output(1))["type"] == "http.response.start"
    assert (await second.receive_output(1))["body"] == b"/b"
    assert gate.log == ["/a in", "/a out", "/b in", "/b out"]


async def test_waiting_requests_go_in_in_the_order_they_came():
    gate = Gate()
    app = ConcurrencyLimitMiddleware(gate, limit=1)
    first = request(app, "/a")
    assert await reached(first)
    waiting = [request(app, f"/{name}") for name in "bcd"]
    assert not await reached(waiting[0])

    for name in "abcd":
        gate.open(f"/{name}")
    for communicator in waiting:
        await communicator.wait(1)

    assert [line for line in gate.log if line.endswith(" in")] == [
        "/a in",
        "/b in",
        "/c in",
        "/d in",
    ]


async def test_a_request_that_raises_frees_its_slot():
    gate = Gate()
    app = ConcurrencyLimitMiddleware(gate, limit=1)
    failing, next_ = request(app, "/raise"), request(app, "/b")
    assert await reached(failing)
    assert not await reached(next_)

    gate.open("/raise")
    with pytest.raises(RuntimeError, match="/raise"):
        await failing.wait(1)

    assert (await next_.receive_output(1))["type"] == "http.response.start"


async def test_a_request_whose_client_went_away_frees_its_slot():
    gate = Gate()
    app = ConcurrencyLimitMiddleware(gate, limit=1)
    left, next_ = request(app, "/a"), request(app, "/b")
    assert await reached(left)
    assert not await reached(next_)

    await left.send_input({"type": "http.disconnect"})  # no response body: the app just returns

    assert (await next_.receive_output(1))["type"] == "http.response.start"
    assert gate.log == ["/a in", "/a gone", "/b in"]


async def test_a_request_the_server_cancels_frees_its_slot_and_one_cancelled_waiting_takes_none():
    gate = Gate()
    app = ConcurrencyLimitMiddleware(gate, limit=1)
    running = request(app, "/a")
    assert await reached(running)
    given_up, last = request(app, "/b"), request(app, "/c")
    assert not await reached(given_up)

    given_up.future.cancel()
    assert not await reached(last)
    running.future.cancel()

    assert (await last.receive_output(1))["type"] == "http.response.start"
    assert gate.log == ["/a in", "/c in"]


async def test_websockets_are_not_bounded():
    gate = Gate()
    app = ConcurrencyLimitMiddleware(gate, limit=1)
    running = request(app, "/a")  # kept: a communicator dropped cancels its request
    assert await reached(running)

    socket = ApplicationCommunicator(app, scope("/ws", "websocket"))

    assert (await socket.receive_output(1))["type"] == "websocket.accept"


async def test_a_bound_of_zero_lets_every_request_in():
    gate = Gate()
    app = ConcurrencyLimitMiddleware(gate, limit=0)

    first, second = request(app, "/a"), request(app, "/b")

    assert await reached(first)
    assert await reached(second)


def test_the_bound_holds_on_each_event_loop_the_app_serves():
    gate = Gate()
    app = ConcurrencyLimitMiddleware(gate, limit=1)

    async def two_requests(loop_name: str) -> list[bool]:
        first, second = request(app, f"/{loop_name}1"), request(app, f"/{loop_name}2")
        seen = [await reached(first), await reached(second)]
        gate.open(f"/{loop_name}1")
        gate.open(f"/{loop_name}2")
        await second.wait(1)
        return seen

    assert asyncio.run(two_requests("x")) == [True, False]
    assert asyncio.run(two_requests("y")) == [True, False]


async def test_requests_run_their_sync_code_on_the_slots_threads_not_on_a_new_one_each():
    threads: list[str] = []

    async def django_like(scope: Any, receive: Any, send: Any) -> None:
        # Django's ASGI handler: a thread-sensitive context per request, the view in it.
        async with ThreadSensitiveContext():
            await sync_to_async(lambda: threads.append(threading.current_thread().name))()
        await send({"type": "http.response.start", "status": 200, "headers": []})
        await send({"type": "http.response.body", "body": b""})

    app = ConcurrencyLimitMiddleware(django_like, limit=2)
    for path in ("/a", "/b", "/c", "/d"):
        await request(app, path).wait(1)
    running_together = [request(app, "/e"), request(app, "/f"), request(app, "/g")]
    for communicator in running_together:
        await communicator.wait(1)

    assert len(threads) == 7
    assert 1 <= len(set(threads)) <= 2
    assert all(name.startswith("http-slot") for name in threads)


def test_the_site_bounds_its_http_requests_by_the_setting(settings: Any) -> None:
    from config.asgi import application

    http = application.application_mapping["http"].app
    assert isinstance(http, ConcurrencyLimitMiddleware)
    assert http.limit == settings.HTTP_CONCURRENCY


def _in_a_server_process(code: str, **env: str) -> str:
    """Run ``code`` in a fresh interpreter with the project's settings and ``env`` (the
    bound's variables unset unless given); return what it printed."""
    environ = {
        k: v
        for k, v in os.environ.items()
        if k not in ("DJANGO_HTTP_CONCURRENCY", "HOST_TASKS_RUN_IN_CALLER")
    }
    environ |= {"DJANGO_SETTINGS_MODULE": "config.settings", **env}
    command = [sys.executable, "-c", code]
    result = subprocess.run(command, env=environ, cwd=ROOT, capture_output=True, text=True)
    assert result.returncode == 0, result.stderr
    return result.stdout.strip()


@pytest.mark.parametrize(
    ("env", "limit"),
    [
        ({}, "1"),
        ({"HOST_TASKS_RUN_IN_CALLER": "true"}, "4"),
        ({"DJANGO_HTTP_CONCURRENCY": "3"}, "3"),
    ],
)
def test_a_server_runs_one_request_at_a_time_unless_tasks_run_inside_requests(
    env: dict[str, str], limit: str
) -> None:
    code = "from django.conf import settings; print(settings.HTTP_CONCURRENCY)"

    assert _in_a_server_process(code, **env) == limit


def test_the_server_process_keeps_what_it_loaded_out_of_the_collectors_runs() -> None:
    code = "import gc, config.asgi; print(gc.get_freeze_count())"

    assert int(_in_a_server_process(code)) > 0
