"""Publish follower events from a test and get back their frames as committed."""

from __future__ import annotations

from typing import Any

from django.db import transaction

from follower.events import current_event_id, events_after, publish
from handoff.web.follow import Kind as HandoffKind


def publish_phases(user_id: int, *phases: str) -> list[dict[str, Any]]:
    """Publish a ``handoff.phase`` event per phase for ``user_id`` in one transaction (as a
    handoff's route does); return their frames as stored once committed."""
    before = current_event_id(user_id)
    with transaction.atomic():
        for phase in phases:
            publish(user_id, HandoffKind.HANDOFF_PHASE, {"phase": phase})
    frames = events_after(user_id, before)
    assert isinstance(frames, list)
    return frames
