"""A page that changes by events, and one render of it shared by the tabs that follow a move.

Pages the follower keeps current (the conversation page) are never cached: Back or a reload
must not show a stale copy. One case differs: when the follower moves every open tab of a
handoff's source to its successor (docs/spec.md, Follower rules;
``handoff/static/handoff/jump.js``), all of them ask for the same URL within milliseconds.
Chromium's HTTP cache lets one request per URL go to the network at a time; the others wait for its
answer and, when it may not be stored, only then send their own, so the fifth tab would wait for
four page renders in a row.

The follower marks such a move in the URL (``?followed=1``, ``follower.js``): that
answer may be stored privately for ``SHARED_SECONDS``, so the waiting tabs read the first tab's
answer instead of asking again. A copy that old is still right once shown: the page carries the
id of the newest event when it was rendered (``data-event-id``), and its follower has every
later event replayed (docs/spec.md, Follower rules). The next page removes the mark from its
address, so a reload or a Back to it renders anew. Without the mark the page is never cached.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

from django.http import HttpRequest, HttpResponseBase
from django.utils.cache import add_never_cache_headers, patch_cache_control

FOLLOWED = "followed"
"""The query parameter the follower adds to a page it moves a tab to (``follower.js``)."""

SHARED_SECONDS = 5
"""How long (seconds) the browser may reuse a followed page for its other tabs."""


def followed_page(view: Callable[..., HttpResponseBase]) -> Callable[..., HttpResponseBase]:
    """Decorate a page view: never cached, except an answer to ``?followed=1``, which is
    ``Cache-Control: private, max-age=SHARED_SECONDS`` (see the module docstring)."""

    @functools.wraps(view)
    def wrapper(request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponseBase:
        response = view(request, *args, **kwargs)
        if request.GET.get(FOLLOWED) == "1" and response.status_code == 200:
            patch_cache_control(response, private=True, max_age=SHARED_SECONDS)
        else:
            add_never_cache_headers(response)
        return response

    return wrapper
