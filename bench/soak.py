"""The outage soak: posts, handoffs and 100 tabs while PostgreSQL and Redis
are cut and restored, then posts racing successors and a stalled worker. ``python -m bench soak``;
about four minutes, all on loopback.

It starts servers of its own, never the shared ones: a PostgreSQL cluster (``initdb``, port
``SOAK_POSTGRES_PORT``, default 5442) and a Redis without persistence (``SOAK_REDIS_PORT``,
6394), then one Daphne (``SOAK_SITE_PORT``, 8131), one task worker and the recovery loop
(``recover_handoffs --every 10``) against them. ``TABS`` sockets follow one user as pages do
(hello with the last applied id; a ping every ``PING_EVERY`` s, hello again when the pong names
a newer event; reconnect when closed) while a client posts to ``CONVERSATIONS`` conversations
through the JSON API and asks one of them to hand off every ``HANDOFF_EVERY`` s. Meanwhile:
PostgreSQL stopped (``pg_ctl stop -m immediate``) and started again, Redis restarted empty,
Redis paused (SIGSTOP) and continued; each for ``OUTAGE`` seconds. After ``SETTLE`` quiet
seconds it prints, per tab and summed:

- lost: stored events (numbered after the tabs opened) a tab never got;
- duplicated: events a tab got more than once;
- late: events that reached a tab more than ``LATE`` s after they were due: their commit, or,
  for an event committed during an outage (or up to ``LATE`` s before it), its service's return;
  counted by the outage that delayed them, apart for those committed within ``AFTERMATH``
  seconds after a service returned, and "none";
- silent tabs: per outage, tabs that got none of the events committed after the service
  returned;
- stuck: sessions ``running`` without a live turn (an open turn whose lease has not run out);
- posts: answered, refused (the database was down: 5xx), and their time (p50, max), in all and
  while Redis was paused.

Then, with the tabs closed and counted, the race (docs/design.md, "Lock order" and "A turn's
writes are fenced by its lease"): ``CONVERSATIONS`` fresh conversations are handed off and
``RACE_ROUNDS`` rounds of ``RACE_POSTS`` concurrent posts (each with a ``client_id``) go to the
handed-off sources while their successors answer the relayed inputs; before the second round
the task worker, busy answering the first, is stopped (SIGSTOP) mid-turn for ``STALL`` seconds,
past its turn's lease, and a second task worker starts (it sweeps the stalled turn and answers
the rest), then the first is continued. Once the successors are quiet it prints: errors (posts not
answered 201/202, by status; 0: no answer within 30 s), lost (a post whose original or relay is
missing), duplicated (stored or relayed more than once), unanswered (a relayed input never taken
up as a turn), lost-turn notices (the stall's: a turn the sweep ended, whose late answer was
dropped; a notice is false only when no worker stalled) and stuck sessions.
"""

from __future__ import annotations

import asyncio
import json
import os
import signal
import subprocess
import sys
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

from websockets.asyncio.client import connect

from bench.outages import PrivatePostgres, PrivateRedis

ROOT = Path(__file__).resolve().parents[1]
TABS = 100
CONVERSATIONS = 4
POST_EVERY = 0.5
"""Seconds between two posts (each starts an agent turn: several events)."""
HANDOFF_EVERY = 12.0
PING_EVERY = 5.0
OUTAGE = 8.0
"""Seconds each service stays cut."""
SETTLE = 30.0
"""Quiet seconds at the end: longer than a turn's lease and its sweep (20 s by default)."""
LATE = 5.0
AFTERMATH = 15.0
"""Late events committed this long after a service returned are counted apart."""
RACE_ROUNDS = 5
RACE_POSTS = 40
"""Concurrent posts per round, spread over the handed-off conversations."""
STALL = 25.0
"""Seconds the first task worker stays stopped (the turn lease is 15 s)."""
WORKER = ("task_worker", "--max-backoff", "1", "--idle-transaction-timeout", "10")
"""The soak's task workers, as the Procfile runs them (a stalled one's idle transaction ends)."""
QUIET = 120.0
"""Seconds at most to wait for the successors to answer every relayed input."""

