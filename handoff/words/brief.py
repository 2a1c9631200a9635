"""The brief's fields as people read them (docs/spec.md, Brief), in the active language.

``handoff.core.brief`` keeps the schema's English (the successor's Markdown and the model's
prompt use it); the admin and the review form show these words instead.
"""

from __future__ import annotations

from django.utils.translation import gettext_lazy as _

# Each list field's heading.
HEADINGS = {
    "decisions": _("Decisions"),
    "constraints": _("Constraints"),
    "artifacts": _("Artifacts"),
    "verified": _("Verified"),
    "pending": _("Pending"),
    "next_steps": _("Next steps"),
    "uncertainties": _("Uncertainties"),
}
# What each field holds (``handoff.core.brief.BRIEF_FIELDS``), said to the person editing it.
HELP = {
    "goal": _("The current user objective"),
    "decisions": _("Chosen options, accepted corrections"),
    "constraints": _("User requirements, permissions, prohibitions"),
    "artifacts": _("Absolute paths, workspace, input versions, key evidence"),
    "verified": _("What was actually verified, kept distinct from what was merely done"),
    "pending": _("Unfinished work and the concrete reason it is blocked"),
    "next_steps": _("Specific next actions"),
    "uncertainties": _(
        "Unknowns, unverified items, details the earlier summaries may have dropped"
    ),
}
