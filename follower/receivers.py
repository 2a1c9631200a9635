"""Turn saved host and handoff rows into follower events (seed 003 §6.5, connected in apps.py).

The host and the handoff app never call the follower: these receivers watch their models.
``pre_save`` remembers the followed columns as stored, ``post_save`` publishes only when one of
them changed, so routine saves (revision bumps, timestamps) make no events. The host clears
``blank`` with a queryset update when a session's first turn starts (``host.log``), which sends no
``post_save`` for the session; the first turn-starting message is watched instead.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from django.apps import apps
from django.db.models import Model, QuerySet

from follower.events import EventKind, publish
from follower.snapshot import ROW_FIELDS, session_row

_BEFORE = "_follower_before"
"""Instance attribute holding the followed columns as stored before a save."""


def _owner(session_id: Any) -> int:
    session = apps.get_model("host", "Session")
    owner: int = session.objects.values_list("owner_id", flat=True).get(pk=session_id)
    return owner


def _names(model: type[Model], saved: Iterable[str], followed: tuple[str, ...]) -> set[str]:
    """Return the followed fields among ``saved`` (names or attnames, e.g. workspace_id)."""
    meta = model._meta
    return {meta.get_field(f).name for f in saved} & {meta.get_field(f).name for f in followed}


def _remember(fields: tuple[str, ...]) -> Any:
    """Build a ``pre_save`` receiver that stores ``fields`` as they are in the database."""

    def receiver(sender: type[Model], instance: Model, raw: bool = False, **kwargs: Any) -> None:
        update_fields = kwargs.get("update_fields")
        skip = raw or instance._state.adding
        if skip or (update_fields is not None and not _names(sender, update_fields, fields)):
            setattr(instance, _BEFORE, None)
            return
        stored = sender._default_manager.filter(pk=instance.pk).values(*fields).first()
        setattr(instance, _BEFORE, stored)

    return receiver


def _changed(instance: Model, fields: tuple[str, ...]) -> bool:
    before = getattr(instance, _BEFORE, None)
    if before is None:
        return False
    return any(before[f] != getattr(instance, f) for f in fields)


remember_session = _remember(ROW_FIELDS)
remember_record = _remember(("phase", "target_id"))
remember_redirect = _remember(("destination_id",))


def session_saved(instance: Any, created: bool, raw: bool = False, **kwargs: Any) -> None:
    """Publish ``session.added`` for a new session, ``session.updated`` when a row field moved."""
    if raw or not (created or _changed(instance, ROW_FIELDS)):
        return
    row = session_row(instance.pk)
    kind = EventKind.SESSION_ADDED if created else EventKind.SESSION_UPDATED
    publish(instance.owner_id, kind, {"session": row})


def message_saved(instance: Any, created: bool, raw: bool = False, **kwargs: Any) -> None:
    """Publish ``session.updated`` (blank cleared) when a session's first turn starts."""
    if raw or not (created and instance.starts_turn):
        return
    earlier = (
        type(instance)
        ._default_manager.filter(session_id=instance.session_id, starts_turn=True)
        .exclude(pk=instance.pk)
    )
    if earlier.exists():
        return
    row = session_row(instance.session_id)
    if row is None:
        return
    row["blank"] = False
    publish(_owner(instance.session_id), EventKind.SESSION_UPDATED, {"session": row})


def record_saved(instance: Any, created: bool, raw: bool = False, **kwargs: Any) -> None:
    """Publish ``handoff.phase`` when a record is created or moves phase (or gets its target)."""
    if raw or not (created or _changed(instance, ("phase", "target_id"))):
        return
    payload = {
        "record": str(instance.pk),
        "source": str(instance.source_id),
        "target": str(instance.target_id) if instance.target_id else None,
        "phase": instance.phase,
    }
    publish(_owner(instance.source_id), EventKind.HANDOFF_PHASE, payload)


def redirect_saved(instance: Any, created: bool, raw: bool = False, **kwargs: Any) -> None:
    """Publish ``redirect.committed`` when a redirect is added or re-pointed.

    ``previous`` is where the source led before (None for a new redirect), so a page that
    subscribed before the change but reads a snapshot taken after it still sees the transition.

    Redirects that led to this source now lead further (the map keeps every entry at the end
    of its chain, DESIGN.md invariant 5): each gets its own ``redirect.committed`` too, however
    the handoff app re-points their rows.
    """
    if raw or not (created or _changed(instance, ("destination_id",))):
        return
    owner = _owner(instance.source_id)
    before = getattr(instance, _BEFORE, None)
    previous = before["destination_id"] if before is not None and not created else None
    leading_here = type(instance)._default_manager.filter(destination_id=instance.source_id)
    entries = [(instance.source_id, previous)] + [
        (source_id, instance.source_id)
        for source_id in leading_here.values_list("source_id", flat=True)
    ]
    for source_id, led_to in entries:
        payload = {
            "source": str(source_id),
            "destination": str(instance.destination_id),
            "previous": str(led_to) if led_to is not None else None,
        }
        publish(owner, EventKind.REDIRECT_COMMITTED, payload)


def redirect_deleted(instance: Any, origin: Any = None, **kwargs: Any) -> None:
    """Publish ``session.updated`` (no redirect) when a redirect is removed (``disable``).

    Only a deletion of redirects themselves counts: when a session or a user is deleted, the
    redirect goes with it and there is nobody left to tell.
    """
    origin_model = origin.model if isinstance(origin, QuerySet) else type(origin)
    if origin_model is not type(instance):
        return
    row = session_row(instance.source_id)
    if row is None:
        return
    publish(_owner(instance.source_id), EventKind.SESSION_UPDATED, {"session": row})
