"""Sessions another runtime runs (Claude Code, Codex), as that runtime's hooks report them.

The agent hooks (``agent_hooks``) tell the host what only the runtime knows, and the host keeps
it where the engine reads its facts (``host.services.SessionController.observe``):

- ``note_hooks``: the runtime ran the product's hooks for the session (``Session.hooks_seen``):
  the guard lets its handoff through, its successor opening in that runtime;
- ``open_activity`` / ``close_activity``: a subagent or a background shell runs (docs/spec.md,
  Deferral: ``activity:subagent``, ``activity:job`` defer an attempt) until the runtime says
  it ended;
- ``adopt_external``: a successor draft becomes the runtime's new session ``external_id`` (the
  follower then fills it from that session's log, ``host.importers.writer.adopted``), done only
  on evidence that the runtime received the brief (docs/spec.md, Failure outcomes: "seed flush
  failed"); ``split_at_clear`` does it for a runtime whose ``/clear`` keeps the session id
  and marks a clear boundary in the same log: the log's rest feeds the draft.

Each is one small write; a crash leaves it written or not.
"""

from __future__ import annotations

from collections.abc import Iterable
from uuid import UUID

from django.db import transaction
from django.utils import timezone

from host.models import Activity, ActivityKind, FollowedFile, Session

HOOK_DETAIL = "hook:"
"""Prefix of the ``Activity.detail`` of an activity a hook opened (``hook:<runtime's id>``)."""


def note_hooks(session: Session) -> None:
    """Record that the session's runtime runs the product's hooks (``hooks_seen`` = now)."""
    Session.objects.filter(pk=session.pk).update(hooks_seen=timezone.now())
    session.hooks_seen = timezone.now()


def open_activity(session: Session, kind: ActivityKind, ident: str) -> None:
    """Open the activity ``kind`` named ``ident`` (a subagent's or a shell's id); an activity
    already open under that name is kept (a retried hook adds nothing)."""
    detail = f"{HOOK_DETAIL}{ident}"[:300]
    open_now = Activity.objects.filter(session=session, detail=detail, ended__isnull=True)
    if not open_now.exists():
        Activity.objects.create(session=session, kind=kind, detail=detail)


def close_activity(session: Session, ident: str) -> None:
    """End the open activity named ``ident`` (nothing when none is open)."""
    Activity.objects.filter(
        session=session, detail=f"{HOOK_DETAIL}{ident}"[:300], ended__isnull=True
    ).update(ended=timezone.now())


def sync_jobs(session: Session, running: Iterable[str]) -> None:
    """Make the open hook jobs (background shells) of ``session`` exactly ``running`` (ids):
    open the new ones, end the others. One transaction."""
    wanted = {f"{HOOK_DETAIL}{ident}"[:300] for ident in running}
    with transaction.atomic():
        jobs = Activity.objects.filter(
            session=session,
            kind=ActivityKind.JOB,
            detail__startswith=HOOK_DETAIL,
            ended__isnull=True,
        )
        jobs.exclude(detail__in=wanted).update(ended=timezone.now())
        have = set(jobs.values_list("detail", flat=True))
        for detail in sorted(wanted - have):
            Activity.objects.create(session=session, kind=ActivityKind.JOB, detail=detail)


def adopt_external(draft_id: UUID | str, runtime: str, external_id: str) -> Session:
    """Make the draft ``draft_id`` the runtime's session ``external_id`` and return it.

    Raises ``ValueError`` when another session of the owner already has that id (its log was
    imported before the claim: the draft cannot take it)."""
    with transaction.atomic():
        draft = Session.objects.select_for_update().get(pk=draft_id)
        taken = Session.objects.filter(owner_id=draft.owner_id, external_id=external_id)
        if taken.exclude(pk=draft.pk).exists():
            raise ValueError(f"session {external_id} was imported already")
        draft.runtime, draft.external_id = runtime, external_id
        draft.save(update_fields=["runtime", "external_id", "updated"])
    return draft


def split_at_clear(source_id: UUID | str, draft_id: UUID | str, runtime: str) -> Session:
    """The source's log goes on past a clear boundary as the draft's: the source keeps what
    was imported under ``<id>~before-clear`` and the draft adopts its id; each log that fed
    the source is read on from its offset into the draft (a fresh parse state, its format
    kept). One transaction; return the draft."""
    with transaction.atomic():
        source = Session.objects.select_for_update().get(pk=source_id)
        key = source.external_id
        source.external_id = f"{key}~before-clear"[:200]
        source.save(update_fields=["external_id", "updated"])
        for row in FollowedFile.objects.select_for_update().filter(session=source):
            row.session, row.state = None, {"format": row.state.get("format"), "settled": True}
            row.save(update_fields=["session", "state"])
        return adopt_external(draft_id, runtime, key)


def by_external_id(owner_id: int, external_id: str) -> Session | None:
    """Return the owner's main session the runtime names ``external_id``, or None."""
    return Session.objects.filter(
        owner_id=owner_id, external_id=external_id, parent__isnull=True
    ).first()
