"""``{% handoff_panel session %}``: the handoff panel on the conversation page;
``{% handoff_meter session_id meter %}``: its context meter (issue 18 §1);
``{% handoff_lineage session %}``: links to its predecessor, successor and lineage page (§3).

The host's page template loads this tag (the host's Python never imports the handoff app).
"""

from __future__ import annotations

from typing import Any

from django import template

from handoff.shapes import MeterOut
from handoff.web.lineage import neighbours
from handoff.web.meter import render_meter
from handoff.web.panel import session_panel

register = template.Library()


@register.inclusion_tag("chat/handoff_panel.html")
def handoff_panel(session: Any) -> dict[str, Any]:
    """Render the panel of ``session`` (the page already checked that the user owns it)."""
    return session_panel(session)


@register.simple_tag
def handoff_meter(session_id: Any, meter: MeterOut) -> str:
    """Render the context meter of ``session_id`` (``meter``: the status report's)."""
    return render_meter(session_id, meter)


@register.inclusion_tag("chat/_lineage_links.html")
def handoff_lineage(session: Any) -> dict[str, Any]:
    """Render the links to ``session``'s neighbours in its chain (nothing outside a chain)."""
    return neighbours(session)
