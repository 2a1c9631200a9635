"""A running turn's lease: a turn whose runner died is found and ended.

A turn opens with a lease of ``lease_seconds()`` (``settings.HOST_TURN_LEASE``, default 15 s).
The task that answers it renews the lease when it starts and then every third of the lease while
the agent runs (``heartbeat``: a thread beside the agent's call). A turn whose lease ran out is
lost — its worker was killed, the database was gone longer than the lease, the task died
somewhere nothing caught — unless its task is still waiting in the queue (a busy queue is not a
death): ``lost_turns`` lists those, and the task worker's sweeper (``host.worker``) ends them
with ``host.lifecycle.end_lost_turns`` every third of the lease. So a turn whose worker was killed
is ended at most 1⅓ leases (20 s by default) after its last renewal, and a live turn is never
ended however long its agent takes. A lease that ran out is never renewed, and the turn's
writes check it (``hold``): a turn that lost its lease writes nothing more. Leases are written
and read on each process's own clock, so the machines running workers and the site must agree
on the time to well within a lease (NTP).
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


class LeaseLost(RuntimeError):
    """The turn's lease ran out (or the turn ended): the turn writes nothing more."""


def take(turn_id: int) -> bool:
    """Take the lease of the open turn ``turn_id`` for the task that starts answering it;
    return False when the turn has ended.

    One conditional UPDATE: a turn the sweep ended meanwhile stays ended. A lease that ran out
    while the task waited in the queue is taken all the same (a busy queue is not a death).
    """
    open_turn = Activity.objects.filter(pk=turn_id, kind=ActivityKind.TURN, ended__isnull=True)
    return bool(open_turn.update(lease_expires=deadline()))


def renew(turn_id: int) -> bool:
    """Extend the running lease of the open turn ``turn_id``; return False when the turn has
    ended or its lease already ran out (it is lost: only the sweep ends it now).

    One conditional UPDATE: a lease that ran out is never brought back, so a worker that was
    stopped or cut off longer than the lease cannot outlive the sweep's decision.
    """
    held = Activity.objects.filter(
        pk=turn_id, kind=ActivityKind.TURN, ended__isnull=True, lease_expires__gte=timezone.now()
    )
    return bool(held.update(lease_expires=deadline()))


def hold(turn_id: int) -> None:
    """Check that the turn ``turn_id`` still holds its lease, and extend it; raise
    ``LeaseLost`` when it does not.

    The fence of a turn's writes (docs/design.md, "A turn's writes are fenced by its lease"):
    the agent's task runs it in each of its appends to the log, under the session's row lock
    (``host.log.guarded``), the lock the sweep takes first too, so a write and the sweep's end
    of the turn never both happen.
    """
    if not renew(turn_id):
        raise LeaseLost(f"turn {turn_id} lost its lease; it writes nothing more")


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
    """Return the ``Repeating`` that renews the lease of ``turn_id`` while the agent runs (a
    renewal after the lease ran out fails: the turn is lost)."""
    return Repeating(lambda: renew(turn_id), renew_interval(), f"turn-lease-{turn_id}")
