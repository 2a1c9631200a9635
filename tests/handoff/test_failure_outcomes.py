"""docs/spec.md, Failure outcomes: one test per row of the table, each fault injected."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.db import connection, transaction
from django.utils import timezone
from handoff_support import (
    add_turn,
    boom,
    make_source,
    make_user,
    target_of,
)

from handoff import attempt as attempts
from handoff import operations, recovery, services, store
from handoff.core.phases import Phase
from handoff.models import HandoffRecord, MainState, Redirect
from host import lifecycle
from host.models import Session
from host.sessions import create_session

pytestmark = pytest.mark.django_db


def snapshot(session: Session) -> tuple:
    session.refresh_from_db()
    return (session.title, session.archived, session.status, Redirect.objects.count())


def drafts(source: Session) -> list[Session]:
    return list(Session.objects.exclude(pk=source.pk).filter(parent__isnull=True))


def run_now(source: Session) -> attempts.AttemptOutcome:
    return operations.run_attempt(source.pk, manual=True)


# Row: Guard, blockers, no trigger -> no record; blockers written into deferred.


@pytest.mark.parametrize(
    "setup, refusal",
    [
        ("subagent", "the session is a subagent"),
        ("not-registered", "the session is not a registered main"),
        ("archived", "the session is archived"),
        ("redirected", "the session has already been handed off"),
        ("running", "the session is not idle"),
        (
            "other-runtime",
            "the session runs in its own runtime (Claude Code or Codex) without the product's "
            "hooks: it is handed off only when asked (/handoff now); install them (manage.py "
            "agent_hooks install) for automatic handoffs",
        ),
    ],
)
def test_guard_refusal_makes_no_record(setup, refusal):
    source = make_source()
    session = source
    if setup == "subagent":
        session = create_session(make_user(), cwd=source.cwd, parent=source)
        MainState.objects.create(session=session)
    elif setup != "not-registered":
        MainState.objects.create(session=source, requested=True)
    if setup == "archived":
        Session.objects.filter(pk=source.pk).update(archived=True)
    elif setup == "redirected":
        other = create_session(make_user(), cwd=source.cwd)
        store.add_redirect(source.pk, other.pk, None)
    elif setup == "running":
        Session.objects.filter(pk=source.pk).update(status="running")
    elif setup == "other-runtime":  # a followed Claude Code log, switched on, no hooks
        Session.objects.filter(pk=source.pk).update(runtime="claude")
        MainState.objects.filter(session=source).update(requested=False, enabled=True)
        services.settings_store().save(auto_handoff=True)
    outcome = attempts.run(session.pk, manual=setup != "other-runtime")
    assert (outcome.outcome, outcome.detail) == ("refused", refusal)
    assert not HandoffRecord.objects.exists()


def test_blockers_make_no_record_and_are_written_into_deferred():
    source = make_source()
    lifecycle.begin_activity(source, "job")
    outcome = run_now(source)
    assert outcome.outcome == "deferred"
    assert outcome.blockers == ["activity:job"]
    assert MainState.objects.get(session=source).deferred == ["activity:job"]
    assert not HandoffRecord.objects.exists()


def test_no_trigger_makes_no_record():
    source = make_source(tokens=1_000)
    MainState.objects.create(session=source, enabled=True)
    services.settings_store().save(auto_handoff=True)
    outcome = attempts.run(source.pk, manual=False)
    assert outcome.outcome == "no-trigger"
    assert "no trigger" in outcome.detail
    assert not HandoffRecord.objects.exists()


# Row: summarize throws or the brief fails validation -> failed; original untouched.


def test_summarize_throws_fails_with_the_original_untouched(at_point):
    source = make_source()
    before = snapshot(source)
    at_point("summarize", boom("model timed out"))
    outcome = run_now(source)
    record = HandoffRecord.objects.get()
    assert outcome.outcome == "failed"
    assert record.phase == Phase.FAILED
    assert "summarize" in record.error and "model timed out" in record.error
    assert record.target_id is None
    assert snapshot(source) == before
    assert drafts(source) == []


def test_brief_failing_validation_fails_with_nothing_created(recording_llm):
    recording_llm.answer = '{"goal": "", "decisions": "not a list"}'
    source = make_source()
    before = snapshot(source)
    outcome = run_now(source)
    record = HandoffRecord.objects.get()
    assert (outcome.outcome, record.phase) == ("failed", Phase.FAILED)
    assert "BriefError" in record.error
    assert record.brief is None
    assert snapshot(source) == before
    assert drafts(source) == []


@pytest.mark.parametrize(
    ("answer", "refusal"),
    [
        ('{"goal": "Ship \\u0000 it"}', "goal holds a NUL character (\\x00)"),
        ('{"goal": "g", "pending": ["a", "b \\ud800"]}', "pending[1] holds a lone surrogate"),
    ],
)
def test_a_brief_the_database_cannot_store_fails_at_summarize_with_nothing_created(
    recording_llm, answer, refusal
):
    recording_llm.answer = answer
    source = make_source()
    before = snapshot(source)
    outcome = run_now(source)
    record = HandoffRecord.objects.get()
    assert (outcome.outcome, record.phase, record.brief) == ("failed", Phase.FAILED, None)
    assert record.error.startswith(f"summarize: BriefError: {refusal}")
    assert "UPDATE" not in record.error and "LINE 1" not in record.error
    assert snapshot(source) == before
    assert drafts(source) == []


@pytest.mark.postgres
def test_a_database_error_fails_the_attempt_naming_what_was_refused_never_the_statement(
    at_point,
):
    def refused_by_the_database(attempt: attempts.Attempt) -> None:
        with transaction.atomic(), connection.cursor() as cursor:
            cursor.execute("SELECT 'not a number'::integer")

    source = make_source()
    at_point("flush", refused_by_the_database)
    outcome = run_now(source)
    record = HandoffRecord.objects.get()
    assert (outcome.outcome, record.phase) == ("failed", Phase.FAILED)
    assert record.error.startswith(
        "flush: the seed was not stored: DataError: invalid input syntax for type integer: "
        '"not a number"'
    )
    assert "SELECT" not in record.error and "LINE 1" not in record.error
    assert store.redirect_of(source.pk) is None


# Row: source changed before seed -> failed; draft archived (never woken).


def test_source_changed_before_seed_archives_the_draft(at_point):
    source = make_source()
    at_point("before_seed", lambda attempt: add_turn(source, "One more thing.", tokens=10))
    outcome = run_now(source)
    record = HandoffRecord.objects.get()
    assert (outcome.outcome, record.phase) == ("failed", Phase.FAILED)
    assert "seed: not stable: the session changed" in record.error
    (draft,) = drafts(source)
    assert draft.archived is True
    assert not draft.messages.exists()
    assert Redirect.objects.count() == 0
    source.refresh_from_db()
    assert source.title == "Refactor the parser"


# Row: seed flush fails -> failed; draft discarded, no redirect installed.


def test_seed_flush_fails_discards_the_draft_and_installs_no_redirect(at_point):
    source = make_source()
    at_point("flush", boom("disk full"))
    outcome = run_now(source)
    record = HandoffRecord.objects.get()
    assert (outcome.outcome, record.phase) == ("failed", Phase.FAILED)
    assert "flush" in record.error and "disk full" in record.error
    (draft,) = drafts(source)
    assert draft.archived is True
    assert Redirect.objects.count() == 0


# Row: source changed before commit -> failed; draft discarded, original untouched.


def test_source_changed_before_commit_discards_the_draft(at_point):
    source = make_source()
    at_point("before_commit", lambda attempt: add_turn(source, "Wait, also this.", tokens=10))
    outcome = run_now(source)
    record = HandoffRecord.objects.get()
    assert (outcome.outcome, record.phase) == ("failed", Phase.FAILED)
    assert "redirect: not stable: the session changed" in record.error
    (draft,) = drafts(source)
    assert draft.archived is True
    source.refresh_from_db()
    assert (source.title, source.archived, Redirect.objects.count()) == (
        "Refactor the parser",
        False,
        0,
    )


def test_source_changed_after_the_rename_rolls_the_redirect_back(at_point):
    """The last check is carried by the record's move to ``committed``, after the redirect is
    written: a message that lands after the source's rename still fails the commit, and the
    route's transaction (title, redirect) rolls back."""
    source = make_source()
    at_point("redirect", lambda attempt: add_turn(source, "And this.", tokens=10))
    outcome = run_now(source)
    record = HandoffRecord.objects.get()
    assert (outcome.outcome, record.phase) == ("failed", Phase.FAILED)
    assert "redirect: not stable: the session changed" in record.error
    (draft,) = drafts(source)
    assert draft.archived is True
    source.refresh_from_db()
    assert (source.title, Redirect.objects.count()) == ("Refactor the parser", 0)


