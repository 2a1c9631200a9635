"""host.lifecycle: the turn lifecycle and the signals plugins hear (after commit only)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from django.contrib.auth.models import AbstractBaseUser
from django.db import transaction

from host import intake, lifecycle, log, tasks
from host.models import (
    Activity,
    InboxItem,
    Message,
    Session,
    SessionEvent,
    SessionEventKind,
    SessionStatus,
)
from host.services import SessionController
from host.sessions import create_session
from host.signals import blocker_cleared, session_idle

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("immediate_tasks")]

Listen = Callable[..., list[dict[str, Any]]]


@pytest.fixture
def session(owner: AbstractBaseUser) -> Session:
    return create_session(owner, title="Work")


def user_message(session: Session, content: str = "question") -> Message:
    return log.append_message(session, role="user", source_kind="user", content=content)


def test_begin_turn_user_initiated_counts_a_turn_and_clears_blank(session: Session):
    message = user_message(session)
    activity = lifecycle.begin_turn(session, user_initiated=True, message=message)

    session.refresh_from_db()
    assert (session.status, session.blank, session.turns) == (SessionStatus.RUNNING, False, 1)
    assert activity.kind == "turn" and activity.ended is None
    assert Message.objects.get(pk=message.pk).starts_turn
    event = SessionEvent.objects.get(session=session, kind=SessionEventKind.TURN_START)
    assert event.data == {"user_initiated": True, "message_seq": message.seq}


def test_begin_turn_by_a_plugin_clears_blank_but_counts_no_turn(session: Session):
    lifecycle.begin_turn(session, user_initiated=False)
    session.refresh_from_db()
    assert (session.status, session.blank, session.turns) == (SessionStatus.RUNNING, False, 0)


def test_a_second_turn_is_refused_while_one_runs(session: Session):
    lifecycle.begin_turn(session, user_initiated=False)
    with pytest.raises(lifecycle.TurnRefused, match="running"):
        lifecycle.begin_turn(session, user_initiated=False)
    assert Activity.objects.filter(session=session).count() == 1


def test_a_user_initiated_turn_needs_its_message(session: Session):
    with pytest.raises(ValueError, match="user message"):
        lifecycle.begin_turn(session, user_initiated=True)


@pytest.mark.django_db(transaction=True)
def test_session_idle_is_sent_after_commit_only(session: Session, capture_signal: Listen):
    idle = capture_signal(session_idle)
    lifecycle.begin_turn(session, user_initiated=False)

    with transaction.atomic():
        lifecycle.end_turn(session)
        assert idle == []
        assert Session.objects.get(pk=session.pk).status == SessionStatus.IDLE

    assert [sent["session"].pk for sent in idle] == [session.pk]
    assert not Activity.objects.filter(session=session, ended__isnull=True).exists()


@pytest.mark.django_db(transaction=True)
def test_a_rolled_back_end_turn_sends_nothing(session: Session, capture_signal: Listen):
    idle = capture_signal(session_idle)
    lifecycle.begin_turn(session, user_initiated=False)

    with pytest.raises(RuntimeError), transaction.atomic():
        lifecycle.end_turn(session)
        raise RuntimeError("crash before commit")

    assert idle == []
    assert Session.objects.get(pk=session.pk).status == SessionStatus.RUNNING


def test_end_turn_takes_the_inbox_into_the_next_turn(
    session: Session, capture_signal: Listen, django_capture_on_commit_callbacks: Any
):
    idle = capture_signal(session_idle)
    cleared = capture_signal(blocker_cleared)
    lifecycle.begin_turn(session, user_initiated=False)
    InboxItem.objects.create(session=session, stage="next-turn", content="queued by a peer")

    with django_capture_on_commit_callbacks(execute=True):
        lifecycle.end_turn(session)

    session.refresh_from_db()
    assert session.status == SessionStatus.IDLE
    assert session.turns == 1
    queued = Message.objects.get(session=session, content="queued by a peer")
    assert queued.starts_turn and queued.role == "user"
    assert not InboxItem.objects.filter(session=session, taken=False).exists()
    assert [c["blocker"] for c in cleared] == ["pending-inbox"]
    assert len(idle) == 1


def test_dispose_tells_the_main_its_owned_agent_is_gone(
    owner: AbstractBaseUser,
    session: Session,
    capture_signal: Listen,
    django_capture_on_commit_callbacks: Any,
):
    cleared = capture_signal(blocker_cleared)
    subagent = create_session(owner, parent=session)

    with django_capture_on_commit_callbacks(execute=True):
        lifecycle.dispose(subagent)
        lifecycle.dispose(subagent)

    assert Session.objects.get(pk=subagent.pk).status == SessionStatus.DISPOSED
    assert [(c["session"].pk, c["blocker"]) for c in cleared] == [
        (session.pk, f"owned-agent:{subagent.pk}")
    ]


def test_disposing_a_main_sends_no_blocker(
    session: Session, capture_signal: Listen, django_capture_on_commit_callbacks: Any
):
    cleared = capture_signal(blocker_cleared)
    with django_capture_on_commit_callbacks(execute=True):
        lifecycle.dispose(session)
    assert cleared == []


def test_a_turn_ending_after_dispose_keeps_the_session_disposed(
    session: Session, capture_signal: Listen, django_capture_on_commit_callbacks: Any
):
    idle = capture_signal(session_idle)
    lifecycle.begin_turn(session, user_initiated=False)
    lifecycle.dispose(session)
    with django_capture_on_commit_callbacks(execute=True):
        lifecycle.end_turn(session)
    assert Session.objects.get(pk=session.pk).status == SessionStatus.DISPOSED
    assert not Activity.objects.filter(session=session, ended__isnull=True).exists()
    assert idle == []


def test_end_activity_clears_its_blocker_once(
    session: Session, capture_signal: Listen, django_capture_on_commit_callbacks: Any
):
    cleared = capture_signal(blocker_cleared)
    activity = lifecycle.begin_activity(session, "job", "indexing")

    with django_capture_on_commit_callbacks(execute=True):
        lifecycle.end_activity(activity)
        lifecycle.end_activity(activity)

    assert activity.ended is not None
    assert [(c["session"].pk, c["blocker"]) for c in cleared] == [(session.pk, "activity:job")]


def test_begin_activity_refuses_an_unknown_kind(session: Session):
    with pytest.raises(ValueError, match="unknown activity kind"):
        lifecycle.begin_activity(session, "nap")
    assert not Activity.objects.exists()


def test_start_agent_wakes_a_seeded_draft_and_the_offline_agent_acknowledges_the_brief(
    session: Session, django_capture_on_commit_callbacks: Any
):
    brief = "# Handoff brief\n\n**Goal:** Ship the parser\n\n## Next steps\n- Run the tests\n"
    log.append_message(session, role="user", source_kind="plugin", content=brief)

    with django_capture_on_commit_callbacks(execute=True):
        lifecycle.start_agent(session)

    session.refresh_from_db()
    assert (session.status, session.blank, session.turns) == (SessionStatus.IDLE, False, 0)
    answer = Message.objects.get(session=session, role="assistant")
    assert "received the handoff brief" in answer.content
    assert "Goal: Ship the parser." in answer.content
    assert "I will continue with: Run the tests." in answer.content


def test_start_agent_refuses_an_empty_session(session: Session):
    with pytest.raises(lifecycle.TurnRefused, match="no message"):
        lifecycle.start_agent(session)
    session.refresh_from_db()
    assert (session.status, session.blank) == (SessionStatus.IDLE, True)


def test_start_agent_refuses_an_archived_session(session: Session):
    log.append_message(session, role="user", source_kind="plugin", content="# Brief")
    Session.objects.filter(pk=session.pk).update(archived=True)
    with pytest.raises(lifecycle.TurnRefused, match="archived"):
        lifecycle.start_agent(session)
    assert Session.objects.get(pk=session.pk).blank


class RefusingQueue:
    """Stands in for ``host.tasks.run_agent_turn`` on a queue that is down."""

    def enqueue(self, session_id: str, turn_id: int) -> None:
        raise ConnectionError("queue down")


def test_a_failing_enqueue_leaves_the_session_unstarted(
    session: Session, monkeypatch: pytest.MonkeyPatch, settings: Any
):
    settings.HOST_TASKS_RUN_IN_CALLER = False  # a queueing backend: enqueued in the transaction
    log.append_message(session, role="user", source_kind="plugin", content="# Brief")
    monkeypatch.setattr(lifecycle.tasks, "run_agent_turn", RefusingQueue())

    with pytest.raises(ConnectionError):
        lifecycle.start_agent(session)

    session.refresh_from_db()
    assert (session.status, session.blank) == (SessionStatus.IDLE, True)
    assert not Activity.objects.filter(session=session).exists()


# --- every queued input gets its own answer ---------------------------------------------


@pytest.fixture
def queued_tasks(settings: Any) -> None:
    """A queue that only stores tasks, so inputs can arrive while a turn waits for the worker."""
    settings.TASKS = {"default": {"BACKEND": "django_tasks.backends.dummy.DummyBackend"}}


def work_off(session: Session) -> list[str]:
    """Run the worker's turns until the session is idle; return the assistant answers."""
    for _ in range(5):
        session.refresh_from_db()
        if session.status != SessionStatus.RUNNING:
            break
        tasks.run_agent_turn.call(str(session.pk))
    answers = Message.objects.filter(session=session, role="assistant").order_by("seq")
    return [m.content for m in answers]


