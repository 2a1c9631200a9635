"""The attempt's steps hand each other typed values.

Each step returns what the next one needs (``Guarded``, ``Measured``, a ``Reason``, the
``Attempt`` holding its record, a ``Summary``, the draft); nothing is held up by asserts on a
bag of optional fields.
"""

from __future__ import annotations

import dataclasses
import types
import typing

import pytest
from handoff_support import make_source, target_of

from handoff import attempt as attempts
from handoff.core.phases import Phase, Reason
from handoff.models import HandoffRecord, MainState

pytestmark = pytest.mark.django_db


def test_the_eight_steps_run_by_hand_pass_each_other_their_answers():
    source = make_source()
    MainState.objects.create(session=source, requested=True)
    key = str(source.pk)
    steps: list[attempts.StepResult] = []
    guarded = attempts.guard(key, steps, manual=True)
    assert (guarded.state.session_id, guarded.revision) == (source.pk, source.revision)
    measured = attempts.measure(guarded, steps)
    assert measured.metrics.tokens == 150_000
    why = attempts.reason(guarded, measured, manual=True, steps=steps)
    assert why is Reason.MANUAL
    attempts.blockers(guarded, manual=True, steps=steps)
    claim = attempts.Claim(key, True, guarded.controller, why, guarded.revision)
    attempt, read = attempts.mark_attempt(claim, measured, steps)
    assert (attempt.record.phase, read.pk) == (Phase.SUMMARIZING, source.pk)
    summary = attempts.summarize(attempt, read)
    assert summary.brief["goal"]
    draft = attempts.prepare(attempt, summary, review=False)
    assert (attempt.record.phase, attempt.record.target_id) == (Phase.PREPARED, draft.pk)
    attempts.commit(attempt, summary.brief, draft)
    record = HandoffRecord.objects.get()
    assert (record.phase, target_of(record).pk) == (Phase.STARTED, draft.pk)
    assert [s.step for s in steps][:5] == [
        "guard", "metrics", "reason", "blockers", "mark_attempt",
    ]  # fmt: skip


def test_the_guard_refuses_a_session_that_is_no_registered_main_and_records_nothing():
    source = make_source()
    with pytest.raises(attempts.Stop, match="not a registered main"):
        attempts.guard(str(source.pk), [], manual=True)
    assert not HandoffRecord.objects.exists()


def test_an_attempt_holding_a_record_has_no_optional_field_but_its_draft():
    hints = typing.get_type_hints(attempts.Attempt)
    optional = {
        f.name
        for f in dataclasses.fields(attempts.Attempt)
        if isinstance(hints[f.name], types.UnionType) and type(None) in hints[f.name].__args__
    }
    assert optional == {"draft"}