# Row: redirect throws -> failed; draft discarded.


def test_redirect_throws_discards_the_draft(at_point):
    source = make_source()
    operations.enable(source.pk)
    before = snapshot(source)
    at_point("redirect", boom("redirect store unavailable"))
    outcome = run_now(source)
    record = HandoffRecord.objects.get()
    assert (outcome.outcome, record.phase) == ("failed", Phase.FAILED)
    assert "redirect store unavailable" in record.error
    (draft,) = drafts(source)
    assert draft.archived is True
    assert snapshot(source) == before
    assert MainState.objects.get(session=source).enabled is True
    assert not MainState.objects.filter(session=draft).exists()


# Row: commit succeeded, start throws -> committed-start-pending; successor id kept.


def test_start_throws_leaves_committed_start_pending_with_the_target_kept(at_point):
    source = make_source()
    at_point("start", boom("runtime down"))
    outcome = run_now(source)
    record = HandoffRecord.objects.get()
    assert (outcome.outcome, record.phase) == (
        "committed-start-pending",
        Phase.COMMITTED_START_PENDING,
    )
    assert "runtime down" in record.error
    successor = target_of(record)
    assert successor.archived is False
    assert Redirect.objects.get(source=source).destination_id == successor.pk
    assert successor.messages.earliest("seq").source_kind == "plugin"


