"""The chat sidebar: a user's sessions grouped by workspace (seed 003 §6.5, defects A and B).

A row is shown when the session is not blank or is the session the page shows; archived sessions
and subagents are left out (the page's own session always shows). Sessions in no workspace get
their own group, after the workspaces, so they are never invisible.

The list comes in pages (issue 17, item 3): the first holds the ``PAGE`` most recently updated
rows plus the page's own session, each later page (``offset``) the next ``PAGE``; the list asks
for the next when its end scrolls into view. Events change single rows in place
(``follower.fragments``), so a user with a thousand conversations never gets them all at once.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from uuid import UUID

from django.contrib.auth.models import AbstractBaseUser, AnonymousUser
from django.db.models import Q

from host.models import Session, Workspace

NO_WORKSPACE_LABEL = "No workspace"

PAGE = 50
"""Rows per page of the session list."""

LISTED = Q(blank=False, parent__isnull=True, archived=False)
"""The sessions the list shows, besides the page's own."""


def listed(session: Session) -> bool:
    """Return whether the list shows ``session`` on any page (``LISTED`` for one row)."""
    return not session.blank and session.parent_id is None and not session.archived


@dataclass
class SidebarGroup:
    """One heading of the sidebar and its rows, most recently updated first."""

    label: str
    workspace: Workspace | None
    sessions: list[Session] = field(default_factory=list)


@dataclass
class SidebarPage:
    """One page of the list: its groups, and the offset of the next page (None: the last)."""

    groups: list[SidebarGroup]
    next_offset: int | None


def visible_sessions(
    user: AbstractBaseUser | AnonymousUser, current: UUID | None, *, offset: int = 0
) -> tuple[list[Session], bool]:
    """Return one page of the sessions the sidebar shows (seed 003 §6.5: ``!blank || id ===
    current``), most recently updated first, and whether more follow.

    The page's own session comes on the first page (``offset`` 0) whatever its place.
    Two queries at most (the page, then the current session when it was not on it).
    """
    rows = Session.objects.filter(owner_id=user.pk).select_related("workspace")
    others = rows.filter(LISTED).order_by("-updated")
    if current is not None:
        others = others.exclude(pk=current)
    sessions = list(others[offset : offset + PAGE + 1])
    more = len(sessions) > PAGE
    sessions = sessions[:PAGE]
    if offset == 0 and current is not None:
        sessions += list(rows.filter(pk=current))
        sessions.sort(key=lambda s: s.updated, reverse=True)
    return sessions, more


def sidebar_page(
    user: AbstractBaseUser | AnonymousUser, current: UUID | None, *, offset: int = 0
) -> SidebarPage:
    """Group one page of the visible sessions by workspace: workspaces by name, then
    "No workspace". Only groups with at least one visible row are returned."""
    sessions, more = visible_sessions(user, current, offset=offset)
    groups: dict[int | None, SidebarGroup] = {}
    for session in sessions:
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
    ordered = named + ([groups[None]] if None in groups else [])
    return SidebarPage(ordered, offset + PAGE if more else None)
