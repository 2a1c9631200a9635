"""The plain host's JSON API: the handoff's half only (``handoff.api``), behind Django's session
login, its refusals answered as the reference host answers them (unknown session 404, any other
refusal 409)."""

from __future__ import annotations

from django.http import HttpRequest, HttpResponse
from ninja import NinjaAPI
from ninja.security import django_auth

from handoff.api import records_router, sessions_router
from handoff.exceptions import HandoffError, SessionNotFound

api = NinjaAPI(auth=django_auth, urls_namespace="api", docs_url=None)
api.add_router("/sessions", sessions_router)
api.add_router("/handoffs", records_router)


@api.exception_handler(HandoffError)
def _refused(request: HttpRequest, exc: HandoffError) -> HttpResponse:
    status = 404 if isinstance(exc, SessionNotFound) else 409
    return api.create_response(request, {"detail": str(exc)}, status=status)
