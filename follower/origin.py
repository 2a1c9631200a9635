"""Which pages may open the follower's websocket: the site's own (issue 9, safe defaults).

A websocket carries the user's cookie whatever page opens it, so a page on another site must
not open ``/ws/follow/`` (cross-site websocket hijacking). The ``Origin`` a browser sends is
accepted when it is the site itself (the same host and port as the request's ``Host``, itself
one ``ALLOWED_HOSTS`` accepts), a host ``ALLOWED_HOSTS`` names (a ``*`` there names none), or
one of ``CSRF_TRUSTED_ORIGINS`` (``https://*.example.com`` covers the subdomains). A socket
without an ``Origin`` is refused too. Refused sockets get a 403 to the handshake.
"""

from __future__ import annotations

from typing import Any
from urllib.parse import urlsplit

from channels.security.websocket import WebsocketDenier
from django.conf import settings
from django.http.request import split_domain_port, validate_host
from django.utils.http import is_same_domain


def allowed_origin(origin: str, host: str) -> bool:
    """Return whether a page at ``origin`` may open a websocket sent to ``host`` (Host header)."""
    parts = urlsplit(origin)
    if parts.scheme not in ("http", "https") or not parts.netloc:
        return False
    trusted = getattr(settings, "CSRF_TRUSTED_ORIGINS", [])
    for pattern in trusted:
        scheme, _, netloc = pattern.partition("://")
        if scheme == parts.scheme and is_same_domain(parts.netloc, netloc.lstrip("*")):
            return True
    named = [h for h in settings.ALLOWED_HOSTS if h != "*"]
    domain, _ = split_domain_port(parts.netloc)
    if domain and validate_host(domain, named):
        return True
    own_domain, _ = split_domain_port(host)
    return parts.netloc == host and validate_host(own_domain, settings.ALLOWED_HOSTS)


class SameSiteOrigin:
    """ASGI middleware: refuse a websocket whose ``Origin`` is not the site's (see the module)."""

    def __init__(self, application: Any) -> None:
        self.application = application

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> Any:
        if scope["type"] == "websocket":
            headers = dict(scope.get("headers", []))
            origin = headers.get(b"origin", b"").decode("latin-1")
            host = headers.get(b"host", b"").decode("latin-1")
            if not allowed_origin(origin, host):
                return await WebsocketDenier()(scope, receive, send)
        return await self.application(scope, receive, send)
