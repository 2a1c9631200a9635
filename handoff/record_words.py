"""A handoff record's phase and reason as people read them (seed 000, The transaction), in the
active language.

``handoff.core.phases`` keeps the identifiers (the API, the command's JSON and the database store
them); the record's choices in the admin, the panel and the lineage page show these words.
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
