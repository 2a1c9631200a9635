"""The follower's JSON snapshot (read after subscribing; docs/spec.md, Follower rules).

A snapshot is ``{"last_event_id": int, ...}`` plus what the apps add (``follower.sources``):
this host's ``sessions`` rows (``host.follow``) with the handoff's ``redirect_to`` on each
(``handoff.web.follow``). Event payloads carry the same rows, so "snapshot + replayed events"
rebuilds a fresh snapshot (Zulip's event queues).
"""

from __future__ import annotations

from typing import Any

from django.db import transaction

from follower import sources
from follower.events import current_event_id, deliver


def snapshot(user_id: int) -> dict[str, Any]:
    """Return ``{"last_event_id": int, ...the sources' keys}`` for one user.

    ``last_event_id`` is read before the sources' reads, in one transaction, so every event it
    counts is reflected in them; a later event may be reflected too, and replaying it changes
    nothing (rows are whole). Events committed but not numbered yet are numbered first
    (``deliver``), so the snapshot counts them.
    """
    deliver(user_id)
    with transaction.atomic():
        found: dict[str, Any] = {"last_event_id": current_event_id(user_id)}
        sources.snapshot(user_id, found)
    return found
