"""System checks of the host's settings (``manage.py check``, run before every command)."""

from __future__ import annotations

from typing import Any

from django.conf import settings
from django.core.checks import CheckMessage, Error, register


@register()
def llm_endpoint_names_a_model(app_configs: Any = None, **kwargs: Any) -> list[CheckMessage]:
    """An OpenAI-compatible endpoint needs ``HANDOFF_LLM_MODEL``: there is nothing to call."""
    if settings.HANDOFF_LLM_BASE_URL and not settings.HANDOFF_LLM_MODEL:
        return [
            Error(
                "HANDOFF_LLM_BASE_URL is set but HANDOFF_LLM_MODEL is empty.",
                hint="Set HANDOFF_LLM_MODEL to the endpoint's model name, or unset "
                "HANDOFF_LLM_BASE_URL to use the offline summarizer and agent.",
                id="host.E001",
            )
        ]
    return []
