"""Every page requires a signed-in user (accounts); pages speak the user's language."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from django.contrib.auth.middleware import LoginRequiredMiddleware as DjangoLoginRequired
from django.http import HttpRequest, HttpResponseBase
from django.middleware.locale import LocaleMiddleware
from django.utils import translation

from host.models import page_language

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


class UserLocaleMiddleware(LocaleMiddleware):
    """Django's ``LocaleMiddleware`` (cookie, then Accept-Language), except that a signed-in
    user's chosen language (``host.models.LanguagePreference``) comes first; without a choice
    the negotiated language is remembered for their follower events (``page_language``).
    Placed after the authentication middleware."""

    def process_request(self, request: HttpRequest) -> None:
        super().process_request(request)
        user = getattr(request, "user", None)
        if user is None or not user.is_authenticated:
            return
        language = page_language(user.pk, translation.get_language())
        if language != translation.get_language():
            translation.activate(language)
            request.LANGUAGE_CODE = translation.get_language()
