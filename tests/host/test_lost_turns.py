"""A turn that dies ends, with real task workers.

Each test runs ``manage.py task_worker`` processes against the test database (PostgreSQL, or
SQLite in a file) with a stand-in model that answers slowly (``fake_llm``) and a turn lease of
``LEASE`` seconds. It kills, or cuts the database of, the worker running a turn while more input
and a ``now`` request arrive; the conversation must then answer each queued input in its own
turn, say in its log that the lost turn stopped, and hand off once the queue is answered.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, Protocol

import pytest
from database_cut import InjectedCut, ProxyCut
from django.contrib.auth.models import AbstractBaseUser
from django.db import connections
from handoff_support import RecordingLLM

from bench.follower_site import ROOT, database_url, stop_process
from handoff import operations
from handoff.core.phases import Phase
from handoff.models import HandoffRecord
from host import intake
from host.models import Message, Role, Session
from host.sessions import create_session

pytestmark = pytest.mark.django_db(transaction=True)

LEASE = 3.0
"""Seconds; the default is 15. A killed turn is ended about 1⅓ leases after its last renewal."""
SETTLE = 90.0
"""Seconds at most for the conversation to answer its queue and hand off (a bound, not a goal)."""
APP_NAME = "lost-turn-test-worker"
"""The workers' PostgreSQL ``application_name``: the teardown waits for their sessions to end."""


class Cut(Protocol):
    """A way to cut a worker's database (``database_cut.py``)."""

    command: list[str]
    env: dict[str, str]

    def cut(self) -> None: ...
    def restore(self) -> None: ...
    def close(self) -> None: ...


class Worker:
    """One ``task_worker`` process; its stderr goes to a file, shown when a test fails."""

    def __init__(self, command: list[str], env: dict[str, str]) -> None:
        self.log = tempfile.TemporaryFile()  # noqa: SIM115 (closed in stop)
        self.process = subprocess.Popen(
            command, cwd=ROOT, env=env, stdout=subprocess.DEVNULL, stderr=self.log
        )

    def kill(self) -> None:
        """SIGKILL: the worker stops mid-turn, as an OOM kill or a lost machine stops it."""
        self.process.send_signal(signal.SIGKILL)
        self.process.wait()

    def pause(self) -> None:
        """SIGSTOP: the worker stalls mid-turn (a long GC pause, a frozen VM), then resumes."""
        self.process.send_signal(signal.SIGSTOP)

    def resume(self) -> None:
        """SIGCONT: the stalled worker goes on where it stopped."""
        self.process.send_signal(signal.SIGCONT)

    def alive(self) -> bool:
        return self.process.poll() is None

    def output(self) -> str:
        self.log.seek(0)
        return self.log.read().decode(errors="replace")

    def stop(self) -> None:
        if self.alive():
            self.resume()  # a stalled worker would not hear the request to stop
        stop_process(self.process)
        self.log.close()


@pytest.fixture
def database_cut(tmp_path: Path) -> Iterator[Cut]:
    """How the test cuts a worker's database: a proxy in front of PostgreSQL, an injected
    failure on SQLite (``database_cut.py``)."""
    url = database_url()
    conf = connections["default"].settings_dict
    if connections["default"].vendor == "postgresql":
        cut: Cut = ProxyCut(url, conf["HOST"] or "127.0.0.1", int(conf["PORT"] or 5432))
    else:
        cut = InjectedCut(tmp_path / "cut")
    yield cut
    cut.close()


