"""docs/spec.md, Inheritance: the inheritance rows and the workspace attachment, a test per row."""

from __future__ import annotations

from typing import Any

import pytest
from handoff_support import CWD, make_source, record_of, target_of

from handoff import operations
from host.models import Message, Session, Workspace
from host.services import WorkspaceRegistry

pytestmark = pytest.mark.django_db


def hand_off(source: Session) -> tuple[Session, dict[str, dict[str, str]]]:
    outcome = operations.run_attempt(source.pk, manual=True)
    assert outcome.outcome == "started", outcome.detail
    record = record_of(outcome)
    rows = {row["setting"]: row for row in record.inheritance}
    return target_of(record), rows


def test_every_row_is_reported_on_the_record():
    _, rows = hand_off(make_source())
    assert list(rows) == [
        "cwd", "agent-preset", "workspace", "model", "permission-preset", "plan-mode", "log",
    ]  # fmt: skip
    assert all(set(r) == {"setting", "outcome", "detail"} for r in rows.values())


def test_cwd_is_inherited():
    successor, rows = hand_off(make_source())
    assert successor.cwd == CWD
    assert rows["cwd"] == {"setting": "cwd", "outcome": "inherited", "detail": CWD}


def test_workspace_is_resolved_by_path_and_attached():
    source = make_source()
    successor, rows = hand_off(source)
    assert successor.workspace_id == source.workspace_id
    assert rows["workspace"]["outcome"] == "inherited"


def test_an_unregistered_directory_is_not_registered():
    source = make_source(cwd="/tmp/scratch", workspace=False)
    successor, rows = hand_off(source)
    assert successor.workspace_id is None
    assert rows["workspace"]["outcome"] == "not-inherited"
    assert "not a registered workspace" in rows["workspace"]["detail"]
    assert not Workspace.objects.filter(path="/tmp/scratch").exists()


class FailingAttach(WorkspaceRegistry):
    def attach(self, workspace: Any, session: Any) -> None:
        raise RuntimeError("sidebar store offline")


def test_an_attach_failure_is_reported_and_the_handoff_still_succeeds(settings):
    settings.HANDOFF_SERVICES = {
        **settings.HANDOFF_SERVICES,
        "workspace_registry": "test_inheritance.FailingAttach",
    }
    successor, rows = hand_off(make_source())
    assert successor.workspace_id is None
    assert rows["workspace"]["outcome"] == "not-inherited"
    assert "sidebar store offline" in rows["workspace"]["detail"]


def test_agent_preset_is_inherited():
    successor, rows = hand_off(make_source(agent_preset="planner"))
    assert successor.agent_preset == "planner"
    assert rows["agent-preset"]["outcome"] == "inherited"


def test_an_unknown_agent_preset_falls_back_to_the_composed_preset():
    successor, rows = hand_off(make_source(agent_preset="retired-preset"))
    assert successor.agent_preset == "default"
    assert rows["agent-preset"]["outcome"] == "fallback"


def test_model_from_the_latest_selection_in_the_log():
    successor, rows = hand_off(make_source(model="gpt-5", request_config={"model": "gpt-4o"}))
    assert successor.model == "gpt-5"
    assert rows["model"]["outcome"] == "inherited"
    assert "latest model selection" in rows["model"]["detail"]


def test_model_from_the_request_config():
    successor, rows = hand_off(make_source(model=None, request_config={"model": "gpt-4o"}))
    assert successor.model == "gpt-4o"
    assert "request config" in rows["model"]["detail"]


def test_model_from_the_agents_options():
    successor, rows = hand_off(make_source(model=None, agent_preset="reviewer"))
    assert successor.model == "gpt-4.1"
    assert rows["model"]["outcome"] == "fallback"
    assert "reviewer" in rows["model"]["detail"]


def test_model_falls_back_to_the_default_model(settings):
    successor, rows = hand_off(make_source(model=None))
    assert successor.model == settings.HOST_DEFAULT_MODEL
    assert "the default model" in rows["model"]["detail"]


def test_permission_preset_is_inherited():
    successor, rows = hand_off(make_source(permission_preset="read-only"))
    assert successor.permission_preset == "read-only"
    assert rows["permission-preset"]["outcome"] == "inherited"
    assert "approval-policy" not in rows and "sandbox-tier" not in rows


def test_custom_preset_inherits_the_approval_policy_but_not_the_sandbox_tier():
    source = make_source(
        permission_preset="custom", approval_policy="on-request", sandbox_tier="workspace-write"
    )
    successor, rows = hand_off(source)
    assert (successor.permission_preset, successor.approval_policy) == ("custom", "on-request")
    assert successor.sandbox_tier == ""
    assert rows["approval-policy"] == {
        "setting": "approval-policy",
        "outcome": "inherited",
        "detail": "on-request",
    }
    assert rows["sandbox-tier"]["outcome"] == "not-inherited"
    assert "sandbox tier not inherited" in rows["sandbox-tier"]["detail"]


def test_plan_mode_is_set_on_the_successors_own_agent():
    successor, rows = hand_off(make_source(plan_mode=True))
    assert successor.plan_mode is True
    assert rows["plan-mode"] == {"setting": "plan-mode", "outcome": "inherited", "detail": "on"}


def test_plan_mode_resolves_per_agent_before_host_wide(settings):
    settings.HANDOFF_SERVICES = {**settings.HANDOFF_SERVICES, "plan_mode": None}
    successor, rows = hand_off(make_source(plan_mode=True, agent_preset="planner"))
    assert successor.plan_mode is True
    assert rows["plan-mode"]["outcome"] == "inherited"


def test_the_log_is_not_inherited_the_successor_starts_from_the_brief():
    successor, rows = hand_off(make_source())
    assert rows["log"]["outcome"] == "not-inherited"
    assert list(
        Message.objects.filter(session=successor).values_list("source_kind", flat=True)
    ) == ["plugin"]


class RaisingPermissions:
    def current(self, session: Any) -> str:
        raise RuntimeError("permissions backend exploded")


def test_a_failing_row_is_reported_not_swallowed(settings, caplog):
    settings.HANDOFF_SERVICES = {
        **settings.HANDOFF_SERVICES,
        "permission_presets": "test_inheritance.RaisingPermissions",
    }
    _, rows = hand_off(make_source())
    assert rows["permission-preset"]["outcome"] == "not-inherited"
    assert "permissions backend exploded" in rows["permission-preset"]["detail"]
    assert "inheriting permission-preset failed" in caplog.text
