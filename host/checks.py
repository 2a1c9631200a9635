"""System checks of the host's settings (``manage.py check``, run before every command)."""

from __future__ import annotations

from typing import Any

from django.conf import settings
from django.core.checks import CheckMessage, Error, Tags, register


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


@register(Tags.security, deploy=True)
def secret_key_is_set(app_configs: Any = None, **kwargs: Any) -> list[CheckMessage]:
    """``check --deploy``: a deployment sets ``DJANGO_SECRET_KEY`` (issue 9, Safe defaults).

    Without it the key is the one this checkout generated for itself (``config.secret_key``),
    which other processes and hosts of the deployment do not share.
    """
    if getattr(settings, "SECRET_KEY_GENERATED", False):
        return [
            Error(
                "DJANGO_SECRET_KEY is not set: the secret key was generated into a file of "
                "this checkout.",
                hint="Set DJANGO_SECRET_KEY to one random value (50+ characters) shared by "
                "every process of the deployment.",
                id="host.E002",
            )
        ]
    return []
