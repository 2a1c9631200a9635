"""The chat sidebar: a user's sessions grouped by workspace (seed 003 §6.5, defects A and B).

A row is shown when the session is not blank or is the session the page shows; archived sessions
and subagents are left out (the page's own session always shows). Sessions in no workspace get
their own group, after the workspaces, so they are never invisible.

A chain of handoffs is one row (issue 18 §3; DESIGN.md, Lineage): its newest session, with the
older hops folded under it, newest first. The host does not know about handoffs: it asks the
plugins through ``host.signals.session_links`` which sessions were handed off to which.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from uuid import UUID

from django.contrib.auth.models import AbstractBaseUser, AnonymousUser
from django.db.models import Q

from host.models import Session, Workspace
from host.signals import session_links

NO_WORKSPACE_LABEL = "No workspace"


@dataclass
class SidebarRow:
    """One row: a session and, when it is the newest of a chain, the older hops folded under it
    (newest first); ``expanded`` when one of them is the page's own session."""

    session: Session
    older: list[Session] = field(default_factory=list)
    expanded: bool = False


@dataclass
class SidebarGroup:
    """One heading of the sidebar and its rows, most recently updated first."""

    label: str
    workspace: Workspace | None
    rows: list[SidebarRow] = field(default_factory=list)


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
    for row in fold_chains(visible_sessions(user, current), current):
        workspace = row.session.workspace
        key = workspace.pk if workspace else None
        if key not in groups:
            label = str(workspace) if workspace else NO_WORKSPACE_LABEL
            groups[key] = SidebarGroup(label=label, workspace=workspace)
        groups[key].rows.append(row)
    named = sorted(
        (g for key, g in groups.items() if key is not None),
        key=lambda g: (g.label.lower(), g.workspace.path if g.workspace else ""),
    )
    return named + ([groups[None]] if None in groups else [])


def chain_links(session_ids: list[UUID]) -> dict[UUID, UUID]:
    """Return ``{source id: successor id}`` among ``session_ids``, as the plugins answer
    ``session_links`` (empty without a plugin that knows of handoffs)."""
    wanted = set(session_ids)
    links: dict[UUID, UUID] = {}
    for _receiver, answer in session_links.send(sender=Session, session_ids=session_ids):
        if isinstance(answer, dict):
            links.update(answer)
    return {source: target for source, target in links.items() if {source, target} <= wanted}


def fold_chains(sessions: list[Session], current: UUID | None = None) -> list[SidebarRow]:
    """Fold each chain among ``sessions`` into the row of its newest session, keeping the order
    of ``sessions`` for the rows (a chain sits where its newest session does).

    A hop missing from ``sessions`` (hidden, e.g. archived) splits its chain in two rows.
    """
    by_id = {session.pk: session for session in sessions}
    links = chain_links(list(by_id))
    predecessors = {target: source for source, target in links.items()}
    rows = []
    for session in sessions:
        if session.pk in links:
            continue  # an older hop: folded under its chain's newest session
        row = SidebarRow(session)
        hop = predecessors.get(session.pk)
        while hop is not None and len(row.older) < len(sessions):
            row.older.append(by_id[hop])
            hop = predecessors.get(hop)
        row.expanded = any(older.pk == current for older in row.older)
        rows.append(row)
    return rows
