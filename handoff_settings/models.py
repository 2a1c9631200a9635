"""The global settings row (seed 000, Trigger config table; seed 003 §5.3 token basis)."""

from __future__ import annotations

from django.core.validators import MaxValueValidator, MinValueValidator
from django.db import models


class TokenBasis(models.TextChoices):
    CONTEXT = "context", "Current context"
    CUMULATIVE = "cumulative", "Cumulative usage"


class HandoffSettings(models.Model):
    """The singleton row (pk 1). Ranges are the seed's; ``full_clean`` enforces them."""

    auto_handoff = models.BooleanField(default=False)
    handoff_ratio = models.FloatField(
        default=0.75, validators=[MinValueValidator(0.2), MaxValueValidator(0.95)]
    )
    handoff_tokens = models.PositiveIntegerField(
        default=120_000, validators=[MinValueValidator(8_000), MaxValueValidator(1_000_000)]
    )
    handoff_min_turns = models.PositiveIntegerField(
        default=4, validators=[MinValueValidator(2), MaxValueValidator(100)]
    )
    handoff_compactions = models.PositiveIntegerField(
        default=3, validators=[MinValueValidator(0), MaxValueValidator(100)]
    )
    token_basis = models.CharField(
        max_length=20, choices=TokenBasis.choices, default=TokenBasis.CONTEXT
    )
    context_windows = models.JSONField(
        default=dict, blank=True, help_text="Model name -> context window in tokens (overrides)."
    )
    version = models.PositiveIntegerField(default=0, help_text="Bumped on every save.")
    updated = models.DateTimeField(auto_now=True)

    class Meta:
        verbose_name = "handoff settings"
        verbose_name_plural = "handoff settings"

    def __str__(self) -> str:
        return "Handoff settings"
