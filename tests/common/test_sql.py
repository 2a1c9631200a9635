"""``common.sql.increment``: one statement bumps a counter and returns what is stored."""

from __future__ import annotations

import uuid
from typing import Any

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from common import sql
from host.models import Session


@pytest.fixture
def session(django_user_model: Any) -> Session:
    """A session to count on (``revision`` and ``turns`` 0)."""
    return Session.objects.create(owner=django_user_model.objects.create_user("ada"))


def test_increment_returns_the_stored_values_after_the_bump(session: Session):
    with CaptureQueriesContext(connection) as queries:
        assert sql.increment(Session, "id", session.pk, "revision", "turns") == (1, 0)
    assert len(queries) == 1
    session.refresh_from_db()
    assert session.revision == 1


@pytest.mark.django_db
def test_increment_of_a_missing_row_is_none_and_changes_nothing():
    assert sql.increment(Session, "id", uuid.uuid4(), "revision") is None
    assert not Session.objects.exists()


def test_a_name_that_is_no_column_is_refused():
    with pytest.raises(ValueError, match="not a column"):
        sql.increment(Session, "messages", uuid.uuid4(), "revision")


def test_increment_by_adds_that_many(session: Session):
    assert sql.increment(Session, "id", session.pk, "revision", by=250) == (250,)
    assert sql.increment(Session, "id", session.pk, "revision") == (251,)
