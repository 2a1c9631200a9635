"""``{% handoff_panel session %}``: the handoff panel on the conversation page;
``{{ html|brief_links:session }}``: a successor's brief with its "(log #N)" evidence linked.

The host's page templates load these (the host's Python never imports the handoff app).
"""

from __future__ import annotations

from typing import Any

from django import template
from django.utils.safestring import SafeString, mark_safe

from handoff.web.log_links import link_log_entries, source_of
from handoff.web.panel import session_panel

register = template.Library()


@register.inclusion_tag("chat/handoff_panel.html")
def handoff_panel(session: Any) -> dict[str, Any]:
    """Render the panel of ``session`` (the page already checked that the user owns it)."""
    return session_panel(session)


@register.filter
def brief_links(html: str, session: Any) -> SafeString:
    """Link "(log #N)" in ``html`` (a plugin message of ``session``, already escaped) to entry N
    of the conversation ``session`` was handed off from; unchanged when it has none."""
    source = source_of(session) if "(log #" in html else None
    return link_log_entries(html, source) if source else mark_safe(html)  # html: escaped
