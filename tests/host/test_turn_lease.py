"""host.turn_lease and lifecycle.end_lost_turns: a turn whose runner died ends.

The turns here are queued on the database backend (the default), as ``make run`` queues them;
the tests play the worker: they claim a turn's task row, renew or let its lease run out, and
run the sweep the task worker runs.
"""

from __future__ import annotations

import time
from datetime import timedelta
from typing import Any

import pytest
from django.contrib.auth.models import AbstractBaseUser
from django.utils import timezone
from django_tasks_db.compat import TaskResultStatus
from django_tasks_db.models import DBTaskResult

from host import agent, intake, lifecycle, tasks, turn_lease
from host.models import Activity, ActivityKind, Message, Role, Session, SessionStatus
from host.sessions import create_session
from host.signals import session_idle

pytestmark = pytest.mark.django_db


@pytest.fixture
def session(owner: AbstractBaseUser) -> Session:
    return create_session(owner, title="Work")


def open_turn(session: Session) -> Activity:
    return Activity.objects.get(session=session, kind=ActivityKind.TURN, ended__isnull=True)


def claimed(turn: Activity) -> Activity:
    """Mark the turn's task row taken by a worker, as ``db_worker`` claims it."""
    DBTaskResult.objects.filter(pk=turn.task_id).update(
        status=TaskResultStatus.RUNNING, started_at=timezone.now(), worker_ids=["killed"]
    )
    return turn


def expire(turn: Activity) -> Activity:
    """Let the turn's lease run out (its runner stopped renewing it)."""
    Activity.objects.filter(pk=turn.pk).update(lease_expires=timezone.now() - timedelta(seconds=1))
    return turn


def texts(session: Session, role: str) -> list[str]:
    return list(
        Message.objects.filter(session=session, role=role)
        .order_by("seq")
        .values_list("content", flat=True)
    )


def test_a_turn_opens_with_a_lease_and_the_task_that_answers_it(session: Session):
    intake.post_message(session, content="question")

    turn = open_turn(session)
    assert turn.lease_expires is not None and turn.lease_expires > timezone.now()
    row = DBTaskResult.objects.get(pk=turn.task_id)
    assert row.args_kwargs["args"] == [str(session.pk), turn.pk]


def test_a_lost_turn_ends_with_a_notice_and_the_queued_inputs_become_turns(session: Session):
    intake.post_message(session, content="first")
    lost = expire(claimed(open_turn(session)))
    intake.post_message(session, content="second")
    intake.post_message(session, content="third")

    assert lifecycle.end_lost_turns() == 1

    (notice,) = texts(session, Role.SYSTEM)
    assert "stopped without finishing" in notice and "message #1" in notice
    assert "not run again" in notice
    assert Activity.objects.get(pk=lost.pk).ended is not None
    next_turn = open_turn(session)
    assert next_turn.detail == "message #3"  # "second": #2 is the first turn's start event
    for _ in range(2):
        tasks.run_agent_turn.call(str(session.pk), open_turn(session).pk)
    session.refresh_from_db()
    assert session.status == SessionStatus.IDLE
    answers = texts(session, Role.ASSISTANT)
    assert len(answers) == 2 and "second" in answers[0] and "third" in answers[1]


def test_the_session_goes_idle_when_nothing_is_queued(
    session: Session, capture_signal: Any, django_capture_on_commit_callbacks: Any
):
    idle = capture_signal(session_idle)
    intake.post_message(session, content="only")
    expire(claimed(open_turn(session)))

    with django_capture_on_commit_callbacks(execute=True):
        lifecycle.end_lost_turns()

    session.refresh_from_db()
    assert session.status == SessionStatus.IDLE
    assert [sent["session"].pk for sent in idle] == [session.pk]


def test_a_turn_whose_lease_is_renewed_is_not_ended(session: Session):
    intake.post_message(session, content="slow")
    turn = claimed(open_turn(session))
    Activity.objects.filter(pk=turn.pk).update(lease_expires=timezone.now() + timedelta(seconds=1))

    assert turn_lease.renew(turn.pk)
    time.sleep(1.1)  # the lease it had would have run out by now

    assert lifecycle.end_lost_turns() == 0
    assert open_turn(session).pk == turn.pk


def test_a_turn_whose_task_still_waits_in_the_queue_is_not_ended(session: Session):
    intake.post_message(session, content="waiting for a worker")
    expire(open_turn(session))  # queued longer than a lease: every worker is busy

    assert lifecycle.end_lost_turns() == 0
    assert Session.objects.get(pk=session.pk).status == SessionStatus.RUNNING


def test_the_late_task_of_a_lost_turn_leaves_the_next_turn_alone(session: Session):
    intake.post_message(session, content="first")
    lost = expire(claimed(open_turn(session)))
    intake.post_message(session, content="second")
    lifecycle.end_lost_turns()
    next_turn = open_turn(session)

    tasks.run_agent_turn.call(str(session.pk), lost.pk)

    assert not turn_lease.renew(lost.pk)
    assert open_turn(session).pk == next_turn.pk
    assert texts(session, Role.ASSISTANT) == []


@pytest.mark.django_db(transaction=True)
def test_the_heartbeat_renews_the_lease_while_the_agent_runs(session: Session, settings: Any):
    settings.HOST_TURN_LEASE = 0.3  # renewed every 0.1 s
    intake.post_message(session, content="slow")
    turn = open_turn(session)
    first = turn.lease_expires
    assert first is not None

    with turn_lease.heartbeat(turn.pk):
        deadline = time.monotonic() + 10
        while Activity.objects.get(pk=turn.pk).lease_expires == first:
            assert time.monotonic() < deadline, "the heartbeat never renewed the lease"
            time.sleep(0.05)

    renewed = Activity.objects.get(pk=turn.pk).lease_expires
    assert renewed is not None and renewed > first


def test_an_answer_written_after_the_lease_ran_out_is_dropped_and_the_turn_ends_as_lost(
    session: Session, monkeypatch: pytest.MonkeyPatch
):
    """The worker stalled in the model call past its lease (the stall is played by the lease
    running out during the call): the answer is not written, the turn ends as lost."""
    intake.post_message(session, content="first")
    turn = claimed(open_turn(session))
    intake.post_message(session, content="second")
    reply = agent.reply

    def stalled(stalled_session: Session) -> Message:
        expire(turn)  # the heartbeat could not renew: the worker was stopped past the lease
        return reply(stalled_session)

    monkeypatch.setattr(agent, "reply", stalled)

    tasks.run_agent_turn.call(str(session.pk), turn.pk)

    assert texts(session, Role.ASSISTANT) == []
    (notice,) = texts(session, Role.SYSTEM)
    assert "(message #1) stopped without finishing" in notice
    assert Activity.objects.get(pk=turn.pk).ended is not None
    assert open_turn(session).pk != turn.pk  # the queued input is the next turn


def test_a_lease_that_ran_out_is_not_renewed(session: Session):
    intake.post_message(session, content="first")
    turn = expire(claimed(open_turn(session)))
    assert not turn_lease.renew(turn.pk)
    assert turn_lease.take(turn.pk)  # a task that waited in the queue still takes its turn
