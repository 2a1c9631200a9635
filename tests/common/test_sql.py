"""``common.sql``: one statement bumps a counter and returns what is stored; a transaction the
database killed runs again."""

from __future__ import annotations

import threading
import uuid
from typing import Any

import pytest
from django.db import connection, connections
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


@pytest.mark.postgres
@pytest.mark.django_db(transaction=True)
def test_a_transaction_killed_by_a_deadlock_runs_again_and_both_writers_finish(
    django_user_model: Any,
):
    owner = django_user_model.objects.create_user("ada")
    one, two = (Session.objects.create(owner=owner) for _ in range(2))
    meet = threading.Barrier(2)
    runs: list[str] = []
    errors: list[BaseException] = []

    @sql.retried_transaction
    def bump(name: str, first: Session, second: Session) -> None:
        runs.append(name)
        sql.increment(Session, "id", first.pk, "revision")
        if runs.count(name) == 1:  # the first runs hold one row each, then want the other's
            meet.wait(timeout=10)
        sql.increment(Session, "id", second.pk, "revision")

    def writer(name: str, first: Session, second: Session) -> None:
        try:
            bump(name, first, second)
        except BaseException as exc:  # noqa: BLE001 (every failure is the test's finding)
            errors.append(exc)
        finally:
            connections.close_all()

    threads = [
        threading.Thread(target=writer, args=("one-two", one, two)),
        threading.Thread(target=writer, args=("two-one", two, one)),
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()

    assert errors == []
    assert len(runs) == 3  # PostgreSQL killed one of the first two runs; it ran again
    assert [s.revision for s in Session.objects.filter(pk__in=[one.pk, two.pk])] == [2, 2]
