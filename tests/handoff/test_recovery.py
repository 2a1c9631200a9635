"""docs/spec.md, Recovery: one test per row; a record never moves backwards."""

from __future__ import annotations

import json
from datetime import timedelta
from io import StringIO
from types import SimpleNamespace

import pytest
from django.core.management import call_command
from django.utils import timezone
from handoff_support import make_source, target_of

from handoff import attempt, recovery, store
from handoff.core.phases import Phase, Reason
from handoff.exceptions import PhaseError
from handoff.models import HandoffRecord, MainState
from handoff.shapes import MetricsOut
from host import lifecycle
from host.services import SessionController

NO_METRICS = MetricsOut(tokens=0, turns=0, compactions=0, capacity=0)

pytestmark = pytest.mark.django_db

LATER = timedelta(hours=1)


def record_in(
    phase: Phase, *, draft: bool = False, routed: bool = False, reason: Reason = Reason.MANUAL
) -> HandoffRecord:
    """A record left in ``phase`` by a process that died, with its draft and route if asked."""
    source = make_source()
    record = store.create_record(
        source_id=source.pk, reason=reason, metrics=NO_METRICS, source_revision=source.revision
    )
    if phase == Phase.SUMMARIZING:
        return record
    record = store.move(record, Phase.PREPARED, brief={"goal": "g"})
    if draft:
        successor = SessionController().create(
            owner_id=source.owner_id, cwd=source.cwd, title=source.title, agent_preset=None
        )
        record = store.save_fields(record, target_id=successor.pk)
    if routed:
        store.add_redirect(source.pk, target_of(record).pk, record)
    if phase == Phase.COMMITTED:
        record = store.move(record, Phase.COMMITTED)
    return record


def recover_later() -> list[recovery.Recovered]:
    return recovery.recover(timezone.now() + LATER)


def test_summarizing_past_its_timeout_becomes_failed():
    record = record_in(Phase.SUMMARIZING)
    (done,) = recover_later()
    record.refresh_from_db()
    assert (done.before, done.after, record.phase) == ("summarizing", "failed", Phase.FAILED)
    assert "did not finish in time" in record.error


def test_summarizing_within_its_timeout_is_left_alone():
    record = record_in(Phase.SUMMARIZING)
    assert recovery.recover() == []
    record.refresh_from_db()
    assert record.phase == Phase.SUMMARIZING


def test_prepared_with_a_draft_and_no_redirect_discards_the_draft_and_fails():
    record = record_in(Phase.PREPARED, draft=True)
    draft = target_of(record)
    (done,) = recover_later()
    record.refresh_from_db()
    draft.refresh_from_db()
    assert record.phase == Phase.FAILED
    assert record.target_id is None
    assert draft.archived is True
    assert done.action == f"draft {draft.pk} archived"


def test_prepared_with_a_woken_draft_keeps_it_and_fails():
    record = record_in(Phase.PREPARED, draft=True)
    lifecycle.begin_turn(target_of(record), user_initiated=False)
    recover_later()
    record.refresh_from_db()
    assert record.phase == Phase.FAILED
    assert target_of(record).archived is False


def test_prepared_without_a_draft_fails():
    record = record_in(Phase.PREPARED)
    (done,) = recover_later()
    assert (done.record, done.after, done.action) == (str(record.pk), "failed", "no draft existed")


def test_a_redirect_without_a_committed_record_becomes_committed_start_pending():
    record = record_in(Phase.PREPARED, draft=True, routed=True)
    (done,) = recover_later()
    record.refresh_from_db()
    assert record.phase == Phase.COMMITTED_START_PENDING
    assert record.target_id is not None
    assert target_of(record).archived is False
    assert done.before == "prepared"


def test_committed_whose_start_did_not_happen_becomes_committed_start_pending():
    record = record_in(Phase.COMMITTED, draft=True, routed=True)
    target = record.target_id
    recover_later()
    record.refresh_from_db()
    assert (record.phase, record.target_id) == (Phase.COMMITTED_START_PENDING, target)


def test_committed_whose_successor_was_woken_becomes_started():
    record = record_in(Phase.COMMITTED, draft=True, routed=True)
    successor = target_of(record)
    SessionController().seed(successor, "# Handoff brief")
    lifecycle.start_agent(successor)
    recover_later()
    record.refresh_from_db()
    assert record.phase == Phase.STARTED


@pytest.mark.parametrize("final", [Phase.STARTED, Phase.COMMITTED_START_PENDING, Phase.FAILED])
def test_final_records_are_left_alone(final):
    if final == Phase.FAILED:
        record = store.move(record_in(Phase.SUMMARIZING), Phase.FAILED)
    else:
        record = store.move(record_in(Phase.COMMITTED, draft=True, routed=True), final)
    assert recover_later() == []
    record.refresh_from_db()
    assert record.phase == final


def test_a_record_never_moves_backwards():
    record = record_in(Phase.COMMITTED, draft=True, routed=True)
    with pytest.raises(PhaseError):
        store.move(record, Phase.PREPARED)
    with pytest.raises(PhaseError):
        store.move(record, Phase.FAILED)
    record.refresh_from_db()
    assert record.phase == Phase.COMMITTED


def test_a_record_moved_by_another_process_meanwhile_is_not_moved_again():
    record = record_in(Phase.SUMMARIZING)
    stale = HandoffRecord.objects.get(pk=record.pk)
    store.move(record, Phase.PREPARED)
    with pytest.raises(PhaseError):
        store.move(stale, Phase.PREPARED)


