"""host.intake.post_message: turns, inbox, forwarding, client_id retries, /compact."""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any

import pytest
from django.contrib.auth.models import AbstractBaseUser
from django.db import connection

from host import lifecycle, log
from host.intake import InvalidInput, PostResult, post_message
from host.models import (
    InboxItem,
    Message,
    Session,
    SessionEvent,
    SessionEventKind,
    SessionStatus,
    SourceKind,
)
from host.sessions import create_session
from host.signals import StepRejected, before_step
from host.usage import Usage, session_usage

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("immediate_tasks")]


@pytest.fixture
def session(owner: AbstractBaseUser) -> Session:
    return create_session(owner, cwd="/home/ada/project", title="Work")


def post(session: Session, capture: Callable[..., Any], **kwargs: Any) -> PostResult:
    """Post and run everything that waits for the commit (the agent turn, signals)."""
    with capture(execute=True):
        return post_message(session, **kwargs)


def log_of(session: Session) -> list[tuple[str, str, bool]]:
    return [
        (m.role, m.source_kind, m.starts_turn)
        for m in Message.objects.filter(session=session).order_by("seq")
    ]


def test_post_to_an_idle_session_starts_a_turn_and_the_offline_agent_replies(
    session: Session, django_capture_on_commit_callbacks: Callable[..., Any]
):
    result = post(session, django_capture_on_commit_callbacks, content="Please list the files")

    assert result.created and not result.forwarded
    assert result.message is not None and result.message.starts_turn
    assert log_of(session) == [("user", "user", True), ("assistant", "assistant", False)]
    answer = Message.objects.get(session=session, role="assistant")
    assert answer.content.startswith("Offline agent:")
    assert "Please list the files" in answer.content
    session.refresh_from_db()
    assert session.status == SessionStatus.IDLE
    assert session.turns == 1


def test_blank_clears_on_the_first_turn(
    session: Session, django_capture_on_commit_callbacks: Callable[..., Any]
):
    assert session.blank
    post(session, django_capture_on_commit_callbacks, content="hello")
    session.refresh_from_db()
    assert not session.blank


def test_a_conversation_created_empty_takes_the_title_of_its_first_message(
    owner: AbstractBaseUser, django_capture_on_commit_callbacks: Callable[..., Any]
):
    untitled = create_session(owner)
    text = "\n  Please   port the weather CLI to a streaming parser and keep the flags as is\n"
    post(untitled, django_capture_on_commit_callbacks, content=text)
    post(untitled, django_capture_on_commit_callbacks, content="and add tests")
    untitled.refresh_from_db()
    assert untitled.title == "Please port the weather CLI to a streaming parser and keep…"
    assert len(untitled.title) <= 60


def test_a_titled_conversation_keeps_its_title(
    session: Session, django_capture_on_commit_callbacks: Callable[..., Any]
):
    post(session, django_capture_on_commit_callbacks, content="hello")
    session.refresh_from_db()
    assert session.title == "Work"


def test_a_plugin_message_does_not_clear_blank(session: Session):
    log.append_message(session, role="user", source_kind=SourceKind.PLUGIN, content="# Brief")
    session.refresh_from_db()
    assert session.blank
    assert session.turns == 0


def test_turns_count_only_user_initiated_exchanges(
    session: Session, django_capture_on_commit_callbacks: Callable[..., Any]
):
    log.append_message(session, role="user", source_kind=SourceKind.PLUGIN, content="# Brief")
    with django_capture_on_commit_callbacks(execute=True):
        lifecycle.start_agent(session)
    post(session, django_capture_on_commit_callbacks, role="assistant", content="a note")
    post(session, django_capture_on_commit_callbacks, role="system", content="a notice")
    post(session, django_capture_on_commit_callbacks, content="first question")
    post(session, django_capture_on_commit_callbacks, content="second question")

    session.refresh_from_db()
    assert session.turns == 2
    assert not session.blank
    assert Message.objects.filter(session=session, starts_turn=True).count() == 2


def test_a_retry_with_the_same_client_id_returns_the_first_answer_and_adds_nothing(
    session: Session, django_capture_on_commit_callbacks: Callable[..., Any]
):
    first = post(session, django_capture_on_commit_callbacks, content="hi", client_id="c-1")
    revision = Session.objects.get(pk=session.pk).revision
    count = Message.objects.count()

    again = post(session, django_capture_on_commit_callbacks, content="hi", client_id="c-1")

    assert first.created and not again.created
    assert again.message is not None and first.message is not None
    assert again.message.pk == first.message.pk
    assert (again.forwarded_to, again.relay_id) == (None, None)
    assert Message.objects.count() == count
    session.refresh_from_db()
    assert session.revision == revision
    assert session.turns == 1


def test_the_same_client_id_in_another_session_is_a_new_post(
    owner: AbstractBaseUser,
    session: Session,
    django_capture_on_commit_callbacks: Callable[..., Any],
):
    other = create_session(owner)
    post(session, django_capture_on_commit_callbacks, content="hi", client_id="c-1")
    result = post(other, django_capture_on_commit_callbacks, content="hi", client_id="c-1")
    assert result.created
    assert Message.objects.filter(session=other, role="user").count() == 1


