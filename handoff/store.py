"""Records, main state and redirects in the database (docs/spec.md, State).

These replace the specification's ``handoffs.json`` file. Every write runs in
``transaction.atomic()``, so a crash half-way leaves the last committed state. A record's
phase moves only as ``handoff.core.phases.can_move`` allows, with a conditional UPDATE, so two
processes (an attempt and recovery) can never move it backwards. ``standing`` reads what an
attempt's step needs of a main (its state, its redirect, its attempt in progress) in one query.
"""

from __future__ import annotations

import copy
import functools
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, TypedDict
from uuid import UUID

from django.db import transaction
from django.db.models import OuterRef, Q, QuerySet, Subquery
from django.utils import timezone

from common.reads import once
from handoff.core.phases import IN_PROGRESS_PHASES, UNFINISHED_PHASES, Phase, Reason, can_move
from handoff.core.redirects import RedirectGraph
from handoff.exceptions import PhaseError
from handoff.models import HandoffRecord, MainState, Redirect
from handoff.session_model import SessionId, session_key
from handoff.shapes import MetricsOut
from handoff.signals import RouteChange, main_switched, record_changed, redirects_changed

if TYPE_CHECKING:
    from django_stubs_ext import WithAnnotations


class _Standing(TypedDict):
    """What ``_standings`` annotates on a main state."""

    redirect_to: Any
    in_progress_id: UUID | None


def key(session_id: Any) -> Any:
    """Return a session id as the session model's primary key reads it (a ``UUID``, an ``int``
    …: ``handoff.session_model.session_key``); raises ``ValueError`` for a malformed one."""
    return session_key(session_id)


def find_main_state(session_id: SessionId) -> MainState | None:
    """Return the session's main state read now, or ``None`` when it was never registered
    (read once per page request: ``common.reads``)."""
    return _main_state(key(session_id))


@once
def _main_state(pk: Any) -> MainState | None:
    return MainState.objects.filter(session_id=pk).first()


def lock_main_state(session_id: SessionId) -> MainState:
    """Return the main state locked for this transaction (``SELECT … FOR UPDATE``).

    Must be called inside ``transaction.atomic()``; the row is created first when missing.
    One query when it exists.
    """
    state, _ = MainState.objects.select_for_update().get_or_create(session_id=key(session_id))
    return state


def update_main_state(session_id: SessionId, **fields: Any) -> MainState:
    """Set ``fields`` on the session's main state under a row lock; return it.

    One transaction: a crash half-way leaves the previous state. A change of ``enabled`` is
    announced (``handoff.signals.main_switched``), and so is one of ``review``: open pages show
    the switches.
    """
    with transaction.atomic():
        return save_main_state(lock_main_state(session_id), **fields)


def save_main_state(state: MainState, **fields: Any) -> MainState:
    """Set ``fields`` on ``state``, a main state the caller holds locked (``lock_main_state``
    inside its transaction), and save them; return it. A change of either switch the panel
    shows, ``enabled`` or ``review``, is announced (``handoff.signals.main_switched``). Raises
    ``ValueError`` for a name that is no field."""
    switches = (state.enabled, state.review)
    for name, value in fields.items():
        setattr(state, name, value)
    state.save(update_fields=[*fields, "updated"])
    if (state.enabled, state.review) != switches:
        main_switched.send(sender=MainState, session_id=state.session_id, enabled=state.enabled)
    return state


def hand_over(state: MainState, successor_id: SessionId) -> MainState:
    """The route's main-state writes (step 8); return the successor's new main state.

    Call inside the route's transaction with the source's ``state`` locked: the source's
    ``enabled`` and ``requested`` are cleared with its ``deferred`` blockers and its backoff, and
    the successor's state is created, enabled as the source was, with the source's review choice
    (on, off, or unset: the setting), ``inherited_from`` it. The source's switch is not
    announced: the route's ``redirects_changed`` says it is a relay now.
    """
    enabled = state.enabled
    state.enabled = state.requested = False
    state.deferred = []
    state.failures = 0
    state.retry_at = None
    state.save(
        update_fields=["enabled", "requested", "deferred", "failures", "retry_at", "updated"]
    )
    return MainState.objects.create(
        session_id=key(successor_id),
        enabled=enabled,
        review=state.review,
        inherited_from_id=state.session_id,
    )


