"""The host's part of the follower (``FOLLOWER_SOURCES``: ``follower.sources``; docs/spec.md,
Follower rules).

The host announces what changed, explicitly (``host.signals.session_changed`` and
``entry_appended``); ``SessionSource`` turns each announcement into an event, stored inside the
writer's transaction with what identifies the change (the session's id, a log entry's ``seq``),
and gives the snapshot its ``sessions`` rows. Nothing is inferred from model saves, so a
queryset ``update()`` that announces is followed and a save that changes nothing a page shows
costs nothing. This module is the only one of the host that imports the follower: its interface
(``follower.sources``) and its template helpers (``follower.fragments``).

A row is ``{"id", "title", "blank", "workspace", "archived", "status"}`` plus the columns other
sources add (``Source.row_columns``: the handoff's ``redirect_to``); ids are strings or None.
Each event carries what it changes on the page, rendered after the commit from the committed
state (``render``, in the user's language the follower sets), once per batch of events: the
session's row (``row_html``, the list's own row template), the "working" line and the
conversation's heading, or a new log entry. The row also rides in other apps' events that
declare it (``Renders.row_of``: the handoff's ``redirect.committed``): the follower asks
``row`` for it.
"""

from __future__ import annotations

from enum import StrEnum
from typing import Any
from uuid import UUID

from common.reads import once
from follower.fragments import fragment, render
from follower.sources import Payload, Renders, Source, publish
from host.models import Message, Session, SessionEvent, stored_language
from host.sidebar import row_context
from host.signals import (
    SIDEBAR_FIELDS,
    entries_appended,
    entry_appended,
    folder_switched,
    session_changed,
)
from host.timeline import entry_of, has_line

ROW = "chat/_session_row.html"
"""The session list's one row template (the list renders it too)."""

ROW_FIELDS = SIDEBAR_FIELDS
"""The session columns a row shows; the host announces a change to any of them."""

WORKING = "chat/_working.html"
"""The conversation's "working" line."""

HEADING = "chat/_conv_title.html"
"""The conversation's heading with the tab's title."""

ENTRY = "chat/_entry_live.html"
"""A new line of the conversation's timeline."""


class Kind(StrEnum):
    """The host's follower events and their payloads."""

    SESSION_ADDED = "session.added"
    """``{"session": row, "row_html", "fragments"}``: a session was created (stored as
    ``{"session_id"}``)."""
    SESSION_UPDATED = "session.updated"
    """``{"session": row, "row_html", "fragments"}``: blank cleared, title, workspace, archived,
    status or a column another source adds (the handoff's redirect); stored as
    ``{"session_id"}``."""
    SESSION_ENTRY = "session.entry"
    """``{"session_id", "seq", "fragments", "refresh"}``: lines were appended to the session's
    log (other sources add fragments: the handoff's context meter); ``seq`` is the last one's
    (None with ``refresh``: too many to carry, the page reads its log again). Stored as
    ``{"session_id", "entries": [["message" | "event", seq], ...] | None}``."""
    FOLDER_SWITCHED = "folder.switched"
    """``{"path", "on"}``: the user switched following a runtime's sessions folder on or off
    (Settings shows the switch: ``static/followed-folders.js``)."""


