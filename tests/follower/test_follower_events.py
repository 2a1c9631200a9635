"""Follower events: numbering, after-commit sending, replay and pruning, what the host and the
handoff app announce, and the snapshot (docs/spec.md, Follower rules; docs/design.md, Events
carry the change)."""

from __future__ import annotations

import contextlib
import json
from datetime import timedelta
from io import StringIO
from typing import Any
from unittest import mock

import pytest
from asgiref.sync import async_to_sync
from channels.layers import get_channel_layer
from django.contrib.auth import get_user_model
from django.contrib.auth.models import AbstractBaseUser, AnonymousUser
from django.core.management import call_command
from django.db import transaction
from django.test import RequestFactory
from django.utils import timezone

from follower import channel, sending
from follower.channel import StatusChannel
from follower.events import (
    SWEEP_EVERY,
    Frame,
    Resync,
    current_event_id,
    deliver,
    events_after,
    group_name,
    prune_events,
)
from follower.events import publish as publish_uncommitted
from follower.models import FollowerCursor, FollowerEvent
from follower.snapshot import snapshot
from follower.views import snapshot_view
from handoff import store
from handoff.core.phases import Phase, Reason
from handoff.shapes import MetricsOut
from handoff.web.follow import Kind as HandoffKind
from host import lifecycle
from host.follow import Kind as SessionKind
from host.log import append_message
from host.models import Session, Workspace
from host.services import SessionController
from host.sessions import attach, create_session

NO_METRICS = MetricsOut(tokens=0, turns=0, compactions=0, capacity=0)

pytestmark = pytest.mark.django_db

IN_MEMORY = {"default": {"BACKEND": "channels.layers.InMemoryChannelLayer"}}


@pytest.fixture(autouse=True)
def in_memory_layer(settings: Any) -> None:
    settings.CHANNEL_LAYERS = IN_MEMORY


def make_user(name: str) -> AbstractBaseUser:
    return get_user_model().objects.create_user(name)


def replayed(user: AbstractBaseUser, after: int = 0) -> list[Frame]:
    """The user's events after ``after``, which must not be a resync."""
    frames = events_after(user.pk, after)
    assert not isinstance(frames, Resync)
    return frames


def kinds(user: AbstractBaseUser, after: int = 0) -> list[str]:
    return [f["kind"] for f in replayed(user, after)]


RENDERED = ("fragments", "row_html")
"""Payload keys that carry rendered HTML (``follower.fragments``)."""


def facts(payload: dict[str, Any]) -> dict[str, Any]:
    """An event's payload without its rendered HTML."""
    return {key: value for key, value in payload.items() if key not in RENDERED}


def row_frames(user: AbstractBaseUser, after: int = 0) -> list[Frame]:
    """The user's events after ``after`` that carry a session's row (no log entries)."""
    return [f for f in replayed(user, after) if f["kind"] != SessionKind.SESSION_ENTRY]


def listen(user: AbstractBaseUser) -> str:
    """Join a fresh channel to the user's follower group, as a socket would."""
    layer = get_channel_layer()
    channel: str = async_to_sync(layer.new_channel)()
    async_to_sync(layer.group_add)(group_name(user.pk), channel)
    return channel


def received(channel: str) -> dict[str, Any]:
    # The in-memory layer's queues are not thread-safe: let the process's sender finish its
    # send before this thread's loop waits on the queue, or a waiter is never woken.
    assert sending.flush()
    message: dict[str, Any] = async_to_sync(get_channel_layer().receive)(channel)
    return message


def publish(user_id: int, kind: str, payload: dict[str, Any]) -> list[Frame]:
    """Publish one event and commit it, as a writer's commit does (the test's transaction does
    not commit: ``deliver`` is what the commit runs); return the frames numbered."""
    publish_uncommitted(user_id, kind, payload)
    return deliver(user_id)


# --- numbering and sending -------------------------------------------------------------------


def test_publish_numbers_each_users_events_from_one_without_gaps(ada, bob):
    frames = [publish(user.pk, HandoffKind.HANDOFF_PHASE, {}) for user in (ada, bob, ada, ada)]
    assert [[f["id"] for f in each] for each in frames] == [[1], [1], [2], [3]]
    assert current_event_id(ada.pk) == 3
    assert current_event_id(bob.pk) == 1


