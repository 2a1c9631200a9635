"""Per-user numbered follower events, kept for a while (docs/spec.md, Follower rules).

After Zulip's event queues: every event a user can see is stored with the change it reports,
gets the next number of that user's counter (no gaps) once that change committed, and is sent
to the user's channel-layer group after that. A page that reconnects asks for the events after
the last id it applied (``events_after``); when some of them were pruned it gets a ``Resync``
instead and reloads its snapshot.

An event frame, as stored and as sent on the websocket, is
``{"type": "event", "id": int, "kind": str, "payload": dict}``; a payload's ``fragments`` are
what the page applies in place (``follower.fragments``). The kinds and their payloads belong to
the apps that publish them (``follower.sources``, which declare each kind's renders):
``host.follow.Kind`` for session rows and log lines, ``handoff.web.follow.Kind`` for records,
redirects, switches and settings.

A writer stores only what identifies its change (the kind, the ids, the facts it has in hand);
what a page shows of it (rows, fragments) is rendered when the event is numbered, after the
commit, from the committed state (``deliver``): once per batch for each thing shown, in the
user's language read once, outside the writer's transactions (docs/design.md, "Lock order").
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from channels.layers import get_channel_layer
from django.db import connection, transaction
from django.db.models import F, Max
from django.dispatch import Signal
from django.utils import timezone, translation

from common import after_commit
from common.reads import reads_once
from follower import fragments, sending, sources
from follower.conf import follower_settings
from follower.models import FollowerCursor, FollowerEvent

logger = logging.getLogger(__name__)

Frame = dict[str, Any]

event_committed = Signal()
"""Sent in the numbering process once events were numbered and committed, before their
channel-layer send is done: keyword arguments ``user_id`` and ``event_id`` (the newest number;
the hubs of the process keep it)."""

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


def _send(user_id: int, frames: list[Frame]) -> None:
    layer = get_channel_layer()
    if layer is None:
        return
    message = {"type": "follow.events", "user": user_id, sending.BATCH: frames}
    sending.group_send(layer, group_name(user_id), message)


def publish(user_id: int, kind: str, payload: dict[str, Any]) -> None:
    """Store one event for ``user_id`` in the caller's transaction; render, number and send it
    after.

    One INSERT, joining the caller's transaction (if any), so the event exists exactly when the
    caller's change committed and a rollback leaves none. ``payload`` is what identifies the
    change (ids, facts in hand: JSON); the sources' ``render`` completes it when it is numbered.
    The event is stored without a number and takes no lock but its own new row: numbering
    waits for the commit (``deliver``, run by ``transaction.on_commit`` once per user and
    transaction however many events it stores: ``_deliver_after_commit``), so a writer that
    holds session rows never waits for the user's counter row, and two writers never deadlock
    over it (docs/design.md, "Lock order").
    """
    FollowerEvent.objects.create(user_id=user_id, seq=None, kind=str(kind), payload=payload)
    _deliver_after_commit(user_id)


class _Batch:
    """The after-commit calls of ``deliver`` one transaction registered for one user: the first
    that runs delivers, the others do nothing (``done``)."""

    done = False


class _Delivery:
    """One after-commit call of ``deliver`` for one user, in a ``_Batch``; inside
    ``common.after_commit.held()`` it runs when the block ends."""

    def __init__(self, user_id: int, batch: _Batch) -> None:
        self.user_id = user_id
        self.batch = batch
        self.__qualname__ = "follower.events.deliver"  # named by Django if it fails

    def __call__(self) -> None:
        if self.batch.done or after_commit.hold(self):
            return
        self.batch.done = True
        deliver(self.user_id)


def _deliver_after_commit(user_id: int) -> None:
    """Have ``deliver(user_id)`` run after the current transaction commits (at once outside
    one), once per transaction however many events it stores: each event registers its own
    call (a savepoint's rollback drops only its own), in the batch of the user's calls already
    waiting, and the first to run delivers for all."""
    waiting = [entry[1] for entry in connection.run_on_commit]  # (savepoints, call, robust)
    batch = next(
        (
            call.batch
            for call in waiting
            if isinstance(call, _Delivery) and call.user_id == user_id and not call.batch.done
        ),
        None,
    )
    transaction.on_commit(_Delivery(user_id, batch or _Batch()), robust=True)


def _rendered(
    user_id: int, pending: list[FollowerEvent]
) -> tuple[list[FollowerEvent], list[FollowerEvent]]:
    """Complete each pending event of ``user_id`` from the committed state (``sources.render``)
    in the user's language; return ``(kept, dropped)``: dropped are the events a source dropped
    (what they were about is gone) and those whose render failed (logged: a broken template must
    not hold back the user's later events).

    The batch's renders share their reads (``common.reads.reads_once``: a thing several events
    show is read and rendered once, the user's language read once before the renders when one
    of them renders a template: ``sources.renders_html``),
    and a fragment several events carry stays only in the last of them (``coalesce``: the
    phases one transaction moves a handoff through send its panel once)."""
    kept, dropped = [], []
    html = any(sources.renders_html(event.kind) for event in pending)
    with reads_once(), translation.override(fragments.language_of(user_id) if html else None):
        for event in pending:
            try:
                payload = sources.render(event.kind, event.payload)
            except Exception:
                logger.exception("follower: event %s (%s) not rendered", event.pk, event.kind)
                payload = None
            if payload is None:
                dropped.append(event)
            else:
                event.payload = payload
                kept.append(event)
    coalesce([event.payload for event in kept])
    return kept, dropped


def coalesce(payloads: list[dict[str, Any]]) -> None:
    """Leave each fragment that several of ``payloads`` (one batch's, oldest first) carry only
    in the last of them, in place: rendered from the same committed state, the earlier copies
    would be replaced on the page by the last one anyway."""
    seen: set[tuple[Any, ...]] = set()
    for payload in reversed(payloads):
        carried = payload.get("fragments")
        if not carried:
            continue
        kept = []
        for item in carried:
            key = (item.get("session"), item.get("html"), item.get("unless"))
            if key not in seen:
                seen.add(key)
                kept.append(item)
        payload["fragments"] = kept


def deliver(user_id: int) -> list[Frame]:
    """Render and number the user's committed events that have no number yet; send them after
    commit.

    Runs in its own short transaction (joining the caller's, if any) that locks only the user's
    cursor row: the events are rendered from the committed state (``_rendered``: the sources'
    ``render``, once per thing shown, in the user's language read once) and get the next
    numbers in the order they were stored (no gaps; an event a source dropped is deleted
    unnumbered). Rendering under the cursor's lock means a later number never carries an older
    rendering than an earlier one. The user's oldest events are deleted once they pass
    ``FOLLOWER_EVENT_LIMIT``, and after the commit ``event_committed`` is sent and the frames
    go to the user's group as one message, queued, never waited for (``follower.sending``); a
    failure of the channel layer is logged and the events still reach the page from storage
    (the hub's re-join, the page's heartbeat).
    When the numbering passes a multiple of ``SWEEP_EVERY`` every user's expired events are
    swept after the commit too (``prune_events``). Also numbers what a process stored and did
    not number (it stopped between its commit and this step): any later call for the user
    numbers those (``events_after`` calls it, so a page's replay does). Returns the frames it
    numbered, oldest first (empty: none waited). A crash (or a failure) before this
    transaction commits leaves the events as their writers stored them, unnumbered and
    unrendered: the next call renders them from what is stored then and numbers them, so none is
    lost and a page gets the state as it is by then.
    """
    unnumbered = FollowerEvent.objects.filter(user_id=user_id, seq__isnull=True)
    if not unnumbered.exists():
        return []
    with transaction.atomic():
        cursor, _ = FollowerCursor.objects.select_for_update().get_or_create(user_id=user_id)
        pending, dropped = _rendered(user_id, list(unnumbered.order_by("pk")))
        if dropped:
            FollowerEvent.objects.filter(pk__in=[event.pk for event in dropped]).delete()
        if not pending:
            return []
        first = cursor.last_seq
        for seq, event in enumerate(pending, start=first + 1):
            event.seq = seq
        FollowerEvent.objects.bulk_update(pending, ["seq", "payload"])
        cursor.last_seq = first + len(pending)
        FollowerCursor.objects.filter(user_id=user_id).update(last_seq=cursor.last_seq)
        limit = follower_settings().event_limit
        if cursor.last_seq - limit > cursor.pruned_through:
            _prune_through(user_id, cursor.last_seq - limit)
        frames = [_frame(event) for event in pending]
        last_seq = cursor.last_seq

        def send_after_commit() -> None:
            event_committed.send(FollowerEvent, user_id=user_id, event_id=last_seq)
            _send(user_id, frames)

        transaction.on_commit(send_after_commit, robust=True)
        if last_seq // SWEEP_EVERY > first // SWEEP_EVERY:
            transaction.on_commit(prune_events, robust=True)
    return frames


def current_event_id(user_id: int) -> int:
    """Return the id of the user's newest numbered event (0 before the first); one query.

    An event committed but not numbered yet is not counted: a page that embeds this id gets it
    as a later event (applying an event twice changes nothing on a page)."""
    last = FollowerCursor.objects.filter(user_id=user_id).values_list("last_seq", flat=True).first()
    return last or 0


def events_after(user_id: int, last_id: int) -> list[Frame] | Resync:
    """Return the user's event frames numbered above ``last_id``, oldest first.

    Returns ``Resync`` when some of them were already pruned (``pruned_through > last_id``) or
    when ``last_id`` is ahead of every event the server numbered (a gap it cannot fill).
    Events are read before the cursor, so a prune running in between is seen as a gap; what
    committed unnumbered is numbered first (``deliver``).
    """
    deliver(user_id)
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
    configured = follower_settings()
    retention, limit = timedelta(seconds=configured.event_retention), configured.event_limit
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
    configured = follower_settings()
    retention, limit = timedelta(seconds=configured.event_retention), configured.event_limit
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
