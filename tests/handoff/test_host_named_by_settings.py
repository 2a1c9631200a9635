"""The handoff names no host: with none of its host settings set, it degrades (docs/spec.md,
Degradation) and says what is missing at start-up (system checks) or, where a missing name is
used, with ``ImproperlyConfigured`` naming the setting; never a late import error."""

from __future__ import annotations

import uuid
from typing import Any

import pytest
from django.core.exceptions import ImproperlyConfigured

from handoff import conf, operations, services
from handoff.apps import HOST_SIGNALS, connect_host_signal
from handoff.checks import check_host_settings
from handoff.exceptions import ServiceUnavailable
from handoff.session_model import check_session_model
from handoff.web.host_pages import markdown

HOST_SETTINGS = (
    "HANDOFF_SESSION_MODEL",
    "HANDOFF_SERVICES",
    "HANDOFF_HOST_SIGNALS",
    "HANDOFF_SESSION_URL",
    "HANDOFF_MARKDOWN",
)


@pytest.fixture
def names_nothing(settings: Any) -> None:
    """Settings that name no host: none of the handoff's host settings is set."""
    for name in HOST_SETTINGS:
        delattr(settings, name)


@pytest.mark.usefixtures("names_nothing")
def test_the_system_checks_name_each_missing_setting() -> None:
    (model,) = check_session_model()
    assert model.id == "handoff.E001" and "HANDOFF_SESSION_MODEL is not set" in model.msg
    warnings = check_host_settings()
    assert [w.id for w in warnings] == ["handoff.W001", "handoff.W002"]
    assert "session_controller" in warnings[0].msg and "HANDOFF_SESSION_URL" in warnings[1].msg


@pytest.mark.usefixtures("names_nothing")
def test_without_a_session_controller_the_handoff_is_unavailable() -> None:
    assert services.session_controller() is None
    with pytest.raises(ServiceUnavailable):
        operations.owned_session_ids(1)
    with pytest.raises(ServiceUnavailable):
        operations.enable(uuid.uuid4())


@pytest.mark.usefixtures("names_nothing")
def test_a_link_to_a_session_names_the_missing_setting() -> None:
    with pytest.raises(ImproperlyConfigured, match="HANDOFF_SESSION_URL is not set"):
        conf.session_url(uuid.uuid4())


@pytest.mark.usefixtures("names_nothing")
def test_a_brief_is_shown_as_escaped_paragraphs_without_the_hosts_markdown() -> None:
    assert markdown("**Goal** <b>x</b>") == "<p>**Goal** &lt;b&gt;x&lt;/b&gt;</p>"


@pytest.mark.usefixtures("names_nothing")
def test_no_host_signal_is_looked_up(monkeypatch: pytest.MonkeyPatch) -> None:
    looked_up: list[str] = []
    monkeypatch.setattr("handoff.apps.import_string", looked_up.append)
    for name in HOST_SIGNALS:
        connect_host_signal(name, print)
    assert looked_up == []


def test_a_path_that_does_not_import_is_named_at_start_up_and_where_used(settings: Any) -> None:
    settings.HANDOFF_SERVICES = {**settings.HANDOFF_SERVICES, "llm": "nowhere.LLM"}
    settings.HANDOFF_MARKDOWN = "nowhere.markdown"
    (error,) = check_host_settings()
    assert error.id == "handoff.E002" and "HANDOFF_SERVICES['llm'] = 'nowhere.LLM'" in error.msg
    with pytest.raises(ImproperlyConfigured, match=r"HANDOFF_SERVICES\['llm'\]"):
        services.llm()
    with pytest.raises(ImproperlyConfigured, match="HANDOFF_MARKDOWN"):
        markdown("text")
