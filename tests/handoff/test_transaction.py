"""docs/spec.md, The transaction: the eight steps end to end on the embedded default."""

from __future__ import annotations

import threading
from typing import Any

import pytest
from django.core.management import call_command
from django.db import connection, connections
from handoff_support import (
    CWD,
    MODEL,
    add_turn,
    auto_handoff,
    boom,
    make_source,
    record_of,
)
from shared_files import TRANSCRIPTS

from follower.models import FollowerEvent
from handoff import attempt as attempts
from handoff import operations, services
from handoff.core.phases import Phase, Reason
from handoff.models import HandoffRecord, MainState, Redirect
from host.intake import post_message
from host.models import Message, Session, SourceKind

pytestmark = pytest.mark.django_db


def successor_of(source: Session) -> Session:
    return Session.objects.get(pk=Redirect.objects.get(source=source).destination_id)


def test_manual_handoff_ends_started(immediate_tasks):
    source = make_source()
    operations.request_now(source.pk)
    record = HandoffRecord.objects.get(source=source)
    assert record.phase == Phase.STARTED
    assert record.reason == Reason.MANUAL
    assert record.metrics == {"tokens": 150_000, "turns": 5, "compactions": 0, "capacity": 200_000}
    assert record.source_revision == source.revision
    assert record.target_id == successor_of(source).pk


def test_steps_are_recorded_in_the_seeds_order():
    source = make_source()
    outcome = operations.run_attempt(source.pk, manual=True)
    assert [s.step for s in outcome.steps] == [
        "guard", "metrics", "reason", "blockers", "mark_attempt", "summarize", "prepare",
        "seed", "flush", "redirect", "record", "start",
    ]  # fmt: skip
    assert all(s.ok for s in outcome.steps)
    assert outcome.outcome == "started"


def test_the_brief_is_the_successors_first_message():
    source = make_source()
    operations.run_attempt(source.pk, manual=True)
    first = Message.objects.filter(session=successor_of(source)).earliest("seq")
    assert first.source_kind == SourceKind.PLUGIN
    assert first.content.startswith("# Handoff brief")
    assert "/work/demo/src/parser_4.py" in first.content


def test_the_successor_is_started_and_acknowledges(django_capture_on_commit_callbacks, settings):
    settings.TASKS = {"default": {"BACKEND": "django_tasks.backends.immediate.ImmediateBackend"}}
    settings.HOST_TASKS_RUN_IN_CALLER = True
    source = make_source()
    with django_capture_on_commit_callbacks(execute=True):
        operations.run_attempt(source.pk, manual=True)
    successor = successor_of(source)
    assert successor.blank is False
    reply = Message.objects.filter(session=successor, role="assistant").get()
    assert "received the handoff brief" in reply.content


def test_successor_has_the_sources_cwd_workspace_model_and_owner():
    source = make_source()
    operations.run_attempt(source.pk, manual=True)
    successor = successor_of(source)
    assert successor.cwd == CWD
    assert successor.workspace_id == source.workspace_id
    assert successor.model == MODEL
    assert successor.owner_id == source.owner_id
    assert successor.title == "Refactor the parser"


def test_source_is_renamed_and_notified_but_not_archived():
    source = make_source()
    operations.run_attempt(source.pk, manual=True)
    source.refresh_from_db()
    successor = successor_of(source)
    assert source.title == f"Refactor the parser · 接续{successor.pk.hex[:6]}"
    assert source.archived is False
    notice = Message.objects.filter(session=source).latest("seq")
    assert f"Handed off to “{successor.title}”" in notice.content  # named by its title
    assert notice.source_kind == SourceKind.PLUGIN


def test_commit_hands_the_main_state_to_the_successor():
    source = make_source()
    operations.enable(source.pk)
    operations.run_attempt(source.pk, manual=True)
    successor = successor_of(source)
    old, new = MainState.objects.get(session=source), MainState.objects.get(session=successor)
    assert (old.enabled, old.requested, old.deferred) == (False, False, [])
    assert new.enabled is True
    assert new.inherited_from_id == source.pk


