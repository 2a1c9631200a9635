"""Follower events: numbering, after-commit sending, replay and pruning, the model receivers and
the snapshot (seed 003 §6.5; DESIGN.md invariant 10)."""

from __future__ import annotations

import json
from datetime import timedelta
from typing import Any

import pytest
from asgiref.sync import async_to_sync
from channels.layers import get_channel_layer
from django.contrib.auth import get_user_model
from django.contrib.auth.models import AbstractBaseUser, AnonymousUser
from django.db import transaction
from django.test import RequestFactory
from django.utils import timezone

from follower.channel import StatusChannel
from follower.events import (
    EventKind,
    Frame,
    Resync,
    current_event_id,
    events_after,
    group_name,
    prune_events,
    publish,
)
from follower.models import FollowerCursor, FollowerEvent
from follower.snapshot import snapshot
from follower.views import snapshot_view
from handoff.models import HandoffRecord, Redirect
from host.log import append_message
from host.models import Session, Workspace

pytestmark = pytest.mark.django_db

IN_MEMORY = {"default": {"BACKEND": "channels.layers.InMemoryChannelLayer"}}


@pytest.fixture(autouse=True)
def in_memory_layer(settings: Any) -> None:
    settings.CHANNEL_LAYERS = IN_MEMORY


def make_user(name: str) -> AbstractBaseUser:
    return get_user_model().objects.create_user(name)


@pytest.fixture
def ada() -> AbstractBaseUser:
    return make_user("ada")


@pytest.fixture
def bob() -> AbstractBaseUser:
    return make_user("bob")


def replayed(user: AbstractBaseUser, after: int = 0) -> list[Frame]:
    """The user's events after ``after``, which must not be a resync."""
    frames = events_after(user.pk, after)
    assert not isinstance(frames, Resync)
    return frames


def kinds(user: AbstractBaseUser, after: int = 0) -> list[str]:
    return [f["kind"] for f in replayed(user, after)]


def listen(user: AbstractBaseUser) -> str:
    """Join a fresh channel to the user's follower group, as a socket would."""
    layer = get_channel_layer()
    channel: str = async_to_sync(layer.new_channel)()
    async_to_sync(layer.group_add)(group_name(user.pk), channel)
    return channel


def received(channel: str) -> dict[str, Any]:
    message: dict[str, Any] = async_to_sync(get_channel_layer().receive)(channel)
    return message


def make_record(source: Session, **fields: Any) -> HandoffRecord:
    fields.setdefault("phase", "summarizing")
    return HandoffRecord.objects.create(
        source=source, reason="manual", source_revision=source.revision, **fields
    )


# --- numbering and sending -------------------------------------------------------------------


def test_publish_numbers_each_users_events_from_one_without_gaps(ada, bob):
    ids = [publish(user.pk, EventKind.HANDOFF_PHASE, {})["id"] for user in (ada, bob, ada, ada)]
    assert ids == [1, 1, 2, 3]
    assert current_event_id(ada.pk) == 3
    assert current_event_id(bob.pk) == 1


def test_current_event_id_default_is_zero(ada):
    assert current_event_id(ada.pk) == 0


def test_publish_sends_to_the_users_group_after_commit(ada, django_capture_on_commit_callbacks):
    channel = listen(ada)
    with django_capture_on_commit_callbacks() as callbacks:
        frame = publish(ada.pk, EventKind.SESSION_ADDED, {"session": {"id": "x"}})
    assert len(callbacks) == 1
    callbacks[0]()
    assert received(channel) == {"type": "follow.event", "event": frame}
    assert frame == {
        "type": "event",
        "id": 1,
        "kind": "session.added",
        "payload": {"session": {"id": "x"}},
    }


def test_publish_rolled_back_stores_and_sends_nothing(ada, django_capture_on_commit_callbacks):
    with (
        django_capture_on_commit_callbacks() as callbacks,
        pytest.raises(RuntimeError),
        transaction.atomic(),
    ):
        publish(ada.pk, EventKind.HANDOFF_PHASE, {})
        raise RuntimeError("the change failed")
    assert callbacks == []
    assert current_event_id(ada.pk) == 0
    assert not FollowerEvent.objects.exists()


