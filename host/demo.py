"""The demo workspace and conversation a fresh install starts with (docs/guide.md, The demo).

The conversation lives in ``host/fixtures/demo_conversation.json``: eight user turns of a small
coding task with usage figures, long enough (about 25 000 context tokens against the offline
agent's 32 000-token window) for the trigger to fire once automatic handoff is switched on.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from django.contrib.auth.models import User
from django.db import transaction

from host.log import append_message, select_model
from host.models import Role, Session, SessionStatus, SourceKind, UsageProjection, Workspace
from host.signals import announce
from host.usage import Usage

FIXTURE = Path(__file__).with_name("fixtures") / "demo_conversation.json"
DEMO_USERNAME = "demo"
DEMO_PASSWORD = "demo"


def demo_user() -> User:
    """Return the demo user (staff, so it may change the global settings), creating it."""
    user, created = User.objects.get_or_create(
        username=DEMO_USERNAME, defaults={"is_staff": True, "is_superuser": True}
    )
    if created or not user.has_usable_password():
        user.set_password(DEMO_PASSWORD)
        user.is_staff = user.is_superuser = True
        user.save()
    return user


def reset_demo() -> int:
    """Delete the demo user and everything it owns (sessions, logs, workspaces, handoff records,
    API tokens); return how many sessions went. The next ``seed_demo`` starts it afresh.

    One transaction: a crash half-way leaves the demo as it was. Other users and the global
    settings are left alone.
    """
    with transaction.atomic():
        sessions = Session.objects.filter(owner__username=DEMO_USERNAME).count()
        User.objects.filter(username=DEMO_USERNAME).delete()
        return sessions


def seed_demo() -> list[Session]:
    """Create the demo workspace and sessions once; return the sessions created (none if seeded).

    One transaction: a crash half-way leaves no demo at all, and the next run seeds it whole.
    """
    data = json.loads(FIXTURE.read_text(encoding="utf-8"))
    user = demo_user()
    with transaction.atomic():
        if Session.objects.filter(owner=user, external_id=data["external_id"]).exists():
            return []
        workspace, _ = Workspace.objects.get_or_create(
            owner=user, path=data["workspace"]["path"], defaults={"name": data["workspace"]["name"]}
        )
        specs = [data, *data["others"]]
        return [_seed_session(user, workspace, data, spec) for spec in specs]


def _seed_session(
    user: User, workspace: Workspace, main: dict[str, Any], spec: dict[str, Any]
) -> Session:
    session = Session.objects.create(
        owner=user,
        title=spec["title"],
        cwd=main["cwd"],
        workspace=workspace,
        external_id=spec["external_id"],
        status=SessionStatus.IDLE,
    )
    UsageProjection.objects.create(session=session)
    announce(session.pk, created=True)
    select_model(session, main["model"], source="demo")
    for turn in spec["turns"]:
        _seed_turn(session, turn)
    return session


def _seed_turn(session: Session, turn: dict[str, Any]) -> None:
    append_message(
        session, role=Role.USER, source_kind=SourceKind.USER, content=turn["user"], starts_turn=True
    )
    if tool := turn.get("tool"):
        append_message(
            session,
            role=Role.ASSISTANT,
            source_kind=SourceKind.ASSISTANT,
            content=tool["input"],
            tool_name=tool["name"],
        )
        append_message(session, role=Role.TOOL, source_kind=SourceKind.TOOL, content=tool["result"])
    append_message(
        session,
        role=Role.ASSISTANT,
        source_kind=SourceKind.ASSISTANT,
        content=turn["assistant"],
        usage=Usage(**turn["usage"]),
        model=session.model,
    )
