"""What the follower benchmarks share: a Daphne worker on loopback, a signed-in user, tabs.

``Site`` starts one Daphne process (``config.asgi``, or the ASGI application named) on a free
127.0.0.1 port against the benchmark's database and channel layer (``DATABASE_URL`` /
``REDIS_URL`` as set; ``server_env`` adds or overrides variables of that process only), signs a
user in (its session cookie), and opens follower sockets as a
page does (``Origin`` of the site, ``hello`` with the id the page was rendered with). All
traffic stays on loopback; every socket and the server are closed by ``Site.close``.
"""

from __future__ import annotations

import asyncio
import os
import socket
import subprocess
import sys
import time
import uuid
from collections.abc import Callable, Coroutine, Mapping, Sequence
from datetime import datetime
from pathlib import Path
from typing import Any, TypeVar

from django.apps import apps
from django.contrib.auth import get_user_model
from django.db import connections
from django.test import Client

from bench.page_tabs import Endpoint
from follower.events import current_event_id
from follower.models import FollowerEvent
from handoff import operations
from handoff.operations import Action
from host import log
from host.models import Session
from host.sessions import create_session

ROOT = Path(__file__).resolve().parents[1]

T = TypeVar("T")


async def in_thread(call: Callable[..., T], *args: Any) -> T:
    """Run ``call(*args)`` in a worker thread (``asyncio.to_thread``) and return its result (or
    raise its error), closing that thread's database connections afterwards.

    On PostgreSQL a connection goes back to the process's pool only when closed; a worker
    thread keeps its own until then, so without closing, the loop's worker threads (more than
    the pool's ``DJANGO_DB_POOL_MAX``, and new ones per ``asyncio.run``) would hold every
    pooled connection and the next read would wait for one until the pool's timeout.
    """

    def closing() -> T:
        try:
            return call(*args)
        finally:
            connections.close_all()

    return await asyncio.to_thread(closing)


