"""The handoff's part of the follower (``FOLLOWER_SOURCES``: ``follower.sources``).

The handoff store announces what changed (``handoff.signals``: ``record_changed``,
``redirects_changed``, ``settings_changed``, ``main_switched``, sent inside the writer's
transaction); ``HandoffSource`` turns each into an event stored with what identifies the change
(ids, the phase, the switch), addressed to the owner of the session it is about
(``publish_about``), and completes it after the commit (``render``) with the source's handoff
panel, rendered once per batch of events from the committed state. It also adds the handoff's
``redirect_to`` column to the host's session rows (``columns``: read in the same query), the
context meter to the host's ``session.entry`` events (``adds``) and the page's redirect to its
baseline. A successor's row travels in its ``redirect.committed`` event (``Renders.row_of``:
the follower adds it from the host's source): a tab on the source applies it to its list and
opens it at once when it is started (not blank), and otherwise waits for the
``session.updated`` that its start publishes (``handoff/static/handoff/jump.js``). The event
also carries the source's title from before the handoff renamed it, which the next page names
("Moved here from …"). This module is the only one of the handoff that imports the follower:
its interface (``follower.sources``) and its template helper (``follower.fragments``).
"""

from __future__ import annotations

from collections.abc import Mapping
from enum import StrEnum
from typing import Any

from django.contrib.auth import get_user_model
from django.db.models import F

from common.reads import once
from follower.fragments import fragment
from follower.sources import Payload, Renders, Source, publish, publish_about
from handoff import services, store
from handoff.conf import session_url
from handoff.meter.fragment import TEMPLATE as METER
from handoff.meter.fragment import live_meter_context
from handoff.models import HandoffRecord
from handoff.settings_store import EDITABLE
from handoff.signals import (
    RouteChange,
    main_switched,
    record_changed,
    redirects_changed,
    settings_changed,
)
from handoff.web.panel import session_panel

SESSION_ENTRY = "session.entry"
"""The host's event for a new log line, which carries the context meter too."""

SESSION_UPDATED = "session.updated"
"""The host's event for a changed session row (published here when a route is removed, stored as
the host stores it: ``{"session_id"}``)."""

PANEL = "handoff/panel.html"
"""The conversation's handoff panel (banner, phase chips, review form)."""

SHOWN_SETTINGS = tuple(name for name in EDITABLE if name != "context_windows")
"""The settings a page shows (the card's fields); context windows live in the admin."""


class Kind(StrEnum):
    """The handoff's follower events and their payloads."""

    HANDOFF_PHASE = "handoff.phase"
    """``{"record", "source", "target", "phase", "fragments"}``: a record was created or
    changed phase (the fragment: the source's panel, rendered after the commit; the phase is the
    one the writer set)."""
    REDIRECT_COMMITTED = "redirect.committed"
    """``{"source", "source_title", "destination", "previous", "url", "session", "row_html"}``:
    ``source`` now forwards to ``destination``; ``source_title`` is the source's title before
    the handoff renamed it (the name a moved tab announces; None for an entry re-pointed by a
    later route, or a route installed without it); ``previous`` is where it forwarded before
    (None: it did not); ``url`` is the host's page of ``destination``
    (``HANDOFF_SESSION_URL``); ``session`` and ``row_html`` are the destination's row as the
    host's source renders it (``Renders.row_of``: the follower adds it after the commit)."""
    SETTINGS_CHANGED = "settings.changed"
    """``{"settings": {name: value}, "version": int}``: the global settings as stored now (the
    card's fields; every user's pages get it)."""
    HANDOFF_SWITCH = "handoff.switch"
    """``{"session", "enabled", "fragments"}``: a conversation's own automatic-handoff switch
    changed (the fragment: its panel)."""


ABOUT = {
    Kind.HANDOFF_PHASE: "source",
    Kind.HANDOFF_SWITCH: "session",
    SESSION_ENTRY: "session_id",
}
"""The payload key naming the session whose panel or meter ``render`` adds, per kind."""


