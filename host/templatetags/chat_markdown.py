"""``{{ text|markdown }}``: CommonMark to HTML for the chat page, safe for untrusted text.

Raw HTML in the text is escaped, not passed through (``"html": False``), and markdown-it's link
check drops ``javascript:``, ``vbscript:``, ``file:`` and most ``data:`` URLs (such a link stays
literal text), so a message cannot inject script into the page.

Paths and identifiers render as written: underscores inside a path or a dotted name
(``weather/__init__.py``, ``pkg.__version__``) and a dunder name (``__init__``) are text, not
emphasis, in the timeline and in the brief. ``_word_``, ``_a few words_`` and ``**bold**``
still emphasize.
"""

from __future__ import annotations

import re

from django import template
from django.utils.safestring import SafeString, mark_safe
from markdown_it import MarkdownIt
from markdown_it.rules_inline import StateInline

register = template.Library()

# A run of characters a path or identifier is made of, and what makes such a run literal: a
# path separator or a dot inside it, or the shape of a dunder name.
_RUN_CHAR = re.compile(r"[\w./-]")
_LITERAL_RUN = re.compile(r"[^\W_][/.]|[/.][^\W_]|\A__\w+__\Z")


def literal_identifier(state: StateInline, silent: bool) -> bool:
    """Inline rule: at an ``_`` inside a path or identifier, take the rest of it as text.

    The run around the underscore is the characters of ``[\\w./-]`` on both sides; it is
    literal when ``_LITERAL_RUN`` finds a separator or dot next to a letter or digit inside it,
    or it is a dunder.
    """
    src, pos = state.src, state.pos
    if src[pos] != "_":
        return False
    start = pos
    while start > 0 and _RUN_CHAR.match(src[start - 1]):
        start -= 1
    end = pos
    while end < state.posMax and _RUN_CHAR.match(src[end]):
        end += 1
    if not _LITERAL_RUN.search(src[start:end]):
        return False
    if not silent:
        state.push("text", "", 0).content = src[pos:end]
    state.pos = end
    return True


_renderer = MarkdownIt("commonmark", {"html": False})
_renderer.inline.ruler.before("emphasis", "literal_identifier", literal_identifier)


@register.filter
def markdown(text: object) -> SafeString:
    """Render ``text`` (CommonMark) as HTML; everything the text itself holds is escaped."""
    return mark_safe(_renderer.render(str(text or "")))  # raw HTML is disabled: all escaped