def test_publish_survives_a_broken_channel_layer(ada, settings):
    settings.CHANNEL_LAYERS = {"default": {"BACKEND": "no.such.Layer"}}
    with transaction.atomic():
        publish(ada.pk, EventKind.HANDOFF_PHASE, {})
    assert kinds(ada) == ["handoff.phase"]


# --- replay and pruning ----------------------------------------------------------------------


def test_events_after_returns_later_events_in_order(ada):
    for phase in ("summarizing", "prepared", "committed"):
        publish(ada.pk, EventKind.HANDOFF_PHASE, {"phase": phase})
    frames = replayed(ada, 1)
    assert [(f["id"], f["payload"]["phase"]) for f in frames] == [(2, "prepared"), (3, "committed")]


def test_events_after_the_newest_is_empty(ada):
    publish(ada.pk, EventKind.HANDOFF_PHASE, {})
    assert events_after(ada.pk, 1) == []


def test_events_after_an_id_the_server_never_gave_is_resync(ada):
    publish(ada.pk, EventKind.HANDOFF_PHASE, {})
    assert events_after(ada.pk, 5) == Resync(last_event_id=1)


def test_events_after_pruned_events_is_resync(ada, settings):
    settings.FOLLOWER_EVENT_LIMIT = 2
    for _ in range(5):
        publish(ada.pk, EventKind.HANDOFF_PHASE, {})
    assert events_after(ada.pk, 2) == Resync(last_event_id=5)
    assert [f["id"] for f in replayed(ada, 3)] == [4, 5]


def test_publish_keeps_at_most_the_limit_per_user(ada, bob, settings):
    settings.FOLLOWER_EVENT_LIMIT = 3
    for _ in range(5):
        publish(ada.pk, EventKind.HANDOFF_PHASE, {})
    publish(bob.pk, EventKind.HANDOFF_PHASE, {})
    assert list(FollowerEvent.objects.filter(user=ada).values_list("seq", flat=True)) == [3, 4, 5]
    assert FollowerCursor.objects.get(user=ada).pruned_through == 2
    assert FollowerCursor.objects.get(user=bob).pruned_through == 0


def test_prune_events_drops_events_past_retention(ada, bob, settings):
    settings.FOLLOWER_EVENT_RETENTION = 600
    publish(ada.pk, EventKind.HANDOFF_PHASE, {})
    publish(ada.pk, EventKind.HANDOFF_PHASE, {})
    publish(bob.pk, EventKind.HANDOFF_PHASE, {})
    FollowerEvent.objects.filter(user=ada, seq=1).update(
        created=timezone.now() - timedelta(seconds=601)
    )
    assert prune_events() == 1
    assert events_after(ada.pk, 0) == Resync(last_event_id=2)
    assert [f["id"] for f in replayed(ada, 1)] == [2]
    assert [f["id"] for f in replayed(bob, 0)] == [1]


def test_prune_events_within_retention_keeps_everything(ada):
    publish(ada.pk, EventKind.HANDOFF_PHASE, {})
    assert prune_events() == 0
    assert FollowerCursor.objects.get(user=ada).pruned_through == 0


def test_prune_events_later_sweeps_everything_old(ada):
    publish(ada.pk, EventKind.HANDOFF_PHASE, {})
    publish(ada.pk, EventKind.HANDOFF_PHASE, {})
    assert prune_events(now=timezone.now() + timedelta(hours=1)) == 2
    assert FollowerCursor.objects.get(user=ada).pruned_through == 2
    assert events_after(ada.pk, 2) == []


# --- receivers -------------------------------------------------------------------------------


def test_new_session_is_session_added_with_its_row(ada):
    session = Session.objects.create(owner=ada, title="work")
    [frame] = replayed(ada)
    assert frame["kind"] == "session.added"
    assert frame["payload"]["session"] == {
        "id": str(session.pk),
        "title": "work",
        "blank": True,
        "workspace": None,
        "redirect_to": None,
        "archived": False,
        "status": "idle",
    }


def test_saving_an_unfollowed_field_makes_no_event(ada):
    session = Session.objects.create(owner=ada, title="work")
    session.model = "gpt-5"
    session.save()
    session.plan_mode = True
    session.save(update_fields=["plan_mode"])
    assert kinds(ada) == ["session.added"]


