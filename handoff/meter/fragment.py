"""The context meter's fragment: one render function for every place it shows.

docs/design.md, The context meter.

The panel includes it; the follower's events carry it out of band (``oob=True``), so every
open tab of the conversation shows the new figures after a turn without fetching anything.
"""

from __future__ import annotations

from typing import Any

from django.template.loader import render_to_string

from handoff import metrics, services
from handoff.shapes import MeterOut

TEMPLATE = "handoff/_meter.html"


def meter_context(session_id: Any, meter: MeterOut, *, oob: bool = False) -> dict[str, Any]:
    """Return the fragment's template context: ``meter``, ``session_id``, ``oob``."""
    return {"meter": meter, "session_id": str(session_id), "oob": oob}


def render_meter(session_id: Any, meter: MeterOut, *, oob: bool = False) -> str:
    """Return the meter of ``session_id`` as HTML (``oob``: marked for an out-of-band swap)."""
    return render_to_string(TEMPLATE, meter_context(session_id, meter, oob=oob))


def live_meter_context(session: Any) -> dict[str, Any]:
    """Return the fragment's context for a follower event: ``session``'s meter read now,
    marked for an out-of-band swap (a few queries: the settings, the usage projection)."""
    meter = metrics.context_meter(session, services.load_settings())
    return meter_context(session.pk, meter, oob=True)
