"""host.checks: a model endpoint without a model name is reported before anything runs."""

from __future__ import annotations

from host.checks import llm_endpoint_names_a_model


def test_offline_default_passes(settings):
    settings.HANDOFF_LLM_BASE_URL = ""
    settings.HANDOFF_LLM_MODEL = ""
    assert llm_endpoint_names_a_model() == []


def test_endpoint_without_a_model_is_an_error(settings):
    settings.HANDOFF_LLM_BASE_URL = "http://127.0.0.1:9/v1"
    settings.HANDOFF_LLM_MODEL = ""
    [error] = llm_endpoint_names_a_model()
    assert error.id == "host.E001"
    assert "HANDOFF_LLM_MODEL" in error.msg


def test_endpoint_with_a_model_passes(settings):
    settings.HANDOFF_LLM_BASE_URL = "http://127.0.0.1:9/v1"
    settings.HANDOFF_LLM_MODEL = "gpt-4o"
    assert llm_endpoint_names_a_model() == []
