"""The hook route (the hook contract between the hook command and the server).

- ``POST /api/hooks/{runtime}`` (claude | codex): the runtime's hook payload, verbatim, with
  ``X-Hook-Delivery`` (a UUID the command made) and ``X-Hook-Process`` (the runtime process);
  answers ``{"output": <hook output or null>, "ack": bool}``. 422 for an unknown runtime or a
  payload without ``hook_event_name`` / ``session_id`` (nothing changes); 401 without a valid
  bearer token (``host.auth``). Idempotent by delivery id (``agent_hooks.deliveries``).
- ``POST /api/hooks/{runtime}/ack`` ``{"delivery": uuid}``: the command printed that answer in
  time; 204, 404 for a delivery the user does not have.
- ``POST /api/hooks/claude/status-line``: Claude Code's status line JSON; ``{"text": str}``.

Prompts and tokens are never logged.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal
from uuid import UUID

from django.http import HttpRequest
from ninja import Header, Router, Schema
from ninja.errors import HttpError
from ninja.responses import Status
from pydantic import BaseModel, ConfigDict, Field

from agent_hooks import claim, deliveries, events, status_line
from agent_hooks.payload import InvalidHook, parse
from common.api_conventions import WRITE_ONE, answers
from host.api import api_user

router = Router(tags=["hooks"])

RuntimeName = Literal["claude", "codex"]
POSTED = (400, 401, 403, 413, 422)
"""What a posted body may be refused with (``config.api``): unparsable, no token, CSRF of a
browser session, too big, invalid."""


class HookIn(BaseModel):
    """A runtime's hook payload: the two fields every event carries; every other field is
    taken as the runtime sent it."""

    model_config = ConfigDict(extra="allow")

    hook_event_name: str = Field(min_length=1)
    session_id: str = Field(min_length=1)


class StatusLineIn(BaseModel):
    """Claude Code's status line JSON: the session it is for; the rest as sent."""

    model_config = ConfigDict(extra="allow")

    session_id: str = Field(min_length=1)


class AnswerOut(Schema):
    """The route's answer: the runtime's hook output (None: print nothing) and whether the
    command acknowledges it after printing."""

    output: dict[str, Any] | None
    ack: bool


class AckIn(Schema):
    """The acknowledgement of one delivery."""

    delivery: UUID


class StatusLineOut(Schema):
    """The status line's text ("" prints nothing)."""

    text: str


@router.post(
    "/claude/status-line",
    response={200: StatusLineOut, **answers(*POSTED)},
    summary="Claude Code's status line",
)
def status(request: HttpRequest, payload: StatusLineIn) -> dict[str, str]:
    """The meter for the status line of the session the payload names."""
    return {"text": status_line.text(api_user(request), payload.session_id)}


@router.post(
    "/{runtime}", response={200: AnswerOut, **answers(*POSTED)}, summary="Deliver a hook event"
)
def deliver(
    request: HttpRequest,
    runtime: RuntimeName,
    payload: HookIn,
    delivery_id: Annotated[UUID, Header(alias="X-Hook-Delivery")],
    process: Annotated[str, Header(alias="X-Hook-Process")] = "",
) -> dict[str, Any]:
    """Run the event's steps and answer with the runtime's hook output."""
    try:
        hook = parse(runtime, payload.model_dump(), delivery=str(delivery_id), process=process)
    except InvalidHook as exc:
        raise HttpError(422, str(exc)) from exc
    try:
        delivery = deliveries.begin(api_user(request), hook)
    except deliveries.Replay as seen:
        return seen.answer.as_dict()
    answer = events.handle(api_user(request), hook, delivery)
    return deliveries.finish(delivery, answer).as_dict()


@router.post("/{runtime}/ack", response={204: None, **answers(*WRITE_ONE)}, summary="Acknowledge")
def acknowledge(request: HttpRequest, runtime: RuntimeName, payload: AckIn) -> Status[None]:
    """The command printed the delivery's answer in time: a brief it carried commits."""
    delivery = deliveries.acknowledge(api_user(request), payload.delivery)
    if delivery is None:
        raise HttpError(404, f"no delivery {payload.delivery}")
    claim.on_ack(delivery)
    return Status(204, None)
