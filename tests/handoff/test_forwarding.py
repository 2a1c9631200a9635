"""docs/spec.md, Forwarding and cycles: a handed-off source relays input exactly once."""

from __future__ import annotations

import re

import pytest
from django.test import Client
from handoff_support import make_source, make_user

from follower.events import current_event_id, events_after
from handoff import forwarding, operations, store
from handoff.core.relay import relay_id
from handoff.exceptions import ForwardingError
from handoff.models import Redirect
from host.intake import post_message
from host.models import Message, Session
from host.sessions import create_session

pytestmark = pytest.mark.django_db


@pytest.fixture
def handed_off(settings, django_capture_on_commit_callbacks) -> tuple[Session, Session]:
    """A source handed off to a started, idle successor (the agent's reply ran)."""
    settings.TASKS = {"default": {"BACKEND": "django_tasks.backends.immediate.ImmediateBackend"}}
    settings.HOST_TASKS_RUN_IN_CALLER = True
    source = make_source()
    with django_capture_on_commit_callbacks(execute=True):
        operations.run_attempt(source.pk, manual=True)
    successor = Session.objects.get(pk=Redirect.objects.get(source=source).destination_id)
    assert successor.status == "idle"
    return source, successor


def relays(session: Session) -> list[Message]:
    return list(Message.objects.filter(session=session, source_kind="relay"))


def test_input_to_a_redirected_source_is_relayed_once(handed_off):
    source, successor = handed_off
    result = post_message(source, content="Please also add a changelog entry.")
    assert result.message is not None
    assert result.forwarded_to == str(successor.pk)
    assert result.relay_id == relay_id(str(source.pk), [str(result.message.pk)])
    original = Message.objects.get(pk=result.message.pk)
    assert original.session_id == source.pk  # the original stays in the source's log
    (relayed,) = relays(successor)
    assert (relayed.content, relayed.relay_id) == (
        "Please also add a changelog entry.",
        result.relay_id,
    )


RELAY_BADGE = re.compile(r'<span class="badge badge-relay">.*?</span>', re.S)


def test_a_relay_shown_live_reads_as_the_page_shows_it(handed_off, client: Client):
    """The relay's line is rendered after its post committed, when the original's forward is
    stored too: it names the conversation it came from, as a reload of the page does, not
    "an earlier conversation"."""
    source, successor = handed_off
    owner = source.owner
    before = current_event_id(owner.pk)
    post_message(source, content="Please also add a changelog entry.")
    frames = events_after(owner.pk, before)  # what the post's commit delivers
    assert isinstance(frames, list)
    (relayed,) = relays(successor)
    [live] = [
        fragment["html"]
        for frame in frames
        if frame["kind"] == "session.entry"
        and frame["payload"]["session_id"] == str(successor.pk)
        and frame["payload"]["seq"] == relayed.seq
        for fragment in frame["payload"]["fragments"]
        if f'id="entry-{relayed.seq}"' in fragment["html"]
    ]
    client.force_login(owner)
    page = client.get(f"/s/{successor.pk}/").content.decode()
    [shown] = RELAY_BADGE.findall(page)
    assert RELAY_BADGE.findall(live) == [shown]
    source.refresh_from_db()
    assert source.title in shown and "an earlier conversation" not in shown


def test_a_retried_post_with_the_same_client_id_adds_nothing(handed_off):
    source, successor = handed_off
    first = post_message(source, content="hello", client_id="tab-1:42")
    again = post_message(source, content="hello", client_id="tab-1:42")
    assert (again.forwarded_to, again.relay_id, again.created) == (
        first.forwarded_to,
        first.relay_id,
        False,
    )
    assert len(relays(successor)) == 1
    assert Message.objects.filter(session=source, client_id="tab-1:42").count() == 1


