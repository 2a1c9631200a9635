"""Which pages may open the follower's websocket: the site's own.

A websocket carries the user's cookie whatever page opens it, so a page on another site (or
another application on the same host, on another port) must not open ``/ws/follow/``
(cross-site websocket hijacking). As Django's CSRF origin check does, an ``Origin`` is accepted
when its scheme, host and port are the site's own — the socket's ``Host`` header (itself one
``ALLOWED_HOSTS`` accepts) with the scheme the page was served with — or match one of
``CSRF_TRUSTED_ORIGINS`` (``https://*.example.com`` covers the subdomains). A missing port is
the scheme's default (80 for http, 443 for https). ``ALLOWED_HOSTS`` names alone do not open
the socket: they carry no scheme or port. A socket without an ``Origin`` is refused too.
Refused sockets get a 403 to the handshake.

The comparison is Channels' ``OriginValidator``; ``SiteOriginValidator`` only adds the site's
own origin, which depends on each socket's ``Host``.
"""

from __future__ import annotations

from typing import Any

from channels.security.websocket import OriginValidator
from django.conf import settings
from django.http.request import split_domain_port, validate_host


def own_origin(scope: dict[str, Any]) -> str | None:
    """Return the origin of the site's pages for this socket, e.g. ``http://127.0.0.1:8000``.

    The host and port are the socket's ``Host`` header; the scheme is ``https`` for a ``wss``
    socket or when ``SECURE_PROXY_SSL_HEADER`` says so, else ``http``. None when ``Host`` is
    missing or not one ``ALLOWED_HOSTS`` accepts.
    """
    headers = {
        name.decode("latin-1").lower(): value.decode("latin-1")
        for name, value in scope.get("headers", [])
    }
    host = headers.get("host", "")
    domain, _ = split_domain_port(host)
    if not domain or not validate_host(domain, settings.ALLOWED_HOSTS):
        return None
    secure = scope.get("scheme") == "wss"
    proxy_header = settings.SECURE_PROXY_SSL_HEADER
    if proxy_header is not None:
        name, value = proxy_header
        header = name.removeprefix("HTTP_").replace("_", "-").lower()
        secure = secure or headers.get(header, "").split(",")[0].strip() == value
    return f"{'https' if secure else 'http'}://{host}"


def trusted_origins() -> list[str]:
    """Return ``CSRF_TRUSTED_ORIGINS`` as Channels' patterns (``*.x.com`` → ``.x.com``)."""
    return [origin.replace("://*.", "://.") for origin in settings.CSRF_TRUSTED_ORIGINS]


class SiteOriginValidator(OriginValidator):  # type: ignore[misc]
    """Channels' ``OriginValidator`` whose allowed origins are the site's own and the trusted.

    Each websocket is checked against ``trusted_origins()`` (read at every connection, so a
    settings change applies at once) plus ``own_origin(scope)``; anything else, a missing
    ``Origin`` included, is denied (403). Wrap the websocket application only.
    """

    def __init__(self, application: Any) -> None:
        super().__init__(application, allowed_origins=[])

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> Any:
        own = own_origin(scope)
        allowed = trusted_origins() + ([own] if own is not None else [])
        return await OriginValidator(self.application, allowed)(scope, receive, send)
