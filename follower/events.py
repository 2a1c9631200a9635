"""Per-user numbered follower events, kept for a while (DESIGN.md invariant 10, seed 003 §6.5).

After Zulip's event queues: every event a user can see gets the next number of that user's
counter (no gaps), is stored, and is sent to the user's channel-layer group only after the
database commit. A page that reconnects asks for the events after the last id it applied
(``events_after``); when some of them were pruned it gets a ``Resync`` instead and reloads its
snapshot.

An event frame, as stored and as sent on the websocket, is
``{"type": "event", "id": int, "kind": str, "payload": dict}``; a payload's ``fragments`` are
what the page applies in place (``follower.fragments``). The kinds and their payloads belong to
the apps that publish them (``follower.sources``): ``host.follow.Kind`` for session rows and log
lines, ``handoff.web.follow.Kind`` for records, redirects, switches and settings.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from channels.layers import get_channel_layer
from django.conf import settings
from django.db import transaction
from django.db.models import F, Max
from django.dispatch import Signal
from django.utils import timezone

from common import sql
from follower import sending
from follower.models import FollowerCursor, FollowerEvent

logger = logging.getLogger(__name__)

Frame = dict[str, Any]

event_committed = Signal()
"""Sent in the publishing process once an event committed, before its channel-layer send is
done: keyword arguments ``user_id`` and ``event_id`` (the hubs of the process keep the id)."""

SWEEP_EVERY = 100
"""A user's every this-many-th event sweeps all users' expired events after its commit."""


@dataclass(frozen=True)
class Resync:
    """Events the page missed were pruned: it must reload its snapshot.

    ``last_event_id`` is the user's newest event id when the gap was found.
    """

    last_event_id: int


def group_name(user_id: int) -> str:
    """Return the channel-layer group of one user's follower sockets."""
    return f"follow.{user_id}"


def _frame(event: FollowerEvent) -> Frame:
    return {"type": "event", "id": event.seq, "kind": event.kind, "payload": event.payload}


def _send(user_id: int, frame: Frame) -> None:
    layer = get_channel_layer()
    if layer is None:
        return
    message = {"type": "follow.events", "user": user_id, sending.BATCH: [frame]}
    sending.group_send(layer, group_name(user_id), message)


def publish(user_id: int, kind: str, payload: dict[str, Any]) -> Frame:
    """Number and store one event for ``user_id``; send it to the user's group after commit.

    Runs in its own ``transaction.atomic()`` (joining the caller's, if any) with the user's
    cursor row locked by its bump, so numbers have no gaps and the event exists exactly when the
    caller's change committed: two statements (the bump, the insert), plus the deletion of the
    user's oldest events once they pass ``FOLLOWER_EVENT_LIMIT``. A crash half-way leaves
    neither the number nor the event. After the commit the send is queued, never waited for
    (``follower.sending``); a failure of the channel layer is logged and the event still
    reaches the page from storage (the hub's re-join, the page's heartbeat). Every
    ``SWEEP_EVERY``-th event of a user also sweeps every user's expired events after the commit
    (``prune_events``), so users who went quiet are pruned too. Returns the event frame.
    """
    with transaction.atomic():
        last_seq, pruned_through = _bump(user_id)
        event = FollowerEvent.objects.create(
            user_id=user_id, seq=last_seq, kind=str(kind), payload=payload
        )
        limit: int = getattr(settings, "FOLLOWER_EVENT_LIMIT", 1000)
        if last_seq - limit > pruned_through:
            _prune_through(user_id, last_seq - limit)
        frame = _frame(event)

        def send_after_commit() -> None:
            event_committed.send(FollowerEvent, user_id=user_id, event_id=last_seq)
            _send(user_id, frame)

        transaction.on_commit(send_after_commit, robust=True)
        if last_seq % SWEEP_EVERY == 0:
            transaction.on_commit(prune_events, robust=True)
    return frame


