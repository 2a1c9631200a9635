"""A turn that dies ends, with real task workers (issue 15, item 1).

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
from typing import Any

import pytest
from django.contrib.auth.models import AbstractBaseUser
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
CUT_WORKER = Path(__file__).with_name("cut_worker.py")


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

    def alive(self) -> bool:
        return self.process.poll() is None

    def output(self) -> str:
        self.log.seek(0)
        return self.log.read().decode(errors="replace")

    def stop(self) -> None:
        stop_process(self.process)
        self.log.close()


@pytest.fixture
def start_worker(fake_llm: Any, settings: Any, tmp_path: Path) -> Iterator[Callable[..., Worker]]:
    """Return ``start_worker(cuttable=False)``: a task worker on the test database whose model
    is ``fake_llm``, held (slow) until ``fake_llm.released`` is set; ``cuttable`` runs it
    through ``cut_worker.py`` with ``CUT_FILE`` = ``tmp_path / "cut"``."""
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
        "CUT_FILE": str(tmp_path / "cut"),
    }
    options = ["task_worker", "--interval", "0.1", "--no-reload", "--no-startup-delay"]
    started: list[Worker] = []

    def start(*, cuttable: bool = False) -> Worker:
        script = [str(CUT_WORKER), *options[1:]] if cuttable else ["manage.py", *options]
        worker = Worker([sys.executable, *script], env)
        started.append(worker)
        return worker

    yield start
    for worker in started:
        worker.stop()


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


def assert_recovered(session: Session, fake_llm: Any) -> None:
    """Each queued input got its own turn and answer after the lost turn's notice, and the
    ``now`` requested meanwhile handed off after the last answer."""
    notices = Message.objects.filter(session=session, role=Role.SYSTEM).values_list(
        "content", flat=True
    )
    assert any("(message #1) stopped without finishing" in text for text in notices)
    assert agent_prompts(fake_llm)[:3] == ["first", "second", "third"]
    answers = Message.objects.filter(session=session, role=Role.ASSISTANT).order_by("seq")
    assert answers.count() == 2
    record = HandoffRecord.objects.get(source=session)
    assert record.source_revision >= answers.last().seq  # type: ignore[union-attr]


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


def test_a_database_cut_mid_turn_ends_the_turn_and_the_queue_is_answered(
    owner: AbstractBaseUser, fake_llm: Any, start_worker: Callable[..., Worker], tmp_path: Path
):
    worker = start_worker(cuttable=True)
    session = wedge(owner, fake_llm, worker)

    (tmp_path / "cut").touch()
    fake_llm.released.set()  # the answer arrives while the database is gone
    time.sleep(2 * LEASE)  # the outage outlasts the lease
    (tmp_path / "cut").unlink()

    wait_for(lambda: handed_off(session), "the handoff after the queue", [worker])
    assert worker.alive()
    assert_recovered(session, fake_llm)


def test_a_live_turn_longer_than_many_leases_is_never_ended(
    owner: AbstractBaseUser, fake_llm: Any, start_worker: Callable[..., Worker]
):
    fake_llm.delay = 5 * LEASE  # the model takes five leases to answer
    workers = [start_worker(), start_worker()]  # the idle one sweeps all the while too
    session = create_session(owner, title="Slow", cwd="/work/demo")

    intake.post_message(session, content="think hard")

    wait_for(
        lambda: Message.objects.filter(session=session, role=Role.ASSISTANT).exists(),
        "the slow answer",
        workers,
    )
    session.refresh_from_db()
    assert session.status == "idle"
    assert not Message.objects.filter(session=session, role=Role.SYSTEM).exists()
    assert all(worker.alive() for worker in workers)
