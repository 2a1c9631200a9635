"""The switches' lifecycle (docs/spec.md, Switches; State)."""

from __future__ import annotations

import re

import pytest
from django_tasks_db.models import DBTaskResult
from handoff_support import add_turn, auto_handoff, boom, make_source, make_user

from follower.events import deliver
from follower.models import FollowerEvent
from handoff import attempt as attempts
from handoff import operations, services, store
from handoff.core.phases import Phase
from handoff.exceptions import AlreadyHandedOff, NotAMain, SessionNotFound
from handoff.models import HandoffRecord, MainState, Redirect
from host import lifecycle, log
from host.intake import post_message
from host.models import Message, Session
from host.sessions import create_session
from host.signals import session_idle
from host.usage import Usage

pytestmark = pytest.mark.django_db


def test_auto_handoff_defaults_to_false():
    assert services.settings_store().load().auto_handoff is False


def test_enable_sets_enabled_and_evaluates_at_once(immediate_tasks):
    auto_handoff(True)
    source = make_source()
    report = operations.enable(source.pk)
    assert HandoffRecord.objects.get(source=source).phase == Phase.STARTED
    assert report["redirect"] is not None


def test_enable_alone_does_not_hand_off_without_the_global_switch(immediate_tasks):
    source = make_source()
    report = operations.enable(source.pk)
    assert report["enabled"] is True
    assert not HandoffRecord.objects.exists()


def test_global_switch_alone_does_not_hand_off(immediate_tasks):
    auto_handoff(True)
    source = make_source()
    MainState.objects.create(session=source)
    session_idle.send(sender=Session, session=source)
    assert not HandoffRecord.objects.exists()


def test_now_bypasses_the_global_switch(immediate_tasks):
    source = make_source(tokens=10)
    operations.request_now(source.pk)
    record = HandoffRecord.objects.get()
    assert (record.phase, record.reason) == (Phase.STARTED, "manual")


def test_now_does_not_register_future_eligibility(immediate_tasks):
    source = make_source()
    operations.request_now(source.pk)
    assert MainState.objects.get(session=source).enabled is False


def test_requested_is_cleared_when_the_attempt_ends(immediate_tasks, settings):
    settings.HANDOFF_SERVICES = {**settings.HANDOFF_SERVICES, "llm": None}
    source = make_source()
    report = operations.request_now(source.pk)
    assert HandoffRecord.objects.get().phase == Phase.FAILED
    assert report["requested"] is False


def test_now_never_waits_for_the_summary():
    source = make_source()
    report = operations.request_now(source.pk)
    assert report["requested"] is True
    assert not HandoffRecord.objects.exists()
    task = DBTaskResult.objects.get()
    assert task.args_kwargs["args"] == [str(source.pk), True]


def test_disable_clears_both_switches():
    source = make_source()
    operations.enable(source.pk)
    MainState.objects.filter(session=source).update(requested=True)
    report = operations.disable(source.pk)
    assert (report["enabled"], report["requested"]) == (False, False)


def test_disable_on_a_handed_off_source_stops_forwarding():
    source = make_source()
    operations.run_attempt(source.pk, manual=True)
    successor_id = Redirect.objects.get(source=source).destination_id
    report = operations.disable(source.pk)
    assert report["redirect"] is None
    result = post_message(source, content="Are you still there?")
    assert result.forwarded_to is None
    assert not Message.objects.filter(session_id=successor_id, source_kind="relay").exists()


def test_a_failed_write_leaves_the_last_stored_state_and_a_retry_starts_from_it(monkeypatch):
    # docs/spec.md, State: writes are rollback-aware; a failed write restores the durable state.
    source = make_source()
    operations.enable(source.pk)  # the global switch is off: nothing runs
    other = create_session(source.owner, cwd=source.cwd)
    store.add_redirect(source.pk, other.pk, None)

    def broken(session_id: object) -> bool:
        raise OSError("disk full")

    monkeypatch.setattr(store, "remove_redirect", broken)
    with pytest.raises(OSError):
        operations.disable(source.pk)
    monkeypatch.undo()
    report = operations.status(source.pk)
    assert (report["enabled"], report["redirect"] is not None) == (True, True)
    assert post_message(source, content="Still there?").forwarded_to == str(other.pk)

    report = operations.disable(source.pk)
    assert (report["enabled"], report["redirect"]) == (False, None)
    assert post_message(source, content="And now?").forwarded_to is None


