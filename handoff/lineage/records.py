"""Lineage (docs/design.md, Lineage): a session's chain of hops.

A hop is a record that opened a successor (phase ``committed``, ``committed-start-pending`` or
``started``, with a target): its source is the successor's ``predecessor``, its target the
source's ``successor``. The records are the one source of truth: the redirect map is kept flat
(every entry points at the chain's end; docs/spec.md, Forwarding and cycles), so it cannot tell the
next hop, and ``disable`` removing a redirect stops forwarding without undoing the history. When a
source was handed off again after its forwarding stopped, its newest hop is its successor.

Reading never changes anything; each function reads committed rows only.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from django.db.models import Q, QuerySet

from common.reads import once
from handoff import store
from handoff.core.phases import COMMITTED_PHASES
from handoff.models import HandoffRecord
from handoff.session_model import SessionId

MAX_HOPS = 1_000
"""A chain longer than this is cut there (a guard against a corrupt store, never reached)."""


def hops() -> QuerySet[HandoffRecord]:
    """Every record that opened a successor, newest first."""
    return HandoffRecord.objects.filter(phase__in=COMMITTED_PHASES, target__isnull=False).order_by(
        "-created"
    )


def origin(session_id: SessionId) -> HandoffRecord | None:
    """Return the hop that opened ``session_id`` (its source is the predecessor), or None
    (read once per page request, as ``onward``: ``common.reads``)."""
    return _origin(store.key(session_id))


def onward(session_id: SessionId) -> HandoffRecord | None:
    """Return the session's newest hop out (its target is the successor), or None."""
    return _onward(store.key(session_id))


@once
def _origin(session_key: Any) -> HandoffRecord | None:
    return hops().filter(target_id=session_key).first()


@once
def _onward(session_key: Any) -> HandoffRecord | None:
    return hops().filter(source_id=session_key).first()


def predecessor(session_id: SessionId) -> SessionId | None:
    """Return the id of the session this one was handed off from, or None (one query)."""
    found = origin(session_id)
    return found.source_id if found is not None else None


def successor(session_id: SessionId) -> SessionId | None:
    """Return the id of the session this one was handed off to, or None (one query)."""
    found = onward(session_id)
    return found.target_id if found is not None else None


def chain(session_id: SessionId) -> list[HandoffRecord]:
    """Return every hop of the chain ``session_id`` is on, oldest first (empty: no chain).

    One query per hop, back to the first source and on to the newest successor.
    """
    back: list[HandoffRecord] = []
    seen = {store.key(session_id)}
    found = origin(session_id)
    while found is not None and found.source_id not in seen and len(back) < MAX_HOPS:
        back.append(found)
        seen.add(found.source_id)
        found = origin(found.source_id)
    ahead: list[HandoffRecord] = []
    found = onward(session_id)
    while found is not None and found.target_id is not None and len(ahead) < MAX_HOPS:
        if found.target_id in seen:
            break
        ahead.append(found)
        seen.add(found.target_id)
        found = onward(found.target_id)
    return [*reversed(back), *ahead]


def links(session_ids: Iterable[Any]) -> dict[SessionId, SessionId]:
    """Return ``{source id: successor id}`` for every hop into or out of ``session_ids``.

    One query, whatever the number of sessions; a source handed off twice maps to its newest.
    """
    keys = [store.key(session_id) for session_id in session_ids]
    touching = hops().filter(Q(source_id__in=keys) | Q(target_id__in=keys))
    found: dict[SessionId, SessionId] = {}
    for source, target in touching.values_list("source_id", "target_id"):
        found.setdefault(source, target)
    return found


def session_links(
    sender: Any, *, session_ids: Iterable[Any], **kwargs: Any
) -> dict[SessionId, SessionId]:
    """``session_links`` receiver (the host's hook): ``links`` of the sessions it asks about."""
    return links(session_ids)