def _bump(user_id: int) -> tuple[int, int]:
    """Take the user's next event number; return ``(last_seq, pruned_through)`` after it."""
    bumped = sql.increment(FollowerCursor, "user", user_id, "last_seq", "pruned_through")
    if bumped is None:  # the user's first event
        FollowerCursor.objects.get_or_create(user_id=user_id)
        bumped = sql.increment(FollowerCursor, "user", user_id, "last_seq", "pruned_through")
        assert bumped is not None
    return int(bumped[0]), int(bumped[1])


def current_event_id(user_id: int) -> int:
    """Return the id of the user's newest event (0 before the first)."""
    last = FollowerCursor.objects.filter(user_id=user_id).values_list("last_seq", flat=True).first()
    return last or 0


def events_after(user_id: int, last_id: int) -> list[Frame] | Resync:
    """Return the user's event frames numbered above ``last_id``, oldest first.

    Returns ``Resync`` when some of them were already pruned (``pruned_through > last_id``) or
    when ``last_id`` is ahead of every event the server numbered (a gap it cannot fill).
    Events are read before the cursor, so a prune running in between is seen as a gap.
    """
    events = [
        _frame(e)
        for e in FollowerEvent.objects.filter(user_id=user_id, seq__gt=last_id).order_by("seq")
    ]
    cursor = FollowerCursor.objects.filter(user_id=user_id).first()
    last_seq = cursor.last_seq if cursor else 0
    pruned_through = cursor.pruned_through if cursor else 0
    if pruned_through > last_id or last_id > last_seq:
        return Resync(last_event_id=last_seq)
    return events


def _prune_through(user_id: int, through: int) -> int:
    """Delete the user's events numbered up to ``through`` and mark the gap; return how many."""
    deleted, _ = FollowerEvent.objects.filter(user_id=user_id, seq__lte=through).delete()
    FollowerCursor.objects.filter(user_id=user_id).update(pruned_through=through)
    return deleted


def _prune(cursor: FollowerCursor, now: datetime) -> int:
    """Delete the locked user's events past retention or beyond the per-user limit."""
    retention = timedelta(seconds=getattr(settings, "FOLLOWER_EVENT_RETENTION", 600))
    limit: int = getattr(settings, "FOLLOWER_EVENT_LIMIT", 1000)
    expired = FollowerEvent.objects.filter(
        user_id=cursor.user_id, created__lt=now - retention
    ).aggregate(seq=Max("seq"))["seq"]
    through = max(cursor.last_seq - limit, expired or 0)
    if through <= cursor.pruned_through:
        return 0
    return _prune_through(cursor.user_id, through)


def prune_events(*, now: datetime | None = None) -> int:
    """Prune every user's events older than ``FOLLOWER_EVENT_RETENTION`` seconds (default 600)
    or beyond the newest ``FOLLOWER_EVENT_LIMIT`` (default 1000); return how many were deleted.

    Each user is pruned in its own transaction with the cursor locked; ``pruned_through`` moves
    with the deletion, so a crash half-way leaves every user either pruned or untouched.
    ``publish`` keeps its user under the limit as it goes and calls this every ``SWEEP_EVERY``-th
    event of a user, for expired events and users who went quiet.
    """
    moment = now or timezone.now()
    retention = timedelta(seconds=getattr(settings, "FOLLOWER_EVENT_RETENTION", 600))
    limit: int = getattr(settings, "FOLLOWER_EVENT_LIMIT", 1000)
    expired = FollowerEvent.objects.filter(created__lt=moment - retention).values("user_id")
    over_limit = FollowerCursor.objects.filter(last_seq__gt=F("pruned_through") + limit)
    users = set(expired.distinct().values_list("user_id", flat=True))
    users.update(over_limit.values_list("user_id", flat=True))
    deleted = 0
    for user_id in sorted(users):
        with transaction.atomic():
            cursor = FollowerCursor.objects.select_for_update().get(user_id=user_id)
            deleted += _prune(cursor, moment)
    return deleted