@pytest.fixture
def start_worker(fake_llm: Any, settings: Any) -> Iterator[Callable[..., Worker]]:
    """Return ``start_worker(cut=None)``: a task worker on the test database whose model is
    ``fake_llm``, held (slow) until ``fake_llm.released`` is set; with ``cut``, its database
    can be cut (``database_cut``)."""
    settings.HOST_TURN_LEASE = LEASE  # the turns this process opens get the workers' lease
    fake_llm.json_answer = RecordingLLM.DEFAULT_ANSWER  # the summary call gets a valid brief
    fake_llm.delay = SETTLE
    env = {
        **os.environ,
        "DATABASE_URL": database_url(),
        "DJANGO_DEBUG": "false",
        "HANDOFF_LLM_BASE_URL": fake_llm.url,
        "HANDOFF_LLM_API_KEY": "test-key",
        "HANDOFF_LLM_MODEL": "fake-model",
        "HOST_TURN_LEASE": str(LEASE),
        "PGAPPNAME": APP_NAME,
    }
    options = ["task_worker", "--interval", "0.1", "--no-reload", "--no-startup-delay"]
    options += ["--max-backoff", "1"]  # back soon after an outage
    started: list[Worker] = []

    def start(*, cut: Cut | None = None) -> Worker:
        command = cut.command if cut else [sys.executable, "manage.py"]
        worker = Worker([*command, *options], {**env, **(cut.env if cut else {})})
        started.append(worker)
        return worker

    yield start
    for worker in started:
        worker.stop()
    wait_for_disconnects()


def wait_for_disconnects() -> None:
    """On PostgreSQL, wait (10 s at most) until the stopped workers' sessions (``PGAPPNAME``)
    have left the test database, which is dropped at the end of the run."""
    if connections["default"].vendor != "postgresql":
        return
    left = "SELECT count(*) FROM pg_stat_activity WHERE application_name = %s"
    deadline = time.monotonic() + 10
    with connections["default"].cursor() as cursor:
        while time.monotonic() < deadline:
            cursor.execute(left, [APP_NAME])
            if cursor.fetchone()[0] == 0:
                return
            time.sleep(0.1)


def wait_for(done: Callable[[], bool], what: str, workers: list[Worker]) -> None:
    """Poll ``done`` until it holds; fail after ``SETTLE`` seconds with the workers' logs."""
    deadline = time.monotonic() + SETTLE
    while not done():
        if time.monotonic() > deadline:
            logs = "\n".join(worker.output()[-3000:] for worker in workers)
            pytest.fail(f"{what} did not happen within {SETTLE:g} s; workers said:\n{logs}")
        time.sleep(0.2)


def wedge(owner: AbstractBaseUser, fake_llm: Any, worker: Worker) -> Session:
    """A main whose turn on "first" is inside the slow model call of ``worker``, with "second"
    and "third" queued behind it and ``now`` requested."""
    session = create_session(owner, title="Wedged", cwd="/work/demo")
    intake.post_message(session, content="first")
    wait_for(lambda: len(fake_llm.requests) == 1, "the turn's model call", [worker])
    intake.post_message(session, content="second")
    intake.post_message(session, content="third")
    operations.request_now(session.pk)
    return session


def agent_prompts(fake_llm: Any) -> list[str]:
    """The latest input of each agent call the model received (summary calls left out)."""
    calls = [r["body"] for r in fake_llm.requests if "response_format" not in r["body"]]
    return [body["messages"][-1]["content"] for body in calls]


def handed_off(session: Session) -> bool:
    return HandoffRecord.objects.filter(source=session, phase=Phase.STARTED).exists()


def outage_seconds() -> float:
    """How long a cut lasts: two leases, plus the time PostgreSQL's connection pool waits for
    the database before it fails a query (its ``timeout``), so that the turn's task cannot
    record its own failure and the turn is left to its lease — as a 30 s outage leaves it."""
    pool = connections["default"].settings_dict.get("OPTIONS", {}).get("pool") or {}
    return 2 * LEASE + float(pool.get("timeout", 0))


def assert_recovered(session: Session, fake_llm: Any) -> None:
    """The first turn ended unanswered, with the notice of a lost turn before any answer; each
    queued input got its own turn and answer after it; the ``now`` requested meanwhile handed
    off after the last answer."""
    answers = Message.objects.filter(session=session, role=Role.ASSISTANT).order_by("seq")
    assert answers.count() == 2
    first_answer = answers[0].seq
    before = Message.objects.filter(session=session, role=Role.SYSTEM, seq__lt=first_answer)
    notices = before.values_list("content", flat=True)
    assert any("(message #1) stopped without finishing" in text for text in notices)
    assert agent_prompts(fake_llm)[:3] == ["first", "second", "third"]
    record = HandoffRecord.objects.get(source=session)
    assert record.source_revision >= answers.last().seq  # type: ignore[union-attr]