class SessionSource(Source):
    """Session rows and log lines for the follower (see the module docstring)."""

    kinds = {
        Kind.SESSION_ADDED: Renders((ROW, WORKING, HEADING)),
        Kind.SESSION_UPDATED: Renders((ROW, WORKING, HEADING)),
        Kind.SESSION_ENTRY: Renders((ENTRY,)),
        Kind.FOLDER_SWITCHED: Renders(),
    }
    scripts = ("chat-rows.js", "followed-folders.js")
    """The session list's script: places the rows the events carry (``static/chat-rows.js``);
    the followed folders' switches in Settings (``static/followed-folders.js``)."""

    def connect(self) -> None:
        """Publish what ``session_changed``, ``entry_appended`` and
        ``folder_switched`` announce."""
        session_changed.connect(
            self.session_changed, dispatch_uid="host.follow.session", weak=False
        )
        entry_appended.connect(self.entry_appended, dispatch_uid="host.follow.entry", weak=False)
        entries_appended.connect(
            self.entries_appended, dispatch_uid="host.follow.entries", weak=False
        )
        folder_switched.connect(self.folder_switched, dispatch_uid="host.follow.folder", weak=False)

    @once
    def live_session(self, session_id: Any) -> Session | None:
        """Return the session as stored now with the other sources' columns annotated, or None
        when it does not exist. One query (a join per column); once per batch of events."""
        rows = Session.objects.filter(pk=session_id)
        return rows.annotate(**self.row_columns).first()

    def row_of(self, session: Session) -> dict[str, Any]:
        """Return the row of a session read by ``live_session``."""
        names = [*ROW_FIELDS, *self.row_columns]
        return _row({"id": session.pk, **{name: getattr(session, name) for name in names}})

    @once
    def row(self, key: str) -> Payload | None:
        """Return ``{"owner", "session": row, "row_html", "fragments": [the working line, the
        conversation's heading]}`` of session ``key`` as stored now (None: no such session): a
        ``session.updated`` payload, for this source's events and the row of other sources'
        (``Renders.row_of``); rendered once per batch of events."""
        session = self.live_session(key)
        if session is None:
            return None
        owner = session.owner_id
        context = {"session": session, "oob": True}
        fragments = [
            fragment(template, context, session=session.pk) for template in (WORKING, HEADING)
        ]
        return {
            "owner": owner,
            "session": self.row_of(session),
            "row_html": render(ROW, row_context(session)),
            "fragments": fragments,
        }

    def folder_switched(self, owner_id: int, path: str, on: bool, **kwargs: Any) -> None:
        """Publish ``folder.switched`` to the user who switched the folder."""
        publish(owner_id, Kind.FOLDER_SWITCHED, {"path": path, "on": on})

    def session_changed(
        self, session_id: Any, created: bool = False, owner_id: Any = None, **kwargs: Any
    ) -> None:
        """Publish ``session.added`` (created) or ``session.updated`` for the session's owner
        (``owner_id``, else ``owner_of``); its row is rendered after the commit (``render``)."""
        if owner_id is not None:
            remember_owner(session_id, owner_id)
        owner = owner_of(session_id)
        if owner is None:
            return
        kind = Kind.SESSION_ADDED if created else Kind.SESSION_UPDATED
        publish(owner, kind, {"session_id": str(session_id)})

    def entry_appended(self, session: Session, entry: Any, **kwargs: Any) -> None:
        """Publish ``session.entry`` for the new log line, as ``entries_appended`` does for
        one entry."""
        self.entries_appended(session, [entry])

    def entries_appended(self, session: Session, entries: list[Any] | None, **kwargs: Any) -> None:
        """Publish one ``session.entry`` for the new log lines, rendered after the commit
        (``render``); nothing when no entry has a line (``has_line``: turn starts). ``entries``
        None (too many to send): the payload's ``refresh`` has the page read its log again."""
        kept = [entry for entry in entries or [] if has_line(session, entry)]
        if entries is not None and not kept:
            return
        remember_owner(session.pk, session.owner_id)
        stored = None
        if entries is not None:
            stored = [["message" if isinstance(e, Message) else "event", e.seq] for e in kept]
        payload = {"session_id": str(session.pk), "entries": stored}
        publish(session.owner_id, Kind.SESSION_ENTRY, payload)

    def owner(self, key: str) -> int | None:
        """The owner of session ``key`` (``owner_of``; None: no such session)."""
        return owner_of(key)

    def render(self, kind: str, payload: Payload) -> Payload | None:
        """Complete a stored ``session.*`` payload from what is stored now (after the commit:
        ``kinds`` names the templates); ``folder.switched``, and a payload without a
        ``session_id``, pass unchanged. None: the session (or every line of the entries) is
        gone."""
        if "session_id" not in payload:
            return payload
        if kind in (Kind.SESSION_ADDED, Kind.SESSION_UPDATED):
            found = self.row(payload["session_id"])
            return {k: v for k, v in found.items() if k != "owner"} if found else None
        if kind == Kind.SESSION_ENTRY:
            return self.entry_payload(payload)
        return payload

    def entry_payload(self, stored: Payload) -> Payload | None:
        """``{"session_id", "seq", "fragments": [a line per entry], "refresh"}`` of a stored
        ``session.entry``: each line appended to the session's timeline unless the page shows it
        already, as the page renders it now (a relay names the conversation it came from);
        ``seq`` the last line's. ``entries`` None: no lines, ``refresh`` true. None when the
        session is gone or none of the entries has a line left."""
        session = self.live_session(stored["session_id"])
        if session is None:
            return None
        entries = stored.get("entries")
        if entries is None:
            return {"session_id": str(session.pk), "seq": None, "fragments": [], "refresh": True}
        lines = [line for kind, seq in entries if (line := self.line(session, kind, seq))]
        if not lines:
            return None
        shown = [
            fragment(
                ENTRY,
                {"entry": line, "session": session, "oob": True},
                session=session.pk,
                unless=f"#entry-{line.seq}",
            )
            for line in lines
        ]
        last = lines[-1].seq
        return {"session_id": str(session.pk), "seq": last, "fragments": shown, "refresh": False}

    @staticmethod
    def line(session: Session, kind: str, seq: int) -> Any:
        """The timeline line of the session's stored entry ``(kind, seq)`` as it reads now
        (``kind`` "message" or "event"), or None (gone, or no line: a turn start)."""
        model = Message if kind == "message" else SessionEvent
        item = model.objects.filter(session_id=session.pk, seq=seq).first()
        return entry_of(session, item) if item is not None else None

    def snapshot(self, user_id: int, into: Payload) -> None:
        """Add ``"sessions": [row, ...]``, the user's sessions oldest first (one query)."""
        rows = Session.objects.filter(owner_id=user_id).order_by("created")
        into["sessions"] = [_row(v) for v in rows.values("id", *ROW_FIELDS, **self.row_columns)]

    def language(self, user_id: int) -> str | None:
        """Return the language the user chose, else their browser's on their latest page
        (``LanguagePreference``), or None."""
        return stored_language(user_id)


OWNERS_KEPT = 10_000
"""Session owners a process keeps (``owner_of``); past that the memo starts afresh."""

_owners: dict[str, int] = {}


def remember_owner(session_id: Any, owner_id: int) -> None:
    """Keep ``owner_id`` as the owner of ``session_id`` (a session's owner never changes: the
    admin shows it read-only)."""
    if len(_owners) >= OWNERS_KEPT:
        _owners.clear()
    _owners[str(session_id)] = owner_id


def owner_of(session_id: Any) -> int | None:
    """The owner's id of session ``session_id`` (None: no such session): kept from the
    announcements that named it (``remember_owner``), else read once (one query)."""
    key = str(session_id)
    if key not in _owners:
        found = Session.objects.filter(pk=key).values_list("owner_id", flat=True).first()
        if found is None:
            return None
        remember_owner(key, found)
    return _owners[key]


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