@pytest.fixture
def forwarding(owner: AbstractBaseUser) -> Any:
    """A before_step receiver that relays ``session``'s input to a destination, once per id."""
    destination = create_session(owner, title="Successor")
    calls: list[list[Message]] = []

    def receiver(sender: Any, session: Session, incoming: list[Message], **kw: Any) -> Any:
        if session.pk == destination.pk:
            return None
        calls.append(incoming)
        relay_id = f"relay-{incoming[0].pk}"
        if not Message.objects.filter(session=destination, relay_id=relay_id).exists():
            log.append_message(
                destination,
                role="user",
                source_kind=SourceKind.RELAY,
                content=incoming[0].content,
                relay_id=relay_id,
            )
        return StepRejected(forwarded_to=str(destination.pk), relay_id=relay_id)

    before_step.connect(receiver, weak=False)
    yield destination, calls
    before_step.disconnect(receiver)


def test_forwarded_input_is_kept_in_the_source_and_starts_no_turn(
    session: Session, forwarding: Any, django_capture_on_commit_callbacks: Callable[..., Any]
):
    destination, calls = forwarding
    result = post(session, django_capture_on_commit_callbacks, content="for the successor")

    assert result.forwarded
    assert result.forwarded_to == str(destination.pk)
    assert result.relay_id is not None
    assert log_of(session) == [("user", "user", False)]
    assert calls[0][0].content == "for the successor"
    session.refresh_from_db()
    assert session.turns == 0 and session.blank and session.status == SessionStatus.IDLE
    relays = Message.objects.filter(session=destination, relay_id=result.relay_id)
    assert [m.content for m in relays] == ["for the successor"]


def test_a_retried_forwarded_post_gets_the_same_answer_and_adds_nothing(
    session: Session, forwarding: Any, django_capture_on_commit_callbacks: Callable[..., Any]
):
    destination, calls = forwarding
    first = post(session, django_capture_on_commit_callbacks, content="report", client_id="r-9")
    count = Message.objects.count()

    again = post(session, django_capture_on_commit_callbacks, content="report", client_id="r-9")

    assert not again.created
    assert (again.forwarded_to, again.relay_id) == (first.forwarded_to, first.relay_id)
    assert Message.objects.count() == count
    assert len(calls) == 1
    assert Message.objects.filter(session=destination).count() == 1


def test_a_message_to_a_running_session_waits_in_the_inbox_and_is_taken_after(
    session: Session,
    capture_signal: Callable[..., list[dict[str, Any]]],
    django_capture_on_commit_callbacks: Callable[..., Any],
):
    from host.signals import blocker_cleared

    cleared = capture_signal(blocker_cleared)
    first = log.append_message(session, role="user", source_kind="user", content="first")
    lifecycle.begin_turn(session, user_initiated=True, message=first)

    queued = post(session, django_capture_on_commit_callbacks, content="one more thing")

    assert queued.message is not None and not queued.message.starts_turn
    item = InboxItem.objects.get(session=session)
    assert (item.taken, item.message_id) == (False, queued.message.pk)
    assert Session.objects.get(pk=session.pk).turns == 1

    with django_capture_on_commit_callbacks(execute=True):
        lifecycle.end_turn(session)

    item.refresh_from_db()
    assert item.taken
    session.refresh_from_db()
    assert session.status == SessionStatus.IDLE
    assert session.turns == 2
    assert Message.objects.get(pk=queued.message.pk).starts_turn
    answer = Message.objects.filter(session=session, role="assistant").get()
    assert "one more thing" in answer.content
    assert [c["blocker"] for c in cleared] == ["pending-inbox"]


@pytest.mark.parametrize(
    ("fields", "error"),
    [
        ({"role": "robot", "content": "x"}, "role must be one of"),
        ({"content": ""}, "content must be a non-empty string"),
        ({"content": "   "}, "content must be a non-empty string"),
        ({"content": "x", "usage": {"output": -1}}, "usage.output must be a non-negative"),
        ({"content": "x", "usage": {"output": 1.5}}, "usage.output must be a non-negative"),
        ({"content": "x", "usage": {"output": True}}, "usage.output must be a non-negative"),
        ({"content": "x", "usage": {"tokens": 3}}, "unknown usage field"),
        ({"content": "x", "usage": [1, 2]}, "usage must be an object"),
        ({"content": "x", "client_id": ""}, "client_id must be"),
        ({"content": "x", "client_id": "c" * 201}, "client_id must be"),
    ],
)
def test_invalid_input_is_refused_and_changes_nothing(
    session: Session, fields: dict[str, Any], error: str
):
    before = (Session.objects.get(pk=session.pk).revision, Message.objects.count())
    with pytest.raises(InvalidInput, match=error):
        post_message(session, **fields)
    assert (Session.objects.get(pk=session.pk).revision, Message.objects.count()) == before


