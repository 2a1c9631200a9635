"""``{{ title|continued }}``: whether a session title carries the handoff's rename suffix.

A handed-off source is renamed ``<title> · 接续<successor id[:6]>`` (seed 000; 接续 means
"continued"). The text stays as the spec wants it; the pages add an English hint next to it.
"""

from __future__ import annotations

from django import template

register = template.Library()

CONTINUED_MARK = " · 接续"
CONTINUED_HINT = "handed off to a successor"


@register.filter
def continued(title: object) -> bool:
    """True when ``title`` holds the " · 接续" suffix of a handed-off conversation."""
    return CONTINUED_MARK in str(title or "")


@register.simple_tag
def continued_hint() -> str:
    """The hint shown (as text or a tooltip) next to such a title."""
    return CONTINUED_HINT
