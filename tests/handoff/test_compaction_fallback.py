"""docs/spec.md, Compaction: the host's compaction is the fallback when handoff does not apply."""

from __future__ import annotations

import pytest
from django.db import transaction
from handoff_support import add_turn, auto_handoff, make_source

from handoff import operations
from handoff.models import MainState
from host.models import Session

pytestmark = pytest.mark.django_db(transaction=True)

WINDOW = 200_000  # claude-sonnet-4-5 in settings.HOST_CONTEXT_WINDOWS


def near_the_window() -> Session:
    """An idle main whose latest call used 95 % of its model's window."""
    return make_source(tokens=int(WINDOW * 0.95))


def test_near_the_window_without_handoff_the_host_compacts():
    session = near_the_window()
    assert operations.compact_if_due(session.pk) is True
    session.refresh_from_db()
    assert session.compactions == 1


def test_far_from_the_window_nothing_is_compacted():
    session = make_source(tokens=10_000)
    assert operations.compact_if_due(session.pk) is False
    session.refresh_from_db()
    assert session.compactions == 0


def test_idle_compacts_when_automatic_handoff_is_off(immediate_tasks):
    session = near_the_window()
    with transaction.atomic():
        add_turn(session, "one more", tokens=int(WINDOW * 0.95))
    operations.on_session_idle(Session, session)
    session.refresh_from_db()
    assert session.compactions == 1


def test_idle_hands_off_instead_of_compacting_when_handoff_applies(immediate_tasks):
    session = near_the_window()
    auto_handoff(True)
    MainState.objects.create(session=session, enabled=True)
    operations.on_session_idle(Session, session)
    session.refresh_from_db()
    assert session.compactions == 0
    assert hasattr(session, "redirect")


def test_without_a_compaction_service_automatic_compaction_is_off(settings):
    settings.HANDOFF_SERVICES = {**settings.HANDOFF_SERVICES, "compaction": None}
    session = near_the_window()
    assert operations.compact_if_due(session.pk) is False
    session.refresh_from_db()
    assert session.compactions == 0
