"""docs/spec.md, Degradation: services are read at each use; plan mode and compaction per agent."""

from __future__ import annotations

import inspect
import json
from typing import Any

import pytest
from handoff_support import RecordingLLM, make_source, record_of

import host.services as host_services
from handoff import operations, services

pytestmark = pytest.mark.django_db

PROTOCOLS = {
    "session_controller": (services.SessionController, host_services.SessionController),
    "workspace_registry": (services.WorkspaceRegistry, host_services.WorkspaceRegistry),
    "agent_presets": (services.AgentPresets, host_services.AgentPresets),
    "model_selection": (services.ModelSelection, host_services.ModelSelection),
    "permission_presets": (services.PermissionPresets, host_services.PermissionPresets),
    "plan_mode": (services.PlanMode, host_services.PlanMode),
    "compaction": (services.Compaction, host_services.Compaction),
    "usage_projection": (services.UsageProjection, host_services.UsageProjection),
    "token_meter": (services.TokenMeter, host_services.TokenMeter),
    "llm": (services.LanguageModel, host_services.LLM),
}


@pytest.mark.parametrize("name", sorted(PROTOCOLS))
def test_the_host_implements_every_method_of_the_service(name):
    protocol, implementation = PROTOCOLS[name]
    wanted = {n for n in vars(protocol) if not n.startswith("_")}
    assert wanted <= set(dir(implementation))
    for method in wanted - {"offline"}:
        assert inspect.signature(getattr(protocol, method)).parameters.keys() == (
            inspect.signature(getattr(implementation, method)).parameters.keys()
        )


def test_get_builds_the_configured_service_at_each_call(settings):
    first, second = services.get("token_meter"), services.get("token_meter")
    assert isinstance(first, host_services.TokenMeter) and first is not second
    settings.HANDOFF_SERVICES = {**settings.HANDOFF_SERVICES, "token_meter": None}
    assert services.get("token_meter") is None


def test_an_unknown_service_name_is_an_error():
    with pytest.raises(KeyError, match="unknown host service 'tokenmeter'"):
        services.get("tokenmeter")


def test_a_service_registered_after_start_up_is_used_by_the_next_attempt(settings):
    settings.HANDOFF_SERVICES = {**settings.HANDOFF_SERVICES, "llm": None}
    source = make_source()
    assert operations.run_attempt(source.pk, manual=True).outcome == "failed"
    RecordingLLM.calls = []
    services.register("llm", RecordingLLM)
    try:
        outcome = operations.run_attempt(source.pk, manual=True)
    finally:
        services.unregister("llm")
    assert outcome.outcome == "started"
    assert len(RecordingLLM.calls) == 1
    assert record_of(outcome).brief == {**json.loads(RecordingLLM.DEFAULT_ANSWER)}


def test_a_registration_to_none_leaves_the_service_out_until_unregistered():
    services.register("compaction", None)
    try:
        assert services.get("compaction") is None
    finally:
        services.unregister("compaction")
    assert services.get("compaction") is not None


def test_plan_mode_and_compaction_resolve_in_the_agents_realm_first(settings):
    settings.HANDOFF_SERVICES = {**settings.HANDOFF_SERVICES, "plan_mode": None, "compaction": None}
    planner, plain = make_source(agent_preset="planner"), make_source(agent_preset="default")
    assert services.for_agent(planner, "plan_mode") is not None
    assert services.for_agent(planner, "compaction") is not None
    assert services.for_agent(plain, "plan_mode") is None
    assert services.for_agent(plain, "compaction") is None


def test_other_services_resolve_host_wide_only():
    session: Any = make_source(agent_preset="planner")
    assert isinstance(services.for_agent(session, "llm"), host_services.LLM)
