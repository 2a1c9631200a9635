"""``manage.py task_worker`` (``host.worker``): a database outage does not end the worker, and
task rows of lost workers do not stay ``RUNNING``.

The outage is injected as the ``OperationalError`` a database that went away raises; on
PostgreSQL one test also terminates the worker's real connection.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from datetime import timedelta
from typing import Any

import pytest
from django.core.management import call_command
from django.db import OperationalError, connection, transaction
from django.utils import timezone
from django_tasks import task
from django_tasks_db.compat import TaskResultStatus
from django_tasks_db.models import DBTaskResult, DBTaskResultQuerySet

from bench.follower_site import ROOT, database_url
from host import worker
from host.models import Session

# The worker runs outside any transaction (it drops broken connections): so do these tests.
pytestmark = pytest.mark.django_db(transaction=True)


@task()
def echo(text: str) -> str:
    """A task for the worker to run: returns ``text``."""
    return text


@pytest.fixture
def sleeps(monkeypatch: pytest.MonkeyPatch) -> list[float]:
    """Record the worker's waits (seconds) instead of waiting; a worker that never gets past
    the outage fails the test instead of spinning."""
    waited: list[float] = []

    def sleep(seconds: float) -> None:
        waited.append(seconds)
        if len(waited) > 20:
            raise RuntimeError(f"the worker kept waiting: {waited}")

    monkeypatch.setattr(time, "sleep", sleep)
    return waited


def outage(monkeypatch: pytest.MonkeyPatch, failures: int, message: str) -> None:
    """Make the worker's next ``failures`` looks for a task fail as a database outage does."""
    real = DBTaskResultQuerySet.get_locked
    left = [failures]

    def get_locked(self: DBTaskResultQuerySet) -> Any:
        if left[0]:
            left[0] -= 1
            raise OperationalError(message)
        return real(self)

    monkeypatch.setattr(DBTaskResultQuerySet, "get_locked", get_locked)


def run_worker(*options: str) -> None:
    call_command("task_worker", "--batch", "--no-startup-delay", "--interval", "0", *options)


@pytest.mark.parametrize(
    "message",
    [
        "server closed the connection unexpectedly",
        'connection to server at "127.0.0.1", port 5432 failed: FATAL:  sorry, too many clients '
        "already",
    ],
)
def test_the_worker_waits_out_a_database_outage_and_runs_the_task(
    monkeypatch: pytest.MonkeyPatch, sleeps: list[float], message: str
) -> None:
    result = echo.enqueue("after the outage")
    outage(monkeypatch, 3, message)

    run_worker("--max-backoff", "1.5")

    row = DBTaskResult.objects.get(pk=result.id)
    assert row.status == TaskResultStatus.SUCCESSFUL
    assert row.return_value == "after the outage"
    assert len(sleeps) == 3  # one wait per failed try, growing, capped at --max-backoff
    assert 0.375 <= sleeps[0] <= 0.625 and 0.75 <= sleeps[1] <= 1.25
    assert 1.125 <= sleeps[2] <= 1.875


def test_the_library_worker_alone_ends_on_the_same_outage(
    monkeypatch: pytest.MonkeyPatch, sleeps: list[float]
) -> None:
    echo.enqueue("never run")
    outage(monkeypatch, 1, "server closed the connection unexpectedly")

    with pytest.raises(OperationalError):
        call_command("db_worker", "--batch", "--no-startup-delay", "--no-reload")


def test_a_task_whose_result_could_not_be_stored_is_failed_when_the_database_returns(
    monkeypatch: pytest.MonkeyPatch, sleeps: list[float]
) -> None:
    result = echo.enqueue("lost")
    real_save = DBTaskResult.save
    broken = [6]  # set_successful, then set_failed (3 tries each) find the database gone

    def save(self: DBTaskResult, *args: Any, **kwargs: Any) -> None:
        if "return_value" in kwargs.get("update_fields", ()) and broken[0]:
            broken[0] -= 1
            raise OperationalError("server closed the connection unexpectedly")
        real_save(self, *args, **kwargs)

    monkeypatch.setattr(DBTaskResult, "save", save)
    monkeypatch.setattr("django_tasks_db.utils.time.sleep", lambda seconds: None)

    run_worker()

    row = DBTaskResult.objects.get(pk=result.id)
    assert row.status == TaskResultStatus.FAILED
    assert row.exception_class_path == "host.worker.WorkerLost"
    assert "the database went away while the task ran" in row.traceback