def free_port() -> int:
    """Return a TCP port on 127.0.0.1 that is free now."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


def stop_process(process: subprocess.Popen[bytes]) -> None:
    """Terminate ``process`` and wait for it; kill it when it has not ended within 10 s."""
    process.terminate()
    try:
        process.wait(timeout=10)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()


def database_url() -> str:
    """The default database as a DATABASE_URL another process can open.

    Raises ``ValueError`` for an in-memory SQLite database, which no other process can open.
    """
    conf = connections["default"].settings_dict
    if connections["default"].vendor == "postgresql":
        host = f"{conf['HOST'] or '127.0.0.1'}:{conf['PORT'] or 5432}"
        password = f":{conf['PASSWORD']}" if conf["PASSWORD"] else ""
        return f"postgres://{conf['USER']}{password}@{host}/{conf['NAME']}"
    name = str(conf["NAME"])
    if name == ":memory:" or "mode=memory" in name:
        raise ValueError("an in-memory SQLite database cannot be opened by another process")
    return f"sqlite:///{name}"


class Site(Endpoint):
    """One Daphne worker and one signed-in user of it (see the module docstring); its sockets
    and requests are ``Endpoint``'s."""

    def __init__(
        self,
        username: str,
        port: int | None = None,
        application: str = "config.asgi:application",
        server_env: Mapping[str, str] | None = None,
    ) -> None:
        # A new user each run: its channel-layer group is fresh too.
        self.user = get_user_model().objects.create_user(f"{username}-{uuid.uuid4().hex[:8]}")
        port = port or free_port()
        super().__init__(port, f"http://127.0.0.1:{port}", self.user.pk, self.sign_in())
        self.env = {**os.environ, "DATABASE_URL": database_url(), "DJANGO_DEBUG": "false"}
        command = [sys.executable, "-m", "daphne", "-b", "127.0.0.1", "-p", str(self.port)]
        self.process = subprocess.Popen(
            [*command, application],
            cwd=ROOT,
            env={**self.env, **(server_env or {})},
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        self._wait_listening()

    def sign_in(self) -> str:
        """Sign the user in once more, as from another browser; return that sign-in's cookie
        (``sessionid=…``)."""
        client = Client()
        client.force_login(self.user)
        return f"sessionid={client.cookies['sessionid'].value}"

    def _wait_listening(self) -> None:
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            try:
                socket.create_connection(("127.0.0.1", self.port), timeout=0.5).close()
                return
            except OSError:
                time.sleep(0.1)
        self.close()
        raise RuntimeError("daphne did not listen within 30 s")

    def rss_kib(self) -> int:
        """Return the server process's resident memory (KiB, from /proc)."""
        for line in Path(f"/proc/{self.process.pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
        return 0

    def event_id(self) -> int:
        """The id a page rendered now would embed."""
        return current_event_id(self.user.pk)

    def conversation(self, title: str) -> Session:
        """An idle main with one answered turn, ready to hand off."""
        session = create_session(self.user, cwd="/work/bench", title=title)
        log.append_message(session, role="user", source_kind="user", content="Hi", starts_turn=True)
        log.append_message(session, role="assistant", source_kind="assistant", content="Hello.")
        return session

    async def hand_off(self, source: Session) -> None:
        """Run ``handoff now --wait`` on ``source`` in a process of its own (a task worker)."""
        command = [sys.executable, "manage.py", "handoff", "now", str(source.pk), "--wait"]
        process = await asyncio.create_subprocess_exec(
            *command, cwd=ROOT, env=self.env, stdout=subprocess.DEVNULL
        )
        if await process.wait() != 0:
            raise RuntimeError(f"handoff now {source.pk} exited {process.returncode}")

    def committed_at(self, source: Session) -> float:
        """When the route of ``source`` committed (its redirect's timestamp, epoch seconds)."""
        redirect = apps.get_model("handoff", "Redirect")
        created: datetime = redirect.objects.values_list("created", flat=True).get(source=source)
        return created.timestamp()

    def started_at(self, source: Session) -> float:
        """When the successor of ``source`` started (epoch seconds): the stamp of the event of
        its record's move to ``started``, written in the start's transaction; inf when it has
        not started. Raises ``Redirect.DoesNotExist`` when ``source`` was not handed off."""
        apps.get_model("handoff", "Redirect").objects.get(source=source)
        started = (
            FollowerEvent.objects.filter(
                user=self.user,
                kind="handoff.phase",
                payload__source=str(source.pk),
                payload__phase="started",
            )
            .order_by("pk")
            .values_list("created", flat=True)
            .first()
        )
        return started.timestamp() if started else float("inf")

    def started_after_commit(self, source: Session) -> float:
        """Seconds from the route's commit to the start of the successor (its event's stamp):
        the floor of any follower that opens the successor only once it is started."""
        return self.started_at(source) - self.committed_at(source)

    def ask_now(self, source: Session) -> float:
        """Ask for a handoff of ``source`` as "Hand off now" and ``/handoff`` do
        (``operations.act("now")``: queued for the task worker); return the moment (epoch s)."""
        asked = time.time()
        operations.act(Action.NOW, source.pk)
        return asked

    def start_worker(self) -> subprocess.Popen[bytes]:
        """Start the Procfile's task worker (``task_worker --interval 0.5``) on this site's
        database and channel layer; the caller stops it with ``stop_process``."""
        command = [sys.executable, "manage.py", "task_worker", "--interval", "0.5", "--no-reload"]
        return subprocess.Popen(
            [*command, "--no-startup-delay"],
            cwd=ROOT,
            env=self.env,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )

    def close(self) -> None:
        """Stop the server."""
        stop_process(self.process)


def percentile(values: list[float], share: float) -> float:
    """Return the ``share`` (0–1) percentile of ``values`` (nearest rank); inf when empty."""
    if not values:
        return float("inf")
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(share * (len(ordered) - 1)))]


def measured(result: Any) -> str:
    """Format seconds as milliseconds for the tables."""
    return f"{result * 1000:.0f}" if result != float("inf") else "—"


def with_worker(name: str, measure: Callable[[Site], Coroutine[Any, Any, None]]) -> None:
    """Run ``measure(site)`` on a new ``Site`` called ``name`` with a task worker started beside
    it (as the Procfile runs one), then stop the worker and close the site, also on error."""

    async def measure_one(sites: list[Site]) -> None:
        await measure(sites[0])

    with_sites(name, [{}], measure_one)


def with_sites(
    name: str,
    server_envs: Sequence[Mapping[str, str]],
    measure: Callable[[list[Site]], Coroutine[Any, Any, None]],
) -> None:
    """Run ``measure(sites)`` on a new ``Site`` called ``name`` per ``server_envs`` entry (its
    Daphne's ``server_env``), in that order, with one task worker started beside them (the
    sites share the database and the channel layer, so it runs every site's handoffs), then stop
    the worker and close the sites, also on error."""
    sites: list[Site] = []
    try:
        for server_env in server_envs:
            sites.append(Site(name, server_env=server_env))
        worker = sites[0].start_worker()
        try:
            asyncio.run(measure(sites))
        finally:
            stop_process(worker)
    finally:
        for site in sites:
            site.close()
