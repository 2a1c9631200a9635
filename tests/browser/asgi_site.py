"""Daphne for the browser tests that need the follower's websocket, and their helpers.

Websockets need an ASGI server, so those tests run Daphne on ``config.asgi`` in a subprocess
against the test database (PostgreSQL, or SQLite in a file: the settings give the test
database a file) and write from the test process in a thread of its own (``off_loop``). The
fixtures ``asgi_server`` and ``open_page`` (``conftest.py``) are built on this module.
"""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import Any, TypeVar

import pytest
from django.db import connections
from shared_files import ROOT

from bench import follower_site
from host import log, tasks
from host.models import Session
from host.sessions import create_session

T = TypeVar("T")
PAGE_TIMEOUT_MS = 15_000
"""How long a page of these tests waits for anything (ms)."""
FAST = {"retryInterval": 100, "backoffBase": 200, "backoffCap": 1000}
"""Follower settings for the tests: the retry rule's 12 tries about 2 s apart, only faster."""

RECORD_EVENTS = """
window.__events = [];
window.__statuses = [];
document.addEventListener("follower:event", (event) => window.__events.push(event.detail));
document.addEventListener("follower:status", (event) => window.__statuses.push(event.detail.state));
"""


def database_url() -> str:
    """The test database as a DATABASE_URL another process can open; skip when it cannot."""
    try:
        return follower_site.database_url()
    except ValueError:
        pytest.skip(
            "the ASGI server runs in another process and cannot open an in-memory test "
            "database: set DATABASE_URL to PostgreSQL (as .ci/run does)"
        )


class AsgiServer:
    """Daphne serving ``config.asgi`` on a fixed port; ``stop`` and ``start`` cut the sockets."""

    def __init__(self, database: str, port: int) -> None:
        self.port = port
        self.url = f"http://127.0.0.1:{port}"
        self.env = {**os.environ, "DATABASE_URL": database, "DJANGO_DEBUG": "false"}
        self.process: subprocess.Popen[bytes] | None = None

    def start(self) -> None:
        command = [sys.executable, "-m", "daphne", "-b", "127.0.0.1", "-p", str(self.port)]
        # A file, not a pipe: nobody reads a pipe while the server runs, and a full one would
        # block the server's logging (and with it the server).
        self.log = tempfile.TemporaryFile()  # noqa: SIM115 (closed in stop)
        self.process = subprocess.Popen(
            [*command, "config.asgi:application"],
            cwd=ROOT,
            env=self.env,
            stdout=subprocess.DEVNULL,
            stderr=self.log,
        )
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                self.log.seek(0)
                raise RuntimeError(f"daphne exited: {self.log.read().decode()}")
            try:
                socket.create_connection(("127.0.0.1", self.port), timeout=0.5).close()
                return
            except OSError:
                time.sleep(0.1)
        raise RuntimeError("daphne did not listen within 30 s")

    def stop(self) -> None:
        if self.process is not None:
            follower_site.stop_process(self.process)
            self.process = None
            self.log.close()


def wait_following(page: Any, session: Session | None) -> None:
    """Wait until the page's follower is connected and knows its baseline (rendered with the
    page, or read from its snapshot)."""
    page.wait_for_function(
        "() => { const s = window.follower?.state(); return s?.connection === 'connected'"
        " && s.loaded; }"
    )


def off_loop(work: Callable[[], T]) -> T:
    """Run ``work`` in a thread of its own, as a command runs in a process of its own.

    Playwright's event loop owns the test's thread, and sending to the channel layer after a
    commit needs a thread without one.
    """

    def run() -> T:
        try:
            return work()
        finally:
            connections.close_all()

    with ThreadPoolExecutor(1) as pool:
        return pool.submit(run).result()


def conversation(user: Any, title: str) -> Session:
    """An idle main with one turn (so its row shows in the sidebar)."""

    def create() -> Session:
        session = create_session(user, cwd="/work/demo", title=title)
        log.append_message(session, role="user", source_kind="user", content="Hi", starts_turn=True)
        log.append_message(session, role="assistant", source_kind="assistant", content="Hello.")
        return session

    return off_loop(create)


def answer(session: Session) -> None:
    """Let the agent answer the session's pending turn (the task worker's job), so it is idle."""
    off_loop(lambda: tasks.run_agent_turn.call(str(session.pk)))
