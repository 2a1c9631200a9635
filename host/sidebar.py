"""The chat sidebar: a user's sessions grouped by workspace (docs/spec.md, Follower rules).

A row is shown when the session is not blank or is the session the page shows; archived sessions
and subagents are left out (the page's own session always shows). Sessions in no workspace get
their own group, after the workspaces, so they are never invisible.

The list comes in pages: the first holds the ``PAGE`` most recently updated
rows plus the page's own session, each later page (``offset``) the next ``PAGE``; the list asks
for the next when its end scrolls into view. Events change single rows in place
(``follower.fragments``), so a user with a thousand conversations never gets them all at once.

A chain of handoffs is one row (docs/design.md, Lineage): its newest session, with the
older hops folded under it, newest first. The host does not know about handoffs: it asks the
plugins through ``host.signals.session_links`` which sessions were handed off to which.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from uuid import UUID

from django.contrib.auth.models import AbstractBaseUser, AnonymousUser
from django.db.models import Q
from django.utils.translation import gettext_lazy as _

from host.models import Session, Workspace
from host.signals import session_links

NO_WORKSPACE_LABEL = _("No workspace")

PAGE = 50
"""Rows per page of the session list."""

LISTED = Q(blank=False, parent__isnull=True, archived=False)
"""The sessions the list shows, besides the page's own."""


def listed(session: Session) -> bool:
    """Return whether the list shows ``session`` on any page (``LISTED`` for one row)."""
    return not session.blank and session.parent_id is None and not session.archived


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


@dataclass
class SidebarPage:
    """One page of the list: its groups, and the offset of the next page (None: the last)."""

    groups: list[SidebarGroup]
    next_offset: int | None


def visible_sessions(
    user: AbstractBaseUser | AnonymousUser, current: UUID | None, *, offset: int = 0
) -> tuple[list[Session], bool]:
    """Return one page of the sessions the sidebar shows (``!blank || id === current``;
    docs/spec.md, Terms: blank), most recently updated first, and whether more follow.

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
    for row in fold_chains(sessions, current):
        workspace = row.session.workspace
        key = workspace.pk if workspace else None
        if key not in groups:
            label = str(workspace if workspace else NO_WORKSPACE_LABEL)
            groups[key] = SidebarGroup(label=label, workspace=workspace)
        groups[key].rows.append(row)
    named = sorted(
        (g for key, g in groups.items() if key is not None),
        key=lambda g: (g.label.lower(), g.workspace.path if g.workspace else ""),
    )
    ordered = named + ([groups[None]] if None in groups else [])
    return SidebarPage(ordered, offset + PAGE if more else None)


def chain_links(session_ids: set[UUID]) -> dict[UUID, UUID]:
    """Return ``{source id: successor id}`` for the hops into and out of ``session_ids``, as
    the plugins answer ``session_links`` (empty without a plugin that knows of handoffs)."""
    links: dict[UUID, UUID] = {}
    for _receiver, answer in session_links.send(sender=Session, session_ids=sorted(session_ids)):
        if isinstance(answer, dict):
            links.update(answer)
    return links


def _chains_through(session_ids: set[UUID]) -> dict[UUID, UUID]:
    """Return every hop of the chains through ``session_ids`` back to their first sessions:
    one ``session_links`` round per hop of the longest chain."""
    links: dict[UUID, UUID] = {}
    asked: set[UUID] = set()
    frontier = set(session_ids)
    while frontier:
        asked |= frontier
        links.update(chain_links(frontier))
        frontier = set(links) - asked
    return links


def fold_chains(sessions: list[Session], current: UUID | None = None) -> list[SidebarRow]:
    """Return one row per chain among ``sessions``, in their order: each session whose
    successor the list shows is folded under its chain's newest session, wherever that sits
    (on this page or a later one). A hidden hop (archived, a successor still blank) splits its
    chain in two rows. Two queries plus one per hop of the longest chain, whatever the number
    of sessions.
    """
    known = {session.pk: session for session in sessions}
    links = _chains_through(set(known))
    missing = (set(links) | set(links.values())) - set(known)
    known |= {s.pk: s for s in Session.objects.filter(pk__in=missing).select_related("workspace")}

    def shown(session_id: UUID | None) -> bool:
        found = known.get(session_id) if session_id is not None else None
        return found is not None and (listed(found) or found.pk == current)

    predecessors = {target: source for source, target in links.items()}
    rows = []
    for session in sessions:
        if shown(links.get(session.pk)):
            continue  # an older hop: folded under its chain's newest session
        row = SidebarRow(session)
        hop = predecessors.get(session.pk)
        while hop is not None and shown(hop) and len(row.older) < len(known):
            row.older.append(known[hop])
            hop = predecessors.get(hop)
        row.expanded = any(older.pk == current for older in row.older)
        rows.append(row)
    return rows


def row_context(session: Session, current: UUID | None = None) -> dict[str, object]:
    """Return the context of ``session``'s row (``templates/chat/_session_row.html``), as the
    list renders it: ``s``, ``shown`` and, when it is the newest of a chain, ``older`` and
    ``expanded`` (a folded older hop gets none: it sits inside its chain's row)."""
    rows = fold_chains([session], current)
    row = rows[0] if rows else SidebarRow(session)
    return {"s": session, "shown": listed(session), "older": row.older, "expanded": row.expanded}
