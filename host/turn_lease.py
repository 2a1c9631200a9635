"""A running turn's lease: a turn whose runner died is found and ended (issue 15).

A turn opens with a lease of ``lease_seconds()`` (``settings.HOST_TURN_LEASE``, default 15 s).
The task that answers it renews the lease when it starts and then every third of the lease while
the agent runs (``heartbeat``: a thread beside the agent's call). A turn whose lease ran out is
lost — its worker was killed, the database was gone longer than the lease, the task died
somewhere nothing caught — unless its task is still waiting in the queue (a busy queue is not a
death): ``lost_turns`` lists those, and the task worker's sweeper (``host.worker``) ends them
with ``host.runtime.end_lost_turns`` every third of the lease. So a turn whose worker was killed
is ended at most 1⅓ leases (20 s by default) after its last renewal, and a live turn is never
ended however long its agent takes. Leases are written and read on each process's own clock, so
the machines running workers and the site must agree on the time to well within a lease (NTP).
"""

from __future__ import annotations

from datetime import datetime, timedelta

from django.conf import settings
from django.utils import timezone
from django_tasks.base import TaskResultStatus
from django_tasks.exceptions import TaskResultDoesNotExist

from host import tasks
from host.models import Activity, ActivityKind
from host.periodic import Repeating


def lease_seconds() -> float:
    """Return how long a turn stays alive without a renewal (seconds)."""
    return float(settings.HOST_TURN_LEASE)


def renew_interval() -> float:
    """Return the seconds between two renewals, and between two sweeps: a third of the lease."""
    return lease_seconds() / 3


def deadline() -> datetime:
    """Return when a lease taken or renewed now runs out."""
    return timezone.now() + timedelta(seconds=lease_seconds())


def renew(turn_id: int) -> bool:
    """Extend the lease of the open turn ``turn_id``; return False when the turn has ended.

    One conditional UPDATE: a turn the sweep ended meanwhile stays ended.
    """
    open_turn = Activity.objects.filter(pk=turn_id, kind=ActivityKind.TURN, ended__isnull=True)
    return bool(open_turn.update(lease_expires=deadline()))


def lost_turns() -> list[Activity]:
    """Return the open turns whose lease has run out and whose task is not queued."""
    expired = Activity.objects.filter(
        kind=ActivityKind.TURN, ended__isnull=True, lease_expires__lt=timezone.now()
    )
    return [turn for turn in expired if not _queued(turn)]


def _queued(turn: Activity) -> bool:
    """Whether the task that answers ``turn`` still waits in the queue for a worker."""
    if not turn.task_id:
        return False
    try:
        result = tasks.run_agent_turn.get_result(turn.task_id)
    except (TaskResultDoesNotExist, NotImplementedError):
        return False
    return result.status == TaskResultStatus.READY


def heartbeat(turn_id: int) -> Repeating:
    """Return the ``Repeating`` that renews the lease of ``turn_id`` while the agent runs."""
    return Repeating(lambda: renew(turn_id), renew_interval(), f"turn-lease-{turn_id}")
