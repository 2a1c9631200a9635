"""The host's records: workspaces, sessions, their append-only logs, usage, inbox, activity.

A session's log (messages and events) shares one per-session sequence: ``Session.revision`` is the
sequence number of the latest entry (docs/spec.md, Terms: the revision read before summarizing).
Logs are append-only: compaction marks older messages as compacted, nothing is deleted or rewritten.
"""

from __future__ import annotations

import uuid
from typing import Any

from django.conf import settings
from django.db import models
from django.utils.translation import gettext_lazy as _


class Workspace(models.Model):
    """A directory the user works in; the sidebar groups sessions by it."""

    owner = models.ForeignKey(
        settings.AUTH_USER_MODEL, verbose_name=_("owner"), on_delete=models.CASCADE
    )
    path = models.CharField(_("path"), max_length=1024)
    name = models.CharField(_("name"), max_length=200, blank=True)
    created = models.DateTimeField(_("created"), auto_now_add=True)

    class Meta:
        verbose_name = _("workspace")
        verbose_name_plural = _("workspaces")
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
    DEFAULT = "default", _("Default")
    READ_ONLY = "read-only", _("Read-only")
    FULL_ACCESS = "full-access", _("Full access")
    CUSTOM = "custom", _("Custom")


class Runtime(models.TextChoices):
    """Where a session runs: here, or in a Claude Code or Codex terminal whose log is followed
    (``manage.py follow_sessions``): its input belongs to that terminal."""

    PRODUCT = "product", _("Session Handoff")
    CLAUDE = "claude", _("Claude Code")
    CODEX = "codex", _("Codex")


class Session(models.Model):
    """One conversation. A main has no parent; a subagent's ``parent`` is the main that owns it."""

    id = models.UUIDField("ID", primary_key=True, default=uuid.uuid4, editable=False)
    owner = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        verbose_name=_("owner"),
        on_delete=models.CASCADE,
        related_name="agent_sessions",
    )
    title = models.CharField(_("title"), max_length=300, blank=True)
    cwd = models.CharField(_("working directory"), max_length=1024, blank=True)
    workspace = models.ForeignKey(
        Workspace,
        verbose_name=_("workspace"),
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="sessions",
    )
    agent_preset = models.CharField(_("agent preset"), max_length=100, default="default")
    model = models.CharField(_("model"), max_length=200, blank=True)
    permission_preset = models.CharField(
        _("permission preset"),
        max_length=20,
        choices=PermissionPreset.choices,
        default=PermissionPreset.DEFAULT,
    )
    approval_policy = models.CharField(_("approval policy"), max_length=50, blank=True)
    sandbox_tier = models.CharField(_("sandbox tier"), max_length=50, blank=True)
    plan_mode = models.BooleanField(_("plan mode"), default=False)
    request_config = models.JSONField(
        _("request config"),
        default=dict,
        blank=True,
        help_text=_("The request header's config (a successor inherits the model from it)."),
    )
    parent = models.ForeignKey(
        "self",
        verbose_name=_("main conversation"),
        null=True,
        blank=True,
        on_delete=models.CASCADE,
        related_name="subagents",
        help_text=_("A subagent's main; empty for a main."),
    )
    status = models.CharField(
        _("status"), max_length=10, choices=SessionStatus.choices, default=SessionStatus.IDLE
    )
    blank = models.BooleanField(
        _("blank"), default=True, help_text=_("True from creation until the first turn starts.")
    )
    archived = models.BooleanField(_("archived"), default=False)
    revision = models.PositiveBigIntegerField(
        _("revision"), default=0, help_text=_("Sequence number of the latest log entry.")
    )
    turns = models.PositiveIntegerField(_("turns"), default=0)
    compactions = models.PositiveIntegerField(_("compactions"), default=0)
    context_window = models.PositiveIntegerField(
        _("context window"),
        default=0,
        help_text=_("Tokens, when the transcript states it; 0 = look up by model."),
    )
    runtime = models.CharField(
        _("runtime"),
        max_length=10,
        choices=Runtime.choices,
        default=Runtime.PRODUCT,
        help_text=_(
            "Where the conversation runs; another runtime's input belongs to its terminal."
        ),
    )
    external_id = models.CharField(
        _("external id"),
        max_length=200,
        blank=True,
        help_text=_("Import identity (the transcript's own session id)."),
    )
    hooks_seen = models.DateTimeField(
        _("hooks seen"),
        null=True,
        blank=True,
        help_text=_("When its runtime last ran one of the product's hooks for it (agent hooks)."),
    )
    created = models.DateTimeField(_("created"), auto_now_add=True)
    updated = models.DateTimeField(_("updated"), auto_now=True)

    class Meta:
        verbose_name = _("conversation")
        verbose_name_plural = _("conversations")
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


