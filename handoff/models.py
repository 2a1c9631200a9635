"""Handoff records, per-main state, redirects and the global settings row (seed 000, State).

These replace the seed's ``handoffs.json``: ``MainState`` is an entry of ``mains``,
``HandoffRecord`` one of ``records``, ``Redirect`` one of ``redirects``. Each write happens in a
database transaction, so a crash half-way leaves the last committed state (the seed's
"rollback-aware writes"). ``HandoffSettings`` is the settings store's row (seed 000, Trigger
config table), read and written only through ``handoff.settings_store``.
"""

from __future__ import annotations

import uuid

from django.core.validators import MaxValueValidator, MinValueValidator
from django.db import models

from handoff.core.phases import Phase, Reason
from handoff.core.tokens import BASIS_LABELS, TokenBasis
from handoff.core.trigger import RANGES, TriggerConfig


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
    original_brief = models.JSONField(
        null=True, blank=True, help_text="The model's brief when a review edited it."
    )
    review_until = models.DateTimeField(
        null=True,
        blank=True,
        help_text="Set while a prepared record waits for review: until when it may wait.",
    )
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
    review = models.BooleanField(
        null=True, blank=True, help_text="Review before the successor starts; unset: the setting."
    )
    failures = models.PositiveIntegerField(
        default=0, help_text="Automatic attempts failed in a row (the backoff doubles with each)."
    )
    retry_at = models.DateTimeField(
        null=True, blank=True, help_text="No automatic attempt before this time (backoff)."
    )
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


def _in_range(name: str) -> list[MinValueValidator | MaxValueValidator]:
    """The seed's range of trigger setting ``name`` (``handoff.core.trigger.RANGES``)."""
    low, high = RANGES[name]
    return [MinValueValidator(low), MaxValueValidator(high)]


class HandoffSettings(models.Model):
    """The singleton settings row (pk 1); ranges and defaults are the trigger's (seed 000).

    The table keeps the name it had in the ``handoff_settings`` app, which held it before.
    """

    auto_handoff = models.BooleanField(default=False)
    handoff_ratio = models.FloatField(
        default=TriggerConfig.handoff_ratio, validators=_in_range("handoff_ratio")
    )
    handoff_tokens = models.PositiveIntegerField(
        default=TriggerConfig.handoff_tokens, validators=_in_range("handoff_tokens")
    )
    handoff_min_turns = models.PositiveIntegerField(
        default=TriggerConfig.handoff_min_turns, validators=_in_range("handoff_min_turns")
    )
    handoff_compactions = models.PositiveIntegerField(
        default=TriggerConfig.handoff_compactions, validators=_in_range("handoff_compactions")
    )
    token_basis = models.CharField(
        max_length=20, choices=list(BASIS_LABELS.items()), default=TokenBasis.CONTEXT.value
    )
    context_windows = models.JSONField(
        default=dict, blank=True, help_text="Model name -> context window in tokens (overrides)."
    )
    review_handoffs = models.BooleanField(
        default=False, help_text="Review the brief before the successor starts."
    )
    version = models.PositiveIntegerField(default=0, help_text="Bumped on every save.")
    updated = models.DateTimeField(auto_now=True)

    class Meta:
        db_table = "handoff_settings_handoffsettings"
        verbose_name = "handoff settings"
        verbose_name_plural = "handoff settings"

    def __str__(self) -> str:
        return "Handoff settings"
