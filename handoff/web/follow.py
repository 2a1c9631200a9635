"""The handoff's part of the follower (``FOLLOWER_SOURCES``: ``follower.sources``; seed 003 §6.5).

The handoff store announces what changed (``handoff.signals``: ``record_changed``,
``redirects_changed``, ``settings_changed``, ``main_switched``, sent inside the writer's
transaction); ``HandoffSource`` turns each into the event a page needs, with the source's
handoff panel rendered once. It also adds the handoff's ``redirect_to`` column to the host's
session rows (read in the same query), the context meter to the host's ``session.entry``
events and the page's redirect to its baseline. A successor's row travels in its
``redirect.committed`` event: a tab on the source applies it to its list and opens it at once
when it is started (not blank), and otherwise waits for the ``session.updated`` that its start
publishes (``handoff/static/handoff/jump.js``). The event also carries the source's title from
before the handoff renamed it, which the next page names ("Moved here from …").
"""

from __future__ import annotations

from enum import StrEnum
from typing import Any

from django.contrib.auth import get_user_model
from django.db.models import F

from handoff import services, store
from handoff.conf import session_url
from handoff.settings_store import EDITABLE
from handoff.signals import main_switched, record_changed, redirects_changed, settings_changed
from handoff.web.meter import TEMPLATE as METER
from handoff.web.meter import live_meter_context
from handoff.web.panel import session_panel

SESSION_ENTRY = "session.entry"
"""The host's event for a new log line, which carries the context meter too."""

SESSION_UPDATED = "session.updated"
"""The host's event for a changed session row (published here when a route is removed)."""

PANEL = "handoff/panel.html"

SHOWN_SETTINGS = tuple(name for name in EDITABLE if name != "context_windows")
"""The settings a page shows (the card's fields); context windows live in the admin."""


class Kind(StrEnum):
    """The handoff's follower events and their payloads."""

    HANDOFF_PHASE = "handoff.phase"
    """``{"record", "source", "target", "phase", "fragments"}``: a record was created or
    changed phase (the fragment: the source's panel)."""
    REDIRECT_COMMITTED = "redirect.committed"
    """``{"source", "source_title", "destination", "previous", "url", "session", "row_html"}``:
    ``source`` now forwards to ``destination``; ``source_title`` is the source's title before
    the handoff renamed it (the name a moved tab announces; None for an entry re-pointed by a
    later route, or a route installed without it); ``previous`` is where it forwarded before
    (None: it did not); ``url`` is the host's page of ``destination``
    (``HANDOFF_SESSION_URL``); ``session`` and ``row_html`` are the destination's row as the
    host's source renders it (``Outlet.row``)."""
    SETTINGS_CHANGED = "settings.changed"
    """``{"settings": {name: value}, "version": int}``: the global settings as stored now (the
    card's fields; every user's pages get it)."""
    HANDOFF_SWITCH = "handoff.switch"
    """``{"session", "enabled", "fragments"}``: a conversation's own automatic-handoff switch
    changed (the fragment: its panel)."""


