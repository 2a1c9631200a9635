"""The sessions part of the JSON API (docs/api.md): list, create, messages, posting input.

Mounted by ``config.api`` at ``/api/sessions``; the session detail (which adds the handoff
status report) is composed there, since the host does not import the handoff app.

A session that does not exist and one owned by another user get the same 404, so the API never
tells whether a session id exists.
"""

# No ``from __future__ import annotations`` here: ninja reads the parameters of a ``@paginate``d
# view through its wrapper, whose module cannot resolve this module's names from strings.

from dataclasses import asdict
from datetime import datetime
from typing import Annotated, Any, Literal
from uuid import UUID

from django.contrib.auth.models import User
from django.db.models import Q, QuerySet
from django.http import HttpRequest
from ninja import Field, FilterLookup, FilterSchema, Query, Router, Schema
from ninja.errors import HttpError
from ninja.pagination import PaginationBase, paginate
from ninja.responses import Status
from pydantic import BeforeValidator, ConfigDict, StrictInt, StringConstraints, field_validator
from pydantic.json_schema import JsonDict

from common.api_conventions import (
    BIGINT_MAX,
    PAGE_MAX,
    PAGE_SIZE,
    READ_ONE,
    WRITE_ONE,
    LimitOffsetPaging,
    answers,
)
from host.intake import SessionClosed, post_message
from host.models import Message, PermissionPreset, Session
from host.services import DEFAULT_PRESET, AgentPresets, agent_presets
from host.sessions import MAX_CLIENT_ID, create_session, resolve_workspace
from host.usage import MAX_CALL_TOKENS, Usage

router = Router(tags=["sessions"])


class WorkspaceOut(Schema):
    id: int
    path: str
    name: str


class SessionOut(Schema):
    """A session as the API shows it; ``parent`` is set on subagents."""

    id: UUID
    title: str
    cwd: str
    workspace: WorkspaceOut | None
    model_config = ConfigDict(populate_by_name=True)

    parent: UUID | None = Field(None, validation_alias="parent_id")
    agent_preset: str
    model: str
    permission_preset: str
    status: str
    blank: bool
    archived: bool
    revision: int
    turns: int
    compactions: int
    created: datetime
    updated: datetime


class SessionFilters(FilterSchema):
    """``GET /api/sessions`` filters (ninja ``FilterSchema``)."""

    workspace: Annotated[int | None, FilterLookup("workspace_id")] = Field(
        None, ge=1, le=BIGINT_MAX, description="Only sessions of this workspace id."
    )
    include_archived: bool = Field(False, description="Also list archived sessions.")

    def filter_include_archived(self, include: bool) -> Q:
        """Archived sessions are left out unless ``include_archived`` is true."""
        return Q() if include else Q(archived=False)


def whole_number(value: object) -> object:
    """Return a float with no fractional part (``5.0``) as the int it is; anything else as is.

    JSON Schema's ``integer`` is any number with a zero fractional part, so the OpenAPI schema
    allows ``5.0`` wherever it says integer; the API takes what its schema allows
    (docs/design.md, "The API takes what its schema allows").
    """
    if isinstance(value, float) and value.is_integer():
        return int(value)
    return value


# A token count of one bucket: a JSON integer (5, or 5.0), never true, "5" or 5.5.
# The bounds come before the validator, so the schema states them (minimum, maximum).
TokenCount = Annotated[
    StrictInt,
    Field(ge=0, le=MAX_CALL_TOKENS, description="Tokens, a whole number."),
    BeforeValidator(whole_number),
]
# Text the log stores: PostgreSQL text cannot hold NUL, so ``host.intake`` refuses it (422).
NO_NUL: JsonDict = {"pattern": "^[^\\u0000]*$"}


def _known_presets(schema: JsonDict) -> None:
    """Document the agent presets this deployment has as the field's ``enum``."""
    schema["enum"] = list(agent_presets())


