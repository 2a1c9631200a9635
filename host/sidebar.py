"""The chat sidebar: a user's sessions grouped by workspace (seed 003 §6.5, defects A and B).

A row is shown when the session is not blank or is the session the page shows; archived sessions
and subagents are left out (the page's own session always shows). Sessions in no workspace get
their own group, after the workspaces, so they are never invisible.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from uuid import UUID

from django.contrib.auth.models import AbstractBaseUser, AnonymousUser
from django.db.models import Q

from host.models import Session, Workspace

NO_WORKSPACE_LABEL = "No workspace"


@dataclass
class SidebarGroup:
    """One heading of the sidebar and its rows, most recently updated first."""

    label: str
    workspace: Workspace | None
    sessions: list[Session] = field(default_factory=list)


def visible_sessions(user: AbstractBaseUser | AnonymousUser, current: UUID | None) -> list[Session]:
    """Return the sessions the sidebar shows (seed 003 §6.5: ``!blank || id === current``)."""
    shown = Q(blank=False, parent__isnull=True, archived=False)
    if current is not None:
        shown |= Q(pk=current)
    return list(
        Session.objects.filter(owner_id=user.pk)
        .filter(shown)
        .select_related("workspace")
        .order_by("-updated")
    )


def sidebar_groups(
    user: AbstractBaseUser | AnonymousUser, current: UUID | None
) -> list[SidebarGroup]:
    """Group the visible sessions by workspace: workspaces by name, then "No workspace".

    Only groups with at least one visible row are returned.
    """
    groups: dict[int | None, SidebarGroup] = {}
    for session in visible_sessions(user, current):
        workspace = session.workspace
        key = workspace.pk if workspace else None
        if key not in groups:
            label = str(workspace) if workspace else NO_WORKSPACE_LABEL
            groups[key] = SidebarGroup(label=label, workspace=workspace)
        groups[key].sessions.append(session)
    named = sorted(
        (g for key, g in groups.items() if key is not None),
        key=lambda g: (g.label.lower(), g.workspace.path if g.workspace else ""),
    )
    return named + ([groups[None]] if None in groups else [])
