"""What the follower knows about a user's sessions: one row per session (seed 003 §6.5).

A row is ``{"id", "title", "blank", "workspace", "redirect_to", "archived", "status"}``:
``id`` / ``workspace`` / ``redirect_to`` are strings or None (``redirect_to`` is the final
destination of the session's redirect: the redirect map keeps every entry pointing at the end of
its chain, DESIGN.md invariant 5). Event payloads carry the same rows, so "snapshot + replayed
events" rebuilds a fresh snapshot (Zulip's event queues).
"""

from __future__ import annotations

import functools
from typing import Any

from django.apps import apps
from django.db import transaction
from django.db.models import F

from follower.models import FollowerCursor
from host.signals import SIDEBAR_FIELDS

SessionRow = dict[str, Any]

ROW_FIELDS = SIDEBAR_FIELDS
"""The session columns a row shows; the host announces a change to any of them."""


def _row(values: dict[str, Any], redirect_to: Any) -> SessionRow:
    return {
        "id": str(values["id"]),
        "title": values["title"],
        "blank": values["blank"],
        "workspace": str(values["workspace_id"]) if values["workspace_id"] is not None else None,
        "redirect_to": str(redirect_to) if redirect_to is not None else None,
        "archived": values["archived"],
        "status": values["status"],
    }


def _redirects(session_ids: list[Any]) -> dict[Any, Any]:
    redirect = apps.get_model("handoff", "Redirect")
    pairs = redirect.objects.filter(source_id__in=session_ids).values_list(
        "source_id", "destination_id"
    )
    return dict(pairs)


def live_session(session_id: Any) -> Any | None:
    """Return the session as stored now, with ``redirect_to`` (its redirect's destination id, or
    None) annotated, or None when it does not exist. One query (a join on the redirect)."""
    session = apps.get_model("host", "Session")
    return (
        session.objects.filter(pk=session_id)
        .annotate(redirect_to=F("redirect__destination_id"))
        .first()
    )


def row_of(session: Any) -> SessionRow:
    """Return the row of a session read by ``live_session``."""
    values = {"id": session.pk, **{name: getattr(session, name) for name in ROW_FIELDS}}
    return _row(values, session.redirect_to)


def owner_of(session_id: Any) -> int | None:
    """Return the id of the session's owner, or None when the session does not exist.

    Read once per session and process: a session's owner never changes (nothing writes it
    after creation; the admin shows it read-only). A missing session is not remembered.
    """
    try:
        return _stored_owner(session_id)
    except LookupError:
        return None


@functools.lru_cache(maxsize=4096)
def _stored_owner(session_id: Any) -> int:
    session = apps.get_model("host", "Session")
    owner = session.objects.filter(pk=session_id).values_list("owner_id", flat=True).first()
    if owner is None:
        raise LookupError(session_id)  # raised, so the cache keeps nothing
    return int(owner)


def redirect_of(session_id: Any) -> str | None:
    """Return where the session's redirect leads now (its final destination), or None."""
    destination = _redirects([session_id]).get(session_id)
    return str(destination) if destination is not None else None


def snapshot(user_id: int) -> dict[str, Any]:
    """Return ``{"last_event_id": int, "sessions": [row, ...]}`` for one user.

    ``last_event_id`` is read before the rows, so every event it counts is reflected in them;
    a later event may be reflected too, and replaying it changes nothing (rows are whole).
    """
    session = apps.get_model("host", "Session")
    with transaction.atomic():
        last_event_id = (
            FollowerCursor.objects.filter(user_id=user_id)
            .values_list("last_seq", flat=True)
            .first()
        ) or 0
        values = list(
            session.objects.filter(owner_id=user_id).order_by("created").values("id", *ROW_FIELDS)
        )
        redirects = _redirects([v["id"] for v in values])
    return {
        "last_event_id": last_event_id,
        "sessions": [_row(v, redirects.get(v["id"])) for v in values],
    }