def test_capacity_comes_from_the_transcript_then_the_settings_table_else_zero():
    # docs/spec.md, Turns and capacity: the transcript's window, else the editable per-model table,
    # else 0.
    services.settings_store().save(context_windows={"my-model": 64_000})
    stated = make_source(model="my-model", context_window=258_400, title="stated")
    tabled = make_source(model="my-model", title="tabled")
    unknown = make_source(model="unknown-model", title="unknown")
    capacities = [
        record_of(operations.run_attempt(s.pk, manual=True)).metrics["capacity"]
        for s in (stated, tabled, unknown)
    ]
    assert capacities == [258_400, 64_000, 0]


def test_the_brief_is_durable_before_the_redirect_exists(at_point):
    seen: dict[str, Any] = {}

    def look(attempt: attempts.Attempt) -> None:
        assert attempt.draft is not None
        record = HandoffRecord.objects.get(pk=attempt.record.pk)
        seen["brief"] = record.brief
        seen["redirects"] = Redirect.objects.count()
        seen["seeded"] = Message.objects.filter(session_id=attempt.draft.pk).count()

    at_point("redirect", look)
    source = make_source()
    operations.run_attempt(source.pk, manual=True)
    assert seen["brief"]["goal"]
    assert seen["redirects"] == 0
    assert seen["seeded"] == 1


def test_automatic_handoff_on_context_pressure(immediate_tasks):
    auto_handoff(True)
    source = make_source(tokens=130_000)
    operations.enable(source.pk)
    record = HandoffRecord.objects.get(source=source)
    assert (record.phase, record.reason) == (Phase.STARTED, Reason.CONTEXT_PRESSURE)


def test_automatic_handoff_on_repeated_compaction(immediate_tasks):
    auto_handoff(True)
    source = make_source(tokens=1_000, compactions=3)
    operations.enable(source.pk)
    assert HandoffRecord.objects.get(source=source).reason == Reason.REPEATED_COMPACTION


def test_automatic_evaluation_runs_when_the_session_turns_idle(immediate_tasks):
    from host.signals import session_idle

    auto_handoff(True)
    source = make_source(tokens=1_000)
    operations.enable(source.pk)
    assert not HandoffRecord.objects.exists()
    add_turn(source, "Keep going with /work/demo/src/lexer.py please.", tokens=125_000)
    session_idle.send(sender=Session, session=source)
    assert HandoffRecord.objects.get(source=source).phase == Phase.STARTED


@pytest.mark.django_db(transaction=True)
def test_summarize_runs_outside_any_database_transaction(at_point):
    seen = []
    at_point("summarize", lambda attempt: seen.append(connection.in_atomic_block))
    source = make_source()
    operations.run_attempt(source.pk, manual=True)
    assert seen == [False]


def test_a_second_attempt_in_sequence_makes_no_second_successor():
    source = make_source()
    first = operations.run_attempt(source.pk, manual=True)
    again = attempts.run(source.pk, manual=True)
    assert first.outcome == "started"
    assert again.outcome == "refused"
    assert HandoffRecord.objects.count() == 1
    assert Session.objects.count() == 2


def test_an_attempt_in_progress_refuses_a_second_one(at_point):
    source = make_source()
    inner: list[attempts.AttemptOutcome] = []
    at_point("summarize", lambda attempt: inner.append(attempts.run(source.pk, manual=True)))
    operations.run_attempt(source.pk, manual=True)
    assert inner[0].outcome == "refused"
    assert "already in progress" in inner[0].detail
    assert HandoffRecord.objects.get().phase == Phase.STARTED
    assert Session.objects.count() == 2


