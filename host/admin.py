"""Admin pages for the host's workspaces and sessions, read-mostly.

Sessions are created by the chat, the API and the importers, and their logs are append-only, so
the admin only renames them; workspaces may be registered and renamed (an explicit user action:
docs/spec.md, Inheritance). Nothing is deleted here.
"""

from __future__ import annotations

from typing import Any

from django.contrib import admin
from django.db import transaction
from django.db.models import Model
from django.http import HttpRequest
from django.urls import reverse
from django.utils.html import format_html
from django.utils.translation import gettext
from django.utils.translation import gettext_lazy as _

from host.models import Message, Session, Workspace
from host.signals import announce

MESSAGE_FIELDS = (
    "seq",
    "role",
    "source_kind",
    "tool_name",
    "short_content",
    "compacted",
    "created",
)


class MessageInline(admin.TabularInline):  # type: ignore[type-arg]
    """The session's log, read-only."""

    model = Message
    fields = MESSAGE_FIELDS
    readonly_fields = MESSAGE_FIELDS
    extra = 0
    can_delete = False
    show_change_link = False
    ordering = ["seq"]

    @admin.display(description=_("content"))
    def short_content(self, obj: Message) -> str:
        return obj.content[:200]

    def has_add_permission(self, request: HttpRequest, obj: Model | None = None) -> bool:
        return False


@admin.register(Session)
class SessionAdmin(admin.ModelAdmin):  # type: ignore[type-arg]
    """Sessions: only the title is editable."""

    list_display = [
        "title",
        "owner",
        "workspace",
        "status",
        "blank",
        "archived",
        "turns",
        "compactions",
        "updated",
    ]
    list_filter = ["status", "archived", "blank", "permission_preset"]
    search_fields = ["id", "title", "cwd", "external_id"]
    list_select_related = ["owner", "workspace"]
    readonly_fields = [
        "chat_link",
        "id",
        "owner",
        "cwd",
        "workspace",
        "parent",
        "agent_preset",
        "model",
        "permission_preset",
        "approval_policy",
        "sandbox_tier",
        "plan_mode",
        "request_config",
        "status",
        "blank",
        "archived",
        "revision",
        "turns",
        "compactions",
        "context_window",
        "external_id",
        "created",
        "updated",
    ]
    fields = ["title", *readonly_fields]
    inlines = [MessageInline]

    class Media:
        css = {"all": ["host/admin.css"]}

    @admin.display(description=_("chat"))
    def chat_link(self, obj: Session) -> str:
        url = reverse("chat:session", kwargs={"session_id": obj.pk})
        return format_html('<a href="{}">{}</a>', url, gettext("Open the conversation"))

    def save_model(self, request: HttpRequest, obj: Session, form: Any, change: bool) -> None:
        """Save the renamed session and announce it (open pages update their sidebar)."""
        with transaction.atomic():
            super().save_model(request, obj, form, change)
            announce(obj.pk, owner_id=obj.owner_id)

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False

    def has_delete_permission(self, request: HttpRequest, obj: Model | None = None) -> bool:
        return False


@admin.register(Workspace)
class WorkspaceAdmin(admin.ModelAdmin):  # type: ignore[type-arg]
    """Workspaces: registered and renamed here, never deleted."""

    list_display = ["name", "path", "owner", "created"]
    search_fields = ["name", "path"]
    list_select_related = ["owner"]

    def get_readonly_fields(self, request: HttpRequest, obj: Model | None = None) -> list[str]:
        """The path and owner are fixed once the workspace exists."""
        return ["path", "owner"] if obj is not None else []

    def has_delete_permission(self, request: HttpRequest, obj: Model | None = None) -> bool:
        return False
