"""The hooks the host's pages offer to plugins, filled from settings (the host imports no plugin).

- ``{% page_panels "slot" %}``: renders, in order, the templates that
  ``settings.HOST_PAGE_PANELS[slot]`` lists, each with the page's context (``session``,
  ``request``, ``user``). The conversation page's slots are ``PAGE_SLOTS``; a slot not listed
  renders nothing, so the page stands without any plugin.
- ``{{ title|title_note }}``: the first non-empty note that a function of
  ``settings.HOST_TITLE_NOTES`` (dotted paths of ``(title: str) -> str``) gives for a session
  title, "" when none does; the session list, the heading and the tab title show it beside
  the title.
- ``{{ text|entry_words }}``: a log entry's fixed words (a notice's text, a plugin card's
  title) in the reader's language: each function of ``settings.HOST_ENTRY_WORDS`` (dotted paths
  of ``(text: str) -> str``) in turn, each returning the text it does not know unchanged.
- ``{{ html|plugin_entry:session }}``: a plugin message's rendered Markdown (``html``, already
  escaped) passed through each function of ``settings.HOST_PLUGIN_ENTRY_FILTERS`` (dotted paths
  of ``(html: SafeString, session: Session) -> SafeString``), in order.

- ``{% runtime_folders_of user as folders %}``: the runtimes' session folders
  (``host.folders.runtime_folders``), each with ``on`` (whether ``user`` follows it), for the
  section the host adds to Settings → Conversation Collaboration
  (``settings.HANDOFF_SETTINGS_SECTIONS``).

A missing setting counts as empty (``host.conf``); ``host.checks`` refuses an unknown slot.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, cast

from django import template
from django.template.loader import get_template
from django.utils.module_loading import import_string
from django.utils.safestring import SafeString, mark_safe

from host.conf import host_settings
from host.folders import folder_rows

register = template.Library()

PAGE_SLOTS = (
    "conversation_title",  # right under the conversation's title
    "conversation_header",  # at the end of the conversation's header
    "conversation_panels",  # between the header and the log
    "conversation_composer",  # above the composer
)
"""The slots of the conversation page (``templates/chat/session.html``), top to bottom."""


def _hooks(paths: Sequence[str]) -> list[Callable[..., Any]]:
    return [import_string(path) for path in paths]


@register.simple_tag(takes_context=True)
def page_panels(context: template.Context, slot: str) -> SafeString:
    """Render the templates listed for ``slot`` with ``context``; "" when none are.

    Raises ``TemplateDoesNotExist`` for a listed template that is not there.
    """
    names = host_settings().page_panels.get(slot, ())
    request, page = context.get("request"), cast(dict[str, Any], context.flatten())
    return mark_safe("".join(get_template(name).render(page, request) for name in names))


@register.filter
def title_note(title: object) -> str:
    """The first note a ``HOST_TITLE_NOTES`` function gives for ``title``; "" when none does."""
    notes = (f(str(title or "")) for f in _hooks(host_settings().title_notes))
    return next((str(note) for note in notes if note), "")


@register.filter
def entry_words(text: object) -> str:
    """``text`` (a notice, a plugin card's title) after every ``HOST_ENTRY_WORDS`` function."""
    said = str(text)
    for hook in _hooks(host_settings().entry_words):
        said = str(hook(said))
    return said


@register.filter
def plugin_entry(html: str, session: Any) -> SafeString:
    """``html`` (a plugin message of ``session`` as escaped Markdown HTML) after every
    ``HOST_PLUGIN_ENTRY_FILTERS`` function, in order; unchanged when none is set."""
    result = mark_safe(html)  # html: the markdown filter's escaped output
    for hook in _hooks(host_settings().plugin_entry_filters):
        result = hook(result, session)
    return result


@register.simple_tag
def runtime_folders_of(user: Any) -> list[dict[str, Any]]:
    """The runtimes' folders as ``[{"runtime", "path", "exists", "on"}]``, ``on`` for ``user``."""
    return folder_rows(user.pk)
