"""The typed services seam: capacity and the default model come through services,
and every surface names the same actions."""

from __future__ import annotations

from typing import Any

import pytest
from django.core.management.base import CommandError
from handoff_support import make_source, record_of, target_of

import host.services as host_services
from handoff import operations, services
from handoff.api import HandoffActionIn
from handoff.management.commands.handoff import EXPORT, Command, resolve_session
from handoff.operations import Action
from handoff.web.commands import REPLIES

pytestmark = pytest.mark.django_db


class WideWindows(host_services.ModelSelection):
    """The reference model selection with a host table that knows every model at 77 000."""

    def window(self, model: str) -> int:
        return 77_000


def capacity_of_a_handoff(**source: Any) -> int:
    record = record_of(operations.run_attempt(make_source(**source).pk, manual=True))
    return int(record.metrics["capacity"])


def test_capacity_is_the_window_the_model_selection_service_names(settings):
    settings.HANDOFF_SERVICES = {**settings.HANDOFF_SERVICES, "model_selection": WideWindows}
    assert capacity_of_a_handoff(model="my-model") == 77_000


def test_the_settings_windows_override_the_hosts_table(settings):
    settings.HANDOFF_SERVICES = {**settings.HANDOFF_SERVICES, "model_selection": WideWindows}
    services.settings_store().save(context_windows={"my-model": 50_000})
    assert capacity_of_a_handoff(model="my-model") == 50_000


def test_without_model_selection_capacity_is_unknown_and_the_host_default_stays(settings):
    settings.HANDOFF_SERVICES = {**settings.HANDOFF_SERVICES, "model_selection": None}
    source = make_source()  # claude-sonnet-4-5: 200 000 tokens in the host's table
    outcome = operations.run_attempt(source.pk, manual=True)
    record = record_of(outcome)
    rows = {row["setting"]: row for row in record.inheritance}
    assert record.metrics["capacity"] == 0
    assert rows["model"]["outcome"] == "fallback"
    assert "no model selection service" in rows["model"]["detail"]
    assert target_of(record).model == ""


def test_each_accessor_returns_the_configured_service():
    session = make_source()
    assert isinstance(services.session_controller(), host_services.SessionController)
    assert isinstance(services.model_selection(), host_services.ModelSelection)
    assert isinstance(services.llm(), host_services.LLM)
    assert isinstance(services.compaction_for(session), host_services.Compaction)


def test_every_surface_names_the_same_actions():
    parser = Command().create_parser("manage.py", "handoff")
    (command_choices,) = [a.choices for a in parser._actions if a.dest == "action"]
    api_choices = HandoffActionIn.model_json_schema()["$defs"]["Action"]["enum"]
    # The command also exports (not a session's action: ``handoff export``).
    assert set(command_choices or []) - {EXPORT} == set(api_choices) == set(REPLIES) == set(Action)


def test_the_command_finds_sessions_by_prefix_through_the_session_controller(settings):
    source = make_source()
    assert resolve_session(str(source.pk)[:8]) == str(source.pk)
    settings.HANDOFF_SERVICES = {**settings.HANDOFF_SERVICES, "session_controller": None}
    with pytest.raises(CommandError, match="no session controller"):
        resolve_session(str(source.pk)[:8])
