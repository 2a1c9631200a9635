"""What the lineage page and the conversation header show of a chain (issue 18 §3).

Read from ``handoff.lineage`` (the records) and the session controller; the brief of each hop is
rendered as the Markdown its successor was seeded with (``handoff.core.brief.render_brief``),
never as raw JSON.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any

from handoff import lineage, services
from handoff.core.brief import render_brief
from handoff.shapes import RecordOut
from handoff.status import record_dict


@dataclass(frozen=True)
class Hop:
    """One handoff of a chain: its record (``RecordOut``), when it was made, both sessions
    (None when gone), its brief as Markdown (empty when the record has none) and, when a review
    edited the brief, the model's original as Markdown (else empty)."""

    record: RecordOut
    created: datetime
    source: Any
    target: Any
    brief_markdown: str
    original_markdown: str


def _session(session_id: Any) -> Any:
    controller = services.session_controller()
    return controller.get(str(session_id)) if controller is not None else None


def neighbours(session: Any) -> dict[str, Any]:
    """Return ``{"session", "predecessor", "successor"}``: ``session`` and the sessions next to
    it in its chain (None at either end), as the header's links show them. Two queries, plus
    one per neighbour found."""
    before, after = lineage.predecessor(session.pk), lineage.successor(session.pk)
    return {
        "session": session,
        "predecessor": _session(before) if before is not None else None,
        "successor": _session(after) if after is not None else None,
    }


def hops(session: Any) -> list[Hop]:
    """Return every hop of the chain ``session`` is on, oldest first."""
    found = []
    for record in lineage.chain(session.pk):
        source, target = _session(record.source_id), _session(record.target_id)
        brief = render_brief(record.brief) if record.brief else ""
        original = render_brief(record.original_brief) if record.original_brief else ""
        found.append(Hop(record_dict(record), record.created, source, target, brief, original))
    return found
