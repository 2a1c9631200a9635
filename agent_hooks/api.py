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

from typing import Any
from uuid import UUID

from django.http import HttpRequest
from ninja import Body, Router, Schema
from ninja.errors import HttpError
from ninja.responses import Status

from agent_hooks import claim, deliveries, events, status_line
from agent_hooks.payload import RUNTIMES, InvalidHook, parse
from common.api_conventions import answers
from host.api import api_user

router = Router(tags=["hooks"])


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
    response={200: StatusLineOut, **answers(401, 422)},
    summary="Claude Code's status line",
)
def status(request: HttpRequest, payload: Body[dict[str, Any]]) -> dict[str, str]:
    """The meter for the status line of the session the payload names."""
    key = payload.get("session_id")
    if not isinstance(key, str) or not key:
        raise HttpError(422, "session_id: Field required")
    return {"text": status_line.text(api_user(request), key)}


@router.post(
    "/{runtime}", response={200: AnswerOut, **answers(401, 422)}, summary="Deliver a hook event"
)
def deliver(request: HttpRequest, runtime: str, payload: Body[dict[str, Any]]) -> dict[str, Any]:
    """Run the event's steps and answer with the runtime's hook output."""
    try:
        hook = parse(
            runtime,
            payload,
            delivery=request.headers.get("X-Hook-Delivery", ""),
            process=request.headers.get("X-Hook-Process", ""),
        )
    except InvalidHook as exc:
        raise HttpError(422, str(exc)) from exc
    try:
        delivery = deliveries.begin(api_user(request), hook)
    except deliveries.Replay as seen:
        return seen.answer.as_dict()
    answer = events.handle(api_user(request), hook, delivery)
    return deliveries.finish(delivery, answer).as_dict()


@router.post(
    "/{runtime}/ack", response={204: None, **answers(401, 404, 422)}, summary="Acknowledge"
)
def acknowledge(request: HttpRequest, runtime: str, payload: AckIn) -> Status[None]:
    """The command printed the delivery's answer in time: a brief it carried commits."""
    if runtime not in RUNTIMES:
        raise HttpError(422, f"runtime: one of {', '.join(RUNTIMES)}, not {runtime!r}")
    delivery = deliveries.acknowledge(api_user(request), payload.delivery)
    if delivery is None:
        raise HttpError(404, f"no delivery {payload.delivery}")
    claim.on_ack(delivery)
    return Status(204, None)