@pytest.mark.postgres
@pytest.mark.django_db(transaction=True)
def test_two_workers_on_one_source_make_at_most_one_successor():
    source = make_source()
    MainState.objects.create(session=source, requested=True)
    barrier = threading.Barrier(2)
    outcomes: list[str] = []

    def worker() -> None:
        try:
            barrier.wait()
            outcomes.append(attempts.run(source.pk, manual=True).outcome)
        finally:
            connections.close_all()

    threads = [threading.Thread(target=worker) for _ in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert Redirect.objects.count() <= 1
    assert Session.objects.filter(archived=False).exclude(pk=source.pk).count() <= 1
    assert sorted(outcomes) == ["refused", "started"]


def test_imported_transcript_hands_off_end_to_end(immediate_tasks):
    path = TRANSCRIPTS / "claude-code-2.1-auto-compact.jsonl"
    if not path.exists():
        pytest.skip(f"shared transcripts are absent ({path})")
    from handoff_support import make_user

    make_user("importer")
    call_command("import_transcript", str(path), "--owner", "importer")
    source = Session.objects.get(parent__isnull=True)
    outcome = operations.run_attempt(source.pk, manual=True)
    assert outcome.outcome == "started", outcome.detail
    successor = successor_of(source)
    assert (successor.cwd, successor.workspace_id, successor.model) == (
        source.cwd,
        source.workspace_id,
        source.model,
    )
    brief = record_of(outcome).brief
    assert brief is not None
    artifacts = brief["artifacts"]
    paths = [a.split(" — ")[0] for a in artifacts if a.startswith("/")]  # "path — what was done"
    assert paths
    text = path.read_text()
    assert any(p in text for p in paths)


def test_services_are_resolved_per_attempt_not_at_start_up(settings):
    source = make_source()
    settings.HANDOFF_SERVICES = {**settings.HANDOFF_SERVICES, "llm": None}
    failed = operations.run_attempt(source.pk, manual=True)
    settings.HANDOFF_SERVICES = {**settings.HANDOFF_SERVICES, "llm": "host.services.LLM"}
    assert services.get("llm") is not None
    started = operations.run_attempt(source.pk, manual=True)
    assert (failed.outcome, started.outcome) == ("failed", "started")


def test_input_posted_between_the_route_and_the_start_still_ends_started(at_point):
    # The relay wakes the successor first (it has the brief); the start then finds it running.
    source = make_source()
    posted = []

    def post_to_source(attempt: attempts.Attempt) -> None:
        fresh = Session.objects.get(pk=source.pk)
        posted.append(post_message(fresh, content="One more thing: keep the old API."))

    at_point("start", post_to_source)
    outcome = operations.run_attempt(source.pk, manual=True)

    successor = successor_of(source)
    assert posted[0].forwarded_to == str(successor.pk)
    assert outcome.outcome == "started"
    assert HandoffRecord.objects.get().phase == Phase.STARTED
    relayed = Message.objects.filter(session=successor, source_kind=SourceKind.RELAY)
    assert [m.content for m in relayed] == ["One more thing: keep the old API."]


def _redirect_event(source: Session) -> FollowerEvent:
    return FollowerEvent.objects.get(kind="redirect.committed", payload__source=str(source.pk))


@pytest.mark.django_db(transaction=True)
def test_a_tab_on_the_source_hears_of_the_route_with_the_successor_already_started():
    # The route's events wait for the start's outcome: the redirect's row shows the successor
    # started, so a tab on the source opens it at this event, and both go out in one batch.
    source = make_source()
    operations.run_attempt(source.pk, manual=True)
    redirect = _redirect_event(source)
    assert redirect.seq is not None
    assert redirect.payload["session"]["id"] == str(successor_of(source).pk)
    assert redirect.payload["session"]["blank"] is False
    started = FollowerEvent.objects.filter(kind="handoff.phase", seq__gt=redirect.seq)
    assert started.exists()


@pytest.mark.django_db(transaction=True)
def test_a_start_that_fails_still_delivers_the_route_with_the_successor_not_started(at_point):
    source = make_source()
    at_point("start", boom("runtime down"))
    operations.run_attempt(source.pk, manual=True)
    assert HandoffRecord.objects.get().phase == Phase.COMMITTED_START_PENDING
    redirect = _redirect_event(source)
    assert redirect.seq is not None
    assert redirect.payload["session"]["blank"] is True
    assert not FollowerEvent.objects.filter(seq__isnull=True).exists()
