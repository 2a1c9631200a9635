"""host.sessions: creation, workspaces (seed 003 §6.5, defect A) and the blocker facts."""

from __future__ import annotations

import threading
from typing import Any

import pytest
from django.contrib.auth.models import AbstractBaseUser
from django.db import connection

from host.models import (
    Activity,
    InboxItem,
    Session,
    SessionStatus,
    Team,
    UsageProjection,
    Workspace,
)
from host.sessions import (
    attach,
    create_session,
    in_flight_activities,
    live_subagents,
    pending_inbox,
    resolve_workspace,
    team_size,
)

pytestmark = pytest.mark.django_db


def workspace_of(owner: Any, path: str, name: str = "") -> Workspace:
    """A workspace ``owner`` registered at ``path`` (as the demo and the importer make one)."""
    return Workspace.objects.create(owner=owner, path=path, name=name)


@pytest.fixture
def stranger(django_user_model: Any) -> AbstractBaseUser:
    return django_user_model.objects.create_user("eve")


def test_create_session_is_idle_blank_and_has_its_projection(owner: AbstractBaseUser):
    session = create_session(
        owner, cwd="/srv/app", title="T", model="gpt-4o", permission_preset="read-only"
    )
    assert (session.status, session.blank, session.turns) == (SessionStatus.IDLE, True, 0)
    assert (session.cwd, session.model, session.permission_preset) == (
        "/srv/app",
        "gpt-4o",
        "read-only",
    )
    assert session.workspace is None
    assert UsageProjection.objects.filter(session=session).exists()


def test_create_session_refuses_an_unknown_permission_preset(owner: AbstractBaseUser):
    with pytest.raises(ValueError, match="unknown permission preset"):
        create_session(owner, permission_preset="root")
    assert not Session.objects.exists()


def test_create_session_refuses_another_users_workspace_or_parent(
    owner: AbstractBaseUser, stranger: AbstractBaseUser
):
    theirs = workspace_of(stranger, "/home/eve")
    their_main = create_session(stranger)
    with pytest.raises(ValueError, match="workspace belongs to another user"):
        create_session(owner, workspace=theirs)
    with pytest.raises(ValueError, match="parent session belongs to another user"):
        create_session(owner, parent=their_main)
    assert not Session.objects.filter(owner__pk=owner.pk).exists()


def test_create_session_with_a_known_client_id_returns_the_first_session(
    owner: AbstractBaseUser, stranger: AbstractBaseUser
):
    first = create_session(owner, cwd="/srv/app", title="first", client_id="c-1")
    retry = create_session(owner, cwd="/srv/other", title="retry", client_id="c-1")
    theirs = create_session(stranger, client_id="c-1")

    assert retry == first
    assert (retry.cwd, retry.title) == ("/srv/app", "first")
    assert theirs != first
    assert Session.objects.count() == 2


def test_a_client_id_never_names_an_imported_session(owner: AbstractBaseUser):
    imported = Session.objects.create(owner_id=owner.pk, external_id="4f1c-transcript")

    created = create_session(owner, client_id="4f1c-transcript")

    assert created != imported


@pytest.mark.parametrize("client_id", ["", "c" * 197])
def test_create_session_refuses_a_client_id_it_cannot_keep(owner: AbstractBaseUser, client_id: str):
    with pytest.raises(ValueError, match="client_id must be 1 to 196 characters long"):
        create_session(owner, client_id=client_id)
    assert not Session.objects.exists()


@pytest.mark.postgres  # concurrent writers
@pytest.mark.django_db(transaction=True)
def test_two_concurrent_creates_with_one_client_id_end_with_one_session(owner: AbstractBaseUser):
    created: list[Session] = []
    barrier = threading.Barrier(2)

    def create() -> None:
        barrier.wait()
        try:
            created.append(create_session(owner, cwd="/srv/app", client_id="same"))
        finally:
            connection.close()

    threads = [threading.Thread(target=create) for _ in range(2)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()

    assert len(created) == 2
    assert created[0] == created[1]
    assert Session.objects.count() == UsageProjection.objects.count() == 1


def test_resolve_workspace_finds_the_exact_path_and_never_creates(owner: AbstractBaseUser):
    workspace = workspace_of(owner, "/srv/app", "App")
    assert resolve_workspace(owner, "/srv/app") == workspace
    assert resolve_workspace(owner, "/srv/app/sub") is None
    assert resolve_workspace(owner, "/srv/unknown") is None
    assert resolve_workspace(owner, "") is None
    assert Workspace.objects.count() == 1


def test_attach_puts_the_session_in_the_workspace(owner: AbstractBaseUser):
    session = create_session(owner, cwd="/srv/app")
    workspace = workspace_of(owner, "/srv/app")
    attach(session, workspace)
    assert Session.objects.get(pk=session.pk).workspace == workspace


def test_attach_refuses_another_users_workspace(
    owner: AbstractBaseUser, stranger: AbstractBaseUser
):
    session = create_session(owner)
    with pytest.raises(ValueError, match="another user"):
        attach(session, workspace_of(stranger, "/home/eve"))
    assert Session.objects.get(pk=session.pk).workspace is None


def test_live_subagents_leave_finished_disposed_and_archived_out(owner: AbstractBaseUser):
    main = create_session(owner)
    idle = create_session(owner, parent=main)
    running = create_session(owner, parent=main)
    Session.objects.filter(pk=running.pk).update(status=SessionStatus.RUNNING)
    for status in (SessionStatus.FINISHED, SessionStatus.DISPOSED):
        Session.objects.filter(pk=create_session(owner, parent=main).pk).update(status=status)
    Session.objects.filter(pk=create_session(owner, parent=main).pk).update(archived=True)

    assert {s.pk for s in live_subagents(main)} == {idle.pk, running.pk}


def test_in_flight_activities_lists_kinds_of_unended_activities(owner: AbstractBaseUser):
    session = create_session(owner)
    assert in_flight_activities(session) == []
    Activity.objects.create(session=session, kind="job")
    Activity.objects.create(session=session, kind="job")
    Activity.objects.create(session=session, kind="turn")
    ended = Activity.objects.create(session=session, kind="compaction")
    Activity.objects.filter(pk=ended.pk).update(ended=ended.started)
    assert in_flight_activities(session) == ["job", "turn"]


def test_pending_inbox_counts_items_not_taken(owner: AbstractBaseUser):
    session = create_session(owner)
    InboxItem.objects.create(session=session, stage="next-turn", content="a")
    InboxItem.objects.create(session=session, stage="next-step", content="b")
    InboxItem.objects.create(session=session, stage="next-turn", content="c", taken=True)
    assert pending_inbox(session) == 2


def test_team_size_counts_the_members_of_the_team_led(owner: AbstractBaseUser):
    lead = create_session(owner)
    assert team_size(lead) == 0
    team = Team.objects.create(lead=lead)
    team.members.add(create_session(owner), create_session(owner))
    assert team_size(lead) == 2