DROPPED = "lost its lease before the agent's answer was written; the answer is dropped"
"""What a worker logs when its turn's writes were fenced off (``host.tasks``)."""


def answers(session: Session) -> int:
    return Message.objects.filter(session=session, role=Role.ASSISTANT).count()


def lost_notice_logged(session: Session) -> bool:
    notices = Message.objects.filter(session=session, role=Role.SYSTEM)
    return notices.filter(content__contains="stopped without finishing").exists()


def test_a_worker_killed_mid_turn_ends_the_turn_and_the_queue_is_answered(
    owner: AbstractBaseUser, fake_llm: Any, start_worker: Callable[..., Worker]
):
    doomed = start_worker()
    session = wedge(owner, fake_llm, doomed)

    doomed.kill()
    fake_llm.released.set()  # the model answers at once from now on
    survivor = start_worker()

    wait_for(lambda: handed_off(session), "the handoff after the queue", [doomed, survivor])
    assert_recovered(session, fake_llm)


@pytest.mark.parametrize("answered", ["during the cut", "after the sweep"])
def test_a_database_cut_mid_turn_ends_the_turn_and_the_queue_is_answered(
    owner: AbstractBaseUser,
    fake_llm: Any,
    database_cut: Cut,  # before start_worker: the workers stop before the proxy closes
    start_worker: Callable[..., Worker],
    answered: str,
):
    """The model answers while the database is gone (the answer cannot be written), or once the
    turn was declared lost (the answer is dropped: the turn's writes are fenced by its lease)."""
    worker = start_worker(cut=database_cut)
    session = wedge(owner, fake_llm, worker)

    database_cut.cut()
    if answered == "during the cut":
        fake_llm.released.set()
    time.sleep(outage_seconds())
    database_cut.restore()
    if answered == "after the sweep":
        wait_for(lambda: lost_notice_logged(session), "the sweep of the lost turn", [worker])
        fake_llm.released.set()

    wait_for(lambda: handed_off(session), "the handoff after the queue", [worker])
    assert worker.alive()
    if answered == "after the sweep":
        assert DROPPED in worker.output()
    assert_recovered(session, fake_llm)


def test_a_live_turn_longer_than_many_leases_is_never_ended(
    owner: AbstractBaseUser, fake_llm: Any, start_worker: Callable[..., Worker]
):
    fake_llm.delay = 5 * LEASE  # the model takes five leases to answer
    workers = [start_worker(), start_worker()]  # the idle one sweeps all the while too
    session = create_session(owner, title="Slow", cwd="/work/demo")

    intake.post_message(session, content="think hard")

    wait_for(
        lambda: Session.objects.filter(pk=session.pk, status="idle").exists(),
        "the end of the slow turn",
        workers,
    )
    assert Message.objects.filter(session=session, role=Role.ASSISTANT).count() == 1
    assert not Message.objects.filter(session=session, role=Role.SYSTEM).exists()
    assert all(worker.alive() for worker in workers)


def test_a_worker_stalled_past_its_lease_writes_nothing_when_it_resumes(
    owner: AbstractBaseUser, fake_llm: Any, start_worker: Callable[..., Worker]
):
    stalled = start_worker()
    session = wedge(owner, fake_llm, stalled)

    stalled.pause()
    fake_llm.released.set()  # the stalled worker's answer waits in its socket
    survivor = start_worker()
    wait_for(lambda: handed_off(session), "the handoff after the queue", [stalled, survivor])
    stalled.resume()

    wait_for(
        lambda: DROPPED in stalled.output() or answers(session) > 2,
        "the stalled worker's late answer",
        [stalled, survivor],
    )
    assert_recovered(session, fake_llm)
    assert stalled.alive()