@dataclass(frozen=True)
class Standing:
    """One main as an attempt's step sees it (docs/spec.md, State): its state (None: never
    registered), where its redirect leads (None: no redirect) and the id of its attempt still
    summarizing or prepared (None: none)."""

    state: MainState | None
    redirect_to: SessionId | None
    in_progress: UUID | None


def standing(session_id: SessionId) -> Standing:
    """Read the main's state, redirect and attempt in progress in one query.

    To read them under the state's lock, call ``lock_main_state`` first in the same transaction:
    this query then sees whatever the previous holder of the lock committed. They cannot come
    with the locking statement itself: under PostgreSQL's READ COMMITTED a statement reads a
    snapshot taken when it starts, before the lock it waited for was free, and re-reads only the
    locked row, not the subqueries (two queries then).
    """
    state = _standings().filter(session_id=key(session_id)).first()
    if state is None:
        return Standing(None, _redirect_to(session_id), None)
    return Standing(state, state.redirect_to, state.in_progress_id)


@functools.cache
def _standings() -> QuerySet[WithAnnotations[MainState, _Standing]]:
    """Every main state with its redirect's destination (``redirect_to``) and its attempt in
    progress (``in_progress_id``) annotated, resolved once per process: ``standing`` filters a
    clone of it."""
    source = OuterRef("session_id")
    return MainState.objects.annotate(
        redirect_to=Subquery(
            Redirect.objects.filter(source_id=source).values("destination_id")[:1]
        ),
        in_progress_id=Subquery(
            HandoffRecord.objects.filter(source_id=source, phase__in=IN_PROGRESS_PHASES).values(
                "pk"
            )[:1]
        ),
    )


def _redirect_to(session_id: SessionId) -> SessionId | None:
    redirect = redirect_of(session_id)
    return redirect.destination_id if redirect is not None else None


def create_record(
    *, source_id: SessionId, reason: Reason, metrics: MetricsOut, source_revision: int
) -> HandoffRecord:
    """Create a record in phase ``summarizing`` (step 5, mark attempt); one transaction with
    its ``record_changed`` (inside a caller's, no savepoint of its own)."""
    with transaction.atomic(savepoint=False):
        record = HandoffRecord.objects.create(
            source_id=key(source_id),
            phase=Phase.SUMMARIZING,
            reason=reason,
            metrics=metrics,
            source_revision=source_revision,
        )
        record_changed.send(sender=HandoffRecord, record=record)
    return record


class Unmet(Exception):
    """A move's ``among`` condition did not hold: nothing was written."""


def move(
    record: HandoffRecord,
    phase: Phase,
    *,
    among: QuerySet[HandoffRecord, HandoffRecord] | None = None,
    **fields: Any,
) -> HandoffRecord:
    """Move ``record`` to ``phase`` and set ``fields`` (brief, target, error …); return the moved
    record (a copy of ``record`` with the move applied; ``record`` itself is left as it was).

    One conditional UPDATE: it applies only while the stored phase may move to ``phase``, so a
    concurrent move (recovery, another worker) is seen, and while the record is one of
    ``among`` (records filtered by a condition on other tables, e.g. an ``Exists``: a queryset
    built once can be passed each time, its condition resolved once). Raises ``PhaseError``
    when the move would go backwards or out of a final phase, ``Unmet`` when only ``among``
    failed; nothing is written then. One transaction, ``record_changed`` sent inside it (inside
    a caller's, no savepoint of its own: a failing receiver rolls back to the caller's).
    """
    movable_from = [p for p in Phase if can_move(p, phase)]
    changes = {**fields, "phase": phase, "updated": timezone.now()}
    records = HandoffRecord.objects.all() if among is None else among
    rows = records.filter(pk=record.pk, phase__in=movable_from)
    with transaction.atomic(savepoint=False):
        updated = rows.update(**changes)
        if updated:
            moved = copy.copy(record)
            for name, value in changes.items():
                setattr(moved, name, value)
            record_changed.send(sender=HandoffRecord, record=moved)
            return moved
    found = HandoffRecord.objects.filter(pk=record.pk).values_list("phase", flat=True).first()
    if among is not None and found in movable_from:
        raise Unmet(f"record {record.pk} was not moved to {phase}: its condition failed")
    raise PhaseError(f"record {record.pk} cannot move from {found} to {phase}")