class SessionIn(Schema):
    """A new conversation: it works in ``cwd`` and joins the workspace registered at exactly
    that path, if any; an unknown directory is not registered.

    ``client_id`` makes a retried create return the first session. Every string is refused
    (422) with a NUL character, which PostgreSQL text cannot hold.
    """

    model_config = ConfigDict(extra="forbid")

    cwd: Annotated[str, StringConstraints(strip_whitespace=True)] = Field(
        min_length=1,
        max_length=1024,
        description="The working directory, an absolute path.",
        json_schema_extra={"pattern": "^/[^\\u0000]*$"},
    )
    title: Annotated[str, StringConstraints(strip_whitespace=True)] = Field(
        "",
        max_length=300,
        description="Empty: the first message titles it.",
        json_schema_extra=NO_NUL,
    )
    agent_preset: str = Field(
        DEFAULT_PRESET, description="An agent preset.", json_schema_extra=_known_presets
    )
    model: str | None = Field(
        None,
        min_length=1,
        max_length=200,
        description="Default: the agent preset's model, else the deployment's default model.",
        json_schema_extra=NO_NUL,
    )
    permission_preset: PermissionPreset = PermissionPreset.DEFAULT
    client_id: str | None = Field(
        None,
        min_length=1,
        max_length=MAX_CLIENT_ID,
        description="A retry with the same client_id answers the first session, creating none.",
        json_schema_extra=NO_NUL,
    )

    @field_validator("cwd", "title", "model", "client_id")
    @classmethod
    def _without_nul(cls, value: str | None) -> str | None:
        if value is not None and "\x00" in value:
            raise ValueError("must not contain NUL characters (\\x00)")
        return value

    @field_validator("cwd")
    @classmethod
    def _absolute(cls, value: str) -> str:
        if not value.startswith("/"):
            raise ValueError(f"give an absolute path (starting with /), not {value!r}")
        return value

    @field_validator("agent_preset")
    @classmethod
    def _known_preset(cls, value: str) -> str:
        known = agent_presets()
        if value not in known:
            raise ValueError(f"unknown agent preset {value!r}; expected one of {', '.join(known)}")
        return value

    @field_validator("client_id")
    @classmethod
    def _not_blank(cls, value: str | None) -> str | None:
        if value is not None and not value.strip():
            raise ValueError("must not be blank")
        return value


class UsageSchema(Schema):
    """The four usage buckets of one model call, in tokens (docs/spec.md, Token sources)."""

    model_config = ConfigDict(extra="forbid", strict=True)

    uncached_input: TokenCount = 0
    output: TokenCount = 0
    cache_read: TokenCount = 0
    cache_write: TokenCount = 0


class MessageOut(Schema):
    seq: int
    role: str
    source_kind: str
    content: str
    tool_name: str
    model: str
    usage: UsageSchema | None
    client_id: str | None = Field(description="The poster's client_id, when it gave one.")
    relay_id: str | None
    compacted: bool
    starts_turn: bool
    created: datetime

    @staticmethod
    def resolve_usage(message: Message) -> dict[str, int] | None:
        buckets = (
            message.uncached_input_tokens,
            message.output_tokens,
            message.cache_read_tokens,
            message.cache_write_tokens,
        )
        if all(bucket is None for bucket in buckets):
            return None
        # The bucket names are ``Usage``'s fields (``UsageSchema`` is held to them by a test).
        return asdict(Usage(*(bucket or 0 for bucket in buckets)))


class SeqPaging(PaginationBase):
    """Messages with ``seq`` > ``after`` in order, ``limit`` at a time (ninja pagination).

    Answers ``{"items", "next_after"}``; ask again with ``after=next_after`` (null at the end).
    """

    class Input(Schema):
        after: int = Field(0, ge=0, le=BIGINT_MAX, description="Only messages with a larger seq.")
        limit: int = Field(PAGE_SIZE, ge=1, le=PAGE_MAX, description="Messages per page.")

    class Output(Schema):
        items: list[Any]
        next_after: int | None = Field(
            description="Pass as ``after`` for the next page; null at the end."
        )

    def paginate_queryset(
        self, queryset: QuerySet[Message], pagination: Any, request: HttpRequest, **params: Any
    ) -> dict[str, Any]:
        rows = list(
            queryset.filter(seq__gt=pagination.after).order_by("seq")[: pagination.limit + 1]
        )
        items = rows[: pagination.limit]
        more = len(rows) > pagination.limit
        return {"items": items, "next_after": items[-1].seq if more else None}


class MessageIn(Schema):
    """Input for a session; ``client_id`` makes a retried post return the first answer."""

    model_config = ConfigDict(extra="forbid", strict=True)

    role: Literal["user", "assistant", "system"] = "user"
    content: str = Field(min_length=1, json_schema_extra=NO_NUL)
    usage: UsageSchema | None = None
    client_id: str | None = Field(None, min_length=1, max_length=200, json_schema_extra=NO_NUL)


