"""Project-wide request checks that run before any page's view."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from django.core.exceptions import BadRequest
from django.http import HttpRequest, HttpResponseBase

from host.middleware import NINJA_APP_NAME

NUL = "\x00"


class RefuseNulQueryMiddleware:
    """Answer 400 to a page whose query string holds a NUL character (``?phase=%00``).

    PostgreSQL text cannot hold NUL, so such a value reaching a filter (an admin list filter, a
    search) would crash the page with a 500; no page has a use for it. The JSON API is left to
    validate its own (typed) query parameters and answer 422 naming the field. Raises
    ``django.core.exceptions.BadRequest``; nothing is read or changed.
    """

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponseBase]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponseBase:
        return self.get_response(request)

    def process_view(
        self,
        request: HttpRequest,
        view_func: Callable[..., Any],
        view_args: tuple[Any, ...],
        view_kwargs: dict[str, Any],
    ) -> None:
        match = request.resolver_match
        if match is not None and NINJA_APP_NAME in match.app_names:
            return
        for key, values in request.GET.lists():
            if NUL in key or any(NUL in value for value in values):
                raise BadRequest(f"The query parameter {key!r} holds a NUL character (%00).")
