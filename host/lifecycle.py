"""The turn lifecycle: a session goes idle → running → idle, one turn at a time.

A turn is one answer of the agent to an input it takes up (docs/design.md, turns): a typed
prompt, input relayed from a handed-off source, a peer or inbox message. Such a turn starts from
its input message and counts in ``Session.turns``; a turn a plugin starts on the seed brief (the
handoff's successor start) clears ``blank`` but counts no turn. Input that arrives while a turn
runs waits in the inbox; each queued input becomes its own turn, oldest first, as turns end.
Plugins hear about it through ``host.signals``, always after the commit: ``session_idle`` when a
session turns idle, ``blocker_cleared`` when something that deferred a handoff went away
(docs/spec.md, Deferral: ``activity:KIND``, ``owned-agent:ID``, ``pending-inbox``).

A running turn holds a lease (``host.turn_lease``) that the task answering it renews; a turn
whose lease ran out is lost, and ``end_lost_turns`` (the task worker's sweep) ends it as a turn
ends, with a system notice in the log: the queued inputs become new turns, or the session turns
idle. The lost turn's own input is not answered again: the agent may already have acted on it.

Every write path here runs in one transaction: a crash half-way leaves the session as it was;
one the database killed (a deadlock) runs again whole (``common.sql.retried_transaction``).
"""

from __future__ import annotations

from uuid import UUID

from django.conf import settings
from django.db import transaction
from django.utils import timezone

from common import sql
from host import log, tasks, turn_lease
from host.models import (
    Activity,
    ActivityKind,
    InboxItem,
    Message,
    Role,
    Session,
    SessionEventKind,
    SessionStatus,
    SourceKind,
)
from host.signals import announce, blocker_cleared, session_idle


class TurnRefused(RuntimeError):
    """A turn cannot start: the session is not idle, is archived, or has nothing to answer."""


def begin_turn(
    session: Session, *, user_initiated: bool, message: Message | None = None
) -> Activity:
    """Start a turn on an idle session and return its in-flight ``Activity(kind=turn)``.

    The session becomes running and stops being blank; a ``turn-start`` event is logged. With
    ``user_initiated`` the turn starts from ``message`` (a user message of this session, which
    gets ``starts_turn``) and counts in ``turns``; without, no turn is counted. The agent is not
    enqueued here (see ``start_user_turn`` and ``start_agent``). Raises ``TurnRefused`` when the
    session is not idle and ``ValueError`` when a user-initiated turn names no message.
    """
    if user_initiated and message is None:
        raise ValueError("a user-initiated turn starts from a user message")
    fresh, activity = _begin_turn(session, message if user_initiated else None)
    _copy_state(fresh, session)
    return activity


@sql.retried_transaction
def _begin_turn(session: Session, message: Message | None) -> tuple[Session, Activity]:
    fresh = _locked(session)
    if fresh.status != SessionStatus.IDLE:
        raise TurnRefused(f"session {fresh.pk} is {fresh.status}; a turn starts only when idle")
    return fresh, _open_turn(fresh, message=message)


@sql.retried_transaction
def start_user_turn(session: Session, message: Message) -> Activity:
    """Start the turn ``message`` (a user message) asks for and enqueue the agent's reply.

    Raises ``TurnRefused`` as ``begin_turn`` does. With a queueing backend the task row commits
    with the turn start; a crash half-way leaves neither.
    """
    activity = begin_turn(session, user_initiated=True, message=message)
    _enqueue_reply(session, activity)
    return activity


def start_agent(session: Session) -> Activity:
    """Wake a session whose log ends with a seed (the brief, plugin kind) and enqueue its reply.

    The turn clears ``blank`` but counts no user turn. Raises ``TurnRefused`` when the session is
    not idle, is archived or has an empty log, and lets an enqueue failure propagate, with
    nothing changed (the engine records committed-start-pending then; docs/spec.md,
    Failure outcomes).
    """
    fresh, activity = _start_agent(session)
    _copy_state(fresh, session)
    return activity


@sql.retried_transaction
def _start_agent(session: Session) -> tuple[Session, Activity]:
    fresh = _locked(session)
    if fresh.archived:
        raise TurnRefused(f"session {fresh.pk} is archived; it is not started")
    if not Message.objects.filter(session=fresh).exists():
        raise TurnRefused(f"session {fresh.pk} has no message to start from")
    if fresh.status != SessionStatus.IDLE:
        raise TurnRefused(f"session {fresh.pk} is {fresh.status}; a turn starts only when idle")
    activity = _open_turn(fresh, message=None)
    _enqueue_reply(fresh, activity)
    return fresh, activity


