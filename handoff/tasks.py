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


def enqueue_attempt(session_id: Any, *, manual: bool) -> None:
    """Enqueue ``attempt_task`` for ``session_id`` (a manual or an automatic attempt)."""
    attempt_task.enqueue(str(session_id), manual)