def save_fields(record: HandoffRecord, **fields: Any) -> HandoffRecord:
    """Set ``fields`` on ``record`` without changing its phase (``record_changed`` for a target)."""
    for name, value in fields.items():
        setattr(record, name, value)
    with transaction.atomic():
        record.save(update_fields=[*fields, "updated"])
        if "target_id" in fields:
            record_changed.send(sender=HandoffRecord, record=record)
    return record


def last_record(source_id: SessionId) -> HandoffRecord | None:
    """Return the source's latest record, or ``None``."""
    return HandoffRecord.objects.filter(source_id=key(source_id)).order_by("-created").first()


def redirect_graph(*around: SessionId, incoming: bool = False) -> RedirectGraph:
    """Load the part of the redirect map that leads on from ``around`` (it may hold a cycle;
    ``destination`` says), with the entries that lead into ``around`` too when ``incoming``.

    One query per hop, and the map is kept flat (docs/spec.md, Forwarding and cycles): one query, or
    two when one of ``around`` redirects, whatever the number of redirects stored.
    """
    pairs: dict[str, str] = {}
    looked: set[SessionId] = set()
    frontier = {key(session_id) for session_id in around}
    while frontier:
        wanted = Q(source_id__in=frontier)
        if incoming and not looked:
            wanted |= Q(destination_id__in=frontier)
        looked |= frontier
        for source, destination in Redirect.objects.filter(wanted).values_list(
            "source_id", "destination_id"
        ):
            pairs[str(source)] = str(destination)
        frontier = {key(d) for d in pairs.values()} - looked
    return RedirectGraph(pairs)


def redirect_of(source_id: SessionId) -> Redirect | None:
    """Return the source's redirect row, or ``None`` (read once per page request:
    ``common.reads``)."""
    return _redirect(key(source_id))


@once
def _redirect(source_key: Any) -> Redirect | None:
    return Redirect.objects.filter(source_id=source_key).first()


def add_redirect(
    source_id: SessionId,
    destination_id: SessionId,
    record: HandoffRecord | None,
    source_title: str | None = None,
) -> None:
    """Install ``source -> destination`` and store every re-flattened entry.

    ``source_title``: the source's title before the handoff renamed it, announced with the new
    route (``RouteChange.source_title``; the follower's ``redirect.committed``), so a page
    that moves names the conversation as the person knew it; None when not known.

    Raises ``RedirectError`` (self-redirect, cycle, source already redirected) and writes
    nothing then. One transaction: a crash half-way leaves the previous map.
    """
    with transaction.atomic():
        graph = redirect_graph(source_id, destination_id, incoming=True)
        changed = graph.add(str(source_id), str(destination_id))
        new = Redirect.objects.create(
            source_id=key(source_id),
            destination_id=key(changed.pop(str(source_id))),
            record=record,
        )
        routes = [RouteChange(new.source_id, new.destination_id, None, source_title)]
        for entry in Redirect.objects.filter(source_id__in=[key(src) for src in changed]):
            previous = entry.destination_id
            entry.destination_id = key(changed[str(entry.source_id)])
            entry.save(update_fields=["destination"])
            routes.append(RouteChange(entry.source_id, entry.destination_id, previous))
        redirects_changed.send(sender=Redirect, changes=routes)


def remove_redirect(source_id: SessionId) -> bool:
    """Remove the source's redirect (forwarding from it stops); return whether one existed."""
    with transaction.atomic():
        removed = list(Redirect.objects.filter(source_id=key(source_id)))
        Redirect.objects.filter(pk__in=[r.pk for r in removed]).delete()
        changes = [RouteChange(r.source_id, None, r.destination_id) for r in removed]
        if changes:
            redirects_changed.send(sender=Redirect, changes=changes)
    return bool(changes)


def unfinished_records() -> list[HandoffRecord]:
    """Return records that are not final (summarizing, prepared, committed), oldest first."""
    unfinished = HandoffRecord.objects.filter(phase__in=UNFINISHED_PHASES)
    return list(unfinished.order_by("created"))


def clear_requested(session_id: SessionId) -> None:
    """Clear the main's ``requested`` (the attempt it asked for ended); no-op when unknown."""
    MainState.objects.filter(session_id=key(session_id), requested=True).update(requested=False)
