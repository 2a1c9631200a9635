"""Hook deliveries, idempotent by the command's ``X-Hook-Delivery`` id (the hook contract).

``begin`` stores the delivery before its steps run; a delivery seen before gets the answer it
was given and runs nothing again (``Replay``). ``finish`` stores the answer. A crash between
the two leaves the delivery without an answer: a retry then gets no output, which never holds
the agent up. ``acknowledge`` records the command's acknowledgement that it printed the
answer in time: the flush's evidence for an answer that carried a brief (``agent_hooks.claim``).

Deliveries are kept ``AGENT_HOOKS_DELIVERY_RETENTION`` seconds (default 7 days, far beyond the
command's retries, which end within its deadline of seconds): every ``PRUNE_EVERY``-th answer a
process stores prunes the older ones (``prune``). A retry of a pruned delivery is stored and
run as a new delivery; its steps are the ones a repeated event meets anyway (a brief already
claimed is not claimed again, a prompt already forwarded is not forwarded again).
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any
from uuid import UUID

from django.contrib.auth.models import User
from django.db import IntegrityError, transaction
from django.utils import timezone

from agent_hooks.conf import agent_hooks_settings
from agent_hooks.models import Choice, Delivery, Relay
from agent_hooks.payload import Hook
from handoff.core.phases import Phase

PRUNE_EVERY = 100
"""Every this-many-th answer a process stores prunes the deliveries past retention."""

_stored = itertools.count(1)


@dataclass(frozen=True)
class Answer:
    """What the route answers: the runtime's hook output (or None) and whether the command
    must acknowledge it."""

    output: dict[str, Any] | None = None
    ack: bool = False

    def as_dict(self) -> dict[str, Any]:
        """Return ``{"output", "ack"}``."""
        return {"output": self.output, "ack": self.ack}


class Replay(Exception):
    """The delivery was seen before; ``answer`` is what it got."""

    def __init__(self, answer: Answer) -> None:
        super().__init__("replayed delivery")
        self.answer = answer


def begin(owner: User, hook: Hook) -> Delivery:
    """Store the delivery; raise ``Replay`` with its stored answer when it was seen before
    (also another user's id: nothing of it is shown then)."""
    try:
        with transaction.atomic():
            return Delivery.objects.create(
                id=hook.delivery,
                owner=owner,
                runtime=hook.runtime,
                event=hook.event,
                session_key=hook.session_key,
                process=hook.process,
            )
    except IntegrityError:
        seen = Delivery.objects.get(pk=hook.delivery)
        if seen.owner_id != owner.pk:
            raise Replay(Answer()) from None
        raise Replay(Answer(seen.output, seen.ack)) from None


def finish(delivery: Delivery, answer: Answer) -> Answer:
    """Store ``answer`` as the delivery's and return it; every ``PRUNE_EVERY``-th call of the
    process then prunes (after the commit; a failing prune is logged, the answer stands)."""
    delivery.output, delivery.ack = answer.output, answer.ack
    delivery.save(update_fields=["output", "ack"])
    if next(_stored) % PRUNE_EVERY == 0:
        transaction.on_commit(prune, robust=True)
    return answer


def prune(*, now: datetime | None = None) -> int:
    """Delete every user's deliveries older than ``AGENT_HOOKS_DELIVERY_RETENTION`` seconds
    (``now`` defaults to the current time); return how many.

    Kept past retention: a delivery that carried relayed prompts (``Relay.delivered``: without
    it they would count as waiting and be relayed again) and the claim of a brief still waiting
    (``Choice.claim`` of a ``prepared`` record: its acknowledgement is the flush's evidence).
    Any other choice that names a pruned delivery stays, its ``claim`` set to None.
    """
    retention = timedelta(seconds=agent_hooks_settings().delivery_retention)
    moment = now or timezone.now()
    carried = Relay.objects.filter(delivered__isnull=False).values("delivered_id")
    waiting = Choice.objects.filter(record__phase=Phase.PREPARED, claim__isnull=False)
    deleted, _ = (
        Delivery.objects.filter(created__lt=moment - retention)
        .exclude(pk__in=carried)
        .exclude(pk__in=waiting.values("claim_id"))
        .delete()
    )
    return deleted


def acknowledge(owner: User, delivery_id: UUID) -> Delivery | None:
    """Record the acknowledgement of the owner's delivery (the first one counts); return the
    delivery, None when the owner has no such delivery."""
    delivery = Delivery.objects.filter(pk=delivery_id, owner=owner).first()
    if delivery is None:
        return None
    if delivery.acked is None:
        Delivery.objects.filter(pk=delivery.pk, acked__isnull=True).update(acked=timezone.now())
        delivery.refresh_from_db()
    return delivery
