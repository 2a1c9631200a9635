"""The host's part of the follower (``FOLLOWER_SOURCES``: ``follower.sources``; seed 003 §6.5).

The host announces what changed, explicitly (``host.signals.session_changed`` and
``entry_appended``); ``SessionSource`` turns each announcement into the event a page needs,
inside the writer's transaction, and gives the snapshot its ``sessions`` rows. Nothing is
inferred from model saves, so a queryset ``update()`` that announces is followed and a save that
changes nothing a page shows costs nothing. The host imports nothing of the follower: the
follower makes the source with its ``Outlet`` (publish, render).

A row is ``{"id", "title", "blank", "workspace", "archived", "status"}`` plus the columns other
sources add (``Outlet.columns``: the handoff's ``redirect_to``); ids are strings or None. Each
event carries what it changes on the page, rendered once: the session's row (``row_html``, the
list's own row template), the "working" line and the conversation's heading, or a new log entry.
"""

from __future__ import annotations

from enum import StrEnum
from typing import Any
from uuid import UUID

from host.models import Session, stored_language
from host.sidebar import row_context
from host.signals import (
    SIDEBAR_FIELDS,
    entries_appended,
    entry_appended,
    folder_switched,
    session_changed,
)
from host.timeline import entry_of

ROW = "chat/_session_row.html"
"""The session list's one row template (the list renders it too)."""

ROW_FIELDS = SIDEBAR_FIELDS
"""The session columns a row shows; the host announces a change to any of them."""


class Kind(StrEnum):
    """The host's follower events and their payloads."""

    SESSION_ADDED = "session.added"
    """``{"session": row, "row_html", "fragments"}``: a session was created."""
    SESSION_UPDATED = "session.updated"
    """``{"session": row, "row_html", "fragments"}``: blank cleared, title, workspace, archived,
    status or a column another source adds (the handoff's redirect)."""
    SESSION_ENTRY = "session.entry"
    """``{"session_id", "seq", "fragments", "refresh"}``: lines were appended to the session's
    log (other sources add fragments: the handoff's context meter); ``seq`` is the last one's
    (None with ``refresh``: too many to carry, the page reads its log again)."""
    FOLDER_SWITCHED = "folder.switched"
    """``{"path", "on"}``: the user switched following a runtime's sessions folder on or off
    (Settings shows the switch: ``static/followed-folders.js``)."""


class SessionSource:
    """Session rows and log lines for the follower (see the module docstring)."""

    scripts = ("chat-rows.js", "followed-folders.js")
    """The session list's script: places the rows the events carry (``static/chat-rows.js``);
    the followed folders' switches in Settings (``static/followed-folders.js``)."""

    def __init__(self, outlet: Any) -> None:
        self.outlet = outlet
        """The follower's ``Outlet`` (publish, fragment, render, columns, row)."""

    def connect(self) -> None:
        """Publish through ``outlet`` what ``session_changed``, ``entry_appended`` and
        ``folder_switched`` announce."""
        session_changed.connect(
            self.session_changed, dispatch_uid="host.follow.session", weak=False
        )
        entry_appended.connect(self.entry_appended, dispatch_uid="host.follow.entry", weak=False)
        entries_appended.connect(
            self.entries_appended, dispatch_uid="host.follow.entries", weak=False
        )
        folder_switched.connect(self.folder_switched, dispatch_uid="host.follow.folder", weak=False)

    def live_session(self, session_id: Any) -> Session | None:
        """Return the session as stored now with the other sources' columns annotated, or None
        when it does not exist. One query (a join per column)."""
        rows = Session.objects.filter(pk=session_id)
        return rows.annotate(**self.outlet.columns()).first()

    def row_of(self, session: Session) -> dict[str, Any]:
        """Return the row of a session read by ``live_session``."""
        names = [*ROW_FIELDS, *self.outlet.columns()]
        return _row({"id": session.pk, **{name: getattr(session, name) for name in names}})

    def row(self, key: str) -> dict[str, Any] | None:
        """Return ``{"owner", "session": row, "row_html", "fragments": [the working line, the
        conversation's heading]}``
        of session ``key`` as stored now (None: no such session): a ``session.updated``
        payload, for this source's events and other sources' (``Outlet.row``)."""
        session = self.live_session(key)
        if session is None:
            return None
        owner = session.owner_id
        context = {"session": session, "oob": True}
        fragments = [
            self.outlet.fragment(owner, template, context, session=session.pk)
            for template in ("chat/_working.html", "chat/_conv_title.html")
        ]
        return {
            "owner": owner,
            "session": self.row_of(session),
            "row_html": self.outlet.render(owner, ROW, row_context(session)),
            "fragments": fragments,
        }

    def folder_switched(self, owner_id: int, path: str, on: bool, **kwargs: Any) -> None:
        """Publish ``folder.switched`` to the user who switched the folder."""
        self.outlet.publish(owner_id, Kind.FOLDER_SWITCHED, {"path": path, "on": on})

    def session_changed(self, session_id: Any, created: bool = False, **kwargs: Any) -> None:
        """Publish ``session.added`` (created) or ``session.updated`` with the session's row."""
        found = self.row(session_id)
        if found is None:
            return
        owner = found.pop("owner")
        self.outlet.publish(owner, Kind.SESSION_ADDED if created else Kind.SESSION_UPDATED, found)

    def entry_appended(self, session: Session, entry: Any, **kwargs: Any) -> None:
        """Publish ``session.entry`` with the new log line, as ``entries_appended`` does for
        one entry."""
        self.entries_appended(session, [entry])

    def entries_appended(self, session: Session, entries: list[Any] | None, **kwargs: Any) -> None:
        """Publish one ``session.entry`` with the new log lines (each appended to the session's
        timeline unless the page shows it already, with the header's counts); nothing when no
        entry has a line (turn starts). ``entries`` None (too many to send): the payload's
        ``refresh`` has the page read its log again instead."""
        lines = [line for entry in entries or [] if (line := entry_of(session, entry))]
        if entries is not None and not lines:
            return
        shown = [
            self.outlet.fragment(
                session.owner_id,
                "chat/_entry_live.html",
                {"entry": line, "session": session, "oob": True},
                session=session.pk,
                unless=f"#entry-{line.seq}",
            )
            for line in lines
        ]
        payload = {
            "session_id": str(session.pk),
            "seq": lines[-1].seq if lines else None,
            "fragments": shown,
            "refresh": entries is None,
        }
        self.outlet.publish(session.owner_id, Kind.SESSION_ENTRY, payload, about=session)

    def snapshot(self, user_id: int, snapshot: dict[str, Any]) -> None:
        """Add ``"sessions": [row, ...]``, the user's sessions oldest first (one query)."""
        columns = self.outlet.columns()
        rows = Session.objects.filter(owner_id=user_id).order_by("created")
        snapshot["sessions"] = [_row(v) for v in rows.values("id", *ROW_FIELDS, **columns)]

    def language(self, user_id: int) -> str | None:
        """Return the language the user chose, else their browser's on their latest page
        (``LanguagePreference``), or None."""
        return stored_language(user_id)


def _row(values: dict[str, Any]) -> dict[str, Any]:
    """A row from a session's values: ``workspace_id`` shown as ``workspace``, ids (the
    workspace's, UUIDs) as strings."""
    row = {
        name: str(value) if isinstance(value, UUID) else value
        for name, value in values.items()
        if name != "workspace_id"
    }
    workspace = values["workspace_id"]
    return row | {"workspace": str(workspace) if workspace is not None else None}
