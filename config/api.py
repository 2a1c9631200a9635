"""The django-ninja API under ``/api/`` (OpenAPI docs at ``/api/docs``).

This module is where the host and the handoff app meet (neither imports the other): it mounts
their routers, composes the session detail (host fields + the handoff status report), and turns
every error into JSON ``{"detail": "<clear message>"}``:

- 400 for a body that is not JSON;
- 401 without a bearer token or a logged-in browser session (``host.auth``);
- 404 for a session that does not exist or belongs to another user (same answer for both);
- 413 for a body over ``DATA_UPLOAD_MAX_MEMORY_SIZE`` bytes;
- 422 for a bad payload, the message naming each offending field (a body sent as anything but
  ``application/json`` names ``Content-Type``);
- 409 when the handoff refuses an action on that session, or input is posted to a finished
  or disposed session (``host.api``).

Each route documents the answers it can give (``common.api_conventions.answers``).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any
from uuid import UUID

from django.conf import settings
from django.core.exceptions import RequestDataTooBig
from django.http import HttpRequest, HttpResponse
from ninja import NinjaAPI
from ninja.errors import AuthenticationError, HttpError, ValidationError
from ninja.parser import Parser
from ninja.types import DictStrAny

from agent_hooks.api import router as hooks_router
from common.api_conventions import READ_ONE, answers, body_too_big
from handoff import operations
from handoff.api import records_router, sessions_router
from handoff.exceptions import HandoffError, InvalidBrief, SessionNotFound
from handoff.shapes import MeterOut, StatusOut, TokensOut
from host.api import SessionOut, owned_session
from host.api import router as host_router
from host.auth import api_auth
from host.intake import InvalidInput

JSON_MEDIA_TYPE = "application/json"


class NotJson(ValueError):
    """The body was sent with another media type than ``application/json``."""


class JsonOnlyParser(Parser):
    """ninja's JSON parser, refusing a body whose ``Content-Type`` is not JSON.

    A ``text/plain`` or form body is not guessed at: the API answers 422 naming
    ``Content-Type`` (see ``_unparsable_body``), and nothing changes.
    """

    def parse_body(self, request: HttpRequest) -> DictStrAny:
        if request.content_type != JSON_MEDIA_TYPE:
            sent = request.content_type or "no Content-Type"
            raise NotJson(f"Content-Type: send the body as {JSON_MEDIA_TYPE}, not {sent}")
        return super().parse_body(request)


api = NinjaAPI(
    parser=JsonOnlyParser(),
    title="Session Handoff API",
    version="1",
    description="Sessions, their messages and handoffs. Authenticate with "
    "`Authorization: Bearer <token>` (`manage.py create_api_token USER`) or a browser login.",
    auth=api_auth,
)

# Parts of a validation error's location that name where the value came from rather than the
# field: ninja's parameter sources and the argument name the routes give their JSON bodies.
_LOCATION_PARTS = frozenset({"body", "query", "path", "header", "cookie", "form", "file"})
_ARGUMENT_PARTS = frozenset({"payload"})


def field_name(loc: Sequence[Any]) -> str:
    """Return the dotted field a pydantic error location points at (``usage.output``)."""
    parts = [str(part) for part in loc]
    if parts and parts[0] in _LOCATION_PARTS:
        parts = parts[1:]
    if parts and parts[0] in _ARGUMENT_PARTS:
        parts = parts[1:] or ["body"]
    return ".".join(parts) or "request"


def validation_message(errors: Iterable[dict[str, Any]]) -> str:
    """Join pydantic errors into one sentence per field: ``content: Field required``."""
    return "; ".join(f"{field_name(e.get('loc', ()))}: {e.get('msg', 'invalid')}" for e in errors)


@api.exception_handler(ValidationError)
def _invalid_payload(request: HttpRequest, exc: ValidationError) -> HttpResponse:
    return api.create_response(
        request, {"detail": validation_message(exc.errors), "errors": exc.errors}, status=422
    )


@api.exception_handler(HttpError)
def _unparsable_body(request: HttpRequest, exc: HttpError) -> HttpResponse:
    """ninja answers an unparsable body 400; one that is not JSON at all is a 422."""
    if isinstance(exc.__cause__, NotJson):
        return api.create_response(request, {"detail": str(exc.__cause__)}, status=422)
    return api.create_response(request, {"detail": exc.message}, status=exc.status_code)


@api.exception_handler(InvalidInput)
def _invalid_input(request: HttpRequest, exc: InvalidInput) -> HttpResponse:
    return api.create_response(request, {"detail": str(exc)}, status=422)


@api.exception_handler(RequestDataTooBig)
def _too_big(request: HttpRequest, exc: RequestDataTooBig) -> HttpResponse:
    detail = body_too_big(settings.DATA_UPLOAD_MAX_MEMORY_SIZE)
    return api.create_response(request, {"detail": detail}, status=413)


@api.exception_handler(AuthenticationError)
def _unauthenticated(request: HttpRequest, exc: AuthenticationError) -> HttpResponse:
    detail = "Authentication required: send 'Authorization: Bearer <token>' or log in."
    return api.create_response(request, {"detail": detail}, status=401)


@api.exception_handler(HandoffError)
def _handoff_refused(request: HttpRequest, exc: HandoffError) -> HttpResponse:
    status = (
        404 if isinstance(exc, SessionNotFound) else 422 if isinstance(exc, InvalidBrief) else 409
    )
    return api.create_response(request, {"detail": str(exc)}, status=status)


class SessionDetailOut(SessionOut):
    """A session with its token reading, context meter, redirect, lineage and full handoff
    status report."""

    tokens: TokensOut
    meter: MeterOut
    redirect: str | None
    predecessor: str | None
    successor: str | None
    handoff: StatusOut


@host_router.get(
    "/{session_id}",
    response={200: SessionDetailOut, **answers(*READ_ONE, 409)},
    summary="Read one session",
)
def session_detail(request: HttpRequest, session_id: UUID) -> dict[str, Any]:
    """The session's fields plus ``tokens`` {value, basis, label}, the context ``meter``
    (docs/design.md, The context meter), ``redirect``, its chain's ``predecessor`` and
    ``successor`` (docs/design.md, Lineage) and the whole status report as ``handoff``."""
    session = owned_session(request, session_id)
    report = operations.status(session.pk)
    fields = SessionOut.from_orm(session).model_dump(by_alias=False)
    return {
        **fields,
        "tokens": report["tokens"],
        "meter": report["meter"],
        "redirect": report["redirect"],
        "predecessor": report["predecessor"],
        "successor": report["successor"],
        "handoff": report,
    }


api.add_router("/sessions", host_router)
api.add_router("/sessions", sessions_router)
api.add_router("/handoffs", records_router)
api.add_router("/hooks", hooks_router)
