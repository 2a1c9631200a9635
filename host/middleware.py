"""Every page requires a signed-in user (issue 3, §1: accounts)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from django.contrib.auth.middleware import LoginRequiredMiddleware as DjangoLoginRequired
from django.http import HttpRequest, HttpResponseBase

# The URL app name django-ninja gives every route of a NinjaAPI.
NINJA_APP_NAME = "ninja"


class LoginRequiredMiddleware(DjangoLoginRequired):
    """Django's ``LoginRequiredMiddleware``, except for the JSON API.

    Pages send an anonymous visitor to the login page. The API authenticates each route itself
    (bearer token or the browser session) and answers 401 rather than a redirect a script
    cannot follow. Views marked ``login_not_required`` (the login page) stay open.
    """

    def process_view(
        self,
        request: HttpRequest,
        view_func: Callable[..., Any],
        view_args: tuple[Any, ...],
        view_kwargs: dict[str, Any],
    ) -> HttpResponseBase | None:
        match = request.resolver_match
        if match is not None and NINJA_APP_NAME in match.app_names:
            return None
        response: HttpResponseBase | None = super().process_view(
            request, view_func, view_args, view_kwargs
        )
        return response