def test_failed_automatic_attempt_is_not_retried_at_the_same_revision(immediate_tasks, at_point):
    auto_handoff(True)
    source = make_source()
    at_point("summarize", boom())
    operations.enable(source.pk)
    assert HandoffRecord.objects.get().phase == Phase.FAILED
    outcome = attempts.run(source.pk, manual=False)
    assert outcome.outcome == "no-trigger"
    assert "already ran at revision" in outcome.detail
    session_idle.send(sender=Session, session=source)
    assert HandoffRecord.objects.count() == 1


def test_failed_automatic_attempt_runs_again_at_a_later_revision(
    immediate_tasks, at_point, settings
):
    settings.HANDOFF_BACKOFF_BASE = 0  # no backoff (tests/handoff/test_backoff.py has it)
    auto_handoff(True)
    source = make_source()
    fail_once = [boom()]
    at_point("summarize", lambda a: fail_once.pop()(a) if fail_once else None)
    operations.enable(source.pk)
    add_turn(source, "Continue with /work/demo/src/lexer.py.")
    session_idle.send(sender=Session, session=source)
    assert sorted(HandoffRecord.objects.values_list("phase", flat=True)) == ["failed", "started"]


def test_failed_automatic_attempt_runs_again_at_once_after_enable(immediate_tasks, at_point):
    auto_handoff(True)
    source = make_source()
    fail_once = [boom()]
    at_point("summarize", lambda a: fail_once.pop()(a) if fail_once else None)
    operations.enable(source.pk)
    operations.enable(source.pk)
    assert sorted(HandoffRecord.objects.values_list("phase", flat=True)) == ["failed", "started"]


def test_deferred_attempt_is_retried_on_the_next_idle(immediate_tasks):
    auto_handoff(True)
    source = make_source()
    activity = lifecycle.begin_activity(source, "compaction")
    report = operations.enable(source.pk)
    assert report["deferred"] == ["activity:compaction"]
    activity.ended = activity.started
    activity.save()
    session_idle.send(sender=Session, session=source)
    assert HandoffRecord.objects.get().phase == Phase.STARTED
    assert MainState.objects.get(session=source).deferred == []


def test_now_on_a_running_session_waits_for_idle(
    immediate_tasks, django_capture_on_commit_callbacks
):
    # docs/spec.md, Switches: no mid-turn migration; the handoff waits for idle.
    source = make_source()
    lifecycle.begin_turn(source, user_initiated=False)
    report = operations.request_now(source.pk)
    assert report["requested"] is True
    assert not HandoffRecord.objects.exists()
    with django_capture_on_commit_callbacks(execute=True):
        lifecycle.end_turn(source)
    assert HandoffRecord.objects.get(source=source).phase == Phase.STARTED
    assert MainState.objects.get(session=source).requested is False


def test_deferred_attempt_is_retried_when_a_blocker_clears(
    immediate_tasks, django_capture_on_commit_callbacks
):
    auto_handoff(True)
    source = make_source()
    helper = create_session(make_user(), cwd=source.cwd, parent=source)
    assert operations.enable(source.pk)["deferred"] == [f"owned-agent:{helper.pk}"]
    with django_capture_on_commit_callbacks(execute=True):
        lifecycle.dispose(helper)
    assert HandoffRecord.objects.get(source=source).phase == Phase.STARTED


def test_deferred_manual_request_stays_requested_and_is_retried(
    immediate_tasks, django_capture_on_commit_callbacks
):
    source = make_source()
    activity = lifecycle.begin_activity(source, "job")
    report = operations.request_now(source.pk)
    assert (report["requested"], report["deferred"]) == (True, ["activity:job"])
    with django_capture_on_commit_callbacks(execute=True):
        lifecycle.end_activity(activity)
    assert HandoffRecord.objects.get().phase == Phase.STARTED
    assert MainState.objects.get(session=source).requested is False