Action = Callable[[], None]
T = TypeVar("T")


@dataclass
class Outage:
    """One cut: which service, when it was cut and when it returned (epoch seconds)."""

    name: str
    cut: float = 0.0
    returned: float = 0.0


@dataclass
class Tab:
    """One simulated page: the event ids it applied, with when each arrived."""

    last_id: int
    got: list[tuple[int, float]] = field(default_factory=list)
    resyncs: int = 0


@dataclass
class Post:
    """One API post: when it was sent, how long it took, its HTTP status (0: no answer)."""

    sent: float
    seconds: float
    status: int


def main() -> None:
    """Start the private servers, point Django at them, run the soak, stop everything."""
    postgres = PrivatePostgres(int(os.environ.get("SOAK_POSTGRES_PORT", "5442")), "handoff-soak-")
    redis = None
    try:
        postgres.create_database("soak")
        redis = PrivateRedis(int(os.environ.get("SOAK_REDIS_PORT", "6394")))
        os.environ.update(DATABASE_URL=postgres.url("soak"), REDIS_URL=redis.url)
        os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
        import django
        from django.core.management import call_command

        django.setup()
        call_command("migrate", verbosity=0)
        report(asyncio.run(Soak(postgres, redis).run()))
    finally:
        if redis is not None:
            redis.close()
        postgres.close()


