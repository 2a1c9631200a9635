"""Export a user's handoff state as ``handoffs.json`` version 1 (docs/spec.md, State).

``export(owner_id)`` returns every key of the seed's example with its JSON type — ``version``;
``mains`` (session id -> enabled, requested, inheritedFrom, lastAttemptSeq, deferred);
``records`` (id, source, phase, reason, metrics {tokens, turns, compactions, capacity},
sourceRevision, target, brief), oldest first — plus ``redirects`` (old -> new), each failed
record's ``error``, which the seed names too, and where each side of a record runs
(``sourceRuntime``, ``targetRuntime``: ``product``, ``claude``, ``codex``; docs/spec.md,
Terms). Only sessions ``owner_id`` owns are read (``None``:
every user's, for the operator's ``manage.py handoff export``). ``SCHEMA_PATH`` is the file's
JSON Schema. Reading never changes anything.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from django.db.models import QuerySet

from handoff import operations
from handoff.core.phases import Phase
from handoff.models import HandoffRecord, MainState, Redirect
from handoff.shapes import ExportMainOut, ExportOut, ExportRecordOut
from handoff.status import record_dict

VERSION = 1
SCHEMA_PATH = Path(__file__).parent / "schemas" / "handoffs.v1.json"


def _owned(queryset: QuerySet[Any], relation: str, owner_id: Any) -> QuerySet[Any]:
    if owner_id is None:
        return queryset
    return queryset.filter(**{f"{relation}__in": operations.owned_session_ids(owner_id)})


def _main(state: MainState) -> ExportMainOut:
    return {
        "enabled": state.enabled,
        "requested": state.requested,
        "inheritedFrom": str(state.inherited_from_id) if state.inherited_from_id else None,
        "lastAttemptSeq": state.last_attempt_seq,
        "deferred": list(state.deferred),
    }


def _record(record: HandoffRecord) -> ExportRecordOut:
    shown = record_dict(record)
    entry: ExportRecordOut = {
        "id": shown["id"],
        "source": shown["source"],
        "phase": shown["phase"],
        "reason": shown["reason"],
        "metrics": shown["metrics"],
        "sourceRevision": shown["source_revision"],
        "target": shown["target"],
        "brief": shown["brief"],
    }
    if record.phase == Phase.FAILED:
        entry["error"] = record.error
    entry["sourceRuntime"] = record.source.runtime
    if record.target is not None:
        entry["targetRuntime"] = record.target.runtime
    return entry


def export(owner_id: Any) -> ExportOut:
    """Return ``handoffs.json`` version 1 of ``owner_id``'s sessions (``None``: everyone's)."""
    mains = _owned(MainState.objects.order_by("session_id"), "session", owner_id)
    records = _owned(
        HandoffRecord.objects.select_related("source", "target").order_by("created"),
        "source",
        owner_id,
    )
    redirects = _owned(Redirect.objects.order_by("source_id"), "source", owner_id)
    return {
        "version": VERSION,
        "mains": {str(state.session_id): _main(state) for state in mains},
        "records": [_record(record) for record in records],
        "redirects": {str(r.source_id): str(r.destination_id) for r in redirects},
    }
