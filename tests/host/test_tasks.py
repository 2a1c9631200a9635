"""host.tasks.run_agent_turn: the agent answers, the turn ends; a failure still ends it."""

from __future__ import annotations

from typing import Any

import pytest
from django.contrib.auth.models import AbstractBaseUser

from host import lifecycle, log, tasks
from host.models import Message, Session, SessionStatus
from host.sessions import create_session

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("immediate_tasks")]


@pytest.fixture
def session(django_user_model: Any) -> Session:
    owner: AbstractBaseUser = django_user_model.objects.create_user("ada")
    session = create_session(owner)
    message = log.append_message(session, role="user", source_kind="user", content="hello")
    lifecycle.begin_turn(session, user_initiated=True, message=message)
    return session


def test_the_turn_ends_with_the_agents_answer(session: Session):
    tasks.run_agent_turn.call(str(session.pk))
    session.refresh_from_db()
    assert session.status == SessionStatus.IDLE
    assert Message.objects.filter(session=session, role="assistant").count() == 1


def test_a_failing_agent_ends_the_turn_with_a_notice(session: Session, fake_llm: Any):
    fake_llm.status = 500
    tasks.run_agent_turn.call(str(session.pk))
    session.refresh_from_db()
    assert session.status == SessionStatus.IDLE
    notice = Message.objects.get(session=session, role="system")
    assert notice.content.startswith("The agent could not answer (")
    assert "post again to retry" in notice.content
    assert not Message.objects.filter(session=session, role="assistant").exists()


def test_a_session_that_is_not_running_is_left_alone(session: Session):
    lifecycle.end_turn(session)
    tasks.run_agent_turn.call(str(session.pk))
    assert not Message.objects.filter(session=session, role="assistant").exists()
