"""A task worker that outlives database outages and fails the tasks of lost workers.

django-tasks-db's ``db_worker`` ends on the first database error it does not expect — a
restart of the server, ``too many clients`` — and a task row whose worker was killed stays
``RUNNING`` for ever. ``ResilientWorker`` keeps the library's loop and wraps it:

- on a transient database error (``OperationalError``, ``InterfaceError``) it drops the broken
  connections, waits (``backoff``: 0.5 s doubling up to ``max_backoff``, ±25 % jitter) and goes
  on; the wait starts over from 0.5 s once the loop has run longer than ``max_backoff``;
- the task it was running when the database went away is marked failed once the database is
  back: its outcome is unknown, and running it again could repeat what it already did;
- task rows ``RUNNING`` for longer than ``running_timeout`` (their worker was killed) are
  marked failed with ``WorkerLost``: at start-up, after each outage and, while tasks run, at
  most once every ``SWEEP_SECONDS``;
- agent turns whose lease ran out (``host.turn_lease``: their worker was killed, or the
  database was gone longer than the lease) are ended (``host.lifecycle.end_lost_turns``): at
  start-up, after each outage, and every third of the lease from a thread of their own, so a
  worker busy with a long turn still sweeps.

A worker stopped inside one of its transactions (SIGSTOP, a stalled host) holds that
transaction's row locks, and every post to the sessions it locked waits for it. Started with
``--idle-transaction-timeout`` (the Procfile does), its PostgreSQL connections have the server
end a transaction left idle that long (``bound_idle_transactions``), which frees the locks; the
stalled worker's writes then fail as after an outage, and its turn is fenced by its lease
(docs/design.md, "A turn's writes are fenced by its lease").

A worker killed half-way leaves the task row ``RUNNING`` until such a sweep; what the task
itself wrote is as its own transactions left it (the handoff's recovery handles its records).
"""

from __future__ import annotations

import logging
import random
import time
from datetime import datetime, timedelta
from traceback import format_exception
from typing import Any
from uuid import UUID

from django.db import InterfaceError, OperationalError
from django.db.backends.base.base import BaseDatabaseWrapper
from django.db.backends.signals import connection_created
from django.utils import timezone
from django_tasks_db.compat import TaskResultStatus
from django_tasks_db.management.commands.db_worker import Worker
from django_tasks_db.models import DBTaskResult

from host import lifecycle, turn_lease
from host.periodic import Repeating, drop_connections
from host.wake import Waiter

logger = logging.getLogger(__name__)

# Database errors that pass: the server restarting, a dropped connection, too many clients.
TRANSIENT = (OperationalError, InterfaceError)
FIRST_BACKOFF_SECONDS = 0.5
# How often a busy worker looks for task rows its killed peers left running.
SWEEP_SECONDS = 60.0


def bound_idle_transactions(seconds: float) -> None:
    """From now on, this process's PostgreSQL connections have the server end a transaction
    left idle for ``seconds`` (``idle_in_transaction_session_timeout``), closing that session
    and so releasing its locks; connections to other databases are left as they are.

    For a task worker's own process only: its transactions are short writes, never held across
    a model call, so only a stalled process leaves one idle that long.
    """
    milliseconds = max(1, round(seconds * 1000))

    def configure(connection: BaseDatabaseWrapper, **kwargs: Any) -> None:
        if connection.vendor == "postgresql":
            with connection.cursor() as cursor:
                cursor.execute(f"SET idle_in_transaction_session_timeout = {milliseconds}")

    connection_created.connect(configure, weak=False, dispatch_uid="host.worker.idle")


class WorkerLost(Exception):
    """Recorded as the failure of a task whose worker stopped running it (killed, or the
    database went away half-way). Do not raise it: it only names what happened."""


def backoff(failures: int, most: float) -> float:
    """Return the seconds to wait after ``failures`` (≥ 1) transient errors in a row:
    0.5 · 2^(failures − 1), capped at ``most``, with ±25 % jitter so workers do not retry in step.
    """
    delay = min(most, FIRST_BACKOFF_SECONDS * 2 ** min(failures - 1, 32))
    return delay * random.uniform(0.75, 1.25)  # noqa: S311 (jitter, not cryptography)