class ForwardedOut(Schema):
    """The input went to the redirect's destination as a relay.

    docs/spec.md, Forwarding and cycles.
    """

    forwarded_to: str
    relay_id: str


def api_user(request: HttpRequest) -> User:
    """Return the authenticated caller (``request.auth``, set by ``host.auth``)."""
    user: User = request.auth  # type: ignore[attr-defined]
    return user


def owned_session(request: HttpRequest, session_id: UUID) -> Session:
    """Return the caller's session; raise ``HttpError(404)`` when missing or someone else's."""
    session = (
        Session.objects.select_related("workspace")
        .filter(pk=session_id, owner=api_user(request))
        .first()
    )
    if session is None:
        raise HttpError(404, f"Session {session_id} not found.")
    return session


@router.get(
    "", response={200: list[SessionOut], **answers(401, 422)}, summary="List the caller's sessions"
)
@paginate(LimitOffsetPaging)
def list_sessions(request: HttpRequest, filters: Query[SessionFilters]) -> QuerySet[Session]:
    """The caller's sessions, most recently updated first, ``limit``/``offset`` paged.

    Archived sessions are left out unless ``include_archived``; ``workspace`` keeps one
    workspace's sessions.
    """
    sessions = Session.objects.select_related("workspace").filter(owner=api_user(request))
    return filters.filter(sessions)


@router.post(
    "",
    response={201: SessionOut, **answers(400, 401, 403, 413, 422)},
    summary="Create a session",
)
def new_session(request: HttpRequest, payload: SessionIn) -> Status[Session]:
    """201 with the new idle, blank session, shaped as ``GET /api/sessions`` lists it.

    The session joins the caller's workspace registered at exactly ``cwd`` (none: no workspace,
    and none is registered); its model is ``model``, else the agent preset's, else
    ``HOST_DEFAULT_MODEL`` (the ``model`` row of docs/spec.md, Inheritance). A retry with the same
    ``client_id`` answers the first session and creates nothing (``host.sessions.create_session``).
    The owner's open pages list it at once (the follower's ``session.added``). Bad input is 422,
    nothing created.
    """
    owner = api_user(request)
    session = create_session(
        owner,
        cwd=payload.cwd,
        title=payload.title,
        workspace=resolve_workspace(owner, payload.cwd),
        agent_preset=payload.agent_preset,
        model=AgentPresets().model_for(payload.agent_preset, payload.model or ""),
        permission_preset=payload.permission_preset,
        client_id=payload.client_id,
    )
    return Status(201, session)


@router.get(
    "/{session_id}/messages",
    response={200: list[MessageOut], **answers(*READ_ONE)},
    summary="Read a session's log",
)
@paginate(SeqPaging)
def list_messages(request: HttpRequest, session_id: UUID) -> QuerySet[Message]:
    """Up to ``limit`` messages with ``seq`` > ``after``, ordered by ``seq``."""
    return Message.objects.filter(session=owned_session(request, session_id))


@router.post(
    "/{session_id}/messages",
    response={201: MessageOut, 202: ForwardedOut, **answers(*WRITE_ONE, 409)},
    summary="Post input to a session",
)
def create_message(request: HttpRequest, session_id: UUID, payload: MessageIn) -> Status[Any]:
    """201 with the stored message, or 202 ``{forwarded_to, relay_id}`` for a redirected source.

    A retry with the same ``client_id`` gets the first answer and adds nothing
    (``host.intake.post_message``). Bad input raises ``host.intake.InvalidInput`` (422); a
    finished or disposed session (a helper agent's conversation that ended) answers 409.
    """
    session = owned_session(request, session_id)
    usage = Usage(**payload.usage.model_dump()) if payload.usage else None
    try:
        result = post_message(
            session,
            role=payload.role,
            content=payload.content,
            usage=usage,
            client_id=payload.client_id,
        )
    except SessionClosed as exc:
        raise HttpError(409, str(exc)) from exc
    if result.forwarded_to is not None:
        return Status(202, {"forwarded_to": result.forwarded_to, "relay_id": result.relay_id})
    return Status(201, result.message)