@pytest.mark.parametrize(
    ("field", "value"),
    [("title", "renamed"), ("archived", True), ("status", "running"), ("blank", False)],
)
def test_saving_a_followed_field_is_session_updated(ada, field, value):
    session = Session.objects.create(owner=ada, title="work")
    setattr(session, field, value)
    session.save()
    frames = replayed(ada, 1)
    [frame] = frames
    assert frame["kind"] == "session.updated"
    assert frame["payload"]["session"][field] == value


def test_attaching_a_workspace_is_session_updated(ada):
    workspace = Workspace.objects.create(owner=ada, path="/srv/project")
    session = Session.objects.create(owner=ada)
    session.workspace = workspace
    session.save(update_fields=["workspace", "updated"])
    frames = replayed(ada, 1)
    assert frames[0]["payload"]["session"]["workspace"] == str(workspace.pk)


def test_first_turn_in_the_log_clears_blank_once(ada):
    session = Session.objects.create(owner=ada, title="work")
    append_message(session, role="user", source_kind="plugin", content="the brief")
    append_message(session, role="user", source_kind="user", content="go", starts_turn=True)
    append_message(session, role="user", source_kind="user", content="more", starts_turn=True)
    frames = replayed(ada, 1)
    assert [(f["kind"], f["payload"]["session"]["blank"]) for f in frames] == [
        ("session.updated", False)
    ]


def test_record_created_and_moving_phase_is_handoff_phase(ada):
    source = Session.objects.create(owner=ada)
    target = Session.objects.create(owner=ada)
    record = make_record(source)
    record.error = "still summarizing"
    record.save()
    record.phase, record.target = "prepared", target
    record.save()
    frames = replayed(ada, 2)
    assert [f["payload"] for f in frames] == [
        {
            "record": str(record.pk),
            "source": str(source.pk),
            "target": None,
            "phase": "summarizing",
        },
        {
            "record": str(record.pk),
            "source": str(source.pk),
            "target": str(target.pk),
            "phase": "prepared",
        },
    ]


def test_redirect_saved_is_redirect_committed(ada):
    source = Session.objects.create(owner=ada)
    first = Session.objects.create(owner=ada)
    final = Session.objects.create(owner=ada)
    redirect = Redirect.objects.create(source=source, destination=first)
    redirect.save()
    redirect.destination = final
    redirect.save()
    frames = replayed(ada, 3)
    assert [(f["kind"], f["payload"]["destination"], f["payload"]["previous"]) for f in frames] == [
        ("redirect.committed", str(first.pk), None),
        ("redirect.committed", str(final.pk), str(first.pk)),
    ]


def test_redirect_from_a_successor_re_points_the_redirects_leading_to_it(ada):
    first = Session.objects.create(owner=ada)
    second = Session.objects.create(owner=ada)
    third = Session.objects.create(owner=ada)
    Redirect.objects.create(source=first, destination=second)
    before = snapshot(ada.pk)
    Redirect.objects.create(source=second, destination=third)
    Redirect.objects.filter(source=first).update(destination=third)
    frames = replayed(ada, before["last_event_id"])
    assert {
        tuple(f["payload"][k] for k in ("source", "destination", "previous")) for f in frames
    } == {
        (str(second.pk), str(third.pk), None),
        (str(first.pk), str(third.pk), str(second.pk)),
    }
    state = before
    for frame in frames:
        state = apply(state, frame)
    assert by_id(state) == by_id(snapshot(ada.pk))


def test_redirect_removed_is_session_updated_without_redirect(ada):
    source = Session.objects.create(owner=ada)
    target = Session.objects.create(owner=ada)
    Redirect.objects.create(source=source, destination=target).delete()
    frames = replayed(ada, 3)
    assert [(f["kind"], f["payload"]["session"]) for f in frames] == [
        ("session.updated", {**snapshot(ada.pk)["sessions"][0], "redirect_to": None})
    ]


def test_deleting_a_redirected_session_makes_no_redirect_event(ada):
    source = Session.objects.create(owner=ada)
    target = Session.objects.create(owner=ada)
    Redirect.objects.create(source=source, destination=target)
    source.delete()
    assert kinds(ada) == ["session.added", "session.added", "redirect.committed"]


def test_events_go_to_the_sessions_owner_only(ada, bob):
    Session.objects.create(owner=ada)
    assert kinds(bob) == []
    assert kinds(ada) == ["session.added"]


# --- snapshot --------------------------------------------------------------------------------


