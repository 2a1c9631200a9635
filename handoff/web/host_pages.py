"""What the handoff's pages take from their host, each through a setting.

The handoff's templates (the panel, the lineage links and page, the status report) and its
follower source link to the host's page of a session (``HANDOFF_SESSION_URL``:
``handoff.conf.session_url``, ``{% session_url id %}``); the lineage page extends the host's base
template and renders briefs as the host renders Markdown. A host sets (the defaults name no
host; ``handoff.conf.HandoffSettings``):

- ``HANDOFF_BASE_TEMPLATE`` (``"base.html"``): the template the lineage page and the settings
  card (``handoff_settings``) extend; it must have the blocks ``title`` and ``body``;
- ``HANDOFF_MARKDOWN`` (``None``): dotted path of ``(text: str) -> SafeString``, the host's
  Markdown rendering of a brief on the lineage page; ``None``: the brief is shown as escaped
  paragraphs (Django's ``linebreaks``). A path that does not import raises
  ``ImproperlyConfigured`` naming the setting.
"""

from __future__ import annotations

from django.core.exceptions import ImproperlyConfigured
from django.template.defaultfilters import linebreaks_filter
from django.utils.module_loading import import_string
from django.utils.safestring import SafeString

from handoff.conf import handoff_settings


def base_template() -> str:
    """Return the name of the template the handoff's full pages extend."""
    return handoff_settings().base_template


def markdown(text: str) -> SafeString:
    """Return ``text`` (a brief as Markdown) as HTML, rendered as the host renders Markdown;
    without a host's rendering (``HANDOFF_MARKDOWN = None``) escaped paragraphs (``linebreaks``)."""
    path = handoff_settings().markdown
    if path is None:
        return linebreaks_filter(text, autoescape=True)
    try:
        render = import_string(path)
    except ImportError as exc:
        raise ImproperlyConfigured(f"HANDOFF_MARKDOWN = {path!r} does not import: {exc}") from exc
    rendered: SafeString = render(text)
    return rendered
