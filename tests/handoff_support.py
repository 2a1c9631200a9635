"""Helpers for the tests (plain functions, not fixtures): a user, a conversation with a turn, a
long source session, settings switches."""

from __future__ import annotations

from collections.abc import Callable
from contextlib import AbstractContextManager, nullcontext
from typing import Any

from django.contrib.auth import get_user_model

from handoff import operations, services
from handoff.attempt import Attempt, AttemptOutcome
from handoff.models import HandoffRecord
from host import log
from host.models import Session, Workspace
from host.sessions import create_session
from host.usage import Usage

CWD = "/work/demo"
MODEL = "claude-sonnet-4-5"


def make_user(name: str = "alice") -> Any:
    """Return a user called ``name`` (created once)."""
    user, _ = get_user_model().objects.get_or_create(username=name)
    return user


def talked(
    owner: Any, title: str, *, content: str = "hi", answered: bool = False, **fields: Any
) -> Session:
    """A session of ``owner`` with one user turn saying ``content`` (so it is not blank), and
    the assistant's "hello" when ``answered``; ``fields`` go to ``create_session``."""
    session = create_session(owner, title=title, **fields)
    log.append_message(session, role="user", source_kind="user", content=content, starts_turn=True)
    if answered:
        log.append_message(session, role="assistant", source_kind="assistant", content="hello")
    session.refresh_from_db()
    return session


def add_turn(session: Session, text: str, *, tokens: int = 150_000, answer: str = "") -> None:
    """Append one user turn and the assistant's answer carrying ``tokens`` of prompt."""
    log.append_message(session, role="user", source_kind="user", content=text, starts_turn=True)
    log.append_message(
        session,
        role="assistant",
        source_kind="assistant",
        content=answer or "Done. Next I will run the tests in /work/demo/tests.",
        usage=Usage(uncached_input=tokens, output=100),
    )


def make_source(
    user: Any = None,
    *,
    turns: int = 5,
    tokens: int = 150_000,
    cwd: str = CWD,
    workspace: bool = True,
    model: str | None = MODEL,
    title: str = "Refactor the parser",
    **fields: Any,
) -> Session:
    """Create an idle main with ``turns`` turns whose latest call used ``tokens`` tokens.

    ``workspace`` registers ``cwd`` as the owner's workspace first; ``model`` is selected in
    the log (None: no selection). Extra ``fields`` are set on the session
    (e.g. ``permission_preset="custom"``).
    """
    user = user or make_user()
    ws = Workspace.objects.get_or_create(owner=user, path=cwd)[0] if workspace and cwd else None
    session = create_session(user, cwd=cwd, title=title, workspace=ws)
    if model:
        log.select_model(session, model)
    for i in range(turns):
        add_turn(
            session,
            f"Please refactor /work/demo/src/parser_{i}.py so it streams. Do not touch the API.",
            tokens=tokens,
        )
    if fields:
        Session.objects.filter(pk=session.pk).update(**fields)
    session.refresh_from_db()
    return session


def record_of(outcome: AttemptOutcome) -> HandoffRecord:
    """Return the outcome's record read from the database (fails when it made none)."""
    assert outcome.record is not None, outcome.detail
    return HandoffRecord.objects.get(pk=outcome.record.pk)


def target_of(record: HandoffRecord) -> Session:
    """Return the record's successor (fails when it has none)."""
    assert record.target_id is not None, record.error
    return Session.objects.get(pk=record.target_id)


def auto_handoff(on: bool = True) -> None:
    """Set the global ``autoHandoff`` switch in the settings store."""
    services.settings_store().save(auto_handoff=on)


def boom(message: str = "injected fault") -> Callable[[Attempt], None]:
    """Return an action that raises ``RuntimeError(message)``."""

    def action(attempt: Attempt) -> None:
        raise RuntimeError(message)

    return action


class RecordingLLM:
    """An online LLM service that returns ``answer`` and records each call's arguments."""

    calls: list[dict[str, Any]] = []
    answer = DEFAULT_ANSWER = (
        '{"goal": "Ship the parser", "decisions": [], "constraints": [], "artifacts": '
        '["/work/demo/src/parser.py"], "verified": [], "pending": [], "next_steps": [], '
        '"uncertainties": []}'
    )
    context_window = 0

    @property
    def offline(self) -> bool:
        return False

    def window(self) -> int:
        return self.context_window

    def complete(self, **kwargs: Any) -> str:
        RecordingLLM.calls.append(kwargs)
        return self.answer


def chain_of(
    hops: int,
    user: Any = None,
    *,
    settle: Callable[[], AbstractContextManager[Any]] = nullcontext,
    **fields: Any,
) -> list[Session]:
    """Hand a fresh source (``make_source(user, **fields)``) off ``hops`` times in a row; return
    the chain's sessions, oldest first, read now (see ``hand_on``)."""
    return hand_on(make_source(user, **fields), hops, settle=settle)


def hand_on(
    session: Session,
    hops: int,
    *,
    settle: Callable[[], AbstractContextManager[Any]] = nullcontext,
) -> list[Session]:
    """Hand ``session`` off, then its successor, ``hops`` times (manual attempts, run inline);
    return the sessions from ``session`` on, oldest first, read now.

    Each successor must be idle to hand off again: use the immediate task backend, and let
    ``settle`` run each hop's on-commit callbacks (``lambda:
    django_capture_on_commit_callbacks(execute=True)``; a transactional test needs none).
    """
    sessions = [session]
    for _ in range(hops):
        with settle():
            outcome = operations.run_attempt(sessions[-1].pk, manual=True)
        sessions.append(target_of(record_of(outcome)))
    for each in sessions:
        each.refresh_from_db()
    return sessions
