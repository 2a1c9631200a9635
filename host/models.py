"""The host's records: workspaces, sessions, their append-only logs, usage, inbox, activity.

A session's log (messages and events) shares one per-session sequence: ``Session.revision`` is the
sequence number of the latest entry (seed 000: the revision captured before summarizing). Logs are
append-only: compaction marks older messages as compacted, nothing is deleted or rewritten.
"""

from __future__ import annotations

import uuid
from typing import Any

from django.conf import settings
from django.db import models
from django.utils.translation import gettext_lazy as _


class Workspace(models.Model):
    """A directory the user works in; the sidebar groups sessions by it (seed 003 §6.5)."""

    owner = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE)
    path = models.CharField(max_length=1024)
    name = models.CharField(max_length=200, blank=True)
    created = models.DateTimeField(auto_now_add=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["owner", "path"], name="workspace_unique_path")
        ]
        ordering = ["name", "path"]

    def __str__(self) -> str:
        return self.name or self.path


class SessionStatus(models.TextChoices):
    IDLE = "idle", _("Idle")
    RUNNING = "running", _("Running")
    FINISHED = "finished", _("Finished")
    DISPOSED = "disposed", _("Disposed")


class PermissionPreset(models.TextChoices):
    DEFAULT = "default"
    READ_ONLY = "read-only"
    FULL_ACCESS = "full-access"
    CUSTOM = "custom"


class Session(models.Model):
    """One conversation. A main has no parent; a subagent's ``parent`` is the main that owns it."""

    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    owner = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="agent_sessions"
    )
    title = models.CharField(max_length=300, blank=True)
    cwd = models.CharField(max_length=1024, blank=True)
    workspace = models.ForeignKey(
        Workspace, null=True, blank=True, on_delete=models.SET_NULL, related_name="sessions"
    )
    agent_preset = models.CharField(max_length=100, default="default")
    model = models.CharField(max_length=200, blank=True)
    permission_preset = models.CharField(
        max_length=20, choices=PermissionPreset.choices, default=PermissionPreset.DEFAULT
    )
    approval_policy = models.CharField(max_length=50, blank=True)
    sandbox_tier = models.CharField(max_length=50, blank=True)
    plan_mode = models.BooleanField(default=False)
    request_config = models.JSONField(
        default=dict, blank=True, help_text="The request header's config (seed 003 §6.1, model)."
    )
    parent = models.ForeignKey(
        "self", null=True, blank=True, on_delete=models.CASCADE, related_name="subagents"
    )
    status = models.CharField(
        max_length=10, choices=SessionStatus.choices, default=SessionStatus.IDLE
    )
    blank = models.BooleanField(
        default=True, help_text="True from creation until the first turn starts."
    )
    archived = models.BooleanField(default=False)
    revision = models.PositiveBigIntegerField(
        default=0, help_text="Sequence number of the latest log entry."
    )
    turns = models.PositiveIntegerField(default=0)
    compactions = models.PositiveIntegerField(default=0)
    context_window = models.PositiveIntegerField(
        default=0, help_text="Tokens, when the transcript states it; 0 = look up by model."
    )
    external_id = models.CharField(
        max_length=200, blank=True, help_text="Import identity (transcript session id)."
    )
    created = models.DateTimeField(auto_now_add=True)
    updated = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["-updated"]
        constraints = [
            models.UniqueConstraint(
                fields=["owner", "external_id"],
                condition=~models.Q(external_id=""),
                name="session_unique_external_id",
            )
        ]

    def __str__(self) -> str:
        return self.title or str(self.id)

    @property
    def is_subagent(self) -> bool:
        return self.parent_id is not None


class Role(models.TextChoices):
    USER = "user"
    ASSISTANT = "assistant"
    SYSTEM = "system"
    TOOL = "tool"


class SourceKind(models.TextChoices):
    """Where a message came from. Which messages start turns is told by ``Message.starts_turn``
    (docs/design.md, turns: prompts, relays, inbox items, task notifications, tool results)."""

    USER = "user"
    ASSISTANT = "assistant"
    PLUGIN = "plugin"
    RELAY = "relay"
    SYSTEM = "system"
    TOOL = "tool"