class Soak:
    """The servers, the site's processes and the load (see the module)."""

    def __init__(self, postgres: PrivatePostgres, redis: PrivateRedis) -> None:
        from django.db import connections

        from bench.follower_site import Site
        from host.auth import issue_token

        self.postgres, self.redis = postgres, redis
        self.site = Site("soak", int(os.environ.get("SOAK_SITE_PORT", "8131")))
        self.token = issue_token(self.site.user)
        self.targets = [str(self.site.conversation(f"Soak {n}").pk) for n in range(CONVERSATIONS)]
        self.start_id = self.site.event_id()
        connections.close_all()  # the cut must not find this process holding connections
        self.workers = [
            self._manage(*WORKER),
            self._manage("recover_handoffs", "--every", "10"),
        ]
        self.tabs = [Tab(self.start_id) for _ in range(TABS)]
        self.posts: list[Post] = []
        self.outages: list[Outage] = []
        self.running = True

    def _manage(self, *command: str) -> subprocess.Popen[bytes]:
        return subprocess.Popen(
            [sys.executable, "manage.py", *command],
            cwd=ROOT,
            env=self.site.env,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )

    async def run(self) -> dict[str, Any]:
        """Open the tabs, run the load through the three outages, settle; return the counts."""
        from bench.follower_site import stop_process

        try:
            followers = [asyncio.create_task(self._follow(tab)) for tab in self.tabs]
            load = [asyncio.create_task(self._post_loop()), asyncio.create_task(self._handoffs())]
            await asyncio.sleep(10)
            await self._outage("PostgreSQL", self.postgres.stop, self.postgres.start)
            await asyncio.sleep(15)
            await self._outage("Redis restart", self.redis.stop, self.redis.start)
            await asyncio.sleep(15)
            await self._outage("Redis pause", self.redis.pause, self.redis.resume)
            await asyncio.sleep(15)
            self.running = False
            await asyncio.gather(*load)
            await asyncio.sleep(SETTLE)
            for task in followers:
                task.cancel()
            counts = await asyncio.to_thread(self._after_the_cut, self._counts)
            return counts | await self._race()
        finally:
            for process in self.workers:
                stop_process(process)
            self.site.close()

    async def _outage(self, name: str, cut: Action, restore: Action) -> None:
        outage = Outage(name, cut=time.time())
        self.outages.append(outage)
        await asyncio.to_thread(cut)
        await asyncio.sleep(OUTAGE)
        await asyncio.to_thread(restore)
        outage.returned = time.time()

    async def _follow(self, tab: Tab) -> None:
        """Be one page's follower: hello, apply events in order, ping, reconnect when closed."""
        while True:
            try:
                socket = await connect(
                    f"ws://127.0.0.1:{self.site.port}/ws/follow/?user={self.site.user.pk}",
                    origin=self.site.origin,  # type: ignore[arg-type]
                    additional_headers={"Cookie": self.site.cookie},
                    compression=None,
                    open_timeout=60,
                )
                await socket.send(json.dumps({"type": "hello", "last_event_id": tab.last_id}))
                await asyncio.gather(self._read(socket, tab), self._ping(socket))
            except asyncio.CancelledError:
                raise
            except Exception:
                await asyncio.sleep(0.5)

    async def _read(self, socket: Any, tab: Tab) -> None:
        async for text in socket:
            frame = json.loads(text)
            if frame["type"] == "event":
                tab.got.append((frame["id"], time.time()))
                tab.last_id = max(tab.last_id, frame["id"])
            elif frame["type"] == "resync":
                tab.resyncs += 1
                tab.last_id = frame["last_event_id"]
            elif frame["type"] == "pong" and (frame["last_event_id"] or 0) > tab.last_id:
                await socket.send(json.dumps({"type": "hello", "last_event_id": tab.last_id}))
        raise ConnectionError("the socket closed")

    async def _ping(self, socket: Any) -> None:
        while True:
            await asyncio.sleep(PING_EVERY)
            await socket.send('{"type": "ping"}')

    async def _post_loop(self) -> None:
        n = 0
        while self.running:
            target = self.targets[n % CONVERSATIONS]
            status, body = await self._request(f"/api/sessions/{target}/messages", f"Step {n}")
            if status == 202:
                self.targets[n % CONVERSATIONS] = body["forwarded_to"]
            n += 1
            await asyncio.sleep(POST_EVERY)

    async def _handoffs(self) -> None:
        n = 0
        while self.running:
            await asyncio.sleep(HANDOFF_EVERY)
            target = self.targets[n % CONVERSATIONS]
            await self._request(f"/api/sessions/{target}/handoff", None)
            n += 1

    async def _request(self, path: str, content: str | None) -> tuple[int, Any]:
        """POST to the API (a message when ``content``, else a handoff ``now``); record it."""
        payload = {"role": "user", "content": content} if content else {"action": "now"}
        sent = time.time()
        status, answer = await self._post(path, payload)
        if content:
            self.posts.append(Post(sent, time.time() - sent, status))
        return status, answer

    async def _post(self, path: str, payload: dict[str, Any]) -> tuple[int, Any]:
        """POST ``payload`` to the API; return the status (0: no answer within 30 s) and body."""
        body = json.dumps(payload).encode()
        head = (
            f"POST {path} HTTP/1.1\r\nHost: 127.0.0.1:{self.site.port}\r\n"
            f"Authorization: Bearer {self.token}\r\nContent-Type: application/json\r\n"
            f"Content-Length: {len(body)}\r\nConnection: close\r\n\r\n"
        )
        status, answer = 0, None
        try:
            async with asyncio.timeout(30):
                reader, writer = await asyncio.open_connection("127.0.0.1", self.site.port)
                writer.write(head.encode() + body)
                response = await reader.read()
                writer.close()
            status = int(response.split(b" ", 2)[1])
            answer = json.loads(response.partition(b"\r\n\r\n")[2] or b"null")
        except (OSError, TimeoutError, ValueError, IndexError):
            pass
        return status, answer

    async def _race(self) -> dict[str, Any]:
        """Concurrent posts to handed-off conversations while their successors answer, with a
        worker stalled past its lease (see the module); return the race's counts."""
        from bench.follower_site import stop_process

        sources = [
            await asyncio.to_thread(self._after_the_cut, self.site.conversation, f"Race {n}")
            for n in range(CONVERSATIONS)
        ]
        await asyncio.gather(*(self.site.hand_off(source) for source in sources))
        second: subprocess.Popen[bytes] | None = None
        statuses: dict[str, int] = {}
        stall: asyncio.Task[None] | None = None
        try:
            for round_ in range(RACE_ROUNDS):
                if round_ == 1:  # the one worker is answering round 0: stop it mid-turn
                    await asyncio.to_thread(self._after_the_cut, self._wait_for_a_running_turn)
                    stall = asyncio.create_task(self._stall(self.workers[0]))
                    second = self._manage(*WORKER)
                posts = [
                    (f"race-{round_}-{n}", sources[n % len(sources)]) for n in range(RACE_POSTS)
                ]
                answers = await asyncio.gather(
                    *(
                        self._post(
                            f"/api/sessions/{source.pk}/messages",
                            {"role": "user", "content": f"Race {cid}", "client_id": cid},
                        )
                        for cid, source in posts
                    )
                )
                statuses.update(
                    {cid: status for (cid, _), (status, _) in zip(posts, answers, strict=True)}
                )
                await asyncio.sleep(2)
            if stall is not None:
                await stall
            await asyncio.to_thread(self._wait_quiet)
        finally:
            if second is not None:
                stop_process(second)
        return await asyncio.to_thread(self._after_the_cut, self._race_counts, sources, statuses)

    @staticmethod
    def _wait_for_a_running_turn() -> None:
        """Wait (10 s at most) until a task worker runs an agent turn."""
        from django_tasks_db.models import DBTaskResult

        turns = DBTaskResult.objects.running().filter(task_path="host.tasks.run_agent_turn")
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            if turns.exists():
                return
            time.sleep(0.01)

    async def _stall(self, worker: subprocess.Popen[bytes]) -> None:
        """Stop ``worker`` for ``STALL`` seconds (SIGSTOP), then let it go on (SIGCONT)."""
        worker.send_signal(signal.SIGSTOP)
        try:
            await asyncio.sleep(STALL)
        finally:
            worker.send_signal(signal.SIGCONT)

    def _wait_quiet(self) -> None:
        """Wait (``QUIET`` s at most) until none of the user's sessions runs or has input queued."""
        from host.models import InboxItem, Session, SessionStatus

        deadline = time.monotonic() + QUIET
        while time.monotonic() < deadline:
            running = Session.objects.filter(owner=self.site.user, status=SessionStatus.RUNNING)
            queued = InboxItem.objects.filter(session__owner=self.site.user, taken=False)
            if not running.exists() and not queued.exists():
                return
            time.sleep(1)

    def _race_counts(self, sources: list[Any], statuses: dict[str, int]) -> dict[str, Any]:
        """Count the race's errors, lost, duplicated and unanswered posts (see the module)."""
        from django.db.models import Count

        from host.models import Message, SourceKind

        stored = dict(
            Message.objects.filter(session__in=sources, client_id__in=list(statuses))
            .values_list("client_id")
            .annotate(n=Count("pk"))
        )
        relays = Message.objects.filter(
            source_kind=SourceKind.RELAY, content__in=[f"Race {cid}" for cid in statuses]
        )
        relayed = dict(relays.values_list("content").annotate(n=Count("pk")))
        lost = sum(1 for cid in statuses if not stored.get(cid) or not relayed.get(f"Race {cid}"))
        duplicated = sum(1 for n in [*stored.values(), *relayed.values()] if n > 1)
        notices = Message.objects.filter(
            session__owner=self.site.user, content__contains="stopped without finishing"
        )
        return {
            "race": f"{RACE_ROUNDS} rounds of {RACE_POSTS} concurrent posts to {len(sources)} "
            f"handed-off conversations, a worker stalled {STALL:.0f} s",
            "race errors": dict(
                Counter(status for status in statuses.values() if status not in (201, 202))
            ),
            "race lost": lost,
            "race duplicated": duplicated,
            "race unanswered": relays.filter(starts_turn=False).count(),
            "race lost-turn notices": notices.count(),
            "race stuck": self._stuck(),
        }

    @staticmethod
    def _after_the_cut(work: Callable[..., T], *args: Any) -> T:
        """``work(*args)``, run again on a fresh connection when the cut had broken this one."""
        from django.db import OperationalError, connections

        for _ in range(3):
            try:
                return work(*args)
            except OperationalError:
                connections.close_all()
        return work(*args)

    def _counts(self) -> dict[str, Any]:
        """Compare what the tabs got with the stored events; find stuck sessions."""
        from follower.models import FollowerEvent

        stored = dict(
            FollowerEvent.objects.filter(user=self.site.user, seq__gt=self.start_id).values_list(
                "seq", "created"
            )
        )
        due = {seq: self._due(created.timestamp()) for seq, created in stored.items()}
        counts: dict[str, Any] = {"events": len(stored), "tabs": TABS}
        counts["lost"] = sum(len(set(due) - {i for i, _ in tab.got}) for tab in self.tabs)
        counts["duplicated"] = sum(len(tab.got) - len({i for i, _ in tab.got}) for tab in self.tabs)
        late = [due[i][1] for t in self.tabs for i, at in t.got if at - due.get(i, (at,))[0] > LATE]
        counts["late"] = {name: late.count(name) for name in sorted(set(late))}
        counts["resyncs"] = sum(tab.resyncs for tab in self.tabs)
        for outage in self.outages:
            after = {i for i, created in stored.items() if created.timestamp() > outage.returned}
            silent = sum(1 for tab in self.tabs if after and not after & {i for i, _ in tab.got})
            counts[f"silent tabs after {outage.name}"] = silent
        counts["stuck"] = self._stuck()
        counts["posts"] = self._post_counts(self.posts)
        pause = next(o for o in self.outages if o.name == "Redis pause")
        paused = [p for p in self.posts if pause.cut <= p.sent < pause.returned]
        counts["posts while Redis paused"] = self._post_counts(paused)
        return counts

    def _stuck(self) -> int:
        """Count the user's sessions ``running`` without a live turn (see the module)."""
        from django.db.models import Exists, OuterRef
        from django.utils import timezone

        from host.models import Activity, ActivityKind, Session, SessionStatus

        live = Activity.objects.filter(
            session=OuterRef("pk"),
            kind=ActivityKind.TURN,
            ended__isnull=True,
            lease_expires__gte=timezone.now(),
        )
        running = Session.objects.filter(owner=self.site.user, status=SessionStatus.RUNNING)
        return running.exclude(Exists(live)).count()

    def _due(self, committed: float) -> tuple[float, str]:
        """When an event committed at ``committed`` should reach the tabs (see the module), and
        the outage that delays it ("none": none does)."""
        for outage in self.outages:
            if outage.cut - LATE <= committed < outage.returned:
                return max(committed, outage.returned), outage.name
        for outage in reversed(self.outages):
            if outage.returned <= committed < outage.returned + AFTERMATH:
                return committed, f"within {AFTERMATH:.0f} s after {outage.name}"
        return committed, "none"

    @staticmethod
    def _post_counts(posts: list[Post]) -> dict[str, Any]:
        from bench.follower_site import percentile

        answered = [p.seconds for p in posts if 200 <= p.status < 300]
        return {
            "answered": len(answered),
            "refused or unanswered": len(posts) - len(answered),
            "p50 ms": round(percentile(answered, 0.5) * 1000),
            "max ms": round(max(answered, default=0) * 1000),
        }


def report(counts: dict[str, Any]) -> None:
    """Print the counts, one line each."""
    print(f"soak: {TABS} tabs, {CONVERSATIONS} conversations, outages of {OUTAGE:.0f} s each")
    for name, value in counts.items():
        print(f"  {name}: {value}")