@pytest.mark.usefixtures("queued_tasks")
def test_two_messages_posted_back_to_back_each_get_their_answer(session: Session):
    intake.post_message(session, content="first question")
    intake.post_message(session, content="second question")

    answers = work_off(session)

    assert [a.split("”")[0] for a in answers] == [
        "Offline agent: received your message “first question",
        "Offline agent: received your message “second question",
    ]
    session.refresh_from_db()
    assert (session.turns, session.status) == (2, SessionStatus.IDLE)


@pytest.mark.usefixtures("queued_tasks")
def test_two_relayed_messages_each_get_their_answer_and_count_a_turn(session: Session):
    relay = SessionController().relay
    relay(session, role="user", content="relayed one", relay_id="r1")
    relay(session, role="user", content="relayed two", relay_id="r2")

    answers = work_off(session)

    assert [a.split("”")[0] for a in answers] == [
        "Offline agent: received your message “relayed one",
        "Offline agent: received your message “relayed two",
    ]
    session.refresh_from_db()
    assert session.turns == 2


@pytest.mark.usefixtures("queued_tasks")
def test_the_model_sees_each_input_after_the_answers_before_it(session: Session, fake_llm: Any):
    intake.post_message(session, content="first question")
    intake.post_message(session, content="second question")

    work_off(session)

    first, second = (r["body"]["messages"] for r in fake_llm.requests)
    assert [m["content"] for m in first[1:]] == ["first question"]
    assert [m["content"] for m in second[1:]] == [
        "first question",
        "Model answer.",
        "second question",
    ]
