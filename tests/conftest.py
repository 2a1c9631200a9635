"""Shared fixtures."""

from __future__ import annotations

import contextlib
import json
import os
import threading
from collections.abc import Callable, Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest
from django.dispatch import Signal
from django.utils import translation

PLAIN_HOST_SETTINGS = (
    "tests.plain_host.settings",
    "tests.plain_host.int_settings",
    "tests.plain_host.engine_settings",
)
# The plain host (a second chat host) runs in a pytest process of its own, with its own
# settings: with UUID keys, with integer keys, and without the settings card
# (``pytest tests/plain_host --ds=tests.plain_host.settings`` …; ``make test``).
collect_ignore = (
    [] if os.environ.get("DJANGO_SETTINGS_MODULE") in PLAIN_HOST_SETTINGS else ["plain_host"]
)


ON_POSTGRES = os.environ.get("DATABASE_URL", "").startswith("postgres")
"""Whether this run's database is PostgreSQL (CI's second run; ``.ci/run``)."""


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """A test marked ``postgres`` skips, saying why, where the database is not PostgreSQL."""
    if ON_POSTGRES:
        return
    skip = pytest.mark.skip(reason="needs PostgreSQL: set DATABASE_URL=postgres://…")
    for item in items:
        if item.get_closest_marker("postgres"):
            item.add_marker(skip)


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]) -> Iterator[None]:
    """On PostgreSQL a test marked ``postgres`` that skips fails instead: the run that can
    check it must not pass without it."""
    outcome = yield
    report = outcome.get_result()  # type: ignore[attr-defined]
    if ON_POSTGRES and report.skipped and item.get_closest_marker("postgres"):
        report.outcome = "failed"
        report.longrepr = f"a PostgreSQL test skipped on PostgreSQL: {report.longrepr}"


@pytest.fixture(scope="session")
def django_db_setup(django_db_setup: None, django_db_blocker: Any) -> Iterator[None]:
    """pytest-django's test databases; on PostgreSQL, the connections other threads left open
    (the follower hub's read threads, the async tests' executors, the pool) are ended before
    the test database is dropped, which they would otherwise keep in use."""
    yield
    from django.db import connection

    if connection.vendor != "postgresql":
        return
    with django_db_blocker.unblock(), connection._nodb_cursor() as cursor:
        cursor.execute(
            "SELECT pg_terminate_backend(pid) FROM pg_stat_activity"
            " WHERE datname = %s AND pid <> pg_backend_pid()",
            [connection.settings_dict["NAME"]],
        )


@pytest.fixture(autouse=True)
def fresh_status_channel() -> None:
    """Each test probes its channel layer afresh: ``follower.channel`` keeps a probe's answer
    for a while per process, and a layer a test cut (an outage) may be the next test's too."""
    from follower import channel

    channel._answers.clear()


@pytest.fixture(autouse=True)
def default_language_after() -> Iterator[None]:
    """Each test starts in ``LANGUAGE_CODE``: a page request leaves the language it negotiated
    (a Chinese page's) active in the thread, where the next test's own calls would read it."""
    yield
    translation.deactivate()


@pytest.fixture
def immediate_tasks(settings: Any) -> None:
    """Run django-tasks inline (the immediate backend, which runs each task in the caller)
    instead of through ``db_worker``."""
    settings.TASKS = {"default": {"BACKEND": "django_tasks.backends.immediate.ImmediateBackend"}}
    settings.HOST_TASKS_RUN_IN_CALLER = True


@pytest.fixture
def capture_signal() -> Iterator[Callable[[Signal], list[dict[str, Any]]]]:
    """Return ``listen(signal)``: a list that receives the kwargs of every send, until teardown."""
    connected: list[tuple[Signal, Callable[..., None]]] = []

    def listen(signal: Signal) -> list[dict[str, Any]]:
        sent: list[dict[str, Any]] = []

        def receiver(**kwargs: Any) -> None:
            sent.append(kwargs)

        signal.connect(receiver, weak=False)
        connected.append((signal, receiver))
        return sent

    yield listen
    for signal, receiver in connected:
        signal.disconnect(receiver)


class FakeLLM:
    """A tiny OpenAI-compatible chat.completions server on 127.0.0.1 (no external network).

    ``requests`` records each call (path, headers, JSON body); ``answer`` and ``usage`` shape
    the reply (``json_answer``, when set, answers the JSON-only calls: the summary); ``status``
    other than 200 makes it fail. ``delay`` (seconds) makes every call wait that long before
    its answer, a slow model, until ``released`` is set (at teardown at the latest).
    """

    def __init__(self) -> None:
        self.requests: list[dict[str, Any]] = []
        self.answer = "Model answer."
        self.json_answer = ""
        self.delay = 0.0
        self.released = threading.Event()
        self.status = 200
        self.usage: dict[str, Any] | None = {
            "prompt_tokens": 1200,
            "completion_tokens": 80,
            "total_tokens": 1280,
            "prompt_tokens_details": {"cached_tokens": 200},
        }
        self.url = ""

    def response(self, request: dict[str, Any]) -> tuple[int, dict[str, Any]]:
        json_only = request.get("response_format") == {"type": "json_object"}
        answer = self.json_answer if json_only and self.json_answer else self.answer
        if self.status != 200:
            return self.status, {"error": {"message": "fake failure", "type": "server_error"}}
        body: dict[str, Any] = {
            "id": f"chatcmpl-{len(self.requests)}",
            "object": "chat.completion",
            "created": 0,
            "model": "fake-model",
            "choices": [
                {
                    "index": 0,
                    "message": {"role": "assistant", "content": answer},
                    "finish_reason": "stop",
                }
            ],
        }
        if self.usage is not None:
            body["usage"] = self.usage
        return 200, body


class _FakeLLMHandler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server: _FakeLLMServer

    def do_POST(self) -> None:
        length = int(self.headers.get("Content-Length", "0"))
        fake = self.server.fake
        body = json.loads(self.rfile.read(length) or b"{}")
        fake.requests.append(
            {
                "path": self.path,
                "headers": {k.lower(): v for k, v in self.headers.items()},
                "body": body,
            }
        )
        if fake.delay:
            fake.released.wait(fake.delay)
        status, payload = fake.response(body)
        data = json.dumps(payload).encode()
        with contextlib.suppress(BrokenPipeError, ConnectionResetError):  # a caller killed
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

    def log_message(self, format: str, *args: Any) -> None:
        return


class _FakeLLMServer(ThreadingHTTPServer):
    fake: FakeLLM


@pytest.fixture
def fake_llm(settings: Any) -> Iterator[FakeLLM]:
    """Serve a ``FakeLLM`` on a random local port and point the HOST_LLM_* settings at it."""
    server = _FakeLLMServer(("127.0.0.1", 0), _FakeLLMHandler)
    server.fake = FakeLLM()
    thread = threading.Thread(target=server.serve_forever, args=(0.05,), daemon=True)
    thread.start()
    server.fake.url = f"http://127.0.0.1:{server.server_address[1]}/v1"
    settings.HOST_LLM_BASE_URL = server.fake.url
    settings.HOST_LLM_API_KEY = "test-key"
    settings.HOST_LLM_MODEL = "fake-model"
    try:
        yield server.fake
    finally:
        server.fake.released.set()
        server.shutdown()
        server.server_close()
