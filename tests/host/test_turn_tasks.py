"""How an agent turn's task is enqueued follows ``HOST_TASKS_RUN_IN_CALLER``, not the task
backend's class: a backend that runs tasks in the caller gets the task after commit, a queueing
one stores it with the turn."""

from __future__ import annotations

import pytest
from django.contrib.auth.models import AbstractBaseUser
from django_tasks_db.models import DBTaskResult

from host import intake
from host.models import Activity, Message, Session
from host.sessions import create_session

pytestmark = pytest.mark.django_db

QUEUE = {"default": {"BACKEND": "django_tasks_db.DatabaseBackend"}}
INLINE = {"default": {"BACKEND": "django_tasks.backends.immediate.ImmediateBackend"}}


@pytest.fixture
def session(owner: AbstractBaseUser) -> Session:
    return create_session(owner, title="Work")


def answers(session: Session) -> int:
    return Message.objects.filter(session=session, role="assistant").count()


def test_a_queueing_backend_stores_the_task_with_the_turn(session, settings):
    settings.TASKS, settings.HOST_TASKS_RUN_IN_CALLER = QUEUE, False
    intake.post_message(session, content="question")
    (queued,) = DBTaskResult.objects.all()
    assert Activity.objects.get(session=session).task_id == str(queued.id)


def test_tasks_run_in_the_caller_are_enqueued_after_commit(
    session, settings, django_capture_on_commit_callbacks
):
    settings.TASKS, settings.HOST_TASKS_RUN_IN_CALLER = INLINE, True
    with django_capture_on_commit_callbacks(execute=True) as callbacks:
        intake.post_message(session, content="question")
        assert answers(session) == 0  # nothing ran inside the caller's transaction
    assert callbacks
    assert answers(session) == 1


def test_the_setting_decides_whatever_the_backend(session, settings):
    settings.TASKS, settings.HOST_TASKS_RUN_IN_CALLER = QUEUE, True
    intake.post_message(session, content="question")
    assert not DBTaskResult.objects.exists()  # waits for the commit