def test_recover_handoffs_command_reports_what_it_did():
    record = record_in(Phase.SUMMARIZING)
    HandoffRecord.objects.filter(pk=record.pk).update(updated=timezone.now() - LATER)
    out = StringIO()
    call_command("recover_handoffs", "--json", stdout=out)
    assert json.loads(out.getvalue()) == [
        {
            "record": str(record.pk),
            "before": "summarizing",
            "after": "failed",
            "action": "summary timed out",
        }
    ]


def test_recover_handoffs_every_runs_again_after_each_interval(monkeypatch):
    from handoff.management.commands import recover_handoffs

    naps: list[float] = []

    def nap(seconds: float) -> None:
        naps.append(seconds)
        if len(naps) == 2:
            raise KeyboardInterrupt

    monkeypatch.setattr(recover_handoffs, "time", SimpleNamespace(sleep=nap))
    out = StringIO()
    with pytest.raises(KeyboardInterrupt):
        call_command("recover_handoffs", "--every", "60", stdout=out)
    assert naps == [60.0, 60.0]
    assert out.getvalue().count("record(s) recovered.") == 2


def test_recover_handoffs_every_keeps_running_through_a_database_outage(monkeypatch):
    from django.db import OperationalError

    from handoff.management.commands import recover_handoffs

    passes: list[str] = []

    def recover_or_outage() -> list[recovery.Recovered]:
        passes.append("pass")
        if len(passes) == 1:
            raise OperationalError("FATAL:  sorry, too many clients already")
        return []

    def nap(seconds: float) -> None:
        if len(passes) == 2:
            raise KeyboardInterrupt

    monkeypatch.setattr(recover_handoffs, "recover", recover_or_outage)
    monkeypatch.setattr("handoff.management.commands.recover_handoffs.time.sleep", nap)
    out, err = StringIO(), StringIO()
    with pytest.raises(KeyboardInterrupt):
        call_command("recover_handoffs", "--every", "60", stdout=out, stderr=err)
    assert passes == ["pass", "pass"]
    assert "Database unavailable (FATAL:  sorry, too many clients already)" in err.getvalue()
    assert out.getvalue().count("record(s) recovered.") == 1


def test_a_prepared_record_committed_meanwhile_keeps_its_successor():
    # Recovery read the record as ``prepared``; before it acted, the slow attempt committed.
    stale = record_in(Phase.PREPARED, draft=True)
    fresh = HandoffRecord.objects.get(pk=stale.pk)
    store.add_redirect(fresh.source_id, target_of(fresh).pk, fresh)
    store.move(fresh, Phase.COMMITTED)
    with pytest.raises(PhaseError):
        recovery.recover_record(stale)
    successor = target_of(HandoffRecord.objects.get(pk=stale.pk))
    assert successor.archived is False
    assert HandoffRecord.objects.get(pk=stale.pk).phase == Phase.COMMITTED


@pytest.mark.parametrize("phase", [Phase.SUMMARIZING, Phase.PREPARED])
def test_recovering_a_manual_record_clears_the_request_it_ran_for(phase):
    record = record_in(phase, draft=phase == Phase.PREPARED)
    store.update_main_state(record.source_id, requested=True)
    (done,) = recover_later()
    assert done.after == Phase.FAILED
    assert MainState.objects.get(session_id=record.source_id).requested is False


def test_recovering_an_automatic_record_leaves_a_request_alone():
    record = record_in(Phase.SUMMARIZING, reason=Reason.CONTEXT_PRESSURE)
    store.update_main_state(record.source_id, requested=True)
    recover_later()
    assert MainState.objects.get(session_id=record.source_id).requested is True


# The one draft discard (docs/spec.md, Failure outcomes): a failed attempt, a discarded or expired
# review and recovery all discard a draft through ``recovery.discard_draft``.


@pytest.mark.parametrize(
    ("woken", "said"), [(False, "draft {} archived"), (True, "draft {} kept (it was woken)")]
)
def test_the_draft_discard_archives_a_draft_only_while_it_is_unwoken(woken, said):
    record = record_in(Phase.PREPARED, draft=True)
    draft = target_of(record)
    if woken:
        lifecycle.begin_turn(draft, user_initiated=False)
    assert recovery.discard_draft(record.source_id, draft.pk) == (not woken, said.format(draft.pk))
    draft.refresh_from_db()
    assert draft.archived is not woken


def test_the_draft_discard_never_archives_the_successor_the_route_leads_to():
    record = record_in(Phase.PREPARED, draft=True, routed=True)
    draft = target_of(record)
    archived, said = recovery.discard_draft(record.source_id, draft.pk)
    draft.refresh_from_db()
    assert (archived, draft.archived) == (False, False)
    assert said == f"successor {draft.pk} kept (the route to it is committed)"


def test_the_draft_discard_keeps_the_draft_without_a_session_controller(settings):
    record = record_in(Phase.PREPARED, draft=True)
    draft = target_of(record)
    settings.HANDOFF_SERVICES = {**settings.HANDOFF_SERVICES, "session_controller": None}
    assert recovery.discard_draft(record.source_id, draft.pk)[0] is False
    draft.refresh_from_db()
    assert draft.archived is False


def test_the_attempt_has_no_draft_discard_of_its_own():
    assert not hasattr(attempt, "discard_draft")