class Message(models.Model):
    """One entry of a session's append-only log; ``seq`` shares the sequence with events."""

    session = models.ForeignKey(Session, on_delete=models.CASCADE, related_name="messages")
    seq = models.PositiveBigIntegerField()
    role = models.CharField(max_length=10, choices=Role.choices)
    source_kind = models.CharField(max_length=10, choices=SourceKind.choices)
    content = models.TextField(blank=True)
    tool_name = models.CharField(max_length=200, blank=True)
    model = models.CharField(max_length=200, blank=True)
    # The four usage buckets (seed 003 §5.3), tokens; null when the message carries no usage.
    uncached_input_tokens = models.PositiveBigIntegerField(null=True, blank=True)
    output_tokens = models.PositiveBigIntegerField(null=True, blank=True)
    cache_read_tokens = models.PositiveBigIntegerField(null=True, blank=True)
    cache_write_tokens = models.PositiveBigIntegerField(null=True, blank=True)
    external_id = models.CharField(
        max_length=200, blank=True, help_text="Transcript message id or API client_id."
    )
    response_id = models.CharField(
        max_length=200,
        blank=True,
        help_text="The imported API response whose usage this message carries (counted once).",
    )
    # NULL, not "", for "not a relay": the per-session unique constraint must allow many.
    relay_id = models.CharField(max_length=64, null=True, blank=True)  # noqa: DJ001
    compacted = models.BooleanField(
        default=False, help_text="Summarized by a later compaction; kept in the log."
    )
    starts_turn = models.BooleanField(default=False)
    # API idempotency (host.intake): the poster's client_id, unique per session, and, when
    # before_step forwarded the message, the answer a retry gets again.
    client_id = models.CharField(max_length=200, null=True, blank=True)  # noqa: DJ001 (NULLs are distinct)
    forwarded_to = models.UUIDField(null=True, blank=True)
    forward_relay_id = models.CharField(max_length=64, blank=True)
    created = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["session", "seq"]
        constraints = [
            models.UniqueConstraint(fields=["session", "seq"], name="message_unique_seq"),
            models.UniqueConstraint(fields=["session", "relay_id"], name="message_unique_relay"),
            models.UniqueConstraint(
                fields=["session", "client_id"], name="message_unique_client_id"
            ),
        ]
        indexes = [
            models.Index(fields=["session", "external_id"]),
            models.Index(
                fields=["response_id"],
                condition=~models.Q(response_id=""),
                name="message_response_id",
            ),
        ]

    def __str__(self) -> str:
        return f"{self.session_id}#{self.seq} {self.role}"


class SessionEventKind(models.TextChoices):
    """The kinds of a `SessionEvent`, the session log's non-message entries.

    Not the follower's websocket event kinds (`follower.events.EventKind`).
    """

    MODEL_SELECTION = "model-selection"
    COMPACTION = "compaction"
    TURN_START = "turn-start"
    NOTICE = "notice"


class SessionEvent(models.Model):
    """A non-message log entry (model selection, compaction, turn start, notice)."""

    session = models.ForeignKey(Session, on_delete=models.CASCADE, related_name="events")
    seq = models.PositiveBigIntegerField()
    kind = models.CharField(max_length=20, choices=SessionEventKind.choices)
    data = models.JSONField(default=dict, blank=True)
    created = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["session", "seq"]
        constraints = [models.UniqueConstraint(fields=["session", "seq"], name="event_unique_seq")]

    def __str__(self) -> str:
        return f"{self.session_id}#{self.seq} {self.kind}"


