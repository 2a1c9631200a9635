"""The plain host's chat: its log writes, its agent and its input path (with its signals).

- ``session_idle(sender=Conversation, session=Conversation)``: a conversation turned idle;
- ``before_step(sender=Conversation, session=Conversation, incoming=list[Line])``: input
  arrived; a receiver's non-``None`` answer takes it away (no turn here);
- ``conversation_changed(sender=Conversation, conversation_id=its key, created=bool)``: what a
  page shows of the conversation (its row: ``ROW_FIELDS``) changed, or it was created; sent
  inside the writer's transaction (``announce``) by every writer of those fields.

The agent answers every input at once with ``Noted: <input>``, using ``tokens`` of prompt.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, cast

from django.db import transaction
from django.db.models import Max
from django.dispatch import Signal

from tests.plain_host.models import Conversation, Line

session_idle = Signal()
before_step = Signal()
conversation_changed = Signal()

ROW_FIELDS = ("title", "status", "archived", "woken")
"""The fields a conversation's row shows (``woken``: it was started, the row is not blank)."""


def announce(conversation_id: Any, *, created: bool = False) -> None:
    """Send ``conversation_changed`` for ``conversation_id``; call it inside the write's
    transaction."""
    conversation_changed.send(sender=Conversation, conversation_id=conversation_id, created=created)


def change(conversation: Conversation | Any, **fields: Any) -> None:
    """Write ``fields`` of the conversation (its pk or itself) and announce it, in one
    transaction."""
    pk = getattr(conversation, "pk", conversation)
    with transaction.atomic():
        Conversation.objects.filter(pk=pk).update(**fields)
        announce(pk)


@dataclass(frozen=True)
class Forwarded:
    """``before_step``'s answer "taken away": the input went to ``to`` under ``relay_id``."""

    to: str
    relay_id: str


def append(conversation: Conversation, role: str, content: str, **fields: object) -> Line:
    """Append one line to the conversation's log; return it (its ``seq`` is the next one)."""
    with transaction.atomic():
        Conversation.objects.select_for_update().filter(pk=conversation.pk).first()
        last = conversation.lines.aggregate(last=Max("seq"))["last"] or 0
        return Line.objects.create(
            conversation=conversation, seq=last + 1, role=role, content=content, **fields
        )


def answer(conversation: Conversation, *, tokens: int = 1_000) -> Line:
    """Run one turn: the agent answers the latest input; the conversation ends idle."""
    change(conversation, status="running", woken=True)
    last = conversation.lines.exclude(role="assistant").order_by("-seq").first()
    said = last.content if last is not None else ""
    reply = append(conversation, "assistant", f"Noted: {said}", tokens=tokens)
    change(conversation, status="idle")
    conversation.refresh_from_db()
    transaction.on_commit(lambda: session_idle.send(sender=Conversation, session=conversation))
    return reply


def post(conversation: Conversation, content: str) -> Forwarded | None:
    """The user posts ``content``: logged here, then forwarded or answered.

    Returns the ``before_step`` answer that took the input away, or ``None`` when the agent
    answered it here.
    """
    line = append(conversation, "user", content)
    for _receiver, response in before_step.send(
        sender=Conversation, session=conversation, incoming=[line]
    ):
        if response is not None:
            return cast(Forwarded, response)
    answer(conversation)
    return None
