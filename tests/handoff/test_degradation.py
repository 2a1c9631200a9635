"""docs/spec.md, Degradation: degradation when a service is missing: one test per row of
``handoff.degradation.TABLE``, named after it (row ``SESSION_CONTROLLER``:
``test_session_controller``).

Every service is removed through ``settings.HANDOFF_SERVICES`` (never by patching internals).
"""

from __future__ import annotations

from typing import Any

import pytest
from handoff_support import auto_handoff, make_source, record_of, target_of

from handoff import attempt as attempts
from handoff import degradation, operations, services
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


def test_session_controller(without, immediate_tasks):
    """The handoff fails with a clear error; automatic handoff is off."""
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
    assert degradation.SESSION_CONTROLLER.notice in operations.status(source.pk)["notices"]
    assert not HandoffRecord.objects.exists()


def test_llm(without):
    """No brief: the handoff is abandoned and the source kept."""
    source = make_source()
    without("llm")
    outcome = operations.run_attempt(source.pk, manual=True)
    record = HandoffRecord.objects.get()
    assert (outcome.outcome, record.phase) == ("failed", Phase.FAILED)
    assert record.error.startswith("summarize: ServiceUnavailable")
    assert Session.objects.count() == 1 and not Redirect.objects.exists()
    assert degradation.LLM.notice in operations.status(source.pk)["notices"]


def test_agent_presets(without):
    """The deployment's default preset; the row is not inherited."""
    source = make_source(agent_preset="planner")
    without("agent_presets")
    outcome = operations.run_attempt(source.pk, manual=True)
    assert target_of(record_of(outcome)).agent_preset == "default"
    assert rows_of(outcome)["agent-preset"]["outcome"] == "not-inherited"


def test_workspace_registry(without):
    """The successor is created in no group; the row is not inherited."""
    source = make_source()
    without("workspace_registry")
    outcome = operations.run_attempt(source.pk, manual=True)
    assert outcome.outcome == "started"
    assert target_of(record_of(outcome)).workspace_id is None
    assert rows_of(outcome)["workspace"]["outcome"] == "not-inherited"


def test_permission_presets(without):
    """The permission row is not inherited."""
    source = make_source(permission_preset="read-only")
    without("permission_presets")
    outcome = operations.run_attempt(source.pk, manual=True)
    assert target_of(record_of(outcome)).permission_preset == "default"
    assert rows_of(outcome)["permission-preset"]["outcome"] == "not-inherited"


def test_plan_mode(without):
    """Neither side has plan mode: the row is not inherited and the status says so."""
    source = make_source(plan_mode=True)
    without("plan_mode")
    outcome = operations.run_attempt(source.pk, manual=True)
    assert rows_of(outcome)["plan-mode"]["outcome"] == "not-inherited"
    report = operations.status(source.pk)
    assert report["plan_mode_available"] is False
    assert degradation.PLAN_MODE.notice in report["notices"]


def test_token_sources(without):
    """Tokens read unavailable, automatic handoff is off, a manual one works."""
    source = make_source()
    MainState.objects.create(session=source, enabled=True)
    auto_handoff(True)
    without("token_meter", "usage_projection")
    report = operations.status(source.pk)
    assert report["tokens"] == {"value": 0, "basis": "context", "label": "unavailable"}
    assert degradation.TOKEN_SOURCES.notice in report["notices"]
    automatic = attempts.run(source.pk, manual=False)
    assert (automatic.outcome, "unavailable" in automatic.detail) == ("no-trigger", True)
    assert operations.run_attempt(source.pk, manual=True).outcome == "started"


def test_settings(without):
    """Settings live in this process only."""
    without("settings_store")
    try:
        services.settings_store().save(auto_handoff=True, handoff_tokens=50_000)
        assert services.load_settings().handoff_tokens == 50_000
        assert not HandoffSettings.objects.exists()
        assert degradation.SETTINGS.notice in operations.status(make_source().pk)["notices"]
    finally:
        ProcessSettingsStore.reset()


def test_web_server(without):
    """The status channel is said to be unavailable; settings still save."""
    without("status_channel")
    source = make_source()
    assert degradation.WEB_SERVER.notice in operations.status(source.pk)["notices"]
    services.settings_store().save(handoff_min_turns=6)
    assert HandoffSettings.objects.get().handoff_min_turns == 6


def test_compaction(without):
    """Automatic compaction is off, said plainly; a manual handoff works."""
    source = make_source()
    without("compaction")
    report = operations.status(source.pk)
    assert report["compaction_available"] is False
    assert degradation.COMPACTION.notice in report["notices"]
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


def test_the_table_holds_the_seeds_ten_rows_in_its_order():
    assert [row.key for row in degradation.TABLE] == [
        "sessionController",
        "llm",
        "agentPresets",
        "workspaceRegistry",
        "permissionPresets",
        "planMode",
        "tokenMeter / sessionProjections",
        "settings",
        "webServer",
        "compaction",
    ]


def test_every_row_names_host_services_and_says_where_it_shows():
    for row in degradation.TABLE:
        assert set(row.services) <= set(services.SERVICE_NAMES), row.key
        assert row.notice or row.setting, f"{row.key} shows nowhere"


def test_every_row_has_a_test_named_after_it():
    rows = {
        name: value
        for name, value in vars(degradation).items()
        if isinstance(value, degradation.Degradation)
    }
    assert set(rows.values()) == set(degradation.TABLE)
    missing = [name for name in rows if f"test_{name.lower()}" not in globals()]
    assert missing == []


def test_the_notices_follow_the_table_whatever_order_the_rows_are_found_in():
    found = [degradation.COMPACTION, degradation.AGENT_PRESETS, degradation.SESSION_CONTROLLER]
    assert degradation.notices(found) == [
        degradation.SESSION_CONTROLLER.notice,
        degradation.COMPACTION.notice,
    ]
