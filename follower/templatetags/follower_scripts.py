"""``{% follower_scripts %}``: the follower's transport script and the sources' own scripts."""

from __future__ import annotations

from django import template
from django.templatetags.static import static
from django.utils.html import format_html_join
from django.utils.safestring import SafeString

from follower import sources

register = template.Library()

TRANSPORT = "follower/follower.js"
"""The page-wide transport (numbered events, replay, heartbeat), the app's static file
``follower/static/follower/follower.js``."""


@register.simple_tag
def follower_scripts() -> SafeString:
    """Return ``<script type="module">`` tags: ``follower.js`` first, then each source's
    ``scripts`` (static paths, in ``FOLLOWER_SOURCES`` order), which run after it and use its
    ``window.follower`` object and events (the handoff's jump rules: ``handoff/jump.js``)."""
    own = [path for source in sources.sources() for path in getattr(source, "scripts", ())]
    paths = [TRANSPORT, *own]
    return format_html_join(
        "\n  ", '<script src="{}" type="module"></script>', ((static(p),) for p in paths)
    )
