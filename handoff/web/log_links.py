"""Evidence a reader can open: "(log #N)" in a rendered brief links entry N of the source
conversation's timeline.

The brief names each verified item, decision and user rule's log entry inside its string
("… (log #1485)", ``handoff.core.offline_brief``); the successor's page, and any page that shows
a record's brief, turns those into links with ``link_log_entries``. "(earlier log #N)" (an item
inherited from the predecessor's brief) links entry N of the conversation one hop further back,
where that entry is; "(older log #N)" (inherited twice or more) stays text. The words of each
citation are shown in the reader's language (the brief's text keeps the English form the
pattern reads); a citation's words never wrap inside themselves (``log-cite``: one line box
on the narrowest page).
"""

from __future__ import annotations

import re
from typing import Any

from django.utils.html import conditional_escape, escape
from django.utils.safestring import SafeString, mark_safe
from django.utils.translation import gettext

from handoff.conf import session_url
from handoff.core.phases import Phase
from handoff.models import HandoffRecord

_CITED = re.compile(r"\((earlier |older )?log #(\d+)\)")


def link_log_entries(html: str, source_id: Any, earlier_id: Any = None) -> SafeString:
    """Return ``html`` (safe HTML such as the ``markdown`` filter's output; plain text is
    escaped first) with each "(log #N)" linking ``#entry-N`` on the whole-log page of session
    ``source_id``, and each "(earlier log #N)" the same entry of session ``earlier_id`` (the
    one ``source_id`` was handed off from; left as text when None); "(older log #N)" stays
    text. The citations' words are in the active language."""

    def link(cited: re.Match[str]) -> str:
        words = escape(_words(cited[1], cited[2]))
        session = {None: source_id, "earlier ": earlier_id}.get(cited[1])
        if session is None:
            return f'(<span class="log-cite">{words}</span>)'
        page = session_url(session) + "?all=1"
        return f'(<a href="{page}#entry-{cited[2]}" class="log-cite">{words}</a>)'

    # only digits, escaped catalog words and a reversed URL are added to the escaped html
    return mark_safe(_CITED.sub(link, conditional_escape(html)))


def _words(hop: str | None, entry: str) -> str:
    """The citation's words in the active language: "log #N", "earlier log #N" or "older log
    #N" (``hop``: None, "earlier " or "older ")."""
    if hop == "earlier ":
        return gettext("earlier log #%(entry)s") % {"entry": entry}
    if hop == "older ":
        return gettext("older log #%(entry)s") % {"entry": entry}
    return gettext("log #%(entry)s") % {"entry": entry}


def source_of(successor_id: Any) -> Any:
    """Return the id of the session ``successor_id`` was handed off from, or None."""
    return (
        HandoffRecord.objects.filter(target_id=successor_id)
        .exclude(phase=Phase.FAILED)
        .values_list("source_id", flat=True)
        .first()
    )


def brief_links(html: str, session: Any) -> SafeString:
    """Link "(log #N)" in ``html`` (a plugin message of ``session``, already escaped) to entry N
    of the conversation ``session`` was handed off from, and "(earlier log #N)" to entry N of
    the one before it; unchanged when it has none. The host's log applies it to plugin messages
    through ``settings.HOST_PLUGIN_ENTRY_FILTERS``."""
    source = source_of(session.pk) if "log #" in html else None
    if source is None:
        return mark_safe(html)  # html: escaped
    earlier = source_of(source) if "(earlier log #" in html else None
    return link_log_entries(html, source, earlier)
