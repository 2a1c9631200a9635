"""Publish follower events for what the host and the handoff app announce (seed 003 §6.5).

The writers say what changed, explicitly (``host.signals.session_changed`` and
``entry_appended``, ``handoff.signals.record_changed`` and ``redirects_changed``, connected in
``apps.py``); these receivers turn each announcement into the event a page needs, inside the
writer's transaction. Nothing is inferred from model saves, so a queryset ``update()`` that
announces is followed and a save that changes nothing a page shows costs nothing.

Each event carries what it changes on the page, rendered once (``follower.fragments``): a
session's row (``row_html``, the list's own row template) and the "working" line, a record's or
route's handoff panel, a new log entry with the header's counts and the context meter. A
successor's row travels in its ``redirect.committed`` event: a tab on the source applies it to
its list and opens it at once when it is started (not blank), and otherwise waits for the
``session.updated`` that its start publishes (one event, no list refetch).
"""

from __future__ import annotations

from typing import Any

from django.contrib.auth import get_user_model

from follower.events import EventKind, publish
from follower.fragments import Fragment, fragment, render
from follower.snapshot import live_session, owner_of, row_of
from handoff.settings_store import EDITABLE
from handoff.web.meter import TEMPLATE as METER
from handoff.web.meter import live_meter_context
from handoff.web.panel import session_panel
from host.sidebar import row_context
from host.timeline import entry_of

ROW = "chat/_session_row.html"
"""The session list's one row template (the list renders it too)."""


def session_changed(session_id: Any, created: bool = False, **kwargs: Any) -> None:
    """Publish ``session.added`` (created) or ``session.updated`` with the session's row."""
    session = live_session(session_id)
    if session is None:
        return
    kind = EventKind.SESSION_ADDED if created else EventKind.SESSION_UPDATED
    context = {"session": session, "oob": True}
    working = fragment(session.owner_id, "chat/_working.html", context, session=session.pk)
    publish(session.owner_id, kind, _row_payload(session) | {"fragments": [working]})


def _row_payload(session: Any) -> dict[str, Any]:
    """``{"session": row, "row_html": the list's row}`` of a session read by ``live_session``."""
    context = row_context(session)
    return {"session": row_of(session), "row_html": render(session.owner_id, ROW, context)}


def _panel(owner: int, session_id: Any) -> list[Fragment]:
    """The handoff panel of ``session_id`` as its page shows it now, for that page only."""
    session = live_session(session_id)
    if session is None:
        return []
    context = session_panel(session) | {"live": True}
    return [fragment(owner, "handoff/panel.html", context, session=session.pk)]


def record_changed(record: Any, **kwargs: Any) -> None:
    """Publish ``handoff.phase`` with the source's panel: the record was created, moved phase or
    got its successor."""
    owner = owner_of(record.source_id)
    if owner is None:
        return
    payload = {
        "record": str(record.pk),
        "source": str(record.source_id),
        "target": str(record.target_id) if record.target_id else None,
        "phase": record.phase,
        "fragments": _panel(owner, record.source_id),
    }
    publish(owner, EventKind.HANDOFF_PHASE, payload)


def redirects_changed(changes: list[Any], **kwargs: Any) -> None:
    """Publish ``redirect.committed`` per added or re-pointed route (with the destination's
    row), ``session.updated`` (no redirect) per removed one.

    The source's panel with its banner comes in the ``handoff.phase`` event of the record's
    commit, which the handoff publishes right after the route in the same transaction: rendered
    once, after both (about 10 statements a render).
    """
    rows: dict[Any, dict[str, Any] | None] = {}
    for change in changes:
        if change.destination is None:
            session_changed(change.source)
            continue
        if change.destination not in rows:
            destination = live_session(change.destination)
            rows[change.destination] = destination and {
                "owner": destination.owner_id,
                **_row_payload(destination),
            }
        found = rows[change.destination]
        if found is None:
            continue
        owner = found["owner"]
        payload = {
            "source": str(change.source),
            "destination": str(change.destination),
            "previous": str(change.previous) if change.previous is not None else None,
            "session": found["session"],
            "row_html": found["row_html"],
        }
        publish(owner, EventKind.REDIRECT_COMMITTED, payload)


# The settings a page shows (the card's fields); context windows live in the admin.
SHOWN_SETTINGS = tuple(name for name in EDITABLE if name != "context_windows")


def settings_changed(values: Any, **kwargs: Any) -> None:
    """Publish ``settings.changed`` with the stored values to every active user: the settings
    are global, and any of their pages may show them (the card applies the values; an open
    conversation reloads its panel for the global switch's note: ``static/app.js``).

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
    """Publish ``handoff.switch`` with the session's panel: its own switch is on or off now."""
    owner = owner_of(session_id)
    if owner is None:
        return
    payload = {
        "session": str(session_id),
        "enabled": enabled,
        "fragments": _panel(owner, session_id),
    }
    publish(owner, EventKind.HANDOFF_SWITCH, payload)


def entry_appended(session: Any, entry: Any, **kwargs: Any) -> None:
    """Publish ``session.entry`` with the new log line (appended to the session's timeline
    unless the page shows it already), the header's counts and the context meter (issue 18
    §1); nothing for an entry without a line (a turn start)."""
    line = entry_of(session, entry)
    if line is None:
        return
    context = {"entry": line, "session": session, "oob": True}
    shown = fragment(
        session.owner_id,
        "chat/_entry_live.html",
        context,
        session=session.pk,
        unless=f"#entry-{line.seq}",
    )
    meter = fragment(session.owner_id, METER, live_meter_context(session), session=session.pk)
    payload = {"session_id": str(session.pk), "seq": line.seq, "fragments": [shown, meter]}
    publish(session.owner_id, EventKind.SESSION_ENTRY, payload)
