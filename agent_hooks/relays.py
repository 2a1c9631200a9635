"""Forwarding from a handed-off terminal session (docs/spec.md, Forwarding and cycles).

A prompt typed into the old session after its handoff is blocked with a reason naming the
successor and how to reach it (``forward``). The runtime drops a blocked prompt, so the prompt
is taken from the hook payload: kept in the old conversation's log (a relay message) and
queued once under the seed's relay id (``handoff.core.relay.relay_id`` of the source and the
delivery) for the successor, whose next prompt carries it as added context (``deliver``). A
retried delivery gets its stored answer (the route is idempotent by delivery id), and the
relay id is unique, so the prompt reaches the successor once.
"""

from __future__ import annotations

import shlex
from typing import Any

from django.db import IntegrityError, transaction

from agent_hooks.models import Delivery, Relay
from agent_hooks.payload import Hook
from handoff import forwarding
from handoff.core.relay import relay_id
from host import log
from host.models import Role, Runtime, Session, SourceKind


def how_to_reach(successor: Session) -> str:
    """Where the successor runs and the command that resumes it."""
    where = f"cd {shlex.quote(successor.cwd)} && " if successor.cwd else ""
    key = successor.external_id
    if successor.runtime == Runtime.CLAUDE and key:
        return f"the terminal where you typed /clear, or: {where}claude --resume {key}"
    if successor.runtime == Runtime.CODEX and key:
        return f"the terminal where you typed /clear, or: {where}codex resume {key}"
    return "its page in Session Handoff"


def forward(source: Session, hook: Hook, delivery: Delivery) -> dict[str, Any]:
    """Block a prompt typed into the handed-off ``source``: keep it in its log, queue it for
    the successor once, and answer with the reason naming the successor and how to reach it
    (and, when the prompt had text, that it was kept).
    One transaction: a crash keeps neither the message nor the relay."""
    successor = Session.objects.get(pk=forwarding.destination(source.pk))
    prompt = hook.text("prompt")
    rid = relay_id(str(source.pk), [str(delivery.pk)])
    if prompt:
        try:
            with transaction.atomic():
                log.append_message(
                    source, role=Role.USER, source_kind=SourceKind.RELAY, content=prompt
                )
                Relay.objects.create(
                    relay_id=rid,
                    source_id=source.pk,
                    destination_id=successor.pk,
                    content=prompt,
                )
        except IntegrityError:
            pass  # relayed already
    named = f"“{successor.title}”" if successor.title else str(successor.pk)
    reason = f"This session was handed off to {named}. Continue there: {how_to_reach(successor)}."
    if prompt:
        reason += " Your prompt was kept and reaches it with your next prompt there."
    return {"decision": "block", "reason": reason}


def deliver(successor: Session, hook: Hook, delivery: Delivery) -> dict[str, Any] | None:
    """The successor's prompt: carry the prompts forwarded to it and not delivered yet as added
    context (each once; None when there are none)."""
    with transaction.atomic():
        waiting = list(
            Relay.objects.select_for_update()
            .filter(destination_id=successor.pk, delivered__isnull=True)
            .order_by("created")
        )
        if not waiting:
            return None
        Relay.objects.filter(pk__in=[relay.pk for relay in waiting]).update(delivered=delivery)
    lines = "\n\n".join(relay.content for relay in waiting)
    text = f"Prompts the user typed into the handed-off session meanwhile:\n\n{lines}"
    return {"hookSpecificOutput": {"hookEventName": hook.event, "additionalContext": text}}