def apply(state: dict[str, Any], frame: dict[str, Any]) -> dict[str, Any]:
    """Apply one event frame to a snapshot the way static/follower.js does."""
    rows = {row["id"]: dict(row) for row in state["sessions"]}
    payload = frame["payload"]
    if frame["kind"] in (EventKind.SESSION_ADDED, EventKind.SESSION_UPDATED):
        rows[payload["session"]["id"]] = payload["session"]
    elif frame["kind"] == EventKind.REDIRECT_COMMITTED:
        rows[payload["source"]]["redirect_to"] = payload["destination"]
    return {"last_event_id": frame["id"], "sessions": list(rows.values())}


def by_id(state: dict[str, Any]) -> tuple[int, dict[str, Any]]:
    return state["last_event_id"], {row["id"]: row for row in state["sessions"]}


def test_snapshot_plus_replayed_events_equals_a_fresh_snapshot(ada, bob):
    """Zulip's test idea: the page's state after replay is what a reload would show."""
    workspace = Workspace.objects.create(owner=ada, path="/srv/project")
    source = Session.objects.create(owner=ada, title="long talk", workspace=workspace)
    append_message(source, role="user", source_kind="user", content="hi", starts_turn=True)
    before = snapshot(ada.pk)

    Session.objects.create(owner=bob, title="not ada's")
    successor = Session.objects.create(owner=ada, title="long talk")
    successor.workspace = workspace
    successor.save()
    record = make_record(source)
    record.phase, record.target = "prepared", successor
    record.save()
    append_message(successor, role="user", source_kind="plugin", content="the brief")
    Redirect.objects.create(source=source, destination=successor, record=record)
    source.title = "long talk · 接续abcdef"
    source.save()
    append_message(successor, role="user", source_kind="user", content="go", starts_turn=True)
    draft = Session.objects.create(owner=ada, title="discarded draft")
    draft.archived = True
    draft.save()

    frames = replayed(ada, before["last_event_id"])
    state = before
    for frame in frames:
        state = apply(state, frame)
    assert by_id(state) == by_id(snapshot(ada.pk))
    rows = by_id(state)[1]
    assert rows[str(source.pk)]["redirect_to"] == str(successor.pk)
    assert rows[str(successor.pk)]["blank"] is False


def test_snapshot_lists_only_the_users_sessions_oldest_first(ada, bob):
    first = Session.objects.create(owner=ada, title="first")
    second = Session.objects.create(owner=ada, title="second")
    Session.objects.create(owner=bob, title="bob's")
    Redirect.objects.create(source=first, destination=second)
    state = snapshot(ada.pk)
    assert state["last_event_id"] == 3
    assert [(r["title"], r["redirect_to"]) for r in state["sessions"]] == [
        ("first", str(second.pk)),
        ("second", None),
    ]


def test_snapshot_default_is_empty(ada):
    assert snapshot(ada.pk) == {"last_event_id": 0, "sessions": []}


def test_snapshot_view_answers_the_signed_in_user(ada):
    Session.objects.create(owner=ada, title="work")
    request = RequestFactory().get("/follow/snapshot")
    request.user = ada
    response = snapshot_view(request)
    assert response.status_code == 200
    assert json.loads(response.content) == snapshot(ada.pk)


def test_snapshot_view_anonymous_is_401(ada):
    request = RequestFactory().get("/follow/snapshot")
    request.user = AnonymousUser()
    response = snapshot_view(request)
    assert response.status_code == 401
    assert "sign in" in json.loads(response.content)["detail"]


def test_snapshot_view_refuses_post(ada):
    request = RequestFactory().post("/follow/snapshot")
    request.user = ada
    assert snapshot_view(request).status_code == 405


# --- status channel --------------------------------------------------------------------------


def test_status_channel_available_with_the_in_memory_layer():
    assert StatusChannel().available() is True


def test_status_channel_unavailable_when_redis_is_unreachable(settings):
    settings.CHANNEL_LAYERS = {
        "default": {
            "BACKEND": "channels_redis.core.RedisChannelLayer",
            "CONFIG": {"hosts": ["redis://127.0.0.1:1/0"]},
        }
    }
    assert StatusChannel().available() is False


def test_status_channel_unavailable_without_a_layer(settings):
    settings.CHANNEL_LAYERS = {}
    assert StatusChannel().available() is False