def test_rows_left_running_by_a_killed_worker_are_failed_after_the_timeout(
    sleeps: list[float],
) -> None:
    killed = echo.enqueue("killed")
    recent = echo.enqueue("still running elsewhere")
    DBTaskResult.objects.filter(pk=killed.id).update(
        status=TaskResultStatus.RUNNING,
        started_at=timezone.now() - timedelta(hours=1),
        worker_ids=["dead-worker"],
    )
    DBTaskResult.objects.filter(pk=recent.id).update(
        status=TaskResultStatus.RUNNING, started_at=timezone.now(), worker_ids=["live-worker"]
    )

    run_worker("--running-timeout", "900")

    assert DBTaskResult.objects.get(pk=killed.id).status == TaskResultStatus.FAILED
    assert DBTaskResult.objects.get(pk=killed.id).exception_class_path == "host.worker.WorkerLost"
    assert DBTaskResult.objects.get(pk=recent.id).status == TaskResultStatus.RUNNING


def test_backoff_doubles_from_half_a_second_up_to_the_cap() -> None:
    delays = [worker.backoff(failures, 8.0) for failures in range(1, 8)]
    middles = [0.5, 1.0, 2.0, 4.0, 8.0, 8.0, 8.0]
    assert all(0.75 * m <= d <= 1.25 * m for d, m in zip(delays, middles, strict=True))


@pytest.mark.postgres
def test_the_worker_survives_its_postgresql_connection_being_terminated(
    monkeypatch: pytest.MonkeyPatch, sleeps: list[float]
) -> None:
    result = echo.enqueue("after the restart")
    real = DBTaskResultQuerySet.get_locked
    terminated: list[int] = []

    def get_locked(self: DBTaskResultQuerySet) -> Any:
        if not terminated:  # the server drops the worker's session, as a restart does
            with connection.cursor() as cursor:
                cursor.execute("SELECT pg_backend_pid()")
                terminated.append(cursor.fetchone()[0])
            with connection.cursor() as cursor:
                cursor.execute("SELECT pg_terminate_backend(pg_backend_pid())")
        return real(self)

    monkeypatch.setattr(DBTaskResultQuerySet, "get_locked", get_locked)

    run_worker()

    assert terminated and len(sleeps) >= 1
    assert DBTaskResult.objects.get(pk=result.id).status == TaskResultStatus.SUCCESSFUL


# A stand-in for a task worker stopped while it holds a row lock: its connections are set up as
# the worker's are, it locks the session's row in a transaction and then does nothing (stalled).
STALLED_WORKER = """
import sys, time
import django
django.setup()
from django.db import transaction
from host.models import Session
from host.worker import bound_idle_transactions
bound_idle_transactions(float(sys.argv[2]))
with transaction.atomic():
    Session.objects.select_for_update().get(pk=sys.argv[1])
    print("locked", flush=True)
    time.sleep(30)
"""


@pytest.mark.postgres
@pytest.mark.django_db(transaction=True)
def test_a_stalled_workers_transaction_ends_and_frees_the_rows_it_locked(
    django_user_model: Any,
) -> None:
    session = Session.objects.create(owner=django_user_model.objects.create_user("ada"))
    env = {
        **os.environ,
        "DATABASE_URL": database_url(),
        "DJANGO_SETTINGS_MODULE": "config.settings",
    }
    stalled = subprocess.Popen(
        [sys.executable, "-c", STALLED_WORKER, str(session.pk), "1"],
        cwd=ROOT, env=env, stdout=subprocess.PIPE, text=True,
    )  # fmt: skip
    try:
        assert stalled.stdout is not None and stalled.stdout.readline().strip() == "locked"
        started = time.monotonic()
        with transaction.atomic(), connection.cursor() as cursor:
            cursor.execute("SET LOCAL lock_timeout = '10s'")  # without the bound: 30 s
            Session.objects.filter(pk=session.pk).update(title="posted while it stalled")
        assert time.monotonic() - started < 10
    finally:
        stalled.kill()
        stalled.wait()
    assert Session.objects.get(pk=session.pk).title == "posted while it stalled"