# Draft discard rules.


def test_a_draft_that_was_woken_is_not_discarded(at_point):
    source = make_source()

    def wake_and_change(attempt: attempts.Attempt) -> None:
        assert attempt.draft is not None
        lifecycle.begin_turn(Session.objects.get(pk=attempt.draft.pk), user_initiated=False)
        add_turn(source, "Changed my mind.", tokens=10)

    at_point("before_commit", wake_and_change)
    run_now(source)
    record = HandoffRecord.objects.get()
    draft = target_of(record)
    assert record.phase == Phase.FAILED
    assert draft.archived is False
    assert "kept (it was woken)" in record.error


def test_discarding_a_draft_only_archives_it(at_point):
    source = make_source()
    at_point("flush", boom())
    run_now(source)
    (draft,) = drafts(source)
    assert draft.archived is True
    assert draft.messages.count() == 1  # the seed is still there; nothing deleted


def test_a_committed_successor_is_never_archived(at_point):
    source = make_source()
    at_point("start", boom())
    run_now(source)
    record = HandoffRecord.objects.get()
    assert target_of(record).archived is False


def test_a_committed_successor_is_kept_when_its_record_was_moved_meanwhile(at_point):
    # Recovery in another worker marks the committed record start-pending while start fails.
    source = make_source()

    def recovered_then_boom(attempt: attempts.Attempt) -> None:
        assert attempt.record is not None
        recovery.recover_record(HandoffRecord.objects.get(pk=attempt.record.pk))
        raise RuntimeError("runtime down")

    at_point("start", recovered_then_boom)
    run_now(source)
    record = HandoffRecord.objects.get()
    successor = target_of(record)
    assert record.phase == Phase.COMMITTED_START_PENDING
    assert successor.archived is False
    assert Redirect.objects.get(source=source).destination_id == successor.pk


# A worker killed during a ``now`` attempt (docs/spec.md, Switches; Recovery).

CRASH_POINTS = ["summarize", "before_seed", "flush", "before_commit", "redirect", "start"]


class WorkerKilled(BaseException):
    """The worker process died at this point: nothing after it runs, not even ``finally``."""


def kill_once() -> object:
    """Return an action that kills the attempt the first time it is reached."""
    killed: list[bool] = []

    def action(attempt: attempts.Attempt) -> None:
        if not killed:
            killed.append(True)
            raise WorkerKilled(attempt.session_id)

    return action


@pytest.mark.usefixtures("immediate_tasks")  # the next message's evaluation runs its attempt
@pytest.mark.parametrize("point", CRASH_POINTS)
def test_a_killed_now_attempt_is_recovered_and_the_next_message_hands_nothing_off(
    point, at_point, monkeypatch
):
    source = make_source()
    store.update_main_state(source.pk, requested=True)
    at_point(point, kill_once())
    with monkeypatch.context() as dying:
        # The dead process's ``finally`` never runs: it cannot clear ``requested`` itself.
        dying.setattr(store, "clear_requested", lambda session_id: None)
        with pytest.raises(WorkerKilled):
            attempts.run(source.pk, manual=True)

    recovery.recover(timezone.now() + timedelta(hours=1))
    add_turn(source, "Thanks, carry on with the parser.", tokens=10)
    operations.evaluate(source.pk)

    record = HandoffRecord.objects.get()
    assert MainState.objects.get(session=source).requested is False
    if point == "start":  # killed after the commit: the one handoff stands, start pending
        assert record.phase == Phase.COMMITTED_START_PENDING
        assert Redirect.objects.get(source=source).destination_id == record.target_id
    else:
        assert record.phase == Phase.FAILED
        assert Redirect.objects.count() == 0
        source.refresh_from_db()
        assert source.title == "Refactor the parser"


@pytest.mark.usefixtures("immediate_tasks")
def test_a_request_left_by_a_killed_now_hands_nothing_off_when_it_recovers_the_record_itself(
    at_point, monkeypatch
):
    # The next message comes after the record looks stuck but before periodic recovery ran:
    # the attempt the lingering request starts recovers the record itself, and stops.
    source = make_source()
    store.update_main_state(source.pk, requested=True)
    at_point("summarize", kill_once())
    with monkeypatch.context() as dying:
        dying.setattr(store, "clear_requested", lambda session_id: None)
        with pytest.raises(WorkerKilled):
            attempts.run(source.pk, manual=True)
    HandoffRecord.objects.update(updated=timezone.now() - timedelta(hours=1))

    add_turn(source, "Thanks, carry on with the parser.", tokens=10)
    operations.evaluate(source.pk)

    assert HandoffRecord.objects.get().phase == Phase.FAILED
    assert Redirect.objects.count() == 0
    assert MainState.objects.get(session=source).requested is False
    assert run_now(source).outcome == "started"  # asking again hands off