class UsageProjection(models.Model):
    """The tokenUsage projection (seed 003 §5.1), folded from the log as messages arrive.

    All figures are tokens. ``context_tokens`` is the prompt size of the latest model call
    (uncached input + cache read + cache write of the last assistant message with usage);
    ``effective_chars`` counts the characters after the last compaction for the meter.
    """

    session = models.OneToOneField(Session, on_delete=models.CASCADE, related_name="usage")
    uncached_input_tokens = models.PositiveBigIntegerField(default=0)
    output_tokens = models.PositiveBigIntegerField(default=0)
    cache_read_tokens = models.PositiveBigIntegerField(default=0)
    cache_write_tokens = models.PositiveBigIntegerField(default=0)
    context_tokens = models.PositiveBigIntegerField(default=0)
    context_seq = models.PositiveBigIntegerField(
        default=0, help_text="seq of the message that gave context_tokens."
    )
    effective_chars = models.PositiveBigIntegerField(default=0)

    def __str__(self) -> str:
        return f"usage of {self.session_id}"


class Team(models.Model):
    """A team led by a main session; more than one member makes the active-team-roster blocker."""

    lead = models.OneToOneField(Session, on_delete=models.CASCADE, related_name="led_team")
    members = models.ManyToManyField(Session, related_name="teams", blank=True)
    name = models.CharField(max_length=200, blank=True)

    def __str__(self) -> str:
        return self.name or f"team of {self.lead_id}"


class InboxStage(models.TextChoices):
    NEXT_TURN = "next-turn"
    NEXT_STEP = "next-step"


class InboxItem(models.Model):
    """Input queued for the session's next turn or step; pending until ``taken``."""

    session = models.ForeignKey(Session, on_delete=models.CASCADE, related_name="inbox")
    stage = models.CharField(max_length=10, choices=InboxStage.choices)
    content = models.TextField()
    message = models.ForeignKey(
        Message,
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="+",
        help_text="The logged message this item queues, when it arrived through post_message.",
    )
    taken = models.BooleanField(default=False)
    created = models.DateTimeField(auto_now_add=True)

    def __str__(self) -> str:
        return f"{self.stage} for {self.session_id}"


class ActivityKind(models.TextChoices):
    TURN = "turn"
    COMPACTION = "compaction"
    JOB = "job"


class Activity(models.Model):
    """Something in flight for a session (seed 000 blockers: ``activity:KIND``)."""

    session = models.ForeignKey(Session, on_delete=models.CASCADE, related_name="activities")
    kind = models.CharField(max_length=20, choices=ActivityKind.choices)
    detail = models.CharField(max_length=300, blank=True)
    started = models.DateTimeField(auto_now_add=True)
    ended = models.DateTimeField(null=True, blank=True)
    # A turn's lease (host.turn_lease): whoever runs it renews it; an expired one is ended.
    lease_expires = models.DateTimeField(
        null=True, blank=True, help_text="A turn: alive until then unless its runner renews it."
    )
    task_id = models.CharField(
        max_length=64, blank=True, help_text="A turn: the queued task that answers it."
    )

    class Meta:
        verbose_name_plural = "activities"
        indexes = [
            models.Index(fields=["session", "ended"]),
            # The lease sweep reads the open activities only.
            models.Index(
                fields=["lease_expires"],
                condition=models.Q(ended__isnull=True),
                name="activity_open_lease",
            ),
        ]

    def __str__(self) -> str:
        return f"{self.kind} on {self.session_id}"


class ApiToken(models.Model):
    """A bearer token for the JSON API; only its SHA-256 digest is stored."""

    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE)
    digest = models.CharField(max_length=64, unique=True)
    created = models.DateTimeField(auto_now_add=True)

    def __str__(self) -> str:
        return f"API token of {self.user_id}"


class LanguagePreference(models.Model):
    """The language a user chose for the pages (one of ``settings.LANGUAGES``); it also
    renders what follower events carry to them."""

    user = models.OneToOneField(
        settings.AUTH_USER_MODEL, primary_key=True, on_delete=models.CASCADE
    )
    language = models.CharField(max_length=10)

    def __str__(self) -> str:
        return f"{self.user_id}: {self.language}"


def stored_language(user_id: Any) -> str:
    """Return the language ``user_id`` chose, or "" when they chose none."""
    found = LanguagePreference.objects.filter(user_id=user_id).values_list("language", flat=True)
    return found.first() or ""
