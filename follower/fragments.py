"""Page fragments that follower events carry, rendered once per event (docs/design.md,
Events carry the change).

What a page shows of a conversation (its handoff panel with the banner and the phase chips, a
new timeline entry, the "working" line, a session-list row) arrives in the event that changed
it, rendered here on the server, and the page applies it in place (``follower.js``:
htmx's out-of-band swaps, ``htmx.swap``), so an event costs an open tab no request. A fragment
is ``{"session": str | None, "html": str, "unless": str | None}``:

- ``html``: elements marked ``hx-swap-oob`` (``"true"`` replaces the element with the same id;
  ``"beforeend:#timeline"`` appends the wrapper's children there);
- ``session``: applied only on the page of that session (None: on every page);
- ``unless``: a CSS selector; a page that already matches it leaves the fragment out (an entry
  the page was rendered with, replayed after it).

Rendering happens only in ``render``, in the receiving user's language, and only after the
change committed: a source's ``render`` hook fills an event's fragments when ``follower.events``
numbers it (``rendering``), never inside the writer's transaction.
"""

from __future__ import annotations

from typing import Any

from django.conf import settings
from django.template.loader import render_to_string
from django.utils import translation

from common.reads import once
from follower import sources

Fragment = dict[str, Any]


@once
def language_of(user_id: int) -> str:
    """Return the language ``user_id``'s fragments are rendered in: the one they chose (a
    source's ``language``: the host's ``LanguagePreference``), else the site's
    (``LANGUAGE_CODE``). Read once per batch of events (``rendering``) and per page request
    (``common.reads``)."""
    return sources.language(user_id) or str(settings.LANGUAGE_CODE)


def render(user_id: int, template_name: str, context: dict[str, Any]) -> str:
    """Render ``template_name`` with ``context`` for ``user_id`` (in their language)."""
    with translation.override(language_of(user_id)):
        return render_to_string(template_name, context)


def fragment(
    user_id: int,
    template_name: str,
    context: dict[str, Any],
    *,
    session: Any = None,
    unless: str | None = None,
) -> Fragment:
    """Render one fragment for ``user_id``: for the page of ``session`` (None: every page),
    left out by a page that already matches ``unless``."""
    return {
        "session": str(session) if session is not None else None,
        "html": render(user_id, template_name, context),
        "unless": unless,
    }
