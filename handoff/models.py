"""Handoff records, per-main state and redirects (seed 000, State).

These replace the seed's ``handoffs.json``: ``MainState`` is an entry of ``mains``,
``HandoffRecord`` one of ``records``, ``Redirect`` one of ``redirects``. Each write happens in a
database transaction, so a crash half-way leaves the last committed state (the seed's
"rollback-aware writes").
"""

from __future__ import annotations

import uuid

from django.db import models

from handoff.core.phases import Phase, Reason


class HandoffRecord(models.Model):
    """One handoff attempt. ``phase`` only moves forward (``handoff.core.phases``)."""

    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    source = models.ForeignKey(
        "host.Session", on_delete=models.CASCADE, related_name="handoff_records"
    )
    target = models.ForeignKey(
        "host.Session",
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="handoff_origins",
    )
    phase = models.CharField(max_length=30, choices=[(p.value, p.value) for p in Phase])
    reason = models.CharField(max_length=30, choices=[(r.value, r.value) for r in Reason])
    metrics = models.JSONField(
        default=dict, help_text="{tokens, turns, compactions, capacity}, tokens."
    )
    source_revision = models.PositiveBigIntegerField()
    brief = models.JSONField(null=True, blank=True)
    error = models.TextField(blank=True)
    inheritance = models.JSONField(
        default=list, blank=True, help_text="Seed 003 §6.1–6.2 report, one row per setting."
    )
    created = models.DateTimeField(auto_now_add=True)
    updated = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["-created"]
        indexes = [models.Index(fields=["phase"]), models.Index(fields=["source", "-created"])]

    def __str__(self) -> str:
        return f"{self.id} {self.phase}"


class MainState(models.Model):
    """Per-main switches and deferral (seed 000, State: ``mains``)."""

    session = models.OneToOneField(
        "host.Session", primary_key=True, on_delete=models.CASCADE, related_name="handoff_main"
    )
    enabled = models.BooleanField(default=False)
    requested = models.BooleanField(default=False)
    inherited_from = models.ForeignKey(
        "host.Session", null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    last_attempt_seq = models.PositiveBigIntegerField(null=True, blank=True)
    deferred = models.JSONField(default=list, blank=True, help_text="Blocker names.")
    updated = models.DateTimeField(auto_now=True)

    def __str__(self) -> str:
        return f"main {self.session_id}"


class Redirect(models.Model):
    """``redirects[source] = destination`` (seed 000, Forwarding and Cycles)."""

    source = models.OneToOneField(
        "host.Session", primary_key=True, on_delete=models.CASCADE, related_name="redirect"
    )
    destination = models.ForeignKey("host.Session", on_delete=models.CASCADE, related_name="+")
    record = models.ForeignKey(HandoffRecord, null=True, blank=True, on_delete=models.SET_NULL)
    created = models.DateTimeField(auto_now_add=True)

    def __str__(self) -> str:
        return f"{self.source_id} -> {self.destination_id}"
