"""docs/spec.md, Failure outcomes: an unexpected failure is logged once, with its traceback,
where it becomes a failed attempt; the engine's expected refusals leave no log record."""

from __future__ import annotations

import logging

import pytest
from handoff_support import make_source

from handoff import inheritance, operations, services
from handoff.core.phases import Phase
from handoff.digest import per_session
from handoff.models import HandoffRecord, MainState
from host.models import Session

pytestmark = pytest.mark.django_db


def errors(caplog: pytest.LogCaptureFixture) -> list[logging.LogRecord]:
    return [r for r in caplog.records if r.levelno >= logging.ERROR]


def test_a_type_error_in_the_brief_builder_is_logged_once_with_its_traceback(monkeypatch, caplog):
    def broken(*args: object) -> dict:
        raise TypeError("unsupported operand type(s) for +: 'int' and 'str'")

    monkeypatch.setattr(per_session, "brief", broken)
    source = make_source()
    caplog.set_level(logging.INFO)
    outcome = operations.run_attempt(source.pk, manual=True)
    assert HandoffRecord.objects.get().phase == Phase.FAILED
    assert "TypeError" in outcome.detail
    [logged] = errors(caplog)
    assert logged.exc_info is not None and logged.exc_info[0] is TypeError
    assert "summarize" in logged.getMessage()
    assert "broken" in caplog.text  # the traceback names the frame that raised


def test_a_brief_that_breaks_the_schema_fails_without_a_log_record(recording_llm, caplog):
    recording_llm.answer = '{"goal": ""}'
    source = make_source()
    caplog.set_level(logging.INFO)
    operations.run_attempt(source.pk, manual=True)
    assert "BriefError" in HandoffRecord.objects.get().error
    assert errors(caplog) == []


def test_no_trigger_and_not_idle_leave_no_log_record(caplog):
    quiet = make_source(tokens=1_000)
    MainState.objects.create(session=quiet, enabled=True)
    services.settings_store().save(auto_handoff=True)
    busy = make_source()
    Session.objects.filter(pk=busy.pk).update(status="running")
    caplog.set_level(logging.INFO)
    assert operations.run_attempt(quiet.pk, manual=False).outcome == "no-trigger"
    assert operations.run_attempt(busy.pk, manual=True).outcome == "refused"
    assert errors(caplog) == []
    assert not HandoffRecord.objects.exists()


def test_a_successor_that_cannot_be_created_fails_at_prepare_with_nothing_created(
    monkeypatch, caplog
):
    def refused(*args: object) -> None:
        raise RuntimeError("the host refused the session")

    monkeypatch.setattr(inheritance, "create_successor", refused)
    source = make_source()
    caplog.set_level(logging.INFO)
    operations.run_attempt(source.pk, manual=True)
    record = HandoffRecord.objects.get()
    assert (record.phase, record.target_id, record.brief) == (Phase.FAILED, None, None)
    assert record.error.startswith("prepare: the successor could not be created: RuntimeError")
    assert Session.objects.count() == 1  # no draft
    [logged] = errors(caplog)
    assert logged.exc_info is not None and logged.exc_info[0] is RuntimeError
