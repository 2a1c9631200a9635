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

Sources render with ``fragment`` and ``render`` in their ``render`` hook, which
``follower.events`` calls only after the change committed, in the receiving user's language
(``language_of``, set around a batch's renders), never inside the writer's transaction.
"""

from __future__ import annotations

from typing import Any

from django.conf import settings
from django.template.loader import render_to_string

from common.reads import once
from follower import sources

Fragment = dict[str, Any]


@once
def language_of(user_id: int) -> str:
    """Return the language ``user_id``'s fragments are rendered in: the one they chose (a
    source's ``language``: the host's ``LanguagePreference``), else the site's
    (``LANGUAGE_CODE``). Read once per batch of events and per page request
    (``common.reads``)."""
    return sources.language(user_id) or str(settings.LANGUAGE_CODE)


def render(template_name: str, context: dict[str, Any]) -> str:
    """Render ``template_name`` with ``context`` in the active language (the receiving user's,
    during a delivery)."""
    return render_to_string(template_name, context)


def fragment(
    template_name: str,
    context: dict[str, Any],
    *,
    session: Any = None,
    unless: str | None = None,
) -> Fragment:
    """Render one fragment: for the page of ``session`` (None: every page), left out by a page
    that already matches ``unless``."""
    return {
        "session": str(session) if session is not None else None,
        "html": render(template_name, context),
        "unless": unless,
    }