def test_an_event_is_numbered_when_its_change_commits_not_before(ada):
    with transaction.atomic():
        publish_uncommitted(ada.pk, HandoffKind.HANDOFF_PHASE, {})
        assert FollowerCursor.objects.filter(user=ada).first() is None
        assert FollowerEvent.objects.get().seq is None
    # The test's own transaction never commits: delivering is what the commit runs.
    assert [f["id"] for f in deliver(ada.pk)] == [1]
    assert deliver(ada.pk) == []


def test_events_left_unnumbered_by_a_stopped_process_are_numbered_by_the_next_reader(ada):
    publish_uncommitted(ada.pk, HandoffKind.HANDOFF_PHASE, {"phase": "prepared"})
    publish_uncommitted(ada.pk, HandoffKind.HANDOFF_PHASE, {"phase": "committed"})
    assert [(f["id"], f["payload"]["phase"]) for f in replayed(ada)] == [
        (1, "prepared"),
        (2, "committed"),
    ]


def test_events_a_stopped_process_left_are_rendered_from_what_is_stored_when_numbered(ada):
    """The writer's transaction stores ids only; a process that stopped after its commit and
    before numbering leaves them so, and the next reader renders them from what is stored then:
    nothing is lost, and the page gets the row as it is now."""
    created = session(ada)
    SessionController().rename(created, "renamed")
    stored = list(FollowerEvent.objects.filter(user=ada).values_list("seq", "payload"))
    assert stored == [(None, {"session_id": str(created.pk)})] * 2
    frames = replayed(ada)
    assert [(f["id"], f["kind"]) for f in frames] == [(1, "session.added"), (2, "session.updated")]
    assert [f["payload"]["session"]["title"] for f in frames] == ["renamed", "renamed"]
    assert all("renamed" in f["payload"]["row_html"] for f in frames)


def test_a_transaction_delivers_once_whichever_of_its_savepoints_roll_back(
    ada, monkeypatch, django_capture_on_commit_callbacks
):
    delivered: list[int] = []
    monkeypatch.setattr("follower.events.deliver", lambda user_id: delivered.append(user_id))
    with django_capture_on_commit_callbacks(execute=True), transaction.atomic():
        with contextlib.suppress(RuntimeError), transaction.atomic():
            publish_uncommitted(ada.pk, HandoffKind.HANDOFF_PHASE, {"phase": "rolled back"})
            raise RuntimeError("the savepoint rolls back with its event and its call")
        for phase in ("prepared", "committed"):
            with transaction.atomic():
                publish_uncommitted(ada.pk, HandoffKind.HANDOFF_PHASE, {"phase": phase})
    assert delivered == [ada.pk]


def test_current_event_id_default_is_zero(ada):
    assert current_event_id(ada.pk) == 0


def test_publish_sends_to_the_users_group_after_commit(ada, django_capture_on_commit_callbacks):
    channel = listen(ada)
    with django_capture_on_commit_callbacks() as callbacks:
        publish_uncommitted(ada.pk, SessionKind.SESSION_ADDED, {"session": {"id": "x"}})
    assert len(callbacks) == 1
    with django_capture_on_commit_callbacks(execute=True):
        callbacks[0]()
    (frame,) = replayed(ada)
    assert received(channel) == {"type": "follow.events", "user": ada.pk, "batch": [frame]}
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
        publish_uncommitted(ada.pk, HandoffKind.HANDOFF_PHASE, {})
        raise RuntimeError("the change failed")
    assert callbacks == []
    assert current_event_id(ada.pk) == 0
    assert not FollowerEvent.objects.exists()


def test_publish_survives_a_broken_channel_layer(ada, settings):
    settings.CHANNEL_LAYERS = {"default": {"BACKEND": "no.such.Layer"}}
    with transaction.atomic():
        publish(ada.pk, HandoffKind.HANDOFF_PHASE, {})
    assert kinds(ada) == ["handoff.phase"]


# --- replay and pruning ----------------------------------------------------------------------


def test_events_after_returns_later_events_in_order(ada):
    for phase in ("summarizing", "prepared", "committed"):
        publish(ada.pk, HandoffKind.HANDOFF_PHASE, {"phase": phase})
    frames = replayed(ada, 1)
    assert [(f["id"], f["payload"]["phase"]) for f in frames] == [(2, "prepared"), (3, "committed")]


def test_events_after_the_newest_is_empty(ada):
    publish(ada.pk, HandoffKind.HANDOFF_PHASE, {})
    assert events_after(ada.pk, 1) == []


def test_events_after_an_id_the_server_never_gave_is_resync(ada):
    publish(ada.pk, HandoffKind.HANDOFF_PHASE, {})
    assert events_after(ada.pk, 5) == Resync(last_event_id=1)


