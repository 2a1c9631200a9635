"""What the lineage page and the conversation header show of a chain (docs/design.md,
Lineage).

Read from ``handoff.lineage.records`` and the session controller; the brief of each hop is
rendered as the Markdown its successor was seeded with (``handoff.core.brief.render_brief``),
never as raw JSON.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any

from django.utils.formats import date_format, number_format
from django.utils.html import escape, format_html
from django.utils.safestring import SafeString, mark_safe
from django.utils.timezone import localtime
from django.utils.translation import gettext, ngettext

from handoff import services
from handoff.core.brief import render_brief
from handoff.lineage import records
from handoff.shapes import RecordOut
from handoff.status import record_dict
from handoff.words.record import runtime_words


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

    def runtimes(self) -> str:
        """Where each side of the hop runs: "Claude Code → Claude Code" (docs/design.md, Lineage:
        each hop names its runtime); "" when a side is gone."""
        if self.source is None or self.target is None:
            return ""
        return f"{runtime_words(self.source.runtime)} → {runtime_words(self.target.runtime)}"

    def sentence(self) -> SafeString:
        """What started this hop, when, and the source's figures then: one sentence in the
        active language, its time a ``<time>`` element (``record_sentence``)."""
        return record_sentence(self.record, self.created)


def _figure(value: int) -> str:
    return number_format(value, force_grouping=True)


def _opening(reason: str) -> str:
    """The sentence for a record's reason (``%(when)s``, ``%(tokens)s``, ``%(turns)s``,
    ``%(compactions)s`` to fill in)."""
    if reason == "manual":
        return gettext(
            "Asked for by hand on %(when)s, at %(tokens)s, after %(turns)s and %(compactions)s."
        )
    if reason == "repeated-compaction":
        return gettext(
            "Started by repeated compaction on %(when)s, at %(tokens)s, after %(turns)s and "
            "%(compactions)s."
        )
    return gettext(
        "Started by context pressure on %(when)s, at %(tokens)s, after %(turns)s and "
        "%(compactions)s."
    )


def record_sentence(record: RecordOut, created: datetime) -> SafeString:
    """Return a hop's record as one sentence: its reason (docs/spec.md, Trigger: ``manual``,
    ``context-pressure``, ``repeated-compaction``), when it was made (``created``, shown in the
    current time zone), the source's tokens of its window, turns and compactions."""
    metrics = record["metrics"]
    figures = {"tokens": _figure(metrics["tokens"]), "window": _figure(metrics["capacity"])}
    tokens = (
        gettext("%(tokens)s tokens of a %(window)s-token window")
        if metrics["capacity"]
        else gettext("%(tokens)s tokens (window unknown)")
    )
    shown = date_format(localtime(created), "Y-m-d H:i")
    values = {
        "when": format_html('<time datetime="{}">{}</time>', record["created"], shown),
        "tokens": escape(tokens % figures),
        "turns": escape(
            ngettext("%(count)s turn", "%(count)s turns", metrics["turns"])
            % {"count": _figure(metrics["turns"])}
        ),
        "compactions": escape(
            ngettext("%(count)s compaction", "%(count)s compactions", metrics["compactions"])
            % {"count": _figure(metrics["compactions"])}
        ),
    }
    return mark_safe(escape(_opening(record["reason"])) % values)  # every part escaped


def _session(session_id: Any) -> Any:
    controller = services.session_controller()
    return controller.get(str(session_id)) if controller is not None else None


def neighbours(session: Any) -> dict[str, Any]:
    """Return ``{"session", "predecessor", "successor"}``: ``session`` and the sessions next to
    it in its chain (None at either end), as the header's links show them. Two queries, plus
    one per neighbour found."""
    before, after = records.predecessor(session.pk), records.successor(session.pk)
    return {
        "session": session,
        "predecessor": _session(before) if before is not None else None,
        "successor": _session(after) if after is not None else None,
    }


def hops(session: Any) -> list[Hop]:
    """Return every hop of the chain ``session`` is on, oldest first."""
    found = []
    for record in records.chain(session.pk):
        source, target = _session(record.source_id), _session(record.target_id)
        brief = render_brief(record.brief) if record.brief else ""
        original = render_brief(record.original_brief) if record.original_brief else ""
        found.append(Hop(record_dict(record), record.created, source, target, brief, original))
    return found