class HandoffSource:
    """Records, redirects, switches and settings for the follower (see the module docstring)."""

    scripts = ("handoff/jump.js",)
    """The seed 003 §6.5 jump rules, run over the follower's transport in every page."""

    def __init__(self, outlet: Any) -> None:
        self.outlet = outlet
        """The follower's ``Outlet`` (publish, fragment, render, columns, row)."""

    def connect(self) -> None:
        """Publish through ``outlet`` what the handoff's signals announce."""
        record_changed.connect(
            self.record_changed, dispatch_uid="handoff.follow.record", weak=False
        )
        redirects_changed.connect(
            self.redirects_changed, dispatch_uid="handoff.follow.routes", weak=False
        )
        settings_changed.connect(
            self.settings_changed, dispatch_uid="handoff.follow.settings", weak=False
        )
        main_switched.connect(self.main_switched, dispatch_uid="handoff.follow.switch", weak=False)

    def columns(self) -> dict[str, Any]:
        """``redirect_to``: the final destination of the session's redirect (the map keeps
        every entry pointing at the end of its chain, DESIGN.md invariant 5), or None."""
        return {"redirect_to": F("redirect__destination_id")}

    def baseline(self, view_kwargs: dict[str, Any]) -> dict[str, Any]:
        """``{"redirect_to": str | None}``: where the page's session (``session_id``) leads now."""
        session_id = view_kwargs.get("session_id")
        redirect = store.redirect_of(session_id) if session_id is not None else None
        return {"redirect_to": str(redirect.destination_id) if redirect is not None else None}

    def fragments(self, kind: str, about: Any) -> list[dict[str, Any]]:
        """The context meter of ``about`` (a session) on the host's ``session.entry``."""
        if kind != SESSION_ENTRY:
            return []
        meter: dict[str, Any] = self.outlet.fragment(
            about.owner_id, METER, live_meter_context(about), session=about.pk
        )
        return [meter]

    def _panel(self, session_id: Any) -> tuple[Any, list[dict[str, Any]]]:
        """Return ``(owner id, [the session's handoff panel as its page shows it now])``;
        ``(None, [])`` when the session does not exist. One read of the session."""
        controller = services.session_controller()
        session = controller.get(str(session_id)) if controller is not None else None
        if session is None:
            return None, []
        context = session_panel(session) | {"live": True}
        owner = session.owner_id
        return owner, [self.outlet.fragment(owner, PANEL, context, session=session.pk)]

    def record_changed(self, record: Any, **kwargs: Any) -> None:
        """Publish ``handoff.phase`` with the source's panel: the record was created, moved
        phase or got its successor."""
        owner, panel = self._panel(record.source_id)
        if owner is None:
            return
        payload = {
            "record": str(record.pk),
            "source": str(record.source_id),
            "target": str(record.target_id) if record.target_id else None,
            "phase": record.phase,
            "fragments": panel,
        }
        self.outlet.publish(owner, Kind.HANDOFF_PHASE, payload)

    def redirects_changed(self, changes: list[Any], **kwargs: Any) -> None:
        """Publish ``redirect.committed`` per added or re-pointed route (with the destination's
        row), ``session.updated`` (no redirect) per removed one.

        The source's panel with its banner comes in the ``handoff.phase`` event of the record's
        commit, which the handoff publishes right after the route in the same transaction:
        rendered once, after both (about 10 statements a render).
        """
        rows: dict[Any, dict[str, Any] | None] = {}
        for change in changes:
            if change.destination is None:
                removed = self.outlet.row(str(change.source))
                if removed is not None:
                    self.outlet.publish(removed.pop("owner"), SESSION_UPDATED, removed)
                continue
            if change.destination not in rows:
                rows[change.destination] = self.outlet.row(str(change.destination))
            found = rows[change.destination]
            if found is None:
                continue
            payload = {
                "source": str(change.source),
                "source_title": change.source_title,
                "destination": str(change.destination),
                "previous": str(change.previous) if change.previous is not None else None,
                "url": session_url(change.destination),
                "session": found["session"],
                "row_html": found["row_html"],
            }
            self.outlet.publish(found["owner"], Kind.REDIRECT_COMMITTED, payload)

    def settings_changed(self, values: Any, **kwargs: Any) -> None:
        """Publish ``settings.changed`` with the stored values to every active user: the
        settings are global, and any of their pages may show them (the card applies the
        values; an open conversation reloads its panel for the global switch's note).

        One event per active user (two statements each), in the saving transaction: a settings
        change is rare and made by staff, so the cost grows with the users, not with traffic.
        """
        payload = {
            "settings": {name: getattr(values, name) for name in SHOWN_SETTINGS},
            "version": values.version,
        }
        users = get_user_model()._default_manager.filter(is_active=True).order_by("pk")
        for user_id in users.values_list("pk", flat=True):
            self.outlet.publish(user_id, Kind.SETTINGS_CHANGED, payload)

    def main_switched(self, session_id: Any, enabled: bool, **kwargs: Any) -> None:
        """Publish ``handoff.switch`` with the session's panel: its own switch is on or off."""
        owner, panel = self._panel(session_id)
        if owner is None:
            return
        payload = {"session": str(session_id), "enabled": enabled, "fragments": panel}
        self.outlet.publish(owner, Kind.HANDOFF_SWITCH, payload)