def test_events_after_pruned_events_is_resync(ada, settings):
    settings.FOLLOWER_EVENT_LIMIT = 2
    for _ in range(5):
        publish(ada.pk, HandoffKind.HANDOFF_PHASE, {})
    assert events_after(ada.pk, 2) == Resync(last_event_id=5)
    assert [f["id"] for f in replayed(ada, 3)] == [4, 5]


def test_publish_keeps_at_most_the_limit_per_user(ada, bob, settings):
    settings.FOLLOWER_EVENT_LIMIT = 3
    for _ in range(5):
        publish(ada.pk, HandoffKind.HANDOFF_PHASE, {})
    publish(bob.pk, HandoffKind.HANDOFF_PHASE, {})
    assert list(FollowerEvent.objects.filter(user=ada).values_list("seq", flat=True)) == [3, 4, 5]
    assert FollowerCursor.objects.get(user=ada).pruned_through == 2
    assert FollowerCursor.objects.get(user=bob).pruned_through == 0


def test_prune_events_drops_events_past_retention(ada, bob, settings):
    settings.FOLLOWER_EVENT_RETENTION = 600
    publish(ada.pk, HandoffKind.HANDOFF_PHASE, {})
    publish(ada.pk, HandoffKind.HANDOFF_PHASE, {})
    publish(bob.pk, HandoffKind.HANDOFF_PHASE, {})
    FollowerEvent.objects.filter(user=ada, seq=1).update(
        created=timezone.now() - timedelta(seconds=601)
    )
    assert prune_events() == 1
    assert events_after(ada.pk, 0) == Resync(last_event_id=2)
    assert [f["id"] for f in replayed(ada, 1)] == [2]
    assert [f["id"] for f in replayed(bob, 0)] == [1]


def test_prune_events_within_retention_keeps_everything(ada):
    publish(ada.pk, HandoffKind.HANDOFF_PHASE, {})
    assert prune_events() == 0
    assert FollowerCursor.objects.get(user=ada).pruned_through == 0


def test_prune_events_later_sweeps_everything_old(ada):
    publish(ada.pk, HandoffKind.HANDOFF_PHASE, {})
    publish(ada.pk, HandoffKind.HANDOFF_PHASE, {})
    assert prune_events(now=timezone.now() + timedelta(hours=1)) == 2
    assert FollowerCursor.objects.get(user=ada).pruned_through == 2
    assert events_after(ada.pk, 2) == []


# --- explicit announcements ------------------------------------------------------------------


def session(owner: AbstractBaseUser, title: str = "work") -> Session:
    return create_session(owner, cwd="/srv/project", title=title)


def test_new_session_is_session_added_with_its_row(ada):
    created = session(ada)
    [frame] = replayed(ada)
    assert frame["kind"] == "session.added"
    assert frame["payload"]["session"] == {
        "id": str(created.pk),
        "title": "work",
        "blank": True,
        "workspace": None,
        "redirect_to": None,
        "archived": False,
        "status": "idle",
    }


def test_a_save_nobody_announces_makes_no_event_and_no_query(ada, django_assert_num_queries):
    """Events are published by the actions, not inferred from saves."""
    created = session(ada)
    created.model = "gpt-5"
    with django_assert_num_queries(1):
        created.save(update_fields=["model"])
    assert kinds(ada) == ["session.added"]


def test_renaming_and_archiving_are_session_updated(ada):
    created = session(ada)
    controller = SessionController()
    controller.rename(created, "renamed")
    deliver(ada.pk)  # what the rename's commit runs: the row is rendered as committed then
    controller.archive(created)
    rows = [f["payload"]["session"] for f in replayed(ada, 1)]
    assert [(r["title"], r["archived"]) for r in rows] == [("renamed", False), ("renamed", True)]


def test_a_turn_is_session_updated_when_it_starts_and_ends(ada):
    created = session(ada)
    message = append_message(created, role="user", source_kind="user", content="go")
    lifecycle.begin_turn(created, user_initiated=True, message=message)
    deliver(ada.pk)  # what the start's commit runs
    lifecycle.end_turn(created)
    rows = [f["payload"]["session"] for f in row_frames(ada, 1)]
    assert [(r["status"], r["blank"]) for r in rows] == [("running", False), ("idle", False)]