def end_turn(session: Session, turn: Activity | None = None) -> bool:
    """End the session's turn: close the turn activity, then take the inbox or turn idle.

    ``turn`` names the turn to end; when it has already ended (the sweep ended it as lost),
    nothing changes and False is returned. Without ``turn``, whatever turn is open is ended.
    The oldest pending inbox item becomes the next turn at once (the session stays running; the
    agent is enqueued; ``blocker_cleared`` "pending-inbox" is sent after commit when it was the
    last one). With nothing pending the session turns idle and ``session_idle`` is sent after
    commit. A session that is no longer running (disposed meanwhile) only gets its turn
    activity closed.
    """
    fresh, ended = _end_turn(session, turn)
    _copy_state(fresh, session)
    return ended


@sql.retried_transaction
def _end_turn(session: Session, turn: Activity | None) -> tuple[Session, bool]:
    fresh = _locked(session)
    return fresh, _close_turn(fresh, turn)


def end_lost_turns() -> int:
    """End every lost turn (``host.turn_lease.lost_turns``) as ``end_lost_turn`` does; return
    how many were ended. Each in its own transaction: a crash half-way leaves the rest lost,
    for the next sweep."""
    return sum(end_lost_turn(turn) for turn in turn_lease.lost_turns())


@sql.retried_transaction
def end_lost_turn(turn: Activity) -> bool:
    """End ``turn`` when it is still open and its lease still expired; return whether it was
    ended.

    The session's log gains a system notice saying the turn stopped without finishing and that
    its input is not answered again; then the turn ends as ``end_turn`` ends one (the inbox's
    next input becomes a new turn, or the session turns idle and ``session_idle`` is sent).
    A renewal or another sweep that came first leaves it alone. One transaction, run again
    whole when the database killed it.
    """
    fresh = _locked(turn.session)
    lost = Activity.objects.filter(
        pk=turn.pk, ended__isnull=True, lease_expires__lt=timezone.now()
    ).first()
    if lost is None:
        return False
    log.append_message(
        fresh, role=Role.SYSTEM, source_kind=SourceKind.SYSTEM, content=_lost_notice(lost)
    )
    return _close_turn(fresh, lost)


def dispose(session: Session) -> None:
    """Mark the session disposed; for a subagent, tell its main the owned agent is gone.

    Sends ``blocker_cleared`` "owned-agent:<id>" for the parent after commit. Disposing twice
    changes nothing and sends nothing.
    """
    with transaction.atomic():
        fresh = _locked(session)
        if fresh.status == SessionStatus.DISPOSED:
            _copy_state(fresh, session)
            return
        fresh.status = SessionStatus.DISPOSED
        fresh.save(update_fields=["status", "updated"])
        announce(fresh.pk, owner_id=fresh.owner_id)
        if fresh.parent_id is not None:
            _clear_after_commit(fresh.parent_id, f"owned-agent:{fresh.pk}")
    _copy_state(fresh, session)


def begin_activity(session: Session, kind: str, detail: str = "") -> Activity:
    """Record that something of ``kind`` (turn, compaction, job) is in flight for the session.

    Raises ``ValueError`` for an unknown kind. The activity is the ``activity:KIND`` blocker
    until ``end_activity``.
    """
    if kind not in ActivityKind.values:
        raise ValueError(
            f"unknown activity kind {kind!r}; expected one of {', '.join(ActivityKind.values)}"
        )
    return Activity.objects.create(session=session, kind=kind, detail=detail[:300])


def end_activity(activity: Activity) -> None:
    """End an in-flight activity and send ``blocker_cleared`` "activity:KIND" after commit.

    Ending an activity that already ended changes nothing and sends nothing.
    """
    with transaction.atomic():
        ended = Activity.objects.filter(pk=activity.pk, ended__isnull=True).update(
            ended=timezone.now()
        )
        if ended:
            _clear_after_commit(activity.session_id, f"activity:{activity.kind}")
    activity.refresh_from_db(fields=["ended"])


def _close_turn(fresh: Session, turn: Activity | None) -> bool:
    """Close ``turn`` (or the open turn) of ``fresh`` (locked), then take the inbox or turn
    idle; False, with nothing changed, when ``turn`` had already ended."""
    open_turns = Activity.objects.filter(session=fresh, kind=ActivityKind.TURN, ended__isnull=True)
    closed = (open_turns.filter(pk=turn.pk) if turn else open_turns).update(ended=timezone.now())
    if turn is not None and not closed:
        return False
    if fresh.status == SessionStatus.RUNNING and not _take_inbox(fresh):
        fresh.status = SessionStatus.IDLE
        fresh.save(update_fields=["status", "updated"])
        announce(fresh.pk, owner_id=fresh.owner_id)
        transaction.on_commit(lambda: session_idle.send(sender=Session, session=fresh))
    return True


