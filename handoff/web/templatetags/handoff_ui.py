"""``{% handoff_panel session %}``: the handoff panel on the conversation page;
``{% handoff_title_hint session %}``: the line under its title saying what ``· 接续`` means.
``{{ session|review_notice }}``: what the composer's notice of a waiting brief asks of the user.
``{% handoff_meter session_id meter %}``: its context meter (docs/design.md, The context meter);
``{{ meter|meter_summary }}``: the meter's sentence in the reader's language;
``{% handoff_lineage session %}``: links to its predecessor, successor and lineage page (§3).
``{{ html|brief_links:session }}``: a successor's brief with its "(log #N)" evidence linked;
``{{ html|brief_words }}``: a brief's title, headings and "Goal:" in the reader's language.
``{{ record|discarded_note }}``: "Discarded at review…" for a record the user discarded.
``{% session_url id %}``: the host's page of a session; ``{{ text|handoff_markdown }}``: a brief
as the host renders Markdown (the host's settings: ``handoff.conf``, ``handoff.web.host_pages``).

The handoff's own templates load these; the host's pages reach them only through the slot
templates in ``handoff/web/templates/handoff/slots/`` that the host's settings list
(``HOST_PAGE_PANELS``, host/templatetags/chat_hooks.py).
"""

from __future__ import annotations

from typing import Any

from django import template
from django.utils.safestring import SafeString

from handoff import conf
from handoff.core.phases import discarded_note
from handoff.inheritance import readable
from handoff.lineage.page import neighbours
from handoff.meter.fragment import render_meter
from handoff.shapes import MeterOut
from handoff.web import host_pages
from handoff.web.log_links import brief_links
from handoff.web.panel import (
    BASIS_WORDS,
    TOKEN_LABELS,
    continued_note,
    hint_context,
    session_panel,
)
from handoff.words import log as log_words
from handoff.words.meter import summary
from handoff.words.record import PHASE_WORDS, REASON_WORDS
from handoff.words.review import review_notice

register = template.Library()


@register.inclusion_tag("handoff/panel.html")
def handoff_panel(session: Any) -> dict[str, Any]:
    """Render the panel of ``session`` (the page already checked that the user owns it)."""
    return session_panel(session)


@register.inclusion_tag("handoff/_conv_hint.html")
def handoff_title_hint(session: Any, oob: bool = False) -> dict[str, Any]:
    """Render the title's hint (``handoff.web.panel.title_hint``); ``oob`` swaps it in place
    from a panel response (the hint changes when ``disable`` stops forwarding)."""
    return hint_context(session, oob)


@register.filter(name="review_notice")
def review_notice_words(session: Any) -> object:
    """What the notice of a brief waiting for review asks (``handoff.words.review``): commit
    or discard it here, or its terminal's way to the successor."""
    return review_notice(session)


@register.filter
def continued(title: str) -> object:
    """What a title's ``· 接续`` suffix means (``panel.continued_note``), "" for other titles."""
    return continued_note(title or "")


@register.filter
def inheritance_rows(report: list[dict[str, str]]) -> list[dict[str, object]]:
    """The inheritance report's rows in words (``handoff.inheritance.readable``)."""
    return readable(report)


@register.filter
def meter_summary(meter: MeterOut) -> str:
    """The meter's sentence in the active language (``handoff.words.meter.summary``)."""
    return summary(meter)


@register.simple_tag
def handoff_meter(session_id: Any, meter: MeterOut) -> str:
    """Render the context meter of ``session_id`` (``meter``: the status report's)."""
    return render_meter(session_id, meter)


@register.inclusion_tag("handoff/_lineage_links.html")
def handoff_lineage(session: Any) -> dict[str, Any]:
    """Render the links to ``session``'s neighbours in its chain (nothing outside a chain)."""
    return neighbours(session)


@register.filter(name="brief_links")
def brief_links_filter(html: str, session: Any) -> SafeString:
    """Link "(log #N)" in ``html`` to the source's entries (``handoff.web.log_links``)."""
    return brief_links(html, session)


@register.filter(name="discarded_note")
def discarded_note_filter(record: Any) -> str:
    """How people read ``record`` (a ``RecordOut``) discarded at review; "" for any other."""
    return discarded_note(record["phase"], record["error"]) if record else ""


@register.filter
def token_label(label: str) -> object:
    """A token label (exact, estimated, unavailable) in words (docs/spec.md, Token sources)."""
    return TOKEN_LABELS.get(label, label)


@register.filter
def basis_words(basis: str) -> object:
    """A token basis (context, cumulative) in words."""
    return BASIS_WORDS.get(basis, basis)


@register.filter
def reason_words(reason: str) -> object:
    """A handoff reason (manual, context-pressure, repeated-compaction) in words."""
    return REASON_WORDS.get(reason, reason)


@register.filter
def phase_words(phase: str) -> object:
    """A record's phase in words."""
    return PHASE_WORDS.get(phase, phase)


@register.simple_tag
def session_url(session_id: Any) -> str:
    """The path of the host's page of ``session_id`` (``handoff.conf.session_url``)."""
    return conf.session_url(session_id)


@register.filter
def handoff_markdown(text: str) -> SafeString:
    """``text`` (Markdown) as HTML, as the host renders it (``host_pages.markdown``)."""
    return host_pages.markdown(text)


@register.filter
def brief_words(html: SafeString) -> SafeString:
    """A brief's HTML with its title, headings and "Goal:" in the reader's language
    (``handoff.words.log.brief_words``)."""
    return log_words.brief_words(html)
