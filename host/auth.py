"""Authentication of the JSON API: bearer tokens for scripts, the Django session for the browser.

Every route of ``/api/`` requires one of them (docs/api.md). ``request.auth`` is the user
either way; a request with neither is answered 401.

- ``Authorization: Bearer <token>``: the token is looked up by its SHA-256 digest in
  ``ApiToken``; the token itself is never stored (``manage.py create_api_token USER``).
- The browser's logged-in Django session, with Django's CSRF check on unsafe methods.
"""

from __future__ import annotations

import hashlib
import secrets
from typing import Any

from django.contrib.auth.models import User
from django.http import HttpRequest
from ninja.security import HttpBearer, SessionAuth

from host.models import ApiToken


def token_digest(token: str) -> str:
    """Return the SHA-256 hex digest (64 characters) under which a token is stored."""
    return hashlib.sha256(token.encode("utf-8")).hexdigest()


def issue_token(user: User) -> str:
    """Create a new bearer token for ``user`` and return it; only its digest is stored.

    One row insert: a crash leaves either no token or a usable one.
    """
    token = secrets.token_urlsafe(32)
    ApiToken.objects.create(user=user, digest=token_digest(token))
    return token


class BearerTokenAuth(HttpBearer):
    """``Authorization: Bearer <token>``: the active user owning the token, else None."""

    def authenticate(self, request: HttpRequest, token: str) -> Any:
        if not token:
            return None
        api_token = (
            ApiToken.objects.select_related("user")
            .filter(digest=token_digest(token), user__is_active=True)
            .first()
        )
        return api_token.user if api_token else None


class BrowserSessionAuth(SessionAuth):
    """The logged-in Django session; unsafe methods must pass Django's CSRF check (403).

    An anonymous request is not CSRF-checked: it gets the 401 every unauthenticated request
    gets, not a 403 that would hide the missing login.
    """

    def _get_key(self, request: HttpRequest) -> str | None:
        if not request.user.is_authenticated:
            return None
        return super()._get_key(request)


api_auth = [BearerTokenAuth(), BrowserSessionAuth()]
