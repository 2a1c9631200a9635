"""Background tasks of the host (django-tasks): the agent's turn.

The default backend is ``django_tasks_db.DatabaseBackend`` (run ``manage.py task_worker``); tests
use the immediate backend.
"""

from __future__ import annotations

import logging

from django_tasks import task

from host import agent, log, runtime
from host.models import Role, Session, SessionStatus, SourceKind

logger = logging.getLogger(__name__)


@task()
def run_agent_turn(session_id: str) -> None:
    """Let the agent answer the running session ``session_id``, then end the turn.

    A failing reply (model error, timeout) ends the turn all the same, with a system notice in
    the log saying what failed, so the session always goes idle again. A session that is gone
    or no longer running is left alone. A crash before ``end_turn`` leaves the session running
    with its turn activity in flight.
    """
    session = Session.objects.filter(pk=session_id).first()
    if session is None or session.status != SessionStatus.RUNNING:
        return
    try:
        agent.reply(session)
    except Exception as exc:
        logger.exception("agent turn of session %s failed", session_id)
        log.append_message(
            session,
            role=Role.SYSTEM,
            source_kind=SourceKind.SYSTEM,
            content=f"The agent could not answer ({type(exc).__name__}: {exc}). "
            "The turn ended; post again to retry.",
        )
    runtime.end_turn(session)
