"""What the hook route keeps: each delivery with its answer, each live handoff's choice, relays.

- ``Delivery``: one run of the hook command (its ``X-Hook-Delivery`` id), the answer the route
  gave and whether the command acknowledged printing it. A retried delivery gets the stored
  answer and changes nothing (the route is idempotent by delivery id).
- ``Choice``: the handoff of a session another runtime runs, from ``prepared`` on: whether the
  user was told, the prompt blocked with the choice, the ``/clear`` that ended the source, the
  runtime's session that claimed the brief and the delivery whose answer carried it (its
  ``acked`` is the flush's evidence: docs/spec.md, Failure outcomes).
- ``Relay``: a prompt typed into a handed-off session, relayed once into its successor's
  context at the successor's next prompt (docs/spec.md, Forwarding and cycles: relay ids).
"""

from __future__ import annotations

import uuid

from django.conf import settings
from django.db import models
from django.utils.translation import gettext_lazy as _

from handoff.models import HandoffRecord


class Delivery(models.Model):
    """One hook delivery and the answer it got (``output``: the runtime's hook output, or
    None), ``ack``: the command printed it in time (``acked`` set)."""

    id = models.UUIDField(_("delivery"), primary_key=True)
    owner = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE)
    runtime = models.CharField(_("runtime"), max_length=10)
    event = models.CharField(_("event"), max_length=40)
    session_key = models.CharField(_("runtime's session id"), max_length=200)
    process = models.CharField(_("runtime process"), max_length=40, blank=True)
    output = models.JSONField(_("output"), null=True, blank=True)
    ack = models.BooleanField(_("acknowledgement asked"), default=False)
    acked = models.DateTimeField(_("acknowledged"), null=True, blank=True)
    created = models.DateTimeField(_("created"), auto_now_add=True)

    class Meta:
        verbose_name = _("hook delivery")
        verbose_name_plural = _("hook deliveries")
        indexes = [models.Index(fields=["owner", "session_key", "-created"])]

    def __str__(self) -> str:
        return f"{self.runtime} {self.event} {self.id}"


class Choice(models.Model):
    """The user's choice about a ``prepared`` handoff of a terminal session.

    ``told``: the user learned of the brief (a Stop message or the blocked prompt);
    ``blocked_prompt``: the prompt blocked with the choice (carried into the successor), ""
    before; ``cleared``/``cleared_process``/``cwd``: the source's ``SessionEnd`` (reason
    ``clear``) and the runtime process that ran it; ``successor_key``: the runtime's session
    that claimed the brief, ``claim``: the delivery whose answer carried it (None when the
    marker claimed it); ``by_marker``: claimed by the marker in a prompt (new terminal).
    """

    record = models.OneToOneField(
        HandoffRecord, on_delete=models.CASCADE, related_name="choice", primary_key=True
    )
    runtime = models.CharField(_("runtime"), max_length=10)
    told = models.DateTimeField(_("told"), null=True, blank=True)
    blocked = models.BooleanField(_("a prompt was blocked"), default=False)
    blocked_prompt = models.TextField(_("blocked prompt"), blank=True)
    cleared = models.DateTimeField(_("cleared"), null=True, blank=True)
    cleared_process = models.CharField(_("cleared by process"), max_length=40, blank=True)
    cwd = models.CharField(_("working directory"), max_length=1024, blank=True)
    successor_key = models.CharField(_("successor's session id"), max_length=200, blank=True)
    claim = models.ForeignKey(
        Delivery, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    by_marker = models.BooleanField(_("claimed by marker"), default=False)

    class Meta:
        verbose_name = _("terminal choice")
        verbose_name_plural = _("terminal choices")

    def __str__(self) -> str:
        return f"choice of {self.record_id}"


class Relay(models.Model):
    """A prompt for ``destination`` typed into ``source`` after its handoff; ``delivered`` is
    the delivery whose answer carried it into the successor's context (None: waiting)."""

    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    relay_id = models.CharField(_("relay id"), max_length=64, unique=True)
    source_id = models.UUIDField(_("source"))
    destination_id = models.UUIDField(_("destination"))
    content = models.TextField(_("content"))
    delivered = models.ForeignKey(
        Delivery, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    created = models.DateTimeField(_("created"), auto_now_add=True)

    class Meta:
        verbose_name = _("relayed prompt")
        verbose_name_plural = _("relayed prompts")

    def __str__(self) -> str:
        return self.relay_id