def test_usage_is_recorded_in_the_buckets(
    session: Session, django_capture_on_commit_callbacks: Callable[..., Any]
):
    post(
        session,
        django_capture_on_commit_callbacks,
        role="assistant",
        content="answer",
        usage={"uncached_input": 10, "output": 5, "cache_read": 100},
    )
    usage = session_usage(session)
    assert (usage.uncached_input, usage.output, usage.cache_read, usage.cache_write) == (
        10,
        5,
        100,
        0,
    )


@pytest.mark.parametrize("status", [SessionStatus.DISPOSED, SessionStatus.FINISHED])
def test_a_disposed_or_finished_session_takes_no_input(session: Session, status: str):
    Session.objects.filter(pk=session.pk).update(status=status)
    with pytest.raises(InvalidInput, match=f"is {status}"):
        post_message(session, content="hello", client_id="late")
    assert not Message.objects.filter(session=session).exists()
    assert Session.objects.get(pk=session.pk).revision == 0


def test_a_failing_receiver_leaves_nothing(session: Session):
    def broken(**kwargs: Any) -> None:
        raise RuntimeError("receiver down")

    before_step.connect(broken, weak=False)
    try:
        with pytest.raises(RuntimeError, match="receiver down"):
            post_message(session, content="hello")
    finally:
        before_step.disconnect(broken)
    assert not Message.objects.filter(session=session).exists()
    assert Session.objects.get(pk=session.pk).status == SessionStatus.IDLE


def test_slash_compact_compacts_instead_of_starting_a_turn(
    session: Session, django_capture_on_commit_callbacks: Callable[..., Any]
):
    post(session, django_capture_on_commit_callbacks, content="Edit /srv/app/main.py " * 20)
    turns = Session.objects.get(pk=session.pk).turns

    result = post(session, django_capture_on_commit_callbacks, content="/compact", client_id="k")
    again = post(session, django_capture_on_commit_callbacks, content="/compact", client_id="k")

    session.refresh_from_db()
    assert result.created and not again.created
    assert session.compactions == 1
    assert session.turns == turns
    event = SessionEvent.objects.get(session=session, kind=SessionEventKind.COMPACTION)
    assert event.data["trigger"] == "manual"
    assert not Message.objects.filter(session=session, compacted=False).exists()


def test_slash_compact_with_nothing_to_compact_is_refused(session: Session):
    with pytest.raises(InvalidInput, match="nothing to compact"):
        post_message(session, content="/compact")
    assert not Message.objects.filter(session=session).exists()


def test_slash_compact_on_a_running_session_is_refused(session: Session):
    log.append_message(session, role="user", source_kind="user", content="work")
    lifecycle.begin_turn(session, user_initiated=False)
    with pytest.raises(InvalidInput, match="runs when idle"):
        post_message(session, content="/compact")
    assert Message.objects.filter(session=session).count() == 1


@pytest.mark.postgres  # concurrent writers
@pytest.mark.django_db(transaction=True)
def test_two_concurrent_retries_end_with_one_message(owner: AbstractBaseUser):
    session = create_session(owner)
    Session.objects.filter(pk=session.pk).update(status=SessionStatus.RUNNING)
    results: list[PostResult] = []
    barrier = threading.Barrier(2)

    def retry() -> None:
        barrier.wait()
        try:
            results.append(
                post_message(Session.objects.get(pk=session.pk), content="x", client_id="same")
            )
        finally:
            connection.close()

    threads = [threading.Thread(target=retry) for _ in range(2)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()

    assert sorted(r.created for r in results) == [False, True]
    assert len({r.message.pk for r in results if r.message}) == 1
    assert Message.objects.filter(session=session).count() == 1
    assert InboxItem.objects.filter(session=session).count() == 1


@pytest.mark.parametrize(
    "usage", [{"cache_read": 2**63}, Usage(output=2**63), Usage(uncached_input=-5)]
)
def test_usage_beyond_any_model_call_is_refused_whatever_its_form(session: Session, usage: Any):
    before = (Session.objects.get(pk=session.pk).revision, Message.objects.count())
    with pytest.raises(InvalidInput, match="must be a non-negative integer"):
        post_message(session, role="assistant", content="x", usage=usage)
    assert (Session.objects.get(pk=session.pk).revision, Message.objects.count()) == before


@pytest.mark.parametrize(
    ("fields", "error"),
    [
        ({"content": "a\x00b"}, "content must not contain NUL"),
        ({"content": "x", "client_id": "c\x00"}, "client_id must not contain NUL"),
    ],
)
def test_a_nul_character_is_refused_and_changes_nothing(
    session: Session, fields: dict[str, Any], error: str
):
    before = (Session.objects.get(pk=session.pk).revision, Message.objects.count())
    with pytest.raises(InvalidInput, match=error):
        post_message(session, **fields)
    assert (Session.objects.get(pk=session.pk).revision, Message.objects.count()) == before
