"""docs/spec.md, Stability: changes during summarizing abort cleanly.

Each change is made by a fault hook at the ``summarize`` checkpoint, i.e. while the summary is
being written; the attempt must end ``failed`` with the source untouched and no successor.
"""

from __future__ import annotations

from collections.abc import Callable

import pytest
from handoff_support import add_turn, auto_handoff, make_source

from handoff import attempt as attempts
from handoff import operations, services, store
from handoff.core.phases import Phase
from handoff.models import HandoffRecord, MainState, Redirect
from host import runtime
from host.models import Session

pytestmark = pytest.mark.django_db


def aborted(source: Session, reason: str) -> None:
    record = HandoffRecord.objects.get(source=source)
    assert record.phase == Phase.FAILED
    assert reason in record.error
    assert record.target_id is None
    assert Redirect.objects.count() == 0
    assert Session.objects.count() == 1
    source.refresh_from_db()
    assert source.title == "Refactor the parser"


def automatic(source: Session) -> attempts.AttemptOutcome:
    auto_handoff(True)
    MainState.objects.create(session=source, enabled=True)
    return attempts.run(source.pk, manual=False)


def during_summary(at_point: Callable, change: Callable[[attempts.Attempt], object]) -> None:
    at_point("summarize", change)


def test_autohandoff_turned_off_during_summarizing(at_point):
    source = make_source()
    during_summary(at_point, lambda a: services.settings_store().save(auto_handoff=False))
    assert automatic(source).outcome == "failed"
    aborted(source, "autoHandoff was turned off")


def test_session_switch_disabled_during_summarizing(at_point):
    source = make_source()
    during_summary(at_point, lambda a: store.update_main_state(source.pk, enabled=False))
    automatic(source)
    aborted(source, "automatic handoff was disabled for this session")


def test_manual_request_withdrawn_during_summarizing(at_point):
    source = make_source()
    during_summary(at_point, lambda a: operations.disable(source.pk))
    operations.run_attempt(source.pk, manual=True)
    aborted(source, "the manual request was withdrawn")


def test_new_message_during_summarizing(at_point):
    source = make_source()
    during_summary(at_point, lambda a: add_turn(source, "Also handle unicode.", tokens=10))
    operations.run_attempt(source.pk, manual=True)
    aborted(source, "the session changed")


def test_blocker_appearing_during_summarizing(at_point):
    source = make_source()
    during_summary(at_point, lambda a: runtime.begin_activity(source, "job", "indexing"))
    operations.run_attempt(source.pk, manual=True)
    aborted(source, "blocked by activity:job")


def test_session_archived_during_summarizing(at_point):
    source = make_source()
    during_summary(at_point, lambda a: Session.objects.filter(pk=source.pk).update(archived=True))
    operations.run_attempt(source.pk, manual=True)
    record = HandoffRecord.objects.get()
    assert (record.phase, "the session was archived" in record.error) == (Phase.FAILED, True)


def test_session_disposed_during_summarizing(at_point):
    source = make_source()
    during_summary(at_point, lambda a: runtime.dispose(source))
    operations.run_attempt(source.pk, manual=True)
    record = HandoffRecord.objects.get()
    assert (record.phase, "the session was disposed" in record.error) == (Phase.FAILED, True)
