"""``{% handoff_panel session %}``: the handoff panel on the conversation page;
``{% handoff_title_hint session %}``: the line under its title saying what ``· 接续`` means.

The host's page template loads this tag (the host's Python never imports the handoff app).
"""

from __future__ import annotations

from typing import Any

from django import template

from handoff.inheritance import readable
from handoff.web.panel import session_panel, title_hint

register = template.Library()


@register.inclusion_tag("chat/handoff_panel.html")
def handoff_panel(session: Any) -> dict[str, Any]:
    """Render the panel of ``session`` (the page already checked that the user owns it)."""
    return session_panel(session)


@register.inclusion_tag("chat/_conv_hint.html")
def handoff_title_hint(session: Any, oob: bool = False) -> dict[str, Any]:
    """Render the title's hint (``handoff.web.panel.title_hint``); ``oob`` swaps it in place
    from a panel response (the hint changes when ``disable`` stops forwarding)."""
    return {"hint": title_hint(session), "oob": oob}


@register.filter
def inheritance_rows(report: list[dict[str, str]]) -> list[dict[str, object]]:
    """The inheritance report's rows in words (``handoff.inheritance.readable``)."""
    return readable(report)