class Role(models.TextChoices):
    USER = "user", _("User")
    ASSISTANT = "assistant", _("Assistant")
    SYSTEM = "system", _("System")
    TOOL = "tool", _("Tool")


class SourceKind(models.TextChoices):
    """Where a message came from. Which messages start turns is told by ``Message.starts_turn``
    (docs/design.md, turns: prompts, relays, inbox items, task notifications, tool results)."""

    USER = "user", _("User")
    ASSISTANT = "assistant", _("Assistant")
    PLUGIN = "plugin", _("Plugin")
    RELAY = "relay", _("Relay")
    SYSTEM = "system", _("System")
    TOOL = "tool", _("Tool")


class Message(models.Model):
    """One entry of a session's append-only log; ``seq`` shares the sequence with events."""

    session = models.ForeignKey(
        Session, verbose_name=_("conversation"), on_delete=models.CASCADE, related_name="messages"
    )
    seq = models.PositiveBigIntegerField(_("sequence number"))
    role = models.CharField(_("role"), max_length=10, choices=Role.choices)
    source_kind = models.CharField(_("source kind"), max_length=10, choices=SourceKind.choices)
    content = models.TextField(_("content"), blank=True)
    tool_name = models.CharField(_("tool name"), max_length=200, blank=True)
    model = models.CharField(_("model"), max_length=200, blank=True)
    # The four usage buckets (docs/spec.md, Token sources), tokens; null when the message carries
    # no usage.
    uncached_input_tokens = models.PositiveBigIntegerField(
        _("uncached input tokens"), null=True, blank=True
    )
    output_tokens = models.PositiveBigIntegerField(_("output tokens"), null=True, blank=True)
    cache_read_tokens = models.PositiveBigIntegerField(
        _("cache read tokens"), null=True, blank=True
    )
    cache_write_tokens = models.PositiveBigIntegerField(
        _("cache write tokens"), null=True, blank=True
    )
    external_id = models.CharField(
        _("external id"),
        max_length=200,
        blank=True,
        help_text=_("Transcript message id or API client_id."),
    )
    response_id = models.CharField(
        _("response id"),
        max_length=200,
        blank=True,
        help_text=_("The imported API response whose usage this message carries (counted once)."),
    )
    # NULL, not "", for "not a relay": the per-session unique constraint must allow many.
    relay_id = models.CharField(_("relay id"), max_length=64, null=True, blank=True)  # noqa: DJ001
    compacted = models.BooleanField(
        _("compacted"),
        default=False,
        help_text=_("Summarized by a later compaction; kept in the log."),
    )
    starts_turn = models.BooleanField(_("starts a turn"), default=False)
    # API idempotency (host.intake): the poster's client_id, unique per session, and, when
    # before_step forwarded the message, the answer a retry gets again.
    client_id = models.CharField(  # noqa: DJ001 (NULLs are distinct)
        _("client id"), max_length=200, null=True, blank=True
    )
    forwarded_to = models.UUIDField(_("forwarded to"), null=True, blank=True)
    # A tool result's outcome as its runtime reported it: True failed (Claude Code's
    # ``is_error``, a non-zero exit code), False succeeded, None not a tool result or not said.
    tool_error = models.BooleanField(_("tool error"), null=True, blank=True)
    forward_relay_id = models.CharField(_("forward relay id"), max_length=64, blank=True)
    created = models.DateTimeField(_("created"), auto_now_add=True)

    class Meta:
        verbose_name = _("message")
        verbose_name_plural = _("messages")
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
        return f"{self.session_id}#{self.seq} {self.get_role_display()}"


class SessionEventKind(models.TextChoices):
    """The kinds of a `SessionEvent`, the session log's non-message entries.

    Not the follower's websocket event kinds (`follower.events.EventKind`).
    """

    MODEL_SELECTION = "model-selection", _("Model selection")
    COMPACTION = "compaction", _("Compaction")
    TURN_START = "turn-start", _("Turn start")
    NOTICE = "notice", _("Notice")


class SessionEvent(models.Model):
    """A non-message log entry (model selection, compaction, turn start, notice)."""

    session = models.ForeignKey(
        Session, verbose_name=_("conversation"), on_delete=models.CASCADE, related_name="events"
    )
    seq = models.PositiveBigIntegerField(_("sequence number"))
    kind = models.CharField(_("kind"), max_length=20, choices=SessionEventKind.choices)
    data = models.JSONField(_("data"), default=dict, blank=True)
    created = models.DateTimeField(_("created"), auto_now_add=True)

    class Meta:
        verbose_name = _("conversation event")
        verbose_name_plural = _("conversation events")
        ordering = ["session", "seq"]
        constraints = [models.UniqueConstraint(fields=["session", "seq"], name="event_unique_seq")]

    def __str__(self) -> str:
        return f"{self.session_id}#{self.seq} {self.kind}"