def _lost_notice(turn: Activity) -> str:
    """The system notice of a turn that stopped without finishing (``turn.detail`` says what
    it answered)."""
    return (
        f"The agent's turn ({turn.detail}) stopped without finishing: the worker running it "
        "was lost, or the database went away. It is not run again, since the agent may already "
        "have acted on it; post again to retry."
    )


def _locked(session: Session) -> Session:
    """Re-read the session under a row lock (the caller holds a transaction)."""
    return Session.objects.select_for_update().get(pk=session.pk)


def _copy_state(fresh: Session, session: Session) -> None:
    """Bring the caller's instance up to date with what was written through ``fresh``."""
    if fresh is not session:
        for field in ("status", "blank", "turns", "revision", "updated"):
            setattr(session, field, getattr(fresh, field))


def _open_turn(fresh: Session, *, message: Message | None) -> Activity:
    """Make ``fresh`` (locked) running and not blank, log the turn start, open the activity.

    ``message`` given: a user-initiated turn, counted, and the message marked ``starts_turn``.
    """
    log.append_event(
        fresh,
        SessionEventKind.TURN_START,
        {"user_initiated": message is not None, "message_seq": message.seq if message else None},
    )
    fresh.status = SessionStatus.RUNNING
    fresh.blank = False
    if message is not None:
        Message.objects.filter(pk=message.pk).update(starts_turn=True)
        message.starts_turn = True
        fresh.turns += 1
    fresh.save(update_fields=["status", "blank", "turns", "updated"])
    announce(fresh.pk, owner_id=fresh.owner_id)
    detail = f"message #{message.seq}" if message else "started by a plugin"
    return Activity.objects.create(
        session=fresh,
        kind=ActivityKind.TURN,
        detail=detail,
        lease_expires=turn_lease.deadline(),
    )


def _take_inbox(fresh: Session) -> bool:
    """Take the oldest pending inbox item into a new counted turn; False when none is pending.

    One item per turn, so each queued input gets its own answer (docs/design.md, Turns: every
    input the agent answers starts a turn). An item queued with its logged message starts the turn
    from it; an item without one (queued by other code) is logged as a user message first.
    ``blocker_cleared`` "pending-inbox" is sent after commit once the inbox is drained.
    """
    pending = InboxItem.objects.filter(session=fresh, taken=False).order_by("created", "pk")
    item = pending.select_related("message").first()
    if item is None:
        return False
    message = item.message or log.append_message(
        fresh, role=Role.USER, source_kind=SourceKind.USER, content=item.content
    )
    InboxItem.objects.filter(pk=item.pk).update(taken=True)
    _enqueue_reply(fresh, _open_turn(fresh, message=message))
    if not pending.exists():
        _clear_after_commit(fresh.pk, "pending-inbox")
    return True


def _enqueue_reply(session: Session, turn: Activity) -> None:
    """Enqueue ``host.tasks.run_agent_turn`` for the session's ``turn``.

    A queueing backend (the database backend) stores the task row in the caller's transaction,
    so the turn start and its task commit together; the turn keeps the task's id, so the lease
    sweep leaves a turn whose task still waits in the queue alone. A backend that runs the task
    in the caller (``settings.HOST_TASKS_RUN_IN_CALLER``: the immediate backend) gets it after
    commit: no model call ever happens inside the caller's transaction.
    """
    session_id = str(session.pk)
    if settings.HOST_TASKS_RUN_IN_CALLER:
        transaction.on_commit(lambda: tasks.run_agent_turn.enqueue(session_id, turn.pk))
        return
    result = tasks.run_agent_turn.enqueue(session_id, turn.pk)
    Activity.objects.filter(pk=turn.pk).update(task_id=str(result.id))
    turn.task_id = str(result.id)


def _clear_after_commit(session_id: UUID, blocker: str) -> None:
    """Send ``blocker_cleared`` for the session ``session_id`` once the transaction commits."""

    def send() -> None:
        session = Session.objects.filter(pk=session_id).first()
        if session is not None:
            blocker_cleared.send(sender=Session, session=session, blocker=blocker)

    transaction.on_commit(send)
