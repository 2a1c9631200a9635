"""A queued task wakes the idle task worker (``host.wake``): the attempt a
``/handoff`` queues starts without waiting out the worker's poll interval."""

from __future__ import annotations

import threading
from datetime import timedelta
from typing import Any

import pytest
from django.db import connections, transaction
from django_tasks import task
from django_tasks_db.compat import TaskResultStatus
from django_tasks_db.models import DBTaskResult

from host import wake
from host.worker import ResilientWorker

pytestmark = pytest.mark.django_db(transaction=True)

LONG_INTERVAL = 60.0
"""The worker's poll interval in these tests: far longer than any of them waits."""


@task()
def noted(text: str) -> str:
    """A task for the worker to run: returns ``text``."""
    return text


class Idle:
    """Spies on the worker's waits: ``waiting`` is set once it waits for work."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.waiting = threading.Event()
        real = wake.Waiter.wait

        def wait(waiter: wake.Waiter, seconds: float) -> None:
            if seconds:
                self.waiting.set()
            real(waiter, seconds)

        monkeypatch.setattr(wake.Waiter, "wait", wait)


def start_worker() -> threading.Thread:
    """A worker polling every ``LONG_INTERVAL`` seconds that ends after one task."""

    def run() -> None:
        worker = ResilientWorker(
            max_backoff=1.0,
            running_timeout=timedelta(minutes=15),
            queue_names=["default"],
            interval=LONG_INTERVAL,
            batch=False,
            backend_name="default",
            startup_delay=False,
            max_tasks=1,
            worker_id="wake-test",
            excluded_queue_names=[],
        )
        try:
            worker.run()
        finally:
            worker.waiter.close()
            connections.close_all()

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    return thread


def test_a_queued_task_wakes_the_idle_worker_before_its_interval(monkeypatch: Any) -> None:
    idle = Idle(monkeypatch)
    worker = start_worker()
    assert idle.waiting.wait(10), "the worker never went idle"

    result = noted.enqueue("woken")
    worker.join(10)

    assert not worker.is_alive(), f"the worker slept on for its {LONG_INTERVAL} s interval"
    row = DBTaskResult.objects.get(pk=result.id)
    assert (row.status, row.return_value) == (TaskResultStatus.SUCCESSFUL, "woken")


def test_a_task_queued_in_a_transaction_rolled_back_wakes_nothing(monkeypatch: Any) -> None:
    woken: list[object] = []
    monkeypatch.setattr(wake, "_touch", woken.append)
    with transaction.atomic():
        noted.enqueue("never")
        transaction.set_rollback(True)
    assert woken == []
    assert not DBTaskResult.objects.exists()
