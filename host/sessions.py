"""Create sessions, find and attach workspaces, and read the facts that make blockers.

A session is created by cwd, then its workspace is resolved by path and attached; an unknown
directory is never registered implicitly (docs/spec.md, Inheritance). A creation that names a
``client_id`` (the JSON API's) happens once per owner: a retry returns the first session. The
fact readers (``live_subagents``, ``in_flight_activities``, ``pending_inbox``, ``team_size``)
give the engine what the blockers ask about (docs/spec.md, Deferral); they never change
anything.
"""

from __future__ import annotations

from typing import Any

from django.db import IntegrityError, transaction
from django.db.models import QuerySet

from host.models import (
    Activity,
    InboxItem,
    PermissionPreset,
    Session,
    SessionStatus,
    Team,
    UsageProjection,
    Workspace,
)
from host.signals import announce

CLIENT_ID_PREFIX = "api:"
"""Marks a client's ``client_id`` in ``Session.external_id`` (an import keeps the transcript's
session id there), so the two never name the same session."""
MAX_CLIENT_ID = 200 - len(CLIENT_ID_PREFIX)
"""The longest ``client_id`` ``create_session`` takes: ``external_id`` holds 200 characters."""


def create_session(
    owner: Any,
    *,
    cwd: str = "",
    title: str = "",
    workspace: Workspace | None = None,
    agent_preset: str = "default",
    model: str = "",
    permission_preset: str = "default",
    parent: Session | None = None,
    client_id: str | None = None,
) -> Session:
    """Create an idle, blank session with its empty usage projection and return it.

    ``workspace`` and ``parent`` must belong to ``owner`` and ``permission_preset`` must be one
    of default, read-only, full-access, custom; ``client_id``, when given, a non-empty string of
    at most ``MAX_CLIENT_ID`` characters: otherwise ``ValueError`` and nothing is created.
    With a ``client_id`` the owner used before, the session that first call created is returned
    as it is now and nothing changes, whatever else this call carries; the database's
    uniqueness of (owner, ``external_id``) holds that for two calls racing each other too. Runs
    in one transaction: a crash half-way leaves no session.
    """
    if permission_preset not in PermissionPreset.values:
        raise ValueError(
            f"unknown permission preset {permission_preset!r}; "
            f"expected one of {', '.join(PermissionPreset.values)}"
        )
    if workspace is not None and workspace.owner_id != owner.pk:
        raise ValueError("the workspace belongs to another user")
    if parent is not None and parent.owner_id != owner.pk:
        raise ValueError("the parent session belongs to another user")
    if client_id is not None and not 0 < len(client_id) <= MAX_CLIENT_ID:
        raise ValueError(f"client_id must be 1 to {MAX_CLIENT_ID} characters long")
    external_id = CLIENT_ID_PREFIX + client_id if client_id is not None else ""
    first = _created_for(owner, external_id)
    if first is not None:
        return first
    try:
        return _create(
            owner,
            cwd=cwd,
            title=title,
            workspace=workspace,
            agent_preset=agent_preset or "default",
            model=model,
            permission_preset=permission_preset,
            parent=parent,
            external_id=external_id,
        )
    except IntegrityError:
        first = _created_for(owner, external_id)
        if first is None:
            raise
        return first


def _created_for(owner: Any, external_id: str) -> Session | None:
    """The owner's session created under ``external_id``; None for none or no ``external_id``."""
    if not external_id:
        return None
    return (
        Session.objects.select_related("workspace")
        .filter(owner=owner, external_id=external_id)
        .first()
    )


def _create(owner: Any, **fields: Any) -> Session:
    """Insert the session and its usage projection and announce it, in one transaction (inside
    a caller's, no savepoint of its own: a failure rolls back to the caller's)."""
    with transaction.atomic(savepoint=False):
        session = Session.objects.create(
            owner=owner, status=SessionStatus.IDLE, blank=True, **fields
        )
        UsageProjection.objects.create(session=session)
        announce(session.pk, created=True, owner_id=session.owner_id)
    return session


def resolve_workspace(owner: Any, path: str) -> Workspace | None:
    """Return ``owner``'s workspace registered at exactly ``path``, or None; never creates one."""
    if not path:
        return None
    return Workspace.objects.filter(owner=owner, path=path).first()


def attach(session: Session, workspace: Workspace) -> None:
    """Attach ``session`` to ``workspace`` (the sidebar groups it there).

    Raises ``ValueError`` when the workspace belongs to another user; nothing changes then.
    One transaction (inside a caller's, no savepoint of its own).
    """
    if workspace.owner_id != session.owner_id:
        raise ValueError("the workspace belongs to another user")
    with transaction.atomic(savepoint=False):
        session.workspace = workspace
        session.save(update_fields=["workspace", "updated"])
        announce(session.pk, owner_id=session.owner_id)


def live_subagents(session: Session) -> QuerySet[Session]:
    """Return the subagents ``session`` owns that are live: idle or running, not archived.

    Finished, disposed or archived subagents do not count (docs/spec.md, Deferral:
    ``owned-agent:ID``).
    """
    return Session.objects.filter(
        parent=session,
        status__in=[SessionStatus.IDLE, SessionStatus.RUNNING],
        archived=False,
    ).order_by("created")


def in_flight_activities(session: Session) -> list[str]:
    """Return the kinds (turn, compaction, job) of the activities in flight, sorted, distinct."""
    kinds = Activity.objects.filter(session=session, ended__isnull=True).values_list(
        "kind", flat=True
    )
    return sorted(set(kinds))


def pending_inbox(session: Session) -> int:
    """Return how many inbox items (next turn or next step) are queued and not yet taken."""
    return InboxItem.objects.filter(session=session, taken=False).count()


def team_size(session: Session) -> int:
    """Return the member count of the team ``session`` leads; 0 when it leads none."""
    team = Team.objects.filter(lead=session).first()
    return team.members.count() if team is not None else 0
