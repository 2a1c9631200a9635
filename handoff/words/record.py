"""A handoff record's phase and reason as people read them (docs/spec.md, State), in the
active language.

``RUNTIME_WORDS`` names where each side of a hop runs (``HostSession.runtime``: this product,
or a Claude Code or Codex terminal). ``handoff.core.phases`` keeps the identifiers (the API,
the command's JSON and the database store them); the record's choices in the admin, the panel
and the lineage page show these words.
"""

from __future__ import annotations

from django.utils.functional import Promise
from django.utils.translation import gettext_lazy as _

PHASE_WORDS: dict[str, Promise] = {
    "summarizing": _("summarizing"),
    "prepared": _("prepared"),
    "committed": _("committed"),
    "committed-start-pending": _("committed, start pending"),
    "started": _("started"),
    "failed": _("failed"),
}
REASON_WORDS: dict[str, Promise] = {
    "manual": _("manual"),
    "context-pressure": _("context pressure"),
    "repeated-compaction": _("repeated compaction"),
}
RUNTIME_WORDS: dict[str, Promise] = {
    "product": _("Session Handoff"),
    "claude": _("Claude Code"),
    "codex": _("Codex"),
}


def runtime_words(runtime: str) -> str:
    """Return where a session runs as people read it (the identifier itself when unknown)."""
    return str(RUNTIME_WORDS.get(runtime, runtime))
