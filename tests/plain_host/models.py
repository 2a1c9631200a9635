"""The plain host's conversations and their append-only log.

``Conversation`` is the handoff's session model here: it has the fields
``handoff.session_model`` asks for (``title``, ``owner``) and the ``HostSession`` attributes
(``parent_id``, ``cwd``, ``model``, ``status`` …) as fields or properties. Its primary key is a
UUID, or an integer with ``PLAIN_HOST_INTEGER_KEYS = True`` (``tests.plain_host.int_settings``,
whose migrations are ``tests.plain_host.int_keys.migrations``): the handoff takes either.
"""

from __future__ import annotations

import uuid
from typing import TYPE_CHECKING, Any, ClassVar

from django.conf import settings
from django.db import models

if TYPE_CHECKING:
    from django.db.models.fields.related_descriptors import RelatedManager


def _primary_key() -> models.Field[Any, Any]:
    """A UUID key, or an integer one under ``PLAIN_HOST_INTEGER_KEYS``."""
    if getattr(settings, "PLAIN_HOST_INTEGER_KEYS", False):
        return models.BigAutoField(primary_key=True)
    return models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)


class Conversation(models.Model):
    """A chat conversation: one agent, one log (``Line``), idle or running."""

    id = _primary_key()
    owner = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE)
    title = models.CharField(max_length=300, blank=True)
    cwd = models.CharField(max_length=500, blank=True)
    model = models.CharField(max_length=100, default="plain-model")
    status = models.CharField(max_length=20, default="idle")
    archived = models.BooleanField(default=False)
    woken = models.BooleanField(default=False)

    parent_id = None  # no subagents: every conversation is a main
    agent_preset = "plain"
    permission_preset = "default"
    request_config = None
    compactions = 0
    context_window = 32_000
    runtime = "product"  # it runs here (handoff.services.PRODUCT_RUNTIME)

    # Named for mypy: its Django plugin reads the project's settings, which do not install this.
    objects: ClassVar[models.Manager[Conversation]] = models.Manager()
    lines: RelatedManager[Line]

    def __str__(self) -> str:
        return self.title

    @property
    def revision(self) -> int:
        """The log's last sequence number (0 for an empty log)."""
        last = self.lines.order_by("-seq").values_list("seq", flat=True).first()
        return last or 0

    @property
    def turns(self) -> int:
        """The agent's answers to input."""
        return self.lines.filter(role="assistant").count()


class Line(models.Model):
    """One entry of a conversation's log (never changed once written)."""

    conversation = models.ForeignKey(Conversation, on_delete=models.CASCADE, related_name="lines")
    seq = models.PositiveIntegerField()
    role = models.CharField(max_length=20)
    kind = models.CharField(max_length=20, default="chat")
    content = models.TextField()
    tokens = models.PositiveIntegerField(default=0)
    relay_id = models.CharField(max_length=200, blank=True)

    objects: ClassVar[models.Manager[Line]] = models.Manager()

    class Meta:
        ordering = ["seq"]
        constraints = [
            models.UniqueConstraint(fields=["conversation", "seq"], name="plain_line_seq"),
        ]

    def __str__(self) -> str:
        return f"#{self.seq} {self.role}"
