"""Handoff records, per-main state, redirects and the global settings row (docs/spec.md, State).

These replace the specification's ``handoffs.json``: ``MainState`` is an entry of ``mains``,
``HandoffRecord`` one of ``records``, ``Redirect`` one of ``redirects``. Each write happens in a
database transaction, so a crash half-way leaves the last committed state (rollback-aware
writes). ``HandoffSettings`` is the settings store's row (its fields: docs/spec.md, Trigger),
read and written only through ``handoff.settings_store``.
"""

from __future__ import annotations

import uuid

from django.core.validators import MaxValueValidator, MinValueValidator
from django.db import models
from django.utils.translation import gettext
from django.utils.translation import gettext_lazy as _

from handoff.core.phases import Phase, Reason
from handoff.core.tokens import BASIS_LABELS, TokenBasis
from handoff.core.trigger import RANGES, TriggerConfig
from handoff.session_model import session_model_name
from handoff.words.record import PHASE_WORDS, REASON_WORDS

# The host's session model (``HANDOFF_SESSION_MODEL``, set once before the first migrate).
SESSION_MODEL = session_model_name()


class HandoffRecord(models.Model):
    """One handoff attempt. ``phase`` only moves forward (``handoff.core.phases``)."""

    id = models.UUIDField("ID", primary_key=True, default=uuid.uuid4, editable=False)
    source = models.ForeignKey(
        SESSION_MODEL,
        verbose_name=_("source"),
        on_delete=models.CASCADE,
        related_name="handoff_records",
    )
    target = models.ForeignKey(
        SESSION_MODEL,
        verbose_name=_("successor"),
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="handoff_origins",
    )
    phase = models.CharField(
        verbose_name=_("phase"),
        max_length=30,
        choices=[(p.value, PHASE_WORDS[p.value]) for p in Phase],
    )
    reason = models.CharField(
        verbose_name=_("reason"),
        max_length=30,
        choices=[(r.value, REASON_WORDS[r.value]) for r in Reason],
    )
    metrics = models.JSONField(
        verbose_name=_("metrics"),
        default=dict,
        help_text=_("{tokens, turns, compactions, capacity}, tokens."),
    )
    source_revision = models.PositiveBigIntegerField(
        verbose_name=_("source revision"),
    )
    brief = models.JSONField(verbose_name=_("brief"), null=True, blank=True)
    original_brief = models.JSONField(
        verbose_name=_("original brief"),
        null=True,
        blank=True,
        help_text=_("The model's brief when a review edited it."),
    )
    review_until = models.DateTimeField(
        verbose_name=_("review until"),
        null=True,
        blank=True,
        help_text=_("Set while a prepared record waits for review: until when it may wait."),
    )
    error = models.TextField(verbose_name=_("error"), blank=True)
    inheritance = models.JSONField(
        verbose_name=_("inheritance"),
        default=list,
        blank=True,
        help_text=_(
            "The inheritance report: one row per setting, inherited, fallback or not inherited."
        ),
    )
    created = models.DateTimeField(verbose_name=_("created"), auto_now_add=True)
    updated = models.DateTimeField(verbose_name=_("updated"), auto_now=True)

    class Meta:
        verbose_name = _("handoff record")
        verbose_name_plural = _("handoff records")
        ordering = ["-created"]
        indexes = [models.Index(fields=["phase"]), models.Index(fields=["source", "-created"])]

    def __str__(self) -> str:
        return f"{self.id} {self.get_phase_display()}"


class MainState(models.Model):
    """Per-main switches and deferral (docs/spec.md, State: ``mains``)."""

    session = models.OneToOneField(
        SESSION_MODEL,
        verbose_name=_("conversation"),
        primary_key=True,
        on_delete=models.CASCADE,
        related_name="handoff_main",
    )
    enabled = models.BooleanField(verbose_name=_("automatic handoff"), default=False)
    requested = models.BooleanField(verbose_name=_("handoff requested"), default=False)
    inherited_from = models.ForeignKey(
        SESSION_MODEL,
        verbose_name=_("inherited from"),
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="+",
    )
    last_attempt_seq = models.PositiveBigIntegerField(
        verbose_name=_("last attempt at message"), null=True, blank=True
    )
    deferred = models.JSONField(
        verbose_name=_("deferred by"),
        default=list,
        blank=True,
        help_text=_(
            "What put the last automatic attempt off (e.g. not-idle: the agent was working)."
        ),
    )
    review = models.BooleanField(
        verbose_name=_("review"),
        null=True,
        blank=True,
        help_text=_("Review before the successor starts; unset: the setting."),
    )
    failures = models.PositiveIntegerField(
        verbose_name=_("failures in a row"),
        default=0,
        help_text=_("Automatic attempts failed in a row (the backoff doubles with each)."),
    )
    retry_at = models.DateTimeField(
        verbose_name=_("retry after"),
        null=True,
        blank=True,
        help_text=_("No automatic attempt before this time (backoff)."),
    )
    updated = models.DateTimeField(verbose_name=_("updated"), auto_now=True)

    class Meta:
        verbose_name = _("handoff state")
        verbose_name_plural = _("handoff states")

    def __str__(self) -> str:
        return gettext("Handoff state of “%(conversation)s”") % {"conversation": self.session}


