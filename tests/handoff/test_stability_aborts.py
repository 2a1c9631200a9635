"""docs/spec.md, Stability: changes during summarizing abort cleanly.

Each change is made by a fault hook at the ``summarize`` checkpoint, i.e. while the summary is
being written (or, last, while the successor is being created); the attempt must end ``failed``
with the source untouched and no successor.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from handoff_support import add_turn, auto_handoff, make_source

from handoff import attempt as attempts
from handoff import inheritance, operations, services, store
from handoff.core.phases import Phase
from handoff.models import HandoffRecord, MainState, Redirect
from host import lifecycle
from host.models import InboxItem, Session, Team
from host.sessions import create_session

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
    during_summary(at_point, lambda a: lifecycle.begin_activity(source, "job", "indexing"))
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
    during_summary(at_point, lambda a: lifecycle.dispose(source))
    operations.run_attempt(source.pk, manual=True)
    record = HandoffRecord.objects.get()
    assert (record.phase, "the session was disposed" in record.error) == (Phase.FAILED, True)


def _inbox_item(source: Session) -> object:
    return InboxItem.objects.create(session=source, stage="next-turn", content="later")


def _subagent(source: Session) -> object:
    return create_session(source.owner, parent=source, title="helper")


def _team_of_two(source: Session) -> None:
    team = Team.objects.create(lead=source)
    team.members.add(source, create_session(source.owner, title="peer"))


@pytest.mark.parametrize(
    ("blocker", "named"),
    [(_inbox_item, "pending-inbox"), (_subagent, "owned-agent:"), (_team_of_two, "team-roster")],
)
def test_each_blocker_appearing_during_summarizing_fails_the_attempt(at_point, blocker, named):
    source = make_source()
    during_summary(at_point, lambda a: blocker(source))
    operations.run_attempt(source.pk, manual=True)
    record = HandoffRecord.objects.get(source=source)
    assert record.phase == Phase.FAILED and named in record.error
    assert record.target_id is None and Redirect.objects.count() == 0


def test_a_custom_permission_preset_set_during_summarizing_fails_an_automatic_attempt(at_point):
    source = make_source()
    during_summary(
        at_point,
        lambda a: Session.objects.filter(pk=source.pk).update(permission_preset="custom"),
    )
    assert automatic(source).outcome == "failed"
    aborted(source, "custom-permissions-require-manual-transfer")


def test_a_change_while_the_draft_is_made_fails_the_attempt_with_nothing_created(monkeypatch):
    """The check after the summary is carried by the record's move to ``prepared``: a message
    that lands after the summary, while the successor is being created, fails it too."""
    source = make_source()
    real_apply = inheritance.apply

    def apply(*args: Any) -> list[dict[str, Any]]:
        add_turn(source, "One more thing.", tokens=10)
        return real_apply(*args)

    monkeypatch.setattr(inheritance, "apply", apply)
    operations.run_attempt(source.pk, manual=True)
    aborted(source, "prepare: not stable: the session changed")