def test_attaching_a_workspace_is_session_updated(ada):
    workspace = Workspace.objects.create(owner=ada, path="/srv/project")
    created = session(ada)
    attach(created, workspace)
    frames = replayed(ada, 1)
    assert frames[0]["payload"]["session"]["workspace"] == str(workspace.pk)


def test_first_turn_in_the_log_clears_blank_once(ada):
    created = session(ada)
    append_message(created, role="user", source_kind="plugin", content="the brief")
    append_message(created, role="user", source_kind="user", content="go", starts_turn=True)
    append_message(created, role="user", source_kind="user", content="more", starts_turn=True)
    frames = row_frames(ada, 1)
    assert [(f["kind"], f["payload"]["session"]["blank"]) for f in frames] == [
        ("session.updated", False)
    ]


def test_record_created_and_moving_phase_is_handoff_phase(ada):
    source, target = session(ada), session(ada)
    record = store.create_record(
        source_id=source.pk, reason=Reason.MANUAL, metrics=NO_METRICS, source_revision=0
    )
    store.save_fields(record, error="still summarizing")
    store.move(record, Phase.PREPARED, target_id=target.pk)
    frames = replayed(ada, 2)
    assert [facts(f["payload"]) for f in frames] == [
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


def test_redirect_added_is_redirect_committed_with_the_successors_row(ada):
    source, successor = session(ada), session(ada, "next")
    store.add_redirect(source.pk, successor.pk, None, source_title="work before its handoff")
    [frame] = replayed(ada, 2)
    assert frame["kind"] == "redirect.committed"
    assert facts(frame["payload"]) == {
        "source": str(source.pk),
        "source_title": "work before its handoff",
        "destination": str(successor.pk),
        "previous": None,
        "url": f"/s/{successor.pk}/",
        "session": {**frame["payload"]["session"], "id": str(successor.pk), "title": "next"},
    }
    assert frame["payload"]["session"]["blank"] is True


def test_redirect_from_a_successor_re_points_the_redirects_leading_to_it(ada):
    first, second, third = session(ada), session(ada), session(ada)
    store.add_redirect(first.pk, second.pk, None)
    before = snapshot(ada.pk)
    store.add_redirect(second.pk, third.pk, None, source_title="second")
    frames = replayed(ada, before["last_event_id"])
    fields = ("source", "destination", "previous", "source_title")
    assert {tuple(f["payload"][k] for k in fields) for f in frames} == {
        (str(second.pk), str(third.pk), None, "second"),
        # The route did not rename the first: its title is not the route's to tell.
        (str(first.pk), str(third.pk), str(second.pk), None),
    }
    state = before
    for frame in frames:
        state = apply(state, frame)
    assert by_id(state) == by_id(snapshot(ada.pk))


def test_redirect_removed_is_session_updated_without_redirect(ada):
    source, target = session(ada), session(ada)
    store.add_redirect(source.pk, target.pk, None)
    assert store.remove_redirect(source.pk)
    frames = replayed(ada, 3)
    assert [(f["kind"], f["payload"]["session"]) for f in frames] == [
        ("session.updated", {**snapshot(ada.pk)["sessions"][0], "redirect_to": None})
    ]


def test_events_go_to_the_sessions_owner_only(ada, bob):
    session(ada)
    assert kinds(bob) == []
    assert kinds(ada) == ["session.added"]


def test_every_hundredth_event_sweeps_quiet_users(ada, bob, django_capture_on_commit_callbacks):
    """bob went quiet: his expired events go when ada's events come."""
    publish(bob.pk, HandoffKind.HANDOFF_PHASE, {})
    FollowerEvent.objects.filter(user=bob).update(created=timezone.now() - timedelta(days=1))
    for _ in range(SWEEP_EVERY - 1):
        publish(ada.pk, HandoffKind.HANDOFF_PHASE, {})
    assert FollowerEvent.objects.filter(user=bob).exists()
    with django_capture_on_commit_callbacks(execute=True):
        publish(ada.pk, HandoffKind.HANDOFF_PHASE, {})
    assert not FollowerEvent.objects.filter(user=bob).exists()
    assert events_after(bob.pk, 0) == Resync(last_event_id=1)


# --- snapshot --------------------------------------------------------------------------------


def apply(state: dict[str, Any], frame: dict[str, Any]) -> dict[str, Any]:
    """Apply one event frame to a snapshot the way the page does (``handoff/jump.js``)."""
    rows = {row["id"]: dict(row) for row in state["sessions"]}
    payload = frame["payload"]
    if frame["kind"] in (SessionKind.SESSION_ADDED, SessionKind.SESSION_UPDATED):
        rows[payload["session"]["id"]] = payload["session"]
    elif frame["kind"] == HandoffKind.REDIRECT_COMMITTED:
        rows[payload["source"]]["redirect_to"] = payload["destination"]
        rows[payload["destination"]] = payload["session"]
    return {"last_event_id": frame["id"], "sessions": list(rows.values())}


def by_id(state: dict[str, Any]) -> tuple[int, dict[str, Any]]:
    return state["last_event_id"], {row["id"]: row for row in state["sessions"]}


def test_snapshot_plus_replayed_events_equals_a_fresh_snapshot(ada, bob):
    """Zulip's test idea: the page's state after replay is what a reload would show."""
    workspace = Workspace.objects.create(owner=ada, path="/srv/project")
    source = create_session(ada, cwd="/srv/project", title="long talk", workspace=workspace)
    append_message(source, role="user", source_kind="user", content="hi", starts_turn=True)
    append_message(source, role="assistant", source_kind="assistant", content="Hello.")
    before = snapshot(ada.pk)

    session(bob, "not ada's")
    call_command("handoff", "now", str(source.pk), "--wait", stdout=StringIO())
    successor = Session.objects.get(redirect__isnull=True, owner=ada, created__gt=source.created)
    SessionController().archive(session(ada, "discarded draft"))

    frames = replayed(ada, before["last_event_id"])
    state = before
    for frame in frames:
        state = apply(state, frame)
    assert by_id(state) == by_id(snapshot(ada.pk))
    rows = by_id(state)[1]
    assert rows[str(source.pk)]["redirect_to"] == str(successor.pk)
    assert rows[str(successor.pk)]["blank"] is False


def test_snapshot_lists_only_the_users_sessions_oldest_first(ada, bob):
    first = session(ada, "first")
    second = session(ada, "second")
    session(bob, "bob's")
    store.add_redirect(first.pk, second.pk, None)
    state = snapshot(ada.pk)
    assert state["last_event_id"] == 3
    assert [(r["title"], r["redirect_to"]) for r in state["sessions"]] == [
        ("first", str(second.pk)),
        ("second", None),
    ]


def test_snapshot_default_is_empty(ada):
    assert snapshot(ada.pk) == {"last_event_id": 0, "sessions": []}


def test_snapshot_view_answers_the_signed_in_user(ada):
    session(ada)
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


def test_status_channel_answers_from_one_probe_for_a_while_and_probes_a_new_layer(settings):
    """Every status report asks (each panel a page or an event renders): one round trip
    through the layer answers them for ``ANSWER_KEPT`` seconds; a reconfigured layer is
    probed afresh."""
    settings.CHANNEL_LAYERS = {"default": {"BACKEND": "channels.layers.InMemoryChannelLayer"}}
    with (
        mock.patch.object(channel, "ANSWER_KEPT", 3600),
        mock.patch.object(
            StatusChannel, "_round_trip", side_effect=StatusChannel._round_trip
        ) as probed,
    ):
        assert [StatusChannel().available() for _ in range(3)] == [True] * 3
        assert probed.call_count == 1
        settings.CHANNEL_LAYERS = {
            "default": {
                "BACKEND": "channels_redis.core.RedisChannelLayer",
                "CONFIG": {"hosts": ["redis://127.0.0.1:1/0"]},
            }
        }
        assert StatusChannel().available() is False
        assert probed.call_count == 2


def test_status_channel_unavailable_without_a_layer(settings):
    settings.CHANNEL_LAYERS = {}
    assert StatusChannel().available() is False


# --- the page's baseline ---------------------------------------------------------------------


def test_a_page_embeds_the_event_id_and_redirect_it_was_rendered_with(ada, client):
    """The follower replays from the render, not from a later snapshot (docs/spec.md, Follower
    rules)."""
    source, successor = session(ada), session(ada, "next")
    store.add_redirect(source.pk, successor.pk, None)
    client.force_login(ada)
    html = client.get(f"/s/{source.pk}/").content.decode()
    assert f'data-event-id="{current_event_id(ada.pk)}"' in html
    assert f'data-redirect-to="{successor.pk}"' in html
    plain = client.get(f"/s/{successor.pk}/").content.decode()
    assert 'data-redirect-to=""' in plain


def test_a_fragment_gets_no_baseline(ada, client):
    client.force_login(ada)
    response = client.get("/settings/", headers={"HX-Request": "true"})
    assert not hasattr(response.wsgi_request, "follower_baseline")
