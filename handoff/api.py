"""The handoff part of the JSON API (docs/api.md; one status report for every surface).

Mounted by ``config.api``: ``sessions_router`` at ``/api/sessions`` (the per-session switches)
and ``records_router`` at ``/api/handoffs`` (the records of the caller's sessions). Answers are
built by ``handoff.status`` so they match the command, the composer and the settings card, and
their schemas are the shapes ``handoff.shapes`` declares once (``RecordOut``, ``StatusOut``).

The handoff app does not import the host: sessions are read through the session controller
service, and records are filtered through their ``source`` relation.
"""

# No ``from __future__ import annotations`` here: ninja reads the parameters of a ``@paginate``d
# view through its wrapper, whose module cannot resolve this module's names from strings.

from typing import TYPE_CHECKING, Annotated, Any
from uuid import UUID

from django.db.models import QuerySet
from django.http import HttpRequest
from ninja import Field, FilterLookup, FilterSchema, Query, Router, Schema
from ninja.errors import HttpError
from ninja.pagination import paginate
from pydantic import ConfigDict

from common.api_conventions import READ_ONE, WRITE_ONE, LimitOffsetPaging, answers
from handoff import export, operations
from handoff.core.phases import Phase
from handoff.exceptions import SessionNotFound
from handoff.models import HandoffRecord
from handoff.session_model import session_key_type
from handoff.shapes import ExportOut, RecordOut, StatusOut
from handoff.status import record_dict

if TYPE_CHECKING:
    SessionKey = Any
else:
    SessionKey = session_key_type()
"""A session id as the session model's primary key types it (``UUID`` on the reference host,
``int`` on a host with integer keys): read when the API is mounted, so a malformed id is
refused (422) before the view runs."""

sessions_router = Router(tags=["handoff"])
records_router = Router(tags=["handoff"])


class HandoffActionIn(Schema):
    """``enable`` / ``disable`` the main's switch, ask for a handoff ``now``, read ``status``;
    ``review`` / ``commit`` / ``discard`` the handoff waiting for review (``brief``: the edited
    brief to commit); ``review-on`` / ``review-off`` this conversation's review.

    ``brief`` goes with ``commit`` only: any other action with a brief is refused (422), and the
    OpenAPI schema says so (``anyOf``: the action is ``commit``, or ``brief`` is absent or null),
    so a request the schema allows is not refused for it.
    """

    model_config = ConfigDict(
        extra="forbid",
        json_schema_extra={
            "anyOf": [
                {"properties": {"action": {"const": operations.Action.COMMIT.value}}},
                {"properties": {"brief": {"type": "null"}}},
            ]
        },
    )

    action: operations.Action  # a str enum: only its values (strings) are accepted
    brief: dict[str, Any] | None = Field(
        None,
        description="With commit: the edited brief (the brief schema, 40 000 characters at "
        "most); without it the model's brief is committed as written.",
    )


class RecordFilters(FilterSchema):
    """``GET /api/handoffs`` filters (ninja ``FilterSchema``)."""

    phase: Phase | None = Field(None, description="Only records in this phase.")
    session: Annotated[SessionKey | None, FilterLookup("source_id")] = Field(
        None, description="Only records whose source is this session."
    )


def ensure_owned(request: HttpRequest, session_id: SessionKey) -> None:
    """Raise ``HttpError(404)`` unless the session exists and belongs to the caller.

    The answer is the same for a missing session and another user's (ids never leak).
    Raises ``ServiceUnavailable`` (409) when the host provides no session controller.
    """
    try:
        operations.owned_session(session_id, request.auth.pk)  # type: ignore[attr-defined]
    except SessionNotFound as exc:
        raise HttpError(404, f"Session {session_id} not found.") from exc


def _callers_records(request: HttpRequest) -> QuerySet[HandoffRecord]:
    return HandoffRecord.objects.select_related("source", "target").filter(
        source__in=operations.owned_session_ids(request.auth.pk)  # type: ignore[attr-defined]
    )


@sessions_router.post(
    "/{session_id}/handoff",
    response={200: StatusOut, **answers(*WRITE_ONE, 409)},
    summary="Switch or request a handoff",
)
def handoff_action(request: HttpRequest, session_id: SessionKey, payload: HandoffActionIn) -> Any:
    """Apply ``action`` and return the status report.

    ``now`` only requests the attempt (it runs in the background; the summary never blocks
    this request). ``commit`` runs the reviewed handoff's commit here. A refusal (e.g. a
    subagent, no review waiting, a commit that failed because the conversation changed) raises
    a ``HandoffError`` answered 409; an edited brief that breaks the brief's rules (docs/spec.md,
    Brief) is 422, and ``brief`` with any other action too. Nothing changes on a refusal before the
    commit ran.
    """
    ensure_owned(request, session_id)
    if payload.brief is not None:
        if payload.action != operations.Action.COMMIT:
            raise HttpError(422, "brief: only the commit action takes a brief.")
        return operations.commit_review(session_id, payload.brief)
    return operations.act(payload.action, session_id)


@records_router.get(
    "", response={200: list[RecordOut], **answers(401, 422)}, summary="List handoff records"
)
@paginate(LimitOffsetPaging, shape=record_dict)
def list_records(request: HttpRequest, filters: Query[RecordFilters]) -> QuerySet[HandoffRecord]:
    """The records of the caller's sessions, newest first, ``limit``/``offset`` paged."""
    return filters.filter(_callers_records(request))


@records_router.get(
    "/export",
    response={200: ExportOut, **answers(401)},
    summary="Export your handoff state (handoffs.json version 1)",
)
def export_state(request: HttpRequest) -> ExportOut:
    """The caller's mains, records and redirects as ``handoffs.json`` version 1.

    docs/spec.md, State; ``handoff/schemas/handoffs.v1.json`` is its JSON Schema.
    """
    return export.export(request.auth.pk)  # type: ignore[attr-defined]


@records_router.get(
    "/{record_id}",
    response={200: RecordOut, **answers(*READ_ONE)},
    summary="Read one handoff record",
)
def get_record(request: HttpRequest, record_id: UUID) -> RecordOut:
    """One record of the caller's sessions; 404 for a missing or another user's record."""
    record = _callers_records(request).filter(pk=record_id).first()
    if record is None:
        raise HttpError(404, f"Handoff record {record_id} not found.")
    return record_dict(record)