def test_a_retried_forward_adds_nothing(handed_off):
    source, successor = handed_off
    result = post_message(source, content="once only")
    assert result.message is not None
    message = Message.objects.get(pk=result.message.pk)
    target, rid, created = forwarding.relay(source, [message])
    assert (target, rid, created) == (str(successor.pk), result.relay_id, False)
    assert len(relays(successor)) == 1


def test_the_relay_starts_a_turn_in_the_destination(handed_off, django_capture_on_commit_callbacks):
    source, successor = handed_off
    with django_capture_on_commit_callbacks(execute=True):
        post_message(source, content="What is the status?")
    replies = Message.objects.filter(session=successor, role="assistant").order_by("seq")
    assert "What is the status?" in replies.latest("seq").content
    assert source.messages.filter(role="assistant").count() == 5  # no turn in the source


def test_a_session_without_a_redirect_is_not_forwarded():
    source = make_source()
    result = post_message(source, content="plain input")
    assert result.forwarded_to is None


def test_destination_follows_the_map_to_its_end():
    user = make_user()
    a, b, c = (create_session(user, cwd="/w") for _ in range(3))
    store.add_redirect(b.pk, c.pk, None)
    store.add_redirect(a.pk, b.pk, None)
    assert forwarding.destination(a.pk) == str(c.pk)
    result = post_message(a, content="to the end")
    assert result.forwarded_to == str(c.pk)
    assert len(relays(c)) == 1 and relays(b) == []


def test_a_cycle_loaded_from_storage_is_reported_not_looped_on():
    user = make_user()
    a, b = create_session(user, cwd="/w"), create_session(user, cwd="/w")
    Redirect.objects.create(source=a, destination=b)
    Redirect.objects.create(source=b, destination=a)
    with pytest.raises(ForwardingError, match="cycle"):
        forwarding.destination(a.pk)
    with pytest.raises(ForwardingError):
        post_message(a, content="lost?")
    assert not Message.objects.filter(session=a).exists()  # the post changed nothing


def test_peer_report_to_an_archived_handed_off_source_reaches_the_successor(handed_off):
    source, successor = handed_off
    worker = create_session(source.owner, cwd=source.cwd, parent=source)
    Session.objects.filter(pk=source.pk).update(archived=True)
    source.refresh_from_db()
    result = post_message(source, content=f"Report from worker {worker.pk}: tests pass.")
    assert result.forwarded_to == str(successor.pk)
    (relayed,) = relays(successor)
    assert relayed.content.startswith("Report from worker")


def test_a_new_redirect_re_flattens_the_stored_entries():
    user = make_user()
    a, b, c = (create_session(user, cwd="/w") for _ in range(3))
    store.add_redirect(a.pk, b.pk, None)
    store.add_redirect(b.pk, c.pk, None)
    assert Redirect.objects.get(source=a).destination_id == c.pk
    with pytest.raises(ValueError, match="cycle"):
        store.add_redirect(c.pk, a.pk, None)
    assert Redirect.objects.count() == 2


def test_a_chain_stored_unflattened_is_followed_to_its_end():
    user = make_user()
    a, b, c = (create_session(user, cwd="/w") for _ in range(3))
    Redirect.objects.create(source=a, destination=b)
    Redirect.objects.create(source=b, destination=c)
    assert forwarding.destination(a.pk) == str(c.pk)
    d = create_session(user, cwd="/w")
    store.add_redirect(c.pk, d.pk, None)
    assert Redirect.objects.get(source=b).destination_id == d.pk


def test_a_relay_to_a_busy_destination_waits_in_its_inbox(handed_off):
    from host import lifecycle
    from host.models import InboxItem

    source, successor = handed_off
    lifecycle.begin_turn(successor, user_initiated=False)
    result = post_message(source, content="When you are done: also update the docs.")
    item = InboxItem.objects.get(session=successor, taken=False)
    assert item.message is not None and item.message.relay_id == result.relay_id
    lifecycle.end_turn(successor)
    item.refresh_from_db()
    assert item.taken is True