class Redirect(models.Model):
    """``redirects[source] = destination`` (docs/spec.md, Forwarding and cycles)."""

    source = models.OneToOneField(
        SESSION_MODEL,
        verbose_name=_("source"),
        primary_key=True,
        on_delete=models.CASCADE,
        related_name="redirect",
    )
    destination = models.ForeignKey(
        SESSION_MODEL, verbose_name=_("forwarded to"), on_delete=models.CASCADE, related_name="+"
    )
    record = models.ForeignKey(
        HandoffRecord,
        verbose_name=_("handoff record"),
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
    )
    created = models.DateTimeField(verbose_name=_("created"), auto_now_add=True)

    class Meta:
        verbose_name = _("forwarding route")
        verbose_name_plural = _("forwarding routes")

    def __str__(self) -> str:
        return f"{self.source} → {self.destination}"


def _in_range(name: str) -> list[MinValueValidator | MaxValueValidator]:
    """The seed's range of trigger setting ``name`` (``handoff.core.trigger.RANGES``)."""
    low, high = RANGES[name]
    return [MinValueValidator(low), MaxValueValidator(high)]


class HandoffSettings(models.Model):
    """The singleton settings row (pk 1); ranges and defaults are the trigger's (docs/spec.md,
    Trigger).

    The table keeps the name it had in the ``handoff_settings`` app, which held it before.
    """

    auto_handoff = models.BooleanField(verbose_name=_("automatic handoff"), default=False)
    handoff_ratio = models.FloatField(
        verbose_name=_("window ratio"),
        default=TriggerConfig.handoff_ratio,
        validators=_in_range("handoff_ratio"),
    )
    handoff_tokens = models.PositiveIntegerField(
        verbose_name=_("token ceiling"),
        default=TriggerConfig.handoff_tokens,
        validators=_in_range("handoff_tokens"),
    )
    handoff_min_turns = models.PositiveIntegerField(
        verbose_name=_("minimum turns"),
        default=TriggerConfig.handoff_min_turns,
        validators=_in_range("handoff_min_turns"),
    )
    handoff_compactions = models.PositiveIntegerField(
        verbose_name=_("compactions"),
        default=TriggerConfig.handoff_compactions,
        validators=_in_range("handoff_compactions"),
    )
    token_basis = models.CharField(
        verbose_name=_("token basis"),
        max_length=20,
        choices=[(value, _(label)) for value, label in BASIS_LABELS.items()],
        default=TokenBasis.CONTEXT.value,
    )
    context_windows = models.JSONField(
        verbose_name=_("context windows"),
        default=dict,
        blank=True,
        help_text=_(
            "JSON: each model name with its context window in tokens, used instead of the "
            'built-in one, e.g. {"my-model": 64000, "gpt-5.2-codex": 272000}. {} for none.'
        ),
    )
    review_handoffs = models.BooleanField(
        verbose_name=_("review handoffs"),
        default=False,
        help_text=_("Review the brief before the successor starts."),
    )
    version = models.PositiveIntegerField(
        verbose_name=_("version"), default=0, help_text=_("Bumped on every save.")
    )
    updated = models.DateTimeField(verbose_name=_("updated"), auto_now=True)

    class Meta:
        db_table = "handoff_settings_handoffsettings"
        verbose_name = _("handoff settings")
        verbose_name_plural = _("handoff settings")

    def __str__(self) -> str:
        return gettext("Handoff settings")


class SummaryDigest(models.Model):
    """The offline summary's digest of a session's log (``handoff.digest.fold.Digest`` as
    JSON), folded in at each idle so that the summary reads it and the few entries after its
    ``seq`` instead of the whole log. It holds for the effective context
    after the session's ``compactions``-th compaction, read with working directory ``cwd``; a
    later compaction or another directory starts it afresh."""

    session = models.OneToOneField(
        SESSION_MODEL,
        verbose_name=_("conversation"),
        primary_key=True,
        on_delete=models.CASCADE,
        related_name="handoff_digest",
    )
    compactions = models.PositiveIntegerField(verbose_name=_("compactions"))
    cwd = models.TextField(verbose_name=_("working directory"), blank=True)
    seq = models.PositiveBigIntegerField(verbose_name=_("read up to message"))
    state = models.JSONField(verbose_name=_("digest"))
    updated = models.DateTimeField(verbose_name=_("updated"), auto_now=True)

    class Meta:
        verbose_name = _("summary digest")
        verbose_name_plural = _("summary digests")

    def __str__(self) -> str:
        return f"digest of {self.session_id} up to #{self.seq}"
