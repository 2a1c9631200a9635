"""Publish follower events for what the host and the handoff app announce (seed 003 §6.5).

The writers say what changed, explicitly (``host.signals.session_changed``,
``handoff.signals.record_changed`` and ``redirects_changed``, connected in ``apps.py``); these
receivers turn each announcement into the event a page needs, inside the writer's transaction.
Nothing is inferred from model saves, so a queryset ``update()`` that announces is followed and
a save that changes nothing a page shows costs nothing.

A successor's row travels in its ``redirect.committed`` event: a tab on the source opens it at
once when the row is started (not blank), and otherwise waits for the ``session.updated`` that
its start publishes (one event, no list refetch).
"""

from __future__ import annotations

from typing import Any

from django.contrib.auth import get_user_model

from follower.events import EventKind, publish
from follower.snapshot import owned_row, owner_of


def session_changed(session_id: Any, created: bool = False, **kwargs: Any) -> None:
    """Publish ``session.added`` (created) or ``session.updated`` with the session's row."""
    found = owned_row(session_id)
    if found is None:
        return
    owner, row = found
    kind = EventKind.SESSION_ADDED if created else EventKind.SESSION_UPDATED
    publish(owner, kind, {"session": row})


def record_changed(record: Any, **kwargs: Any) -> None:
    """Publish ``handoff.phase``: the record was created, moved phase or got its successor."""
    owner = owner_of(record.source_id)
    if owner is None:
        return
    payload = {
        "record": str(record.pk),
        "source": str(record.source_id),
        "target": str(record.target_id) if record.target_id else None,
        "phase": record.phase,
    }
    publish(owner, EventKind.HANDOFF_PHASE, payload)


def redirects_changed(changes: list[Any], **kwargs: Any) -> None:
    """Publish ``redirect.committed`` per added or re-pointed route (with the destination's row),
    ``session.updated`` (no redirect) per removed one."""
    rows: dict[Any, tuple[int, dict[str, Any]] | None] = {}
    for change in changes:
        if change.destination is None:
            session_changed(change.source)
            continue
        if change.destination not in rows:
            rows[change.destination] = owned_row(change.destination)
        found = rows[change.destination]
        if found is None:
            continue
        owner, row = found
        payload = {
            "source": str(change.source),
            "destination": str(change.destination),
            "previous": str(change.previous) if change.previous is not None else None,
            "session": row,
        }
        publish(owner, EventKind.REDIRECT_COMMITTED, payload)


# The settings a page shows (the card's fields); context windows live in the admin.
SHOWN_SETTINGS = (
    "auto_handoff",
    "handoff_ratio",
    "handoff_tokens",
    "handoff_min_turns",
    "handoff_compactions",
    "token_basis",
)


def settings_changed(values: Any, **kwargs: Any) -> None:
    """Publish ``settings.changed`` with the stored values to every active user: the settings
    are global, and any of their pages may show them (the card, the panel's global note).

    One event per active user (two statements each), in the saving transaction: a settings
    change is rare and made by staff, so the cost grows with the users, not with traffic.
    """
    payload = {
        "settings": {name: getattr(values, name) for name in SHOWN_SETTINGS},
        "version": values.version,
    }
    users = get_user_model()._default_manager.filter(is_active=True).order_by("pk")
    for user_id in users.values_list("pk", flat=True):
        publish(user_id, EventKind.SETTINGS_CHANGED, payload)


def main_switched(session_id: Any, enabled: bool, **kwargs: Any) -> None:
    """Publish ``handoff.switch``: the conversation's own switch is on or off now."""
    owner = owner_of(session_id)
    if owner is None:
        return
    publish(owner, EventKind.HANDOFF_SWITCH, {"session": str(session_id), "enabled": enabled})
