"""Helpers for the handoff engine's tests: a user, a long source session, settings switches."""

from __future__ import annotations

from typing import Any

from django.contrib.auth import get_user_model

from handoff import services
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
    model: str = MODEL,
    title: str = "Refactor the parser",
    **fields: Any,
) -> Session:
    """Create an idle main with ``turns`` turns whose latest call used ``tokens`` tokens.

    ``workspace`` registers ``cwd`` as the owner's workspace first. Extra ``fields`` are set on
    the session (e.g. ``permission_preset="custom"``).
    """
    user = user or make_user()
    ws = Workspace.objects.get_or_create(owner=user, path=cwd)[0] if workspace and cwd else None
    session = create_session(user, cwd=cwd, title=title, workspace=ws)
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


def auto_handoff(on: bool = True) -> None:
    """Set the global ``autoHandoff`` switch in the settings store."""
    services.settings_store().save(auto_handoff=on)
