"""Evidence a reader can open: "(log #N)" in a rendered brief links entry N of the source
conversation's timeline (issue 16, item 5).

The brief names each verified item, decision and user rule's log entry inside its string
("… (log #1485)", ``handoff.core.offline_brief``); the successor's page, and any page that shows
a record's brief, turns those into links with ``link_log_entries``. "(earlier log #N)" (an item
inherited from a predecessor's brief) is left as text: that entry is in an older conversation.
"""

from __future__ import annotations

import re
from typing import Any

from django.urls import reverse
from django.utils.html import conditional_escape
from django.utils.safestring import SafeString, mark_safe

from handoff.core.phases import Phase
from handoff.models import HandoffRecord

_CITED = re.compile(r"(?<!earlier )\(log #(\d+)\)")


def link_log_entries(html: str, source_id: Any) -> SafeString:
    """Return ``html`` (safe HTML such as the ``markdown`` filter's output; plain text is
    escaped first) with each "(log #N)" linking ``#entry-N`` on the whole-log page of session
    ``source_id``."""
    page = reverse("chat:session", args=[source_id]) + "?all=1"
    return mark_safe(  # only digits and a reversed URL are added to the escaped html
        _CITED.sub(
            lambda m: f'(<a href="{page}#entry-{m[1]}">log #{m[1]}</a>)', conditional_escape(html)
        )
    )


def source_of(successor: Any) -> Any:
    """Return the id of the session ``successor`` was handed off from, or None."""
    return (
        HandoffRecord.objects.filter(target_id=successor.pk)
        .exclude(phase=Phase.FAILED)
        .values_list("source_id", flat=True)
        .first()
    )


def brief_links(html: str, session: Any) -> SafeString:
    """Link "(log #N)" in ``html`` (a plugin message of ``session``, already escaped) to entry N
    of the conversation ``session`` was handed off from; unchanged when it has none. The host's
    log applies it to plugin messages through ``settings.HOST_PLUGIN_ENTRY_FILTERS``."""
    source = source_of(session) if "(log #" in html else None
    return link_log_entries(html, source) if source else mark_safe(html)  # html: escaped
