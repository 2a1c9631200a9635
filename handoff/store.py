"""Records, main state and redirects in the database (seed 000, State).

These replace the seed's ``handoffs.json``. Every write runs in ``transaction.atomic()``, so a
crash half-way leaves the last committed state (the seed's rollback-aware writes). A record's
phase moves only as ``handoff.core.phases.can_move`` allows, with a conditional UPDATE, so two
processes (an attempt and recovery) can never move it backwards.
"""

from __future__ import annotations

from typing import Any
from uuid import UUID

from django.db import transaction

from handoff.core.phases import IN_PROGRESS_PHASES, UNFINISHED_PHASES, Phase, Reason, can_move
from handoff.core.redirects import RedirectGraph
from handoff.exceptions import PhaseError
from handoff.models import HandoffRecord, MainState, Redirect
from handoff.signals import RouteChange, record_changed, redirects_changed


def key(session_id: str | UUID) -> UUID:
    """Return a session id as a UUID; raises ``ValueError`` for a malformed one."""
    return session_id if isinstance(session_id, UUID) else UUID(str(session_id))


def main_state(session_id: str | UUID) -> MainState:
    """Return the session's main state, creating the default one on first use."""
    state, _ = MainState.objects.get_or_create(session_id=key(session_id))
    return state


def find_main_state(session_id: str | UUID) -> MainState | None:
    """Return the session's main state read now, or ``None`` when it was never registered."""
    return MainState.objects.filter(session_id=key(session_id)).first()


def lock_main_state(session_id: str | UUID) -> MainState:
    """Return the main state locked for this transaction (``SELECT … FOR UPDATE``).

    Must be called inside ``transaction.atomic()``; the row is created first when missing.
    One query when it exists.
    """
    state, _ = MainState.objects.select_for_update().get_or_create(session_id=key(session_id))
    return state


def update_main_state(session_id: str | UUID, **fields: Any) -> MainState:
    """Set ``fields`` on the session's main state under a row lock; return it.

    One transaction: a crash half-way leaves the previous state.
    """
    with transaction.atomic():
        state = lock_main_state(session_id)
        for name, value in fields.items():
            setattr(state, name, value)
        state.save()
        return state


def in_progress(source_id: str | UUID) -> HandoffRecord | None:
    """Return the source's attempt still summarizing or prepared, if any."""
    return HandoffRecord.objects.filter(
        source_id=key(source_id), phase__in=IN_PROGRESS_PHASES
    ).first()


def create_record(
    *, source_id: str | UUID, reason: Reason, metrics: dict[str, int], source_revision: int
) -> HandoffRecord:
    """Create a record in phase ``summarizing`` (step 5, mark attempt)."""
    with transaction.atomic():
        record = HandoffRecord.objects.create(
            source_id=key(source_id),
            phase=Phase.SUMMARIZING,
            reason=reason,
            metrics=metrics,
            source_revision=source_revision,
        )
        record_changed.send(sender=HandoffRecord, record=record)
    return record


def move(record: HandoffRecord, phase: Phase, **fields: Any) -> HandoffRecord:
    """Move ``record`` to ``phase``, set ``fields`` (brief, target, error …); return it re-read.

    The stored row is locked and its phase re-read, so a concurrent move (recovery, another
    worker) is seen: raises ``PhaseError`` when the move would go backwards or out of a final
    phase, and nothing is written then. One transaction, ``record_changed`` sent inside it.
    """
    with transaction.atomic():
        stored = HandoffRecord.objects.select_for_update().get(pk=record.pk)
        current = Phase(stored.phase)
        if not can_move(current, phase):
            raise PhaseError(f"record {record.pk} cannot move from {current} to {phase}")
        for name, value in fields.items():
            setattr(stored, name, value)
        stored.phase = phase
        stored.save()
        record_changed.send(sender=HandoffRecord, record=stored)
    return stored


def save_fields(record: HandoffRecord, **fields: Any) -> HandoffRecord:
    """Set ``fields`` on ``record`` without changing its phase (``record_changed`` for a target)."""
    for name, value in fields.items():
        setattr(record, name, value)
    with transaction.atomic():
        record.save(update_fields=[*fields, "updated"])
        if "target_id" in fields:
            record_changed.send(sender=HandoffRecord, record=record)
    return record


def last_record(source_id: str | UUID) -> HandoffRecord | None:
    """Return the source's latest record, or ``None``."""
    return HandoffRecord.objects.filter(source_id=key(source_id)).order_by("-created").first()


def redirect_graph() -> RedirectGraph:
    """Load the whole redirect map from storage (it may hold a cycle; ``destination`` says)."""
    pairs = Redirect.objects.values_list("source_id", "destination_id")
    return RedirectGraph({str(src): str(dst) for src, dst in pairs})


def redirect_of(source_id: str | UUID) -> Redirect | None:
    """Return the source's redirect row, or ``None``."""
    return Redirect.objects.filter(source_id=key(source_id)).first()


def add_redirect(
    source_id: str | UUID, destination_id: str | UUID, record: HandoffRecord | None
) -> None:
    """Install ``source -> destination`` and store every re-flattened entry.

    Raises ``RedirectError`` (self-redirect, cycle, source already redirected) and writes
    nothing then. One transaction: a crash half-way leaves the previous map.
    """
    with transaction.atomic():
        graph = redirect_graph()
        changed = graph.add(str(source_id), str(destination_id))
        new = Redirect.objects.create(
            source_id=key(source_id),
            destination_id=key(changed.pop(str(source_id))),
            record=record,
        )
        routes = [RouteChange(new.source_id, new.destination_id, None)]
        for entry in Redirect.objects.filter(source_id__in=[key(src) for src in changed]):
            previous = entry.destination_id
            entry.destination_id = key(changed[str(entry.source_id)])
            entry.save(update_fields=["destination"])
            routes.append(RouteChange(entry.source_id, entry.destination_id, previous))
        redirects_changed.send(sender=Redirect, changes=routes)


def remove_redirect(source_id: str | UUID) -> bool:
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


def clear_requested(session_id: str | UUID) -> None:
    """Clear the main's ``requested`` (the attempt it asked for ended); no-op when unknown."""
    MainState.objects.filter(session_id=key(session_id), requested=True).update(requested=False)