class HandoffSource(Source):
    """Records, redirects, switches and settings for the follower (see the module docstring)."""

    kinds = {
        Kind.HANDOFF_PHASE: Renders((PANEL,)),
        Kind.HANDOFF_SWITCH: Renders((PANEL,)),
        Kind.REDIRECT_COMMITTED: Renders(row_of="destination"),
        Kind.SETTINGS_CHANGED: Renders(),
    }
    adds = {SESSION_ENTRY: (METER,)}
    columns = {"redirect_to": F("redirect__destination_id")}
    """``redirect_to``: the final destination of the session's redirect (the map keeps every
    entry pointing at the end of its chain: docs/spec.md, Forwarding and cycles), or None."""
    scripts = ("handoff/jump.js",)
    """The jump rules (docs/spec.md, Follower rules), run over the follower's transport in every
    page."""

    def connect(self) -> None:
        """Publish what the handoff's signals announce."""
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

    def baseline(self, view_kwargs: Mapping[str, Any]) -> Payload:
        """``{"redirect_to": str | None}``: where the page's session (``session_id``) leads now."""
        session_id = view_kwargs.get("session_id")
        redirect = store.redirect_of(session_id) if session_id is not None else None
        return {"redirect_to": str(redirect.destination_id) if redirect is not None else None}

    def render(self, kind: str, payload: Payload) -> Payload | None:
        """Complete a stored payload from what is stored now (after the commit): the source's
        panel on ``handoff.phase`` and ``handoff.switch``, the context meter on the host's
        ``session.entry``; ``redirect.committed`` (whose row the follower adds) and
        ``settings.changed``, and a payload without the session it is about (``ABOUT``), pass
        unchanged. None: the session is gone."""
        about = payload.get(ABOUT.get(kind, ""))
        if about is None:
            return payload
        if kind == SESSION_ENTRY:
            meter = self._meter(about)
            return payload | {"fragments": [*payload.get("fragments", []), *meter]}
        return self._with_panel(payload, about)

    def _with_panel(self, payload: Payload, session_id: str) -> Payload | None:
        """``payload`` with the session's panel as its ``fragments`` (None: no such session)."""
        panel = self._panel(session_id)
        return payload | {"fragments": panel} if panel else None

    @once
    def _meter(self, session_id: str) -> list[dict[str, Any]]:
        """``[the session's context meter as its page shows it now]`` (empty: no session);
        rendered once per batch of events."""
        controller = services.session_controller()
        session = controller.get(session_id) if controller is not None else None
        if session is None:
            return []
        context = live_meter_context(session)
        return [fragment(METER, context, session=session.pk)]

    @once
    def _panel(self, session_id: str) -> list[dict[str, Any]]:
        """``[the session's handoff panel as its page shows it now]`` (empty: no such session);
        rendered once per batch of events."""
        controller = services.session_controller()
        session = controller.get(session_id) if controller is not None else None
        if session is None:
            return []
        context = session_panel(session) | {"live": True}
        return [fragment(PANEL, context, session=session.pk)]

    def record_changed(self, record: HandoffRecord, **kwargs: Any) -> None:
        """Publish ``handoff.phase`` to the source's owner: the record was created, moved
        phase or got its successor (the panel is rendered after the commit)."""
        payload = {
            "record": str(record.pk),
            "source": str(record.source_id),
            "target": str(record.target_id) if record.target_id else None,
            "phase": record.phase,
        }
        publish_about(str(record.source_id), Kind.HANDOFF_PHASE, payload)

    def redirects_changed(self, changes: list[RouteChange], **kwargs: Any) -> None:
        """Publish ``redirect.committed`` per added or re-pointed route (the destination's row
        is added after the commit), ``session.updated`` (no redirect) per removed one.

        The source's panel with its banner comes in the ``handoff.phase`` event of the record's
        commit, which the handoff publishes right after the route in the same transaction.
        """
        for change in changes:
            if change.destination is None:
                stored = {"session_id": str(change.source)}
                publish_about(str(change.source), SESSION_UPDATED, stored)
                continue
            payload = {
                "source": str(change.source),
                "source_title": change.source_title,
                "destination": str(change.destination),
                "previous": str(change.previous) if change.previous is not None else None,
                "url": session_url(change.destination),
            }
            publish_about(str(change.destination), Kind.REDIRECT_COMMITTED, payload)

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
            publish(user_id, Kind.SETTINGS_CHANGED, payload)

    def main_switched(self, session_id: Any, enabled: bool, **kwargs: Any) -> None:
        """Publish ``handoff.switch`` to the session's owner: its own switch is on or off (the
        panel is rendered after the commit)."""
        payload = {"session": str(session_id), "enabled": enabled}
        publish_about(str(session_id), Kind.HANDOFF_SWITCH, payload)
