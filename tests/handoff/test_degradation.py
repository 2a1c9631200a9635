"""Seed 003 §6.3, degradation when a service is missing: one test per row.

Every service is removed through ``settings.HANDOFF_SERVICES`` (never by patching internals).
"""

from __future__ import annotations

from typing import Any

import pytest
from handoff_support import auto_handoff, make_source, record_of, target_of

from handoff import attempt as attempts
from handoff import operations, services, status
from handoff.core.phases import Phase
from handoff.exceptions import ServiceUnavailable
from handoff.models import HandoffRecord, HandoffSettings, MainState, Redirect
from handoff.settings_store import ProcessSettingsStore
from host.models import Session

pytestmark = pytest.mark.django_db


@pytest.fixture
def without(settings: Any):
    """Return ``leave_out(*names)``: set those services to None in HANDOFF_SERVICES."""

    def leave_out(*names: str) -> None:
        settings.HANDOFF_SERVICES = {**settings.HANDOFF_SERVICES, **dict.fromkeys(names)}

    return leave_out


def rows_of(outcome: attempts.AttemptOutcome) -> dict[str, dict[str, str]]:
    record = record_of(outcome)
    return {row["setting"]: row for row in record.inheritance}


def test_no_session_controller_fails_clearly_and_turns_automatic_off(without, immediate_tasks):
    source = make_source()
    MainState.objects.create(session=source, enabled=True)
    auto_handoff(True)
    without("session_controller")
    with pytest.raises(ServiceUnavailable, match="no session_controller service"):
        operations.request_now(source.pk)
    outcome = attempts.run(source.pk, manual=True)
    assert outcome.outcome == "refused"
    assert "no session controller" in outcome.detail
    assert operations.evaluate(source.pk) is False
    assert status.NO_CONTROLLER in operations.status(source.pk)["notices"]
    assert not HandoffRecord.objects.exists()


def test_no_llm_abandons_the_handoff_and_keeps_the_source(without):
    source = make_source()
    without("llm")
    outcome = operations.run_attempt(source.pk, manual=True)
    record = HandoffRecord.objects.get()
    assert (outcome.outcome, record.phase) == ("failed", Phase.FAILED)
    assert record.error.startswith("summarize: ServiceUnavailable")
    assert Session.objects.count() == 1 and not Redirect.objects.exists()
    assert status.NO_LLM in operations.status(source.pk)["notices"]


def test_no_agent_presets_uses_the_default_preset_row_not_inherited(without):
    source = make_source(agent_preset="planner")
    without("agent_presets")
    outcome = operations.run_attempt(source.pk, manual=True)
    assert target_of(record_of(outcome)).agent_preset == "default"
    assert rows_of(outcome)["agent-preset"]["outcome"] == "not-inherited"


def test_no_workspace_registry_creates_the_session_in_no_group(without):
    source = make_source()
    without("workspace_registry")
    outcome = operations.run_attempt(source.pk, manual=True)
    assert outcome.outcome == "started"
    assert target_of(record_of(outcome)).workspace_id is None
    assert rows_of(outcome)["workspace"]["outcome"] == "not-inherited"


def test_no_permission_presets_marks_the_permission_row_not_inherited(without):
    source = make_source(permission_preset="read-only")
    without("permission_presets")
    outcome = operations.run_attempt(source.pk, manual=True)
    assert target_of(record_of(outcome)).permission_preset == "default"
    assert rows_of(outcome)["permission-preset"]["outcome"] == "not-inherited"


def test_no_plan_mode_on_either_side_marks_the_row_not_inherited(without):
    source = make_source(plan_mode=True)
    without("plan_mode")
    outcome = operations.run_attempt(source.pk, manual=True)
    assert rows_of(outcome)["plan-mode"]["outcome"] == "not-inherited"
    assert operations.status(source.pk)["plan_mode_available"] is False


def test_no_token_sources_label_unavailable_automatic_off_manual_works(without):
    source = make_source()
    MainState.objects.create(session=source, enabled=True)
    auto_handoff(True)
    without("token_meter", "usage_projection")
    report = operations.status(source.pk)
    assert report["tokens"] == {"value": 0, "basis": "context", "label": "unavailable"}
    automatic = attempts.run(source.pk, manual=False)
    assert (automatic.outcome, "unavailable" in automatic.detail) == ("no-trigger", True)
    assert operations.run_attempt(source.pk, manual=True).outcome == "started"


def test_no_settings_store_keeps_settings_in_this_process_only(without):
    without("settings_store")
    try:
        services.settings_store().save(auto_handoff=True, handoff_tokens=50_000)
        assert services.load_settings().handoff_tokens == 50_000
        assert not HandoffSettings.objects.exists()
        assert status.NO_SETTINGS_STORE in operations.status(make_source().pk)["notices"]
    finally:
        ProcessSettingsStore.reset()


def test_no_status_channel_says_so_and_settings_still_save(without):
    without("status_channel")
    source = make_source()
    assert status.NO_STATUS_CHANNEL in operations.status(source.pk)["notices"]
    services.settings_store().save(handoff_min_turns=6)
    assert HandoffSettings.objects.get().handoff_min_turns == 6


def test_no_compaction_for_the_agent_turns_auto_compaction_off_manual_handoff_works(without):
    source = make_source()
    without("compaction")
    report = operations.status(source.pk)
    assert report["compaction_available"] is False
    assert status.NO_COMPACTION in report["notices"]
    assert operations.run_attempt(source.pk, manual=True).outcome == "started"


def test_a_host_with_only_a_session_controller_and_an_llm_can_hand_off(without):
    source = make_source()
    without(*[n for n in services.SERVICE_NAMES if n not in ("session_controller", "llm")])
    try:
        outcome = operations.run_attempt(source.pk, manual=True)
        assert outcome.outcome == "started", outcome.detail
        rows = rows_of(outcome)
        assert rows["cwd"]["outcome"] == "inherited"
        assert {rows[k]["outcome"] for k in ("workspace", "permission-preset", "plan-mode")} == {
            "not-inherited"
        }
        assert Redirect.objects.get(source=source).destination_id == record_of(outcome).target_id
    finally:
        ProcessSettingsStore.reset()
