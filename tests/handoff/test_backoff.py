"""Backoff after failed automatic attempts (docs/spec.md, Switches): the next automatic attempt
waits, doubling up to a cap; ``now`` is never held back; ``enable`` and a successful handoff
reset it; an abort because the source changed starts no backoff."""

from __future__ import annotations

from datetime import timedelta
from io import StringIO

import pytest
from django.core.management import call_command
from django.urls import reverse
from django.utils import timezone
from handoff_support import add_turn, auto_handoff, boom, make_source

from handoff import attempt as attempts
from handoff import operations, store
from handoff.attempt import Outcome
from handoff.models import HandoffRecord, MainState
from host.models import Session
from host.signals import session_idle

pytestmark = pytest.mark.django_db


MODEL_DOWN = {"on": True}


def model_down(attempt: attempts.Attempt) -> None:
    if MODEL_DOWN["on"]:
        boom("model down")(attempt)


@pytest.fixture
def failing_source(immediate_tasks, at_point, settings):
    """An enabled main whose automatic attempt failed once at summarize (the model stays down
    until ``MODEL_DOWN["on"]`` is cleared)."""
    settings.HANDOFF_BACKOFF_BASE = 60
    settings.HANDOFF_BACKOFF_CAP = 150
    MODEL_DOWN["on"] = True
    auto_handoff(True)
    source = make_source()
    at_point("summarize", model_down)
    operations.enable(source.pk)
    assert HandoffRecord.objects.get().phase == "failed"
    return source


def later_turn(source: Session) -> None:
    add_turn(source, "Continue with /work/demo/src/lexer.py.")
    session_idle.send(sender=Session, session=source)


def backoff_of(source: Session) -> MainState:
    return MainState.objects.get(session=source)


def test_after_a_failure_the_next_automatic_attempt_waits_and_status_says_until_when(
    failing_source,
):
    state = backoff_of(failing_source)
    assert state.failures == 1
    assert state.retry_at is not None
    wait = state.retry_at - timezone.now()
    assert timedelta(seconds=50) < wait <= timedelta(seconds=60)
    later_turn(failing_source)
    assert HandoffRecord.objects.count() == 1  # no second call to the failing model
    report = operations.status(failing_source.pk)
    assert report["backoff"] is not None
    assert report["backoff"]["failures"] == 1
    assert report["backoff"]["until"] == state.retry_at.isoformat()
    assert "model down" in report["backoff"]["reason"]
    outcome = attempts.run(failing_source.pk, manual=False)
    assert outcome.outcome is Outcome.NO_TRIGGER and "backing off" in outcome.detail
    out = StringIO()
    call_command("handoff", "status", str(failing_source.pk), stdout=out)
    assert "backoff      1 failed automatic attempt: the next may run after" in out.getvalue()


def test_the_wait_doubles_with_each_failure_up_to_the_cap(failing_source):
    waits = []
    for _ in range(3):
        MainState.objects.filter(session=failing_source).update(retry_at=timezone.now())
        later_turn(failing_source)
        state = backoff_of(failing_source)
        assert state.retry_at is not None
        waits.append(round((state.retry_at - timezone.now()).total_seconds() / 10) * 10)
    assert waits == [120, 150, 150]
    assert backoff_of(failing_source).failures == 4


def test_now_is_never_held_back(failing_source):
    outcome = operations.run_attempt(failing_source.pk, manual=True)
    assert outcome.record is not None  # it ran (and failed at the same fault)
    assert HandoffRecord.objects.count() == 2
    assert backoff_of(failing_source).failures == 1  # a manual failure adds no backoff


def test_enable_resets_the_backoff(failing_source):
    MainState.objects.filter(session=failing_source).update(retry_at=timezone.now())
    later_turn(failing_source)
    assert backoff_of(failing_source).failures == 2
    MODEL_DOWN["on"] = False
    operations.enable(failing_source.pk)  # resets it, and runs an attempt at once
    assert HandoffRecord.objects.filter(phase="started").count() == 1


def test_enable_counts_failures_afresh(failing_source):
    MainState.objects.filter(session=failing_source).update(retry_at=timezone.now())
    later_turn(failing_source)
    operations.enable(failing_source.pk)  # reset, then the attempt it runs fails once more
    assert HandoffRecord.objects.count() == 3
    assert backoff_of(failing_source).failures == 1


def test_a_successful_handoff_resets_the_backoff(failing_source):
    MODEL_DOWN["on"] = False
    MainState.objects.filter(session=failing_source).update(retry_at=timezone.now())
    later_turn(failing_source)
    assert HandoffRecord.objects.filter(phase="started").count() == 1
    state = backoff_of(failing_source)
    assert (state.failures, state.retry_at) == (0, None)
    assert operations.status(failing_source.pk)["backoff"] is None


def test_an_abort_because_the_source_changed_starts_no_backoff(immediate_tasks, at_point):
    auto_handoff(True)
    source = make_source()
    at_point("summarize", lambda attempt: add_turn(source, "A new message meanwhile."))
    operations.enable(source.pk)
    record = HandoffRecord.objects.get()
    assert record.phase == "failed" and "changed" in record.error
    state = store.find_main_state(source.pk)
    assert state is not None and (state.failures, state.retry_at) == (0, None)


def test_the_panel_says_automatic_handoff_waits_and_that_now_is_not_held_back(
    failing_source, client
):
    client.force_login(failing_source.owner)
    html = client.get(reverse("handoff_web:panel", args=[failing_source.pk])).content.decode()
    assert "Automatic handoff waits after 1 failed attempt: the next may run after" in html
    assert "“Hand off now” is not held back." in html
