"""Background attempts (django-tasks): the summary never blocks the request that asked for it.

The default backend is ``django_tasks_db.DatabaseBackend`` (``manage.py task_worker``): the task
row is written in the caller's transaction, so it exists exactly when the caller's change
(e.g. ``requested``) committed. Tests use the immediate backend, which runs it in place.
"""

from __future__ import annotations

from typing import Any

from django_tasks import task

from handoff import attempt as attempts


@task()
def attempt_task(session_id: str, manual: bool) -> dict[str, Any]:
    """Run one attempt (the eight steps) on ``session_id``; return its outcome as a dict.

    (``handoff.operations.run_attempt`` is the synchronous entry point that also requests it.)
    """
    return attempts.run(session_id, manual=manual).as_dict()


@task()
def evaluation_task() -> int:
    """Evaluate every enabled main (``handoff.operations.evaluate_enabled_mains``); return how
    many attempts were enqueued. Enqueued when the global settings change, so the request that
    changed them does not wait on every main (about four queries each)."""
    from handoff import operations  # operations enqueues this module's tasks

    return operations.evaluate_enabled_mains()


def enqueue_attempt(session_id: Any, *, manual: bool) -> None:
    """Enqueue ``attempt_task`` for ``session_id`` (a manual or an automatic attempt)."""
    attempt_task.enqueue(str(session_id), manual)


def enqueue_evaluation() -> None:
    """Enqueue ``evaluation_task`` (the global settings changed)."""
    evaluation_task.enqueue()