def test_custom_permissions_defer_automatic_attempts_only(immediate_tasks):
    auto_handoff(True)
    source = make_source(permission_preset="custom", approval_policy="on-request")
    report = operations.enable(source.pk)
    assert report["deferred"] == ["custom-permissions-require-manual-transfer"]
    assert not HandoffRecord.objects.exists()
    operations.request_now(source.pk)
    assert HandoffRecord.objects.get().phase == Phase.STARTED


def test_successor_inherits_enabled_so_a_continuous_task_keeps_handing_off(
    immediate_tasks, django_capture_on_commit_callbacks
):
    auto_handoff(True)
    source = make_source()
    with django_capture_on_commit_callbacks(execute=True):
        operations.enable(source.pk)
    successor = Session.objects.get(pk=Redirect.objects.get(source=source).destination_id)
    for i in range(5):
        add_turn(successor, f"Step {i}: edit /work/demo/src/step_{i}.py", tokens=150_000)
    session_idle.send(sender=Session, session=successor)
    assert Redirect.objects.filter(source=successor).exists()


def test_min_turns_stop_a_successor_chain(immediate_tasks, django_capture_on_commit_callbacks):
    # docs/spec.md, Turns and capacity: handoffMinTurns stops successor chains.
    auto_handoff(True)
    source = make_source()
    with django_capture_on_commit_callbacks(execute=True):
        operations.enable(source.pk)
    successor = Session.objects.get(pk=Redirect.objects.get(source=source).destination_id)
    log.append_message(
        successor,
        role="assistant",
        source_kind="assistant",
        content="Working on it.",
        usage=Usage(uncached_input=150_000, output=100),
    )
    successor.refresh_from_db()
    session_idle.send(sender=Session, session=successor)
    report = operations.status(successor.pk)
    assert (report["enabled"], report["turns"], report["tokens"]["value"]) == (True, 0, 150_000)
    assert not HandoffRecord.objects.filter(source=successor).exists()
    assert report["redirect"] is None


def test_operations_refuse_a_subagent_and_an_unknown_session():
    source = make_source()
    helper = create_session(make_user(), cwd=source.cwd, parent=source)
    with pytest.raises(NotAMain, match="subagent"):
        operations.request_now(helper.pk)
    with pytest.raises(SessionNotFound):
        operations.enable("00000000-0000-0000-0000-000000000000")
    assert not MainState.objects.exists()


def test_now_on_a_handed_off_source_is_refused_with_nothing_changed():
    source = make_source()
    operations.run_attempt(source.pk, manual=True)
    with pytest.raises(AlreadyHandedOff, match="disable"):
        operations.request_now(source.pk)
    assert MainState.objects.get(session=source).requested is False


def test_deferred_is_cleared_when_a_blocker_clears_and_no_attempt_can_run(
    immediate_tasks, django_capture_on_commit_callbacks
):
    # The status must not keep showing blockers of an attempt that will not run any more.
    auto_handoff(True)
    source = make_source()
    helper = create_session(make_user(), cwd=source.cwd, parent=source)
    assert operations.enable(source.pk)["deferred"] == [f"owned-agent:{helper.pk}"]
    auto_handoff(False)
    with django_capture_on_commit_callbacks(execute=True):
        lifecycle.dispose(helper)
    assert not HandoffRecord.objects.exists()
    assert operations.status(source.pk)["deferred"] == []


@pytest.mark.parametrize("choose", [operations.review_on, operations.review_off])
def test_the_review_switch_reaches_the_conversations_other_tabs(choose):
    source = make_source()
    choose(source.pk)
    deliver(source.owner_id)  # what the commit runs: the panel is rendered then
    event = FollowerEvent.objects.filter(user=source.owner, kind="handoff.switch").get()
    [panel] = [f["html"] for f in event.payload["fragments"] if 'id="handoff-panel"' in f["html"]]
    switch = re.search(r'<input[^>]*id="handoff-review-switch"[^>]*>', panel)
    assert switch is not None
    assert ("checked" in switch.group(0)) is (choose is operations.review_on)
