"""Background tasks of the host (django-tasks): the agent's turn.

The default backend is ``django_tasks_db.DatabaseBackend`` (run ``manage.py task_worker``); tests
use the immediate backend.
"""

from __future__ import annotations

import logging

from django_tasks import task

from host import agent, lifecycle, log, turn_lease
from host.models import Activity, ActivityKind, Role, Session, SessionStatus, SourceKind

logger = logging.getLogger(__name__)


@task()
def run_agent_turn(session_id: str, turn_id: int | None = None) -> None:
    """Let the agent answer the running session ``session_id``, then end the turn.

    ``turn_id`` is the turn (``Activity``) this task answers; without it, the session's open
    turn. The task takes the turn's lease and renews it while the agent runs
    (``host.turn_lease``); a turn that already ended (the sweep found it lost) is left alone.
    Every write of the answer is fenced by the lease (``turn_lease.hold``): when the lease ran
    out before the answer was written (the worker was stopped or cut off longer than the
    lease), the answer is dropped with a warning in the worker's log, and the turn is ended as
    lost (its notice in the log) unless the sweep did so already.
    A failing reply (model error, timeout) ends the turn all the same, with a system notice in
    the log saying what failed, so the session always goes idle again. A session that is gone
    or no longer running is left alone. A crash before ``end_turn`` leaves the turn open until
    its lease runs out; the task worker's sweep then ends it (``lifecycle.end_lost_turns``).
    """
    session = Session.objects.filter(pk=session_id).first()
    if session is None or session.status != SessionStatus.RUNNING:
        return
    turn = _open_turn(session, turn_id)
    if turn is None or not turn_lease.take(turn.pk):
        return
    try:
        with turn_lease.heartbeat(turn.pk), log.guarded(lambda _: turn_lease.hold(turn.pk)):
            _answer(session)
    except turn_lease.LeaseLost:
        logger.warning(
            "turn %s of session %s lost its lease before the agent's answer was written; the "
            "answer is dropped (the turn is ended as lost)",
            turn.pk,
            session_id,
        )
        lifecycle.end_lost_turn(turn)
        return
    lifecycle.end_turn(session, turn)


def _answer(session: Session) -> None:
    """Let the agent answer; a failing reply leaves a system notice saying what failed.

    ``LeaseLost`` (the turn's writes are fenced) propagates: a lost turn writes no notice either.
    """
    try:
        agent.reply(session)
    except turn_lease.LeaseLost:
        raise
    except Exception as exc:
        logger.exception("agent turn of session %s failed", session.pk)
        log.append_message(
            session,
            role=Role.SYSTEM,
            source_kind=SourceKind.SYSTEM,
            content=f"The agent could not answer ({type(exc).__name__}: {exc}). "
            "The turn ended; post again to retry.",
        )


def _open_turn(session: Session, turn_id: int | None) -> Activity | None:
    """The session's open turn: ``turn_id`` when it is still open, else None; without
    ``turn_id``, the latest open one."""
    turns = Activity.objects.filter(session=session, kind=ActivityKind.TURN, ended__isnull=True)
    if turn_id is not None:
        turns = turns.filter(pk=turn_id)
    return turns.order_by("-pk").first()