def fail_tasks(rows: Any, reason: str) -> int:
    """Mark the still ``RUNNING`` rows of the queryset ``rows`` failed with ``WorkerLost(reason)``;
    return how many. One conditional UPDATE: a row its worker finished meanwhile is left as is."""
    lost = WorkerLost(reason)
    return int(
        rows.filter(status=TaskResultStatus.RUNNING).update(
            status=TaskResultStatus.FAILED,
            finished_at=timezone.now(),
            exception_class_path=f"{WorkerLost.__module__}.{WorkerLost.__qualname__}",
            traceback="".join(format_exception(lost)),
            return_value=None,
        )
    )


def fail_orphaned_tasks(running_timeout: timedelta, now: datetime | None = None) -> int:
    """Mark task rows ``RUNNING`` since before ``now − running_timeout`` failed; return how many."""
    cutoff = (now or timezone.now()) - running_timeout
    orphans = DBTaskResult.objects.filter(started_at__lt=cutoff)
    return fail_tasks(orphans, f"its worker stopped: still running after {running_timeout}")


class ResilientWorker(Worker):
    """django-tasks-db's worker loop, kept running through database outages (see the module).

    ``max_backoff`` (seconds) caps the wait between tries; ``running_timeout`` is how long a
    task row may stay ``RUNNING`` before it counts as its worker's loss. Other keyword arguments
    are ``Worker``'s.
    """

    def __init__(self, *, max_backoff: float, running_timeout: timedelta, **kwargs: Any) -> None:
        self.waiter = Waiter()
        self._looping = False
        super().__init__(**kwargs)
        self.max_backoff = max_backoff
        self.running_timeout = running_timeout
        self.outages = 0
        self._current: UUID | None = None
        self._next_sweep = 0.0

    def run(self) -> None:
        """Run the loop until shut down (or, with ``batch``/``max_tasks``, until done),
        waiting out transient database errors; lost turns are swept meanwhile."""
        sweeper = Repeating(sweep_lost_turns, turn_lease.renew_interval(), "lost-turn-sweep")
        self.waiter.start()
        with sweeper:
            self._run()

    @property
    def interval(self) -> float:
        """What ``db_worker``'s loop sleeps at an empty queue: the wait for a queued task
        (``host.wake``, at most the configured interval) happens here, and the loop's own sleep
        is then 0. ``db_worker`` offers no hook for its wait; its only other read of the
        interval, the start-up delay's check, gets the configured value and waits for nothing.
        """
        if not self._looping:
            self._looping = True
            return self._interval
        self.waiter.wait(self._interval)
        return 0.0

    @interval.setter
    def interval(self, seconds: float) -> None:
        self._interval = seconds

    def _run(self) -> None:
        failures = 0
        while self.running:
            began = time.monotonic()
            try:
                self._recover_rows()
                self._looping = not self.startup_delay
                super().run()
                return
            except TRANSIENT as exc:
                self.outages += 1
                failures = 1 if time.monotonic() - began > self.max_backoff else failures + 1
                delay = backoff(failures, self.max_backoff)
                logger.warning(
                    "database unavailable (%s: %s); worker %s retries in %.1f s",
                    type(exc).__name__,
                    str(exc).strip(),
                    self.worker_id,
                    delay,
                )
                drop_connections()
                time.sleep(delay)

    def run_task(self, db_task_result: DBTaskResult) -> None:
        """Run one claimed task, remembering it until it is recorded finished; then, when due,
        fail the rows of lost workers."""
        self._current = db_task_result.pk
        super().run_task(db_task_result)
        self._current = None
        self._sweep_if_due()

    def _recover_rows(self) -> None:
        if self._current is not None:
            rows = DBTaskResult.objects.filter(pk=self._current)
            fail_tasks(rows, "the database went away while the task ran; its outcome is unknown")
            self._current = None
        self._sweep()
        sweep_lost_turns()

    def _sweep_if_due(self) -> None:
        if time.monotonic() >= self._next_sweep:
            self._sweep()

    def _sweep(self) -> None:
        swept = fail_orphaned_tasks(self.running_timeout)
        if swept:
            logger.warning("marked %d task(s) of lost workers failed", swept)
        self._next_sweep = time.monotonic() + SWEEP_SECONDS


def sweep_lost_turns() -> int:
    """End the agent turns whose lease ran out (``host.lifecycle.end_lost_turns``); return how
    many, logging them."""
    ended = lifecycle.end_lost_turns()
    if ended:
        logger.warning("ended %d lost agent turn(s)", ended)
    return ended
