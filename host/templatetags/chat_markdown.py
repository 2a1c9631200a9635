"""``{{ text|markdown }}``: CommonMark to HTML for the chat page, safe for untrusted text.

Raw HTML in the text is escaped, not passed through (``"html": False``), and markdown-it's link
check drops ``javascript:``, ``vbscript:``, ``file:`` and most ``data:`` URLs (such a link stays
literal text), so a message cannot inject script into the page.
"""

from __future__ import annotations

from django import template
from django.utils.safestring import SafeString, mark_safe
from markdown_it import MarkdownIt

register = template.Library()

_renderer = MarkdownIt("commonmark", {"html": False})


@register.filter
def markdown(text: object) -> SafeString:
    """Render ``text`` (CommonMark) as HTML; everything the text itself holds is escaped."""
    return mark_safe(_renderer.render(str(text or "")))  # raw HTML is disabled: all escaped
