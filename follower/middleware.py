"""The follower's baseline is the state a page was rendered with (docs/spec.md, Follower rules).

``FollowerBaselineMiddleware`` reads, before the view runs, the signed-in user's newest event id
and what the apps add (``follower.sources``: the handoff's ``redirect_to``, where the page's
session, the view's ``session_id``, redirects to now), and leaves them on the request as
``request.follower_baseline = {"event_id": int, ...}`` (here ``"redirect_to": str | None``).
``base.html`` embeds them; the page's follower says hello with that id and replays every later
event, so a handoff that commits while the page renders still moves it, and a page rendered
after the handoff (showing the banner) stays. Read before the view: every event up to the id is
reflected in what the view shows. Only full pages get it (not htmx fragments, not POSTs).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from django.http import HttpRequest, HttpResponse

from follower import sources
from follower.events import current_event_id


class FollowerBaselineMiddleware:
    """Put the page's follower baseline on the request (see the module docstring)."""

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        return self.get_response(request)

    def process_view(
        self,
        request: HttpRequest,
        view: Callable[..., Any],
        args: tuple[Any, ...],
        kwargs: dict[str, Any],
    ) -> None:
        page = request.method == "GET" and "HX-Request" not in request.headers
        if not page or not request.user.is_authenticated:
            return
        request.follower_baseline = {  # type: ignore[attr-defined]
            "event_id": current_event_id(request.user.pk),
            **sources.baseline(kwargs),
        }