class UsageProjection(models.Model):
    """The usage projection (docs/spec.md, Token sources), folded from the log as messages arrive.

    All figures are tokens. ``context_tokens`` is the prompt size of the latest model call
    (uncached input + cache read + cache write of the last assistant message with usage);
    ``effective_chars`` counts the characters after the last compaction for the meter.
    """

    session = models.OneToOneField(
        Session, verbose_name=_("conversation"), on_delete=models.CASCADE, related_name="usage"
    )
    uncached_input_tokens = models.PositiveBigIntegerField(_("uncached input tokens"), default=0)
    output_tokens = models.PositiveBigIntegerField(_("output tokens"), default=0)
    cache_read_tokens = models.PositiveBigIntegerField(_("cache read tokens"), default=0)
    cache_write_tokens = models.PositiveBigIntegerField(_("cache write tokens"), default=0)
    context_tokens = models.PositiveBigIntegerField(_("context tokens"), default=0)
    context_seq = models.PositiveBigIntegerField(
        _("context message"),
        default=0,
        help_text=_("Sequence number of the message that gave the context tokens."),
    )
    effective_chars = models.PositiveBigIntegerField(_("effective characters"), default=0)

    class Meta:
        verbose_name = _("token usage")
        verbose_name_plural = _("token usage")

    def __str__(self) -> str:
        return f"usage of {self.session_id}"


class Team(models.Model):
    """A team led by a main session; more than one member makes the active-team-roster blocker."""

    lead = models.OneToOneField(
        Session, verbose_name=_("lead"), on_delete=models.CASCADE, related_name="led_team"
    )
    members = models.ManyToManyField(
        Session, verbose_name=_("members"), related_name="teams", blank=True
    )
    name = models.CharField(_("name"), max_length=200, blank=True)

    class Meta:
        verbose_name = _("team")
        verbose_name_plural = _("teams")

    def __str__(self) -> str:
        return self.name or f"team of {self.lead_id}"


class InboxStage(models.TextChoices):
    NEXT_TURN = "next-turn", _("Next turn")
    NEXT_STEP = "next-step", _("Next step")


class InboxItem(models.Model):
    """Input queued for the session's next turn or step; pending until ``taken``."""

    session = models.ForeignKey(
        Session, verbose_name=_("conversation"), on_delete=models.CASCADE, related_name="inbox"
    )
    stage = models.CharField(_("stage"), max_length=10, choices=InboxStage.choices)
    content = models.TextField(_("content"))
    message = models.ForeignKey(
        Message,
        verbose_name=_("message"),
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="+",
        help_text=_("The logged message this item queues, when it arrived through post_message."),
    )
    taken = models.BooleanField(_("taken"), default=False)
    created = models.DateTimeField(_("created"), auto_now_add=True)

    class Meta:
        verbose_name = _("inbox item")
        verbose_name_plural = _("inbox items")

    def __str__(self) -> str:
        return f"{self.stage} for {self.session_id}"


class ActivityKind(models.TextChoices):
    TURN = "turn", _("Turn")
    COMPACTION = "compaction", _("Compaction")
    JOB = "job", _("Job")
    SUBAGENT = "subagent", _("Subagent")


class Activity(models.Model):
    """Something in flight for a session (docs/spec.md, Deferral: the blocker ``activity:KIND``)."""

    session = models.ForeignKey(
        Session, verbose_name=_("conversation"), on_delete=models.CASCADE, related_name="activities"
    )
    kind = models.CharField(_("kind"), max_length=20, choices=ActivityKind.choices)
    detail = models.CharField(_("detail"), max_length=300, blank=True)
    started = models.DateTimeField(_("started"), auto_now_add=True)
    ended = models.DateTimeField(_("ended"), null=True, blank=True)
    # A turn's lease (host.turn_lease): whoever runs it renews it; an expired one is ended.
    lease_expires = models.DateTimeField(
        _("lease expires"),
        null=True,
        blank=True,
        help_text=_("A turn: alive until then unless its runner renews it."),
    )
    task_id = models.CharField(
        _("task id"),
        max_length=64,
        blank=True,
        help_text=_("A turn: the queued task that answers it."),
    )

    class Meta:
        verbose_name = _("activity")
        verbose_name_plural = _("activities")
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


class FollowedFile(models.Model):
    """A session log ``manage.py follow_sessions`` follows: how far it was imported.

    ``offset`` (bytes, always just after a newline) and ``lines`` (how many lines that is) are
    written in the transaction that imports those lines, with ``state`` (the importer's parse
    state between parts, JSON) and ``session`` (the session the log feeds), so a restart goes on
    where the last commit ended and nothing is imported twice. ``device`` and ``inode`` name the
    file read: another file at the path, or a file shorter than ``offset``, is read again from
    its start. ``failed`` says why following stopped (a record breaking its format's rules, the
    session imported already by ``import_transcript``); "" while followed.
    """

    owner = models.ForeignKey(
        settings.AUTH_USER_MODEL, verbose_name=_("owner"), on_delete=models.CASCADE
    )
    path = models.CharField(_("path"), max_length=1024)
    device = models.BigIntegerField(_("device"), default=0)
    inode = models.BigIntegerField(_("inode"), default=0)
    offset = models.PositiveBigIntegerField(_("offset"), default=0)
    lines = models.PositiveBigIntegerField(_("lines"), default=0)
    session = models.ForeignKey(
        Session,
        verbose_name=_("conversation"),
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="+",
    )
    state = models.JSONField(_("state"), default=dict, blank=True)
    failed = models.CharField(_("failed"), max_length=1024, blank=True)
    updated = models.DateTimeField(_("updated"), auto_now=True)

    class Meta:
        verbose_name = _("followed file")
        verbose_name_plural = _("followed files")
        constraints = [
            models.UniqueConstraint(fields=["owner", "path"], name="followed_file_once"),
        ]

    def __str__(self) -> str:
        return f"{self.path} @ {self.offset}"


class ApiToken(models.Model):
    """A bearer token for the JSON API; only its SHA-256 digest is stored."""

    user = models.ForeignKey(
        settings.AUTH_USER_MODEL, verbose_name=_("user"), on_delete=models.CASCADE
    )
    digest = models.CharField(_("SHA-256 digest"), max_length=64, unique=True)
    created = models.DateTimeField(_("created"), auto_now_add=True)

    class Meta:
        verbose_name = _("API token")
        verbose_name_plural = _("API tokens")

    def __str__(self) -> str:
        return f"API token of {self.user_id}"


class LanguagePreference(models.Model):
    """The language a user's pages and follower events speak (one of ``settings.LANGUAGES``).

    ``chosen``: the user picked it (EN / 中文), and it comes before the browser's on every
    page. Not chosen: the language their browser asked for on their latest page, kept so that
    what follower events render for them (rendered away from any request) speaks it too.
    """

    user = models.OneToOneField(
        settings.AUTH_USER_MODEL,
        verbose_name=_("user"),
        primary_key=True,
        on_delete=models.CASCADE,
    )
    language = models.CharField(_("language"), max_length=10)
    chosen = models.BooleanField(_("chosen"), default=True)

    class Meta:
        verbose_name = _("language preference")
        verbose_name_plural = _("language preferences")

    def __str__(self) -> str:
        return f"{self.user_id}: {self.language}"


def stored_language(user_id: Any) -> str:
    """Return the language ``user_id``'s follower events render in: the one they chose, else
    the one their browser asked for on their latest page; "" when neither is known."""
    found = LanguagePreference.objects.filter(user_id=user_id).values_list("language", flat=True)
    return found.first() or ""


def page_language(user_id: Any, negotiated: str) -> str:
    """Return the language of ``user_id``'s page: the one they chose, else ``negotiated`` (the
    browser's, as Django's ``LocaleMiddleware`` found it), which is then remembered for their
    follower events when it differs from what those would speak (one write per change; no
    row while it is the site's default). Costs one read per page.
    """
    row = LanguagePreference.objects.filter(user_id=user_id).values_list("language", "chosen")
    found = row.first()
    if found is not None and found[1]:
        return str(found[0])
    remembered = found[0] if found is not None else settings.LANGUAGE_CODE
    if negotiated != remembered:
        LanguagePreference.objects.update_or_create(
            user_id=user_id, defaults={"language": negotiated, "chosen": False}
        )
    return negotiated


class FollowedFolder(models.Model):
    """A runtime's sessions folder (``host.folders.runtime_folders``) a user switched on in
    Settings: ``follow_sessions`` without folders imports its logs into the user's sessions.
    No row: not followed (the default; a person's sessions are imported only when they ask)."""

    owner = models.ForeignKey(
        settings.AUTH_USER_MODEL, verbose_name=_("owner"), on_delete=models.CASCADE
    )
    path = models.CharField(_("path"), max_length=1024)
    created = models.DateTimeField(_("created"), auto_now_add=True)

    class Meta:
        verbose_name = _("followed folder")
        verbose_name_plural = _("followed folders")
        constraints = [
            models.UniqueConstraint(fields=["owner", "path"], name="followed_folder_once"),
        ]

    def __str__(self) -> str:
        return self.path
